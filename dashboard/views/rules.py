"""The falling rule list: the paper's table, the falling risk, what each rule captures, and a patient look-up."""

import math

import streamlit as st

from dashboard import charts, services, state, ui
from frl_engine.errors import FRLError

ss = st.session_state
FIELD_PREFIX = "pt_"


def _check_patient(fit_id: str, model: dict, fields) -> None:
    """Form callback: which rule fires for the values entered (runs before the page, so the table can mark it)."""
    values = {}
    for field in fields:
        value = ss.get(FIELD_PREFIX + field.column)
        blank = isinstance(value, str) and not value.strip()
        values[field.column] = None if value is None or blank or (isinstance(value, float) and math.isnan(value)) else value
    try:
        ss[state.PATIENT] = (fit_id, services.explain_patient(model, values), None)
    except FRLError as exc:
        ss[state.PATIENT] = (fit_id, None, str(exc))


state.collect_jobs()  # a list published since the app collected the jobs' results is shown now
if ui.list_on_its_way() is not None:  # the user pressed Fit: the search runs, its list appears here
    ui.header("Falling rule list", "Searching for the list with the highest posterior probability (simulated "
                                   "annealing, paper section 3.1).")
    ui.job_progress("fit")
    st.caption("The list appears here when the search ends; its 95% credible intervals follow when the posterior "
               "has been sampled.")
    st.stop()
ui.fit_problem_note()
fit = ui.require_fit()
model = fit.model
label = charts.outcome_label(model)
table = charts.rule_table(model)
training = model.get("training") or {}

# An encounter-level table (a patient number that repeats): its rows are encounters, said as on the card and the CLI
n_patients = training.get("n_patients")
who = (f"{training.get('n_rows', 0):,} rows of {n_patients:,} patients" if n_patients
       else f"{training.get('n_rows', 0):,} patients")
ui.header("Falling rule list", f"Risk of {ui.md(label)} · " + (
    f"{ui.md(training.get('data_name') or 'training data')} · {who} · "
    f"{ui.md(fit.label)}" if fit.source == "fit" else f"loaded from {ui.md(fit.label)}"))
ui.other_table_note(fit, ss[state.DATA])

patient = ss[state.PATIENT]
highlight = None
if patient is not None and patient[0] == fit.id and patient[1] is not None:
    highlight = patient[1].position

m1, m2, m3, m4, m5 = st.columns(5)
m1.metric("Rules", f"{len(model['rules'])} + ELSE", border=True)
m2.metric("Highest risk", charts.pct(table["risk"].iloc[0]), border=True)
m3.metric("ELSE risk", charts.pct(table["risk"].iloc[-1]), border=True)
n_rows, n_events = int(table["support"].sum()), int(table["events"].sum())
events_word = "event" if n_events == 1 else "events"
if n_patients:
    m4.metric("Rows", f"{n_rows:,}", border=True,
              help=f"{n_rows:,} rows (encounters) of {n_patients:,} patients ({training.get('patient_column')}): a "
                   "patient with several encounters counts once for each. Risks and supports are per row.")
    m5.metric("Event rate", f"{n_events / max(n_rows, 1):.1%}", border=True,
              help=f"{n_events:,} {events_word} among {n_rows:,} rows")
else:
    m4.metric("Patients", f"{n_rows:,}", border=True)
    m5.metric("Event rate", f"{n_events / max(n_rows, 1):.1%}", border=True,
              help=f"{n_events:,} {events_word} among {n_rows:,} patients")

if state.running("fit") and fit.posterior is None and fit.source == "fit":
    ui.job_progress("fit")
    st.caption("The 95% credible intervals appear when the posterior has been sampled.")

st.html(charts.rule_list_html(model, highlight=highlight))
from frl_engine.search_report import (empty_list_note, few_patients_note, leakage_note,  # noqa: E402
                                      sensitive_columns_note)

if few_patients_note(model):
    st.warning(few_patients_note(model), icon=":material/group_off:")
if not model["rules"]:
    st.info(empty_list_note(model, "dashboard"), icon=":material/info:")
if leakage_note(model, "dashboard"):
    st.warning(leakage_note(model, "dashboard"), icon=":material/warning:")
if sensitive_columns_note(model, "dashboard"):
    st.warning(sensitive_columns_note(model, "dashboard"), icon=":material/balance:")
search = model.get("search")
if isinstance(search, dict):
    from frl_engine.search_report import SearchReport

    report = SearchReport.from_dict(search)
    search_note = report.message("dashboard")
    if search.get("converged") is False:
        st.warning(search_note, icon=":material/warning:")
    else:   # a plain line; the figures (nats, basin hopping, walks) for whoever opens them
        with st.expander(f"Search converged: {report.n_reached_best} of {report.n_chains} independent searches found "
                         "this same list, the best found", icon=":material/check_circle:"):
            st.caption(search_note)
removed = (model.get("training") or {}).get("unreached_rules_removed") or []
if removed:
    st.caption(f":material/content_cut: Removed {len(removed)} rule{'s' if len(removed) != 1 else ''} of the MAP list "
               f"that no training patient reaches (everyone it covers is caught higher up; no prediction changes): "
               + "; ".join(ui.md(name) for name in removed) + ".")
copied = services.copied_columns_note(fit, ui.md)
if copied:  # sex F / M beside gender: no rule tests sex, and none is missing for it
    st.caption(f":material/content_copy: {copied}")
