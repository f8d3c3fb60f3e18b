"""External validation: the current list or a saved model on a second table of patients it never saw."""

import json
import logging

import streamlit as st

from dashboard import charts, services, state, ui
from frl_engine.card import external_line
from frl_engine.errors import FRLError
from frl_engine.search_report import FEW_PATIENTS
from frl_engine.validation.external import (ExternalValidation, attach_to_model, check_columns_present,
                                            event_matches, outcome_reading_note, validate_model)
from frl_engine.io import event_label
from frl_engine.validation.report import (INTERPRETATION, calibration_figure, decision_curve_figure, rule_table_frame,
                                          subgroup_figure, subgroup_table_frame, validation_report_html)

log = logging.getLogger("frl_dashboard")
ss = st.session_state

ui.header("External validation", "Does the list hold up on patients it never saw: a later period, another hospital? "
                                 "Upload their table (the model's columns and the outcome); nothing is refitted.")


@st.cache_data(max_entries=8, show_spinner="Scoring the new patients...")
def _validate(model_text: str, data_key: str, data_name: str, by: str | None, target: str | None, event,
              _frame) -> dict:
    # Keyed by the model, the table's bytes, the subgroup column and the outcome; errors are not cached.
    return validate_model(json.loads(model_text), _frame, data_name=data_name, by=by, target=target,
                          positive=event).to_dict()


def _read_upload(upload, seen_key: str, error_key: str, load):
    """Process a new upload once; the last good value stays in the session state."""
    if upload is None:
        ss[seen_key] = None
        ss[error_key] = None
        return
    if upload.file_id == ss[seen_key]:
        return
    ss[seen_key] = upload.file_id
    try:
        load(upload)
        ss[error_key] = None
    except FRLError as exc:
        ss[error_key] = str(exc)
    except Exception:  # noqa: BLE001 - never a traceback on the page
        log.exception("Reading %s failed", upload.name)
        ss[error_key] = f"{upload.name} could not be read."


# ---------------------------------------------------------------- which model
left, right = st.columns(2, gap="large")
with left:
    st.markdown("**1. The model**")
    source = st.radio("Model", [state.EXT_SOURCE_CURRENT, state.EXT_SOURCE_FILE], key=state.W_EXT_SOURCE,
                      persist_state=state.PERSIST, horizontal=True, label_visibility="collapsed")
    fit = None
    if source == state.EXT_SOURCE_CURRENT:
        fit = ss[state.FIT]
        if fit is None:
            st.info("No list yet: fit one on the **Fit** page, or choose a saved model file.", icon=":material/info:")
        else:
            st.caption(f"{len(fit.model['rules'])} rules + ELSE · {ui.md(fit.label)}")
    else:
        upload = st.file_uploader("Model file (.json)", key=state.W_EXT_MODEL_FILE,
                                  help="A .json model saved from this dashboard or by `frl fit --out`.")
        _read_upload(upload, state.EXT_MODEL_SEEN, state.EXT_MODEL_ERROR,
                     lambda u: ss.__setitem__(state.EXT_MODEL, services.load_model_file(u.getvalue(), u.name,
                                                                                        state.new_id("ext"))))
        if ss[state.EXT_MODEL_ERROR]:
            st.error(ss[state.EXT_MODEL_ERROR], icon=":material/error:")
        fit = ss[state.EXT_MODEL]
        if fit is not None:
            st.caption(f"{ui.md(fit.label)}: {len(fit.model['rules'])} rules + ELSE")

