"""Validation: cross-validated ROC of the falling rule list against the paper's baselines (on a button)."""

import streamlit as st

from dashboard import charts, jobs, services, state, ui
from frl_engine.errors import FRLError
from frl_engine.validation.crossval import METHOD_DESCRIPTIONS, METHOD_NAMES
from frl_engine.figures import calibration_figure, roc_figure

ss = st.session_state

ui.header("Validation", "How well does the list rank patients it has not seen? Stratified k-fold cross-validation "
                        "of the falling rule list and the paper's baselines (section 5), each refitted on every "
                        "training fold.")
fit = ui.require_fit()
ui.registry_note(fit.model)
if fit.source != "fit" or fit.data is None:
    st.info("This list was loaded from a model file: validation refits it on data, so fit a list on the Fit page "
            "first.", icon=":material/info:")
    st.stop()

with st.container(border=True):
    s1, s2, s3 = st.columns([1, 3, 1])
    s1.number_input("Folds", min_value=2, max_value=10, step=1, key=state.W_CV_FOLDS, persist_state=state.PERSIST,
                    help="The paper uses 5 folds.")
    s2.pills("Methods", list(services.VALIDATION_METHODS), key=state.W_CV_METHODS, persist_state=state.PERSIST,
             selection_mode="multi", format_func=lambda m: METHOD_NAMES[m],
             help="; ".join(f"{METHOD_NAMES[m]}: {METHOD_DESCRIPTIONS[m]}" for m in services.VALIDATION_METHODS))
    s3.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key=state.W_CV_SEED, persist_state=state.PERSIST,
                    help="Seed of the fold split and of every fit.")
    methods = tuple(m for m in services.VALIDATION_METHODS if m in ss[state.W_CV_METHODS])
    st.caption(f"Validates the current list's settings ({ui.md(fit.label)}) on {ui.md(fit.spec.data_name)}. It takes "
               "longer than a fit, since every fold refits every method: about half a minute on the 3,000-patient "
               "sample data and a few minutes on 20,000 patients (3.4 min measured), most of it the SVM's grid "
               "search; leave SVM out to finish sooner.")
    running = state.running("validation")
    clicked = st.button("Run cross-validation", type="primary", icon=":material/play_arrow:", key="cv_button",
                        disabled=running or not methods or state.busy() is not None)
if clicked and not running:
    try:
        features, y, _ = services.split_outcome(fit.data.frame, fit.spec.target, fit.spec.event)
        vspec = services.ValidationSpec(fit.spec.key, methods, int(ss[state.W_CV_FOLDS]), int(ss[state.W_CV_SEED]))
        job = jobs.Job("validation", "Cross-validating", services.validation_stages(methods))
        state.start_job(job, services.validation_work(vspec, fit, features, y))
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")

ui.job_progress("validation")
error = ss[state.VALIDATION_ERROR]
if error and not state.running("validation"):
    ui.show_message(*error)

result = ss[state.VALIDATION]
if result is None:
    if not state.running("validation"):
        st.info("No cross-validation yet: press **Run cross-validation**.", icon=":material/info:")
    st.stop()

evaluation = result.evaluation
missing = result.missing_methods
if missing:   # the methods finished so far: the others are running, or were stopped before they ran
    names = ", ".join(METHOD_NAMES.get(m, m) for m in missing)
    st.info(f"The methods cross-validated so far; {names} " + (
        "follow." if state.running("validation") else
        "did not run (stopped). Run the cross-validation again to add them: the finished methods are not run again."),
        icon=":material/pending:")
if result.fit_id != fit.id and result.target and not result.same_data(fit.spec):
    st.warning(f"These results are for another table or outcome (**{ui.md(result.target)}** in "
               f"**{ui.md(result.data_name)}**), not the current list's; run the cross-validation again for the "
               "current list.", icon=":material/history:")
elif result.fit_id != fit.id:
    st.warning("These results are for an earlier list's settings; run the cross-validation again for the current "
               "list.", icon=":material/history:")

st.subheader("AUROC per method", anchor=False)
st.caption(f"{evaluation.description} of {evaluation.n_rows:,} patients ({evaluation.n_positive:,} events), "
           f"seed {evaluation.random_state}; {evaluation.elapsed_seconds:.0f} s of computing.")
auroc = charts.auroc_display(evaluation.auroc_table())
fold_columns = [c for c in auroc.columns if c.startswith("fold ")]
st.dataframe(auroc, hide_index=True, width="stretch", key="auroc_table",
             column_config={**{c: st.column_config.NumberColumn(c, format="%.3f")
                               for c in ["AUROC (mean)", "SD", *fold_columns]},
                            "Fit time per fold (s)": st.column_config.NumberColumn(format="%.2f")})

left, right = st.columns(2, gap="large")
left.plotly_chart(charts.fit_for_streamlit(roc_figure(evaluation, title="ROC curves: folds thin, mean bold"), 520),
                  width="stretch", key="roc_chart", config={"displaylogo": False})
if "frl" in evaluation.methods:
    right.plotly_chart(charts.fit_for_streamlit(calibration_figure(
        evaluation, title="FRL calibration: each rule's risk vs. the observed rate on the test fold"), 520),
        width="stretch", key="calibration_chart", config={"displaylogo": False})
    right.caption("One point per rule and fold; the larger the point, the more test patients the rule captured. "
                  "Points near the diagonal mean the printed risks match what happened.")
    with st.expander("The list learned on each training fold"):
        for f in evaluation.fold_results("frl"):
            st.markdown(f"**Fold {f.fold + 1}** (AUROC {f.auroc:.3f}, {f.n_candidates} candidate rules): "
                        + " → ".join(ui.md(r) for r in f.rules) + " → ELSE")
