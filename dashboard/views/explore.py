"""Explore: cross-validate a grid of λ x minimum support x conditions, pick a list from the frontier."""

import json
import os

import pandas as pd
import streamlit as st

from dashboard import explore_jobs as ej
from dashboard import jobs, services, state, ui
from frl_engine.errors import FRLError

ss = st.session_state
W_LAMS, W_SUPPORTS, W_CONDITIONS, W_FOLDS = "w_ex_lam", "w_ex_support", "w_ex_conditions", "w_ex_folds"
W_THRESHOLDS = "w_ex_thresholds"
W_CELL = "w_ex_cell"
AUTOSTART, AUTOFIT, SEEN_SELECTION = "explore_autostart", "explore_autofit", "explore_selection_seen"
DEFAULTS = {W_LAMS: [2.0, 4.0, 8.0], W_SUPPORTS: [2.0, 5.0, 10.0], W_CONDITIONS: [1, 2], W_THRESHOLDS: [3], W_FOLDS: 5}
for _key, _value in DEFAULTS.items():
    if _key not in ss:
        ss[_key] = list(_value) if isinstance(_value, list) else _value
for _key in (ej.JOB, ej.RESULT, AUTOSTART, AUTOFIT, SEEN_SELECTION):
    ss.setdefault(_key, None)

ui.header("Explore", "How short can the list be? Every combination of λ, minimum support and conditions per rule "
                     "is fitted on all patients and cross-validated; choose a list from the trade-off between "
                     "length and AUROC.")
data = ui.require_data()
try:
    inputs = ui.training_inputs(data)
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")
    ui.link("data", "Fix it on the Data page", ":material/table:")
    st.stop()
settings, posterior = ui.fit_settings_from_widgets()
scheduler = ej.scheduler_address()
job = ss[ej.JOB]
running = job is not None and not job.done

KEEP = {"persist_state": state.PERSIST}
with st.container(border=True):
    # Two rows, so that every choice is visible (pills do not wrap inside a narrow column).
    c1, c2 = st.columns([1, 1.15], gap="medium")
    c3, c5, c4, _ = st.columns([1.1, 1.3, 0.6, 3.2], gap="medium")
    c1.pills("λ, prior list length", list(ej.LAM_CHOICES), selection_mode="multi", key=W_LAMS, **KEEP,
             format_func=lambda v: f"{v:g}", help="L ~ Poisson(λ): smaller λ favours shorter lists.")
    c2.pills("Minimum support (% of patients)", list(ej.SUPPORT_CHOICES), selection_mode="multi", key=W_SUPPORTS,
             **KEEP, format_func=lambda v: f"{v:g}%", help="Lower support mines narrower (and more) candidate rules.")
    c3.pills("Conditions per rule", list(ej.CONDITION_CHOICES), selection_mode="multi", key=W_CONDITIONS, **KEEP)
    c5.pills("Thresholds per number", list(ej.THRESHOLD_CHOICES), selection_mode="multi", key=W_THRESHOLDS, **KEEP,
             help="Cut points per numeric column (quantiles, rounded to readable numbers).")
    c4.number_input("Folds", min_value=2, max_value=10, step=1, key=W_FOLDS, **KEEP)
    n_cells = (len(ss[W_LAMS] or []) * len(ss[W_SUPPORTS] or []) * len(ss[W_CONDITIONS] or [])
               * len(ss[W_THRESHOLDS] or []))
    where = (f":material/hub: Runs on the **Dask cluster** at `{scheduler}`." if scheduler else
             f":material/computer: Runs on this machine ({os.cpu_count() or 1} cores).")
    st.caption(f"{n_cells} cell{'s' if n_cells != 1 else ''} × {int(ss[W_FOLDS])} folds on {ui.md(data.name)} "
               f"({inputs.target} = {ui.event_md(inputs.event)}); steps, chains and seed as on the Fit page "
               f"({settings.n_steps:,} × {settings.n_chains}, seed {settings.seed}). {where}")
    other_job = state.busy()  # a session runs one heavy job at a time
    other_job = other_job if other_job is not None and other_job is not job else None
    if other_job is not None and not running:
        st.caption(f":material/hourglass_top: {ui.md(state.busy_message(other_job))}")
    b1, b2, _ = st.columns([1.2, 1, 4])
    clicked = b1.button("Run the grid", type="primary", icon=":material/play_arrow:", key="explore_run_button",
                        disabled=running or n_cells == 0 or other_job is not None)
    stop = b2.button("Stop", icon=":material/stop:", key="explore_stop_button", disabled=not running)