with right:
    st.markdown("**2. The new patients**")
    upload = st.file_uploader("New patients: CSV, Excel (.xlsx), Parquet, SPSS, Stata or SAS (also .csv.gz or "
                              ".zip), with the outcome column",
                              key=state.W_EXT_DATA, label_visibility="collapsed",
                              help="One row per patient; the columns the rules use and the model's outcome. "
                                   "Other columns are ignored.")
    _read_upload(upload, state.EXT_DATA_SEEN, state.EXT_DATA_ERROR,
                 lambda u: ss.__setitem__(state.EXT_DATA, services.load_table(u.getvalue(), u.name)))
    if ss[state.EXT_DATA_ERROR]:
        st.error(ss[state.EXT_DATA_ERROR], icon=":material/error:")
    data = ss[state.EXT_DATA]
    if data is not None:
        # kept from an earlier visit when the uploader is empty again (it empties as the user leaves the page)
        earlier = upload is None
        st.caption(f":material/description: **{ui.md(data.name)}**{' (uploaded earlier)' if earlier else ''} · "
                   f"{data.n_rows:,} patients, {data.n_columns} columns"
                   + (": upload another table above to replace it" if earlier else ""))
        # validated as they are unless the user leaves them out
        ui.repeated_rows_warning(data, key="w_ext_drop_repeated_rows",
                                 leave_out=lambda data: ss.__setitem__(state.EXT_DATA,
                                                                       services.without_repeated_records(data)))

if fit is None or data is None:
    if fit is not None:
        target = fit.model["outcome"].get("target")
        st.info(f"Upload the new patients' table: it needs the outcome column **{ui.md(target)}** and the columns "
                "the rules use.", icon=":material/upload_file:")
    st.stop()

# The training table itself is said once, in the headline below ("Not an external validation"), from the rows'
# fingerprint: it also catches a saved model's training file and the same rows in another order.

model = fit.model
unvalidated = {k: v for k, v in model.items() if k != "external_validation"}  # the same list, whatever it carries
target = model["outcome"].get("target")
try:   # a table without the rules' columns is said before its outcome is asked for
    check_columns_present(model, data.frame, data.name)
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()
# A new table may name or write its outcome differently (readmit_30d = Yes for a model of readmitted = <30).
new_target, new_event = None, None
if target not in data.frame.columns:
    st.warning(f"This table has no column **{ui.md(target)}**, the model's outcome. Pick the column that holds the "
               "same outcome here.", icon=":material/help:")
    options = [None] + list(data.frame.columns)
    if ss.get(state.W_EXT_TARGET) not in options:
        ss[state.W_EXT_TARGET] = None
    new_target = st.selectbox("Outcome column in this table", options, key=state.W_EXT_TARGET,
                              format_func=lambda c: "choose a column" if c is None else c)
    if new_target is None:
        st.stop()
outcome_column = new_target or target
values = services.outcome_values(data.frame[outcome_column])
positive = model["outcome"].get("event_values") or model["outcome"].get("positive_class")  # several: any of them
if len(values) >= 2 and not event_matches(data.frame[outcome_column], positive).any():  # as validation matches it
    st.warning(f"No patient here has **{ui.md(outcome_column)} = {ui.event_md(positive)}**, the model's event. Pick the "
               "value that means the same event in this table.", icon=":material/help:")
    if ss.get(state.W_EXT_EVENT) not in [None] + values:
        ss[state.W_EXT_EVENT] = None
    new_event = st.selectbox("Event value in this table", [None] + values, key=state.W_EXT_EVENT,
                             format_func=lambda v: "choose a value" if v is None else str(v))
    if new_event is None:
        st.stop()
elif len(values) >= 2 and outcome_reading_note(data.frame[outcome_column], outcome_column, positive):
    # the model's event read another way (1 for yes): said in a note below, and the user can name it instead
    if ss.get(state.W_EXT_EVENT) not in [None] + values:
        ss[state.W_EXT_EVENT] = None
    new_event = st.selectbox("Event value in this table", [None] + values, key=state.W_EXT_EVENT,
                             format_func=lambda v: "as read (see the note below)" if v is None else str(v),
                             help=f"No cell holds the model's event {event_label(positive)} as written; the value "
                                  "read as the event is named in a note below. Pick another if that is wrong.")
target = outcome_column
choices = [None] + [c for c in data.frame.columns if c != target]
if ss.get(state.W_EXT_BY) not in choices:
    ss[state.W_EXT_BY] = None
