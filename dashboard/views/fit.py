"""Fit: the prior and the search, then a button (changing a setting never refits by itself)."""

import math

import numpy as np
import streamlit as st

from dashboard import services, state, ui
from frl_engine.errors import FRLError
from frl_engine.folds import patient_groups

ss = st.session_state

ui.header("Fit", "Search the falling rule list with the highest posterior probability (simulated annealing, "
                 "paper section 3.1), then sample the posterior for credible intervals (section 3.2).")
data = ui.require_data()
try:
    inputs = ui.training_inputs(data)
    services.item_preview(data.key, inputs.target, inputs.choices, inputs.features)
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")
    ui.link("data", "Fix it on the Data page", ":material/table:")
    st.stop()

grouped = patient_groups(data.frame)  # an encounter-level table: its rows are not patients
among = (f"{data.n_rows:,} rows of {len(np.unique(grouped[1])):,} patients ({ui.md(grouped[0])})" if grouped
         else f"{data.n_rows:,} patients")
st.caption(f"**{ui.md(data.name)}** · outcome **{ui.md(inputs.target)} = {ui.event_md(inputs.event)}** · "
           f"{inputs.n_events:,} {'event' if inputs.n_events == 1 else 'events'} among {among} · "
           f"{len(inputs.choices.exclude)} column(s) left out")

KEEP = {"persist_state": state.PERSIST}  # the settings survive page switches
left, middle, right = st.columns(3, gap="large")
with left:
    with st.container(border=True):
        st.markdown("**Prior and candidate rules**")
        st.slider("λ, prior list length", min_value=1.0, max_value=20.0, step=0.5, key=state.W_LAM, **KEEP,
                  help="L ~ Poisson(λ), the prior on the number of rules (paper section 2).")
        st.caption("The list length you expect a priori; smaller λ gives shorter lists.")
        st.slider("Minimum support (% of patients)", min_value=1.0, max_value=50.0, step=0.5, key=state.W_SUPPORT,
                  format="%.1f%%", **KEEP, help="Rules are mined from the items (the paper uses 5%).")
        st.caption("A candidate rule must cover at least this share of all patients.")
        st.segmented_control("Maximum conditions per rule", [1, 2, 3], key=state.W_MAX_CONDITIONS, **KEEP,
                             selection_mode="single", help="The paper uses 2.")
        st.caption("How many items one rule may join with AND.")
        st.segmented_control("Thresholds per number", [1, 3, 5, 9], key=state.W_N_THRESHOLDS, **KEEP,
                             selection_mode="single",
                             help="Cut points per numeric column, at quantiles rounded to readable numbers "
                                  "(Age >= 60); your own with `--threshold` in the CLI.")
        st.caption("More cut points give finer items (and more candidate rules).")
with middle:
    with st.container(border=True):
        st.markdown("**Simulated annealing**")
        st.number_input("Steps per chain", min_value=100, max_value=100_000, step=500, key=state.W_STEPS, **KEEP,
                        help="The paper uses 5,000 steps at temperature 1 (section 3.1). Fewer steps or chains than the defaults "
                             "seldom make a fit faster: chains that end apart run more rounds, then walks of the "
                             "posterior, and the search says it has not converged.")
        st.caption("Proposals per chain; more steps search longer.")
        st.number_input("Chains", min_value=1, max_value=16, step=1, key=state.W_CHAINS, **KEEP,
                        help="Chains run on threads; the list with the highest posterior wins. When they do not agree, "
                             "or end at many different lists, up to three more rounds of as many chains run, then "
                             "walks of the posterior look for a better list; with thousands of candidate rules, one walk "
                             "also checks chains that agree.")
        st.caption("Independent restarts; the best list wins.")
        st.number_input("Random seed", min_value=0, max_value=2**31 - 1, step=1, key=state.W_SEED, **KEEP)
        st.caption("Same seed and settings, same list.")