if stop and running:
    job.meta["stop"].set()
if (clicked or ss[AUTOSTART]) and not running and other_job is None:
    autostart, ss[AUTOSTART] = ss[AUTOSTART], None
    spec = ej.ExploreSpec(lam=tuple(ss[W_LAMS] or []), min_support=tuple(round(v / 100, 6) for v in ss[W_SUPPORTS] or []),
                          max_conditions=tuple(ss[W_CONDITIONS] or []), n_folds=int(ss[W_FOLDS]), seed=settings.seed,
                          params={**inputs.choices.params(), "n_steps": settings.n_steps,
                                  "n_chains": settings.n_chains},
                          n_thresholds=tuple(ss[W_THRESHOLDS] or []))
    try:
        from frl_engine.explore import ExploreGrid

        ExploreGrid(spec.lam, spec.min_support, spec.max_conditions, spec.n_thresholds)  # a bad grid: one message
        job = ej.new_job(spec)
        ss[ej.JOB] = job
        jobs.start(job, ej.explore_work(spec, inputs.features, inputs.y, data.key, inputs.target, inputs.event,
                                        scheduler))
    except FRLError as exc:
        ss[AUTOFIT] = None
        st.error(str(exc), icon=":material/error:")
    else:
        st.rerun()  # draw the page again with the run under way (Stop enabled, Run disabled)


if running:
    _interval = ui.poll_interval(job)

    @st.fragment(run_every=_interval)
    def _poll() -> None:
        current = ss[ej.JOB]
        if current is None or current.done or ui.poll_interval(current) != _interval:
            st.rerun(scope="app")
        fraction, text = current.progress()
        if current.meta["stop"].is_set():
            text = "Stopping after the tasks under way… · " + text
        st.progress(fraction, text=text)

    _poll()

if job is not None and job.done:
    if job.failed:
        ui.show_message(job.error, job.error_detail)
        ss[AUTOFIT] = None
    elif job.version and (ss[ej.RESULT] is None or ss[ej.RESULT] is not job.latest()):
        ss[ej.RESULT] = job.latest()
        ss[SEEN_SELECTION] = None

run = ss[ej.RESULT]
if run is None:
    if not running:
        st.info("No exploration yet: choose the ranges and press **Run the grid**.", icon=":material/info:")
    st.stop()
result = run.result
table = result.table
if run.data_key != data.key or run.target != inputs.target:
    st.warning("These results are for other data or another outcome; run the grid again.", icon=":material/history:")


def fit_cell(index: int) -> None:
    """Make the list of one cell the current fit (the same list the table describes)."""
    from frl_engine.explore_figures import cell_label

    row = table.loc[index]
    cell = services.FitSettings(lam=float(row["lam"]), min_support=float(row["min_support"]),
                                max_conditions=int(row["max_conditions"]), n_steps=settings.n_steps,
                                n_chains=settings.n_chains, seed=int(result.random_state),
                                n_thresholds=int(row["n_thresholds"]))
    ss[state.W_LAM], ss[state.W_SUPPORT] = cell.lam, round(100 * cell.min_support, 4)  # the Fit page follows
    ss[state.W_MAX_CONDITIONS], ss[state.W_N_THRESHOLDS] = cell.max_conditions, cell.n_thresholds
    spec = services.FitSpec(data.key, data.name, inputs.target, inputs.event, inputs.choices, cell, posterior,
                            tuning=json.dumps(result.tuning_record(row)))
    ui.start_fit(spec, data, inputs.features, inputs.y, navigate=None)
    st.toast(f"Fitting {cell_label(row)}", icon=":material/play_arrow:")


from frl_engine.explore_figures import cell_label, frontier_figure, heatmap_figure  # noqa: E402

done = int(table["auroc_mean"].notna().sum())
st.caption(f"{len(table)} cell{'s' if len(table) != 1 else ''} · {result.n_folds}-fold stratified cross-validation · "
           f"seed {result.random_state} · {result.elapsed_seconds:.0f} s, {ui.md(result.where)}.")