by = st.selectbox("Subgroups by (optional)", choices, key=state.W_EXT_BY, persist_state=state.PERSIST,
                  format_func=lambda c: "no subgroups" if c is None else c, placeholder="no subgroups",
                  help="Report each value of this column separately (e.g. sex, an age band); a numeric column with "
                       "many values is cut into four bands at its quartiles.")

try:
    result = ExternalValidation.from_dict(_validate(json.dumps(unvalidated, sort_keys=True), data.key, data.name, by,
                                                    new_target, new_event, data.frame))
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()
except Exception as exc:  # noqa: BLE001
    ui.show_error(exc, what="validating")
    st.stop()

o = result.overall
# ---------------------------------------------------------------- headline
flagged = o.flagged
# the new table lacks columns of the model's sample of training rows: whether they are new patients was not checked
validated = "Validated, not checked for training patients" if result.training_unchecked else "Externally validated"
if result.same_as_training:
    st.warning(f"**Not an external validation: {result.headline()}** on the very patients the model was fitted on. "
               "These figures measure the fit, not how the list holds up on new patients; validate on a later period "
               "or another hospital.", icon=":material/warning:")
elif result.training_share is not None:
    st.warning(f"**Not an external validation: {result.headline()}**, of whom about "
               f"{100 * result.training_share:.0f}% are patients the model was fitted on (their rows are written the "
               f"same in every column). These figures are {'mostly' if result.training_share >= 0.9 else 'partly'} "
               "the fit's; validate on patients the model was not "
               "fitted on, or leave the training patients out.", icon=":material/warning:")
elif o.too_few_to_judge:
    st.warning(f"**Too few new patients to judge the list: {result.headline()}**. With fewer than "
               f"{FEW_PATIENTS} patients with the event, or without it, these figures say little; validate on more.",
               icon=":material/group_off:")
elif flagged:
    st.warning(f"**{validated}: {result.headline()}**. {len(flagged)} rule"
               f"{'s' if len(flagged) > 1 else ''} flagged below: check before using the list on these patients.",
               icon=":material/warning:")
elif result.overall.overall_calibration_note():   # each rule within chance, the whole list off
    st.warning(f"**{validated}: {result.headline()}**. Every rule's observed rate is within chance of its printed "
               f"risk and the rates fall down the list, {result.overall.overall_calibration_note()}.",
               icon=":material/tune:")
else:
    st.success(f"**{validated}: {result.headline()}**. Every rule's observed rate is within chance of its printed "
               "risk and the rates fall down the list.", icon=":material/check_circle:")


def _ci(pair, digits=2):
    return "" if pair[0] != pair[0] else f"95% CI {pair[0]:.{digits}f} to {pair[1]:.{digits}f}"


def _value(x, digits=3):
    return "n/a" if x != x else f"{x:.{digits}f}"


m1, m2, m3, m4, m5 = st.columns(5)
m1.metric("Patients (events)", f"{o.n:,} ({o.events:,})", border=True,
          help=f"Event rate {100 * o.event_rate:.1f}%; mean predicted risk {100 * o.mean_risk:.1f}%.")
m2.metric("AUROC", _value(o.auroc), _ci(o.auroc_ci), delta_color="off", delta_arrow="off", border=True, help=INTERPRETATION[0][1])
m3.metric("Brier score", _value(o.brier, 4), f"reference {o.event_rate * (1 - o.event_rate):.4f}",
          delta_color="off", delta_arrow="off", border=True, help=INTERPRETATION[1][1] + " The reference is that score here.")
m4.metric("Calibration intercept", _value(o.calibration_intercept), _ci(o.calibration_intercept_ci),
          delta_color="off", delta_arrow="off", border=True, help=INTERPRETATION[2][1])
m5.metric("Calibration slope", _value(o.calibration_slope), _ci(o.calibration_slope_ci), delta_color="off",
          delta_arrow="off", border=True, help=INTERPRETATION[3][1])
for note in o.notes:
    st.caption(f"Note: {note.replace('(--positive)', '(**Event value in this table**, above)')}.")