post_block = model.get("posterior")
if isinstance(post_block, dict) and post_block.get("converged") is False:
    if str(post_block.get("verdict") or "").startswith("Posterior not checked"):   # one chain: nothing to compare
        st.warning("The posterior sample was not checked (one chain cannot show that chains agree), so these credible "
                   "intervals are not known to be reliable (the printed card leaves them out): sample with 4 Sampler "
                   "chains on the Fit page.", icon=":material/warning:")
    else:
        st.warning("The posterior sample did not converge, so these credible intervals are not reliable "
                   "(the printed card leaves them out): sample longer on the Fit page.", icon=":material/warning:")
if not fit.has_posterior and state.running("fit"):
    st.caption("Risks are point estimates until the posterior sample under way arrives with 95% credible "
               "intervals.")
elif not fit.has_posterior and getattr(fit.spec, "posterior", None) is not None and fit.source == "fit":
    st.caption("Risks are point estimates: the posterior sample asked for was stopped or did not finish. Sample it "
               "on the **Posterior** page for 95% credible intervals.")
elif not fit.has_posterior:
    st.caption("Risks are point estimates (no posterior sample): turn on *Sample the posterior* on the Fit page "
               "for 95% credible intervals.")
else:
    post = model["posterior"]
    st.caption(f"95% CrI: central credible interval of each risk from {post.get('n_samples', 0):,} posterior draws "
               "of the list's parameters.")

left, right = st.columns([3, 2], gap="large")
left.plotly_chart(charts.falling_risk_chart(model, highlight=highlight), width="stretch", key="falling_chart",
                  config={"displaylogo": False})
right.plotly_chart(charts.events_captured_chart(model), width="stretch", key="events_chart",
                   config={"displaylogo": False})

# ---------------------------------------------------------------- which rule applies to this patient
st.subheader("Which rule applies to this patient?", anchor=False)
fields = services.patient_fields(model)
if not fields:
    st.caption("This list has no rules: every patient gets the ELSE risk.")
else:
    st.caption("Enter what you know; leave a field empty when it is unknown (an unknown value never matches a "
               "condition, except 'is missing'). Only the columns the list uses are asked for.")
    with st.form("patient_form", border=True):
        per_row = min(4, len(fields))
        for index, field in enumerate(fields):
            if index % per_row == 0:   # one row of boxes at a time: Tab then moves along the row, as one reads
                row = st.columns(per_row)
            box = row[index % per_row]
            key = FIELD_PREFIX + field.column
            if field.kind == "numeric":
                cuts = ", ".join(charts.format_cut(c) for c in field.thresholds)
                box.number_input(ui.label(field.column), value=None, key=key, placeholder="unknown", format="%g",
                                 help=f"The list compares it with {cuts}." if cuts else None)
            elif field.kind == "categorical":
                box.selectbox(ui.label(field.column), field.options, index=None, key=key, placeholder="unknown",
                              format_func=ui.visible)
            elif field.kind == "code":
                box.text_input(ui.label(field.column), key=key,
                               placeholder=f"unknown, e.g. {field.example}" if field.example else "unknown",
                               help="The code as written in the record (ICD, ATC...); groups match by prefix. "
                                    "Several codes: separate them with ; or |.")
            else:
                box.selectbox(ui.label(field.column), ["yes", "no"], index=None, key=key, placeholder="unknown")
        st.form_submit_button("Find the rule", type="primary", icon=":material/search:", key="patient_submit",
                              on_click=_check_patient, args=(fit.id, model, fields))

    if patient is not None and patient[0] == fit.id:
        _, check, message = patient
        if message:
            st.error(message, icon=":material/error:")
        elif check is not None:
            row = table.iloc[check.position]
            ci = charts.interval(check.lower, check.upper)
            if row["conditions"]:
                headline = f"**Rule {check.position + 1} applies: {row['keyword']} {ui.md(row['conditions'])}**"
            else:
                headline = "**No rule matched, so the ELSE line applies**"
            st.success(f"{headline}. Risk of {ui.md(label)}: **{charts.pct(check.risk)}**"
                       + (f" (95% CrI {ci})" if ci else "")
                       + f". Of the {row['support']:,} training patients this line captured, {row['events']:,} had "
                       f"the event ({charts.pct(row['observed'])}).", icon=":material/person_check:")
            if check.could_apply:   # unknown values can only have hidden a higher rule, never a lower one
                position, name, risk, columns = check.could_apply[0]
                more = len(check.could_apply) - 1
                st.warning(f"**This rests on values left unknown.** With {ui.md(', '.join(columns))} known, rule "
                           f"{position + 1} ({ui.md(name)}, risk **{charts.pct(risk)}**) could apply"
                           + (f", or {more} other rule{'s' if more != 1 else ''} above this one" if more else "")
                           + ": an unknown value meets no condition. Fill "
                           + ("it" if len(columns) == 1 else "them") + " in before relying on this risk.",
                           icon=":material/help:")
            lines = []
            for index, (name, fired, conditions) in enumerate(check.steps):
                keyword = "IF" if index == 0 else "ELSE IF"
                if fired:
                    lines.append(f"{index + 1}. {keyword} {ui.md(name)}: **applies** (every condition is met)")
                else:
                    unmet = ", ".join(ui.md(c) for c, ok in conditions if not ok)
                    lines.append(f"{index + 1}. {keyword} {ui.md(name)}: does not apply (not met: {unmet})")
            if check.position == len(model["rules"]):
                lines.append(f"{check.position + 1}. ELSE: **applies** (no rule above matched)")
            st.markdown("\n".join(lines))