if result.stopped:
    st.warning(f"Stopped: {len(table)} of {len(result.grid)} cells had finished; they are shown below." if len(table)
               else f"Stopped before any of the {len(result.grid)} cells had finished: nothing to show. Run it again, "
                    "or with fewer values per setting or fewer folds to finish sooner.",
               icon=":material/stop_circle:")
if table.empty:
    st.stop()
rec = result.recommended
if rec is not None:
    st.success(f"**Recommended: {cell_label(rec)}**: {int(rec['n_rules'])} rules, cross-validated AUROC "
               f"{rec['auroc_mean']:.3f} (SD {rec['auroc_sd']:.3f}): the shortest list within one standard error "
               "of the best AUROC.", icon=":material/star:")
    if ss[AUTOFIT] and not running and not state.running("fit"):
        ss[AUTOFIT] = None
        fit_cell(int(rec.name))

left, right = st.columns([1.15, 1], gap="large")
left.plotly_chart(heatmap_figure(table), width="stretch", key="explore_heatmap", config={"displaylogo": False})
picked = right.plotly_chart(frontier_figure(table), width="stretch", key="explore_frontier", on_select="rerun",
                            selection_mode="points", config={"displaylogo": False})
right.caption("Each point is a cell; red: best for its length (no list as short or shorter does better, the "
              "Pareto front); star: recommended. "
              "Click a point, or a row of the table, to make its list the current fit.")

display = pd.DataFrame({
    "": ["★" if r else "" for r in table["recommended"]],
    "λ": table["lam"], "support": table["min_support"] * 100, "conditions": table["max_conditions"],
    "thresholds": table["n_thresholds"],
    "rules": table["n_rules"], "AUROC": table["auroc_mean"], "SD": table["auroc_sd"],
    "best for its length": table["pareto"], "log posterior": table["log_posterior"], "top rule": table["top_rule"],
    "note": table["error"],
})
selected = st.dataframe(
    display, hide_index=True, width="stretch", key="explore_table", on_select="rerun", selection_mode="single-row",
    column_config={"support": st.column_config.NumberColumn("support", format="%g%%"),
                   "AUROC": st.column_config.NumberColumn(format="%.3f"),
                   "SD": st.column_config.NumberColumn(format="%.3f"),
                   "log posterior": st.column_config.NumberColumn(format="%.1f")})

clicked_index = None
rows = list(getattr(getattr(selected, "selection", None), "rows", []) or [])
points = list(getattr(getattr(picked, "selection", None), "points", []) or [])
if rows:
    clicked_index = ("row", int(table.index[rows[0]]))
elif points and points[0].get("customdata") is not None:
    data_index = points[0]["customdata"]
    clicked_index = ("point", int(data_index[0] if isinstance(data_index, list) else data_index))
fittable = [i for i in table.index if pd.notna(table.loc[i, "auroc_mean"])]
if clicked_index is not None and clicked_index != ss[SEEN_SELECTION]:
    ss[SEEN_SELECTION] = clicked_index
    if clicked_index[1] in fittable and not state.running("fit"):
        ss[W_CELL] = clicked_index[1]
        fit_cell(clicked_index[1])

if fittable:
    if ss.get(W_CELL) not in fittable:
        ss[W_CELL] = int(rec.name) if rec is not None else fittable[0]
    s1, s2 = st.columns([3, 1.3], vertical_alignment="bottom")
    s1.selectbox("Cell", fittable, key=W_CELL, format_func=lambda i: (
        f"{cell_label(table.loc[i])} · {int(table.loc[i, 'n_rules'])} rules · AUROC {table.loc[i, 'auroc_mean']:.3f}"
        + (" · recommended" if table.loc[i, "recommended"] else "")))
    if s2.button("Make this list the current fit", key="explore_use_button", icon=":material/check:",
                 disabled=state.running("fit")):
        fit_cell(int(ss[W_CELL]))

ui.job_progress("fit")
fit = ss[state.FIT]
if fit is not None and not state.running("fit") and fit.spec is not None:
    n = len(fit.model["rules"])
    st.caption(f":material/format_list_numbered: Current list: {n} rule{'s' if n != 1 else ''} + ELSE "
               f"({ui.md(fit.label)}).")
    ui.link("rules", "Read the rule list", ":material/arrow_forward:")