# ---------------------------------------------------------------- each rule
st.subheader("Each rule on its training patients" if result.same_as_training else
             "Each rule on these patients" if not result.external else "Each rule on the new patients",
             anchor=False)
table = rule_table_frame(o)
table[["model risk", "observed"]] *= 100
if not table["model CrI"].any():  # the model file has no posterior intervals
    table = table.drop(columns=["model CrI"])
st.dataframe(
    table.style.apply(lambda row: ["background-color: #fff1e0" if ("clearly" in row["flag"] or "disagrees"
                                                                    in row["flag"]) else "" for _ in row], axis=1),
    hide_index=True, width="stretch", key="ext_rules",
    # in percent with one decimal, as the intervals beside them ("percent" wrote 6% above 18.51%)
    column_config={"model risk": st.column_config.NumberColumn(format="%.1f%%"),
                   "observed": st.column_config.NumberColumn(format="%.1f%%"),
                   "flag": st.column_config.TextColumn(width="large")})

c1, c2 = st.columns(2, gap="large")
c1.plotly_chart(charts.fit_for_streamlit(calibration_figure(o), 500), width="stretch", key="ext_calibration",
                config={"displaylogo": False})
c1.caption("One point per rule, sized by its patients; the bar is the observed rate's 95% interval. Points on the "
           "diagonal mean the printed risks match what happened; the dotted line is the logistic recalibration.")
c2.plotly_chart(charts.fit_for_streamlit(decision_curve_figure(o), 500), width="stretch", key="ext_decision",
                config={"displaylogo": False})
useful = o.net_benefit.useful_text()
c2.caption(("Where the red curve is above both others the list helps decide. "
            + (f"Here: {useful}." if useful else "Here: at no threshold.")))

if result.subgroups:
    st.subheader(f"By {result.by}", anchor=False)
    st.dataframe(subgroup_table_frame(result), hide_index=True, width="stretch", key="ext_subgroups",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("AUROC", "Brier", "intercept", "slope")})
    st.plotly_chart(charts.fit_for_streamlit(subgroup_figure(result), 140 + 42 * len(result.subgroups)),
                    width="stretch", key="ext_subgroup_chart", config={"displaylogo": False})

# ---------------------------------------------------------------- keep and download
st.subheader("Keep the result", anchor=False)
stem = ui.file_stem(data.name.rsplit(".", 1)[0], "external")
d1, d2, d3, d4 = st.columns(4)
d1.download_button("Report (HTML)", lambda: validation_report_html(result, model=unvalidated).encode("utf-8"),
                   file_name=f"{stem}-validation.html", mime="text/html", icon=":material/description:",
                   key="ext_download_html", on_click="ignore", width="stretch", type="primary")
d2.download_button("Result (JSON)", (result.to_json(indent=1) + "\n").encode("utf-8"),
                   file_name=f"{stem}-validation.json", mime="application/json", icon=":material/data_object:",
                   key="ext_download_json", on_click="ignore", width="stretch")
d3.download_button("Validated model (JSON)", services.model_json(attach_to_model(unvalidated, result)),
                   file_name=f"{stem}-validated-model.json", mime="application/json", icon=":material/badge:",
                   key="ext_download_model", on_click="ignore", width="stretch",
                   help="The model file with an external_validation block: the card prints it.")
if source == state.EXT_SOURCE_CURRENT:
    kept = (model.get("external_validation") or {}) == result.model_block()  # same result: same validated_at
    if d4.button("Print it on the card", key="ext_keep", icon=":material/add_card:", width="stretch", disabled=kept,
                 help="Adds the line to the back of the current list's card (Card & downloads page)."):
        state.attach_external_validation(fit.id, result.model_block())
        st.rerun()
    if kept:
        # the card's own words, from the whole model: which rules were flagged needs the list's length
        st.caption("The current list's card reads: " + ui.md(external_line(model) or ""))

with st.expander("What the numbers mean, and when to worry"):
    for name, text in INTERPRETATION:
        st.markdown(f"**{name}**: {text}")