with right:
    with st.container(border=True):
        st.markdown("**Posterior sampling**")
        st.toggle("Sample the posterior", key=state.W_POSTERIOR, **KEEP,
                  help="Runs after the list is shown; its results fill in when ready (paper section 3.2).")
        st.caption("Credible intervals for each risk, the posterior of L, R-hat.")
        st.number_input("Samples per chain", min_value=100, max_value=state.MAX_POST_SAMPLES, step=500, key=state.W_POST_SAMPLES,
                        disabled=not ss[state.W_POSTERIOR], **KEEP,
                        help="When the chains have not converged, the sampler continues them, 2, 4, ... 64 times longer, "
                             "until they agree, its schedule ends or a longer attempt would take more than about a "
                             "minute; the time grows with the samples kept.")
        st.caption("Kept after a burn-in; run longer until the chains agree.")
        st.number_input("Sampler chains", min_value=1, max_value=8, step=1, key=state.W_POST_CHAINS,
                        disabled=not ss[state.W_POSTERIOR], **KEEP)
        st.caption("Several chains let R-hat check convergence.")

settings, posterior = ui.fit_settings_from_widgets()

problem = None
try:
    count = services.candidate_count(data.key, inputs.target, inputs.choices, settings.min_support,
                                     settings.max_conditions, inputs.features, settings.n_thresholds)
    st.markdown(f":material/rule: **{count.mined:,} candidate rules**: up to {settings.max_conditions} item(s) "
                f"joined by AND, each covering at least {settings.min_support:.1%} of patients "
                f"({math.ceil(settings.min_support * data.n_rows - 1e-9):,}+).")
    if count.screened:
        st.caption(f"The search uses the {count.kept:,} strongest: every one-condition rule, then the AND rules whose "
                   "patients' event rate stands out most from the rest (the likelihood-ratio G statistic). The prior "
                   f"still counts each rule of the list as one of all {count.mined:,}, so a rule picked from many "
                   "must earn more to be printed.")
    if count.slow_search(settings.n_steps, settings.lam):
        st.caption(f":material/schedule: With {count.kept:,} candidate rules the search also walks the posterior to "
                   "check its list, so a fit can take from seconds to a minute or two (about 5,000 rules each: a 100,000-row "
                   "hospital export about 10 s, UCI Spambase's e-mails about a minute). "
                   "A larger minimum support, fewer conditions or fewer thresholds per number give fewer rules and "
                   "a faster fit, and the Stop button under the progress bar ends a fit at any time.")
except FRLError as exc:
    problem = str(exc)
    st.error(problem, icon=":material/error:")

running = state.running("fit")
spec = services.FitSpec(data.key, data.name, inputs.target, inputs.event, inputs.choices, settings, posterior)
clicked = st.button("Fit the rule list", type="primary", icon=":material/play_arrow:", key="fit_button",
                    disabled=running or problem is not None or state.busy() is not None)
if clicked and not running:
    ui.start_fit(spec, data, inputs.features, inputs.y)
if st.button("Tune, then fit", icon=":material/grid_on:", key="tune_button",
             disabled=running or problem is not None or state.busy() is not None,
             help="Cross-validate the grid on the Explore page and fit the shortest list within one standard error "
                  "of the best AUROC (like `frl fit --tune`)."):
    ss["explore_autostart"], ss["explore_autofit"] = True, True
    st.switch_page(ui.PAGES["explore"])

ui.job_progress("fit")
error = ss[state.FIT_ERROR]
if error and not state.running("fit"):
    ui.show_message(*error)
    if ss[state.FIT] is not None and not error[0].startswith("The list was fitted"):
        st.caption("The list fitted before is kept.")

fit = ss[state.FIT]
if fit is not None and not state.running("fit"):
    n = len(fit.model["rules"])
    timing = ("" if fit.fit_seconds is None else
              " earlier with these settings (reused)" if fit.fit_seconds < 0.05 else   # not "fitted in 0.00 s"
              f" in {fit.fit_seconds:.2f} s")
    st.success(f"Current list: **{n} rule{'s' if n != 1 else ''} + ELSE**, fitted{timing} "
               f"({ui.md(fit.label)}).", icon=":material/check_circle:")
    ui.other_table_note(fit, data)
    if fit.spec is not None and fit.spec.key != spec.key and fit.spec.data_key == data.key:
        st.caption(":material/info: The settings above differ from the current list's. Nothing refits until you "
                   "press **Fit the rule list**.")
    ui.link("rules", "Read the rule list", ":material/arrow_forward:")
