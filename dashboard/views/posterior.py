"""Posterior: the length L, which rules the sampled lists contain, and whether the chains agree."""

import math

import streamlit as st

from dashboard import charts, services, state, ui
from frl_engine.diagnostics import convergence_verdict, format_factor, longer_sample_advice
from frl_engine.errors import FRLError

ss = st.session_state
RARELY_SAMPLED = 0.01  # below this share of the samples, say why the list shown is rarely drawn

ui.header("Posterior", "What the sampler says about the list (paper section 3.2): its length, the rules it "
                       "contains, and whether independent chains agree.")
fit = ui.require_fit()
view = fit.posterior

if view is None:
    if state.running("fit"):
        st.info("The posterior is being sampled.", icon=":material/hourglass_top:")
        ui.job_progress("fit")
    elif fit.source == "file":
        st.info("This list was loaded from a model file, which keeps the risks' credible intervals but not the "
                "samples. Fit it on data to see its posterior.", icon=":material/info:")
    else:
        asked = getattr(fit.spec, "posterior", None) is not None
        st.info("The posterior sample asked for with this list was stopped, or did not finish." if asked
                else "The posterior was not sampled for this list.", icon=":material/info:")
        ss_settings = ui.fit_settings_from_widgets()[1] or services.PosteriorSettings()
        if st.button(f"Sample the posterior now ({ss_settings.n_chains} chains × {ss_settings.n_samples:,} samples)",
                     type="primary", key="posterior_button", icon=":material/play_arrow:"):
            try:
                features, y, _ = services.split_outcome(fit.data.frame, fit.spec.target, fit.spec.event)
            except FRLError as exc:
                st.error(str(exc))
                st.stop()
            spec = fit.spec.with_settings(fit.spec.settings, ss_settings)
            ui.start_fit(spec, fit.data, features, y, navigate=None, result_id=fit.id)
            ui.job_progress("fit")
    st.stop()

lam = (fit.model.get("hyperparameters") or {}).get("lam")
rhat_log, rhat_len = view.rhat.get("log_posterior"), view.rhat.get("length")
c1, c2, c3, c4, c5 = st.columns(5)
c1.metric("Samples", f"{view.n_chains} × {view.n_samples:,}", border=True,
          help=f"chains × kept samples (burn-in {view.burn_in:,})")
one_chain = view.n_chains < 2   # R-hat compares chains: one chain's halves say nothing the verdict can use


def _rhat_text(value) -> str:
    return "n/a" if one_chain or value is None or math.isnan(value) else f"{value:.3f}"


rhat_help = ("R-hat compares chains: with one chain it is not computed (use 4 Sampler chains)." if one_chain else
             "Split R-hat (Vehtari et al. 2021): below 1.01–1.1 means the chains agree.")
c2.metric("R-hat, log posterior", _rhat_text(rhat_log), help=rhat_help, border=True)
c3.metric("R-hat, length L", _rhat_text(rhat_len), help=rhat_help, border=True)
acc = view.acceptance.get("all")
c4.metric("Acceptance (list moves)", charts.pct(acc), border=True)
c5.metric("Same as list shown", charts.pct(view.map_list_frequency),
          help="Share of the sampled lists identical to the MAP list on the Rule list page; "
               f"{charts.pct(view.map_groups_frequency)} put every training patient in the same group as it does "
               "(the same list up to how its rules are written and rules that reach no patient).", border=True)

verdict = convergence_verdict(view.rhat, view.ess, n_chains=view.n_chains)
if verdict.converged:
    st.caption(verdict.message)
else:
    st.warning(verdict.message.replace("(a larger --samples)", "(more Samples per chain on the Fit page)")
               .replace("(--sampler-chains)", "(Sampler chains on the Fit page)"), icon=":material/warning:")
    if math.isfinite(verdict.longer) and view.seconds > 0:
        more, took, advice = longer_sample_advice(verdict, view.n_samples, view.seconds,
                                                  "{:,} Samples per chain on the Fit page", "this sample's")
        if more > state.MAX_POST_SAMPLES:
            st.caption(f"About {format_factor(verdict.longer)} times as long a sample would be needed, "
                       f"{more:,} Samples per chain: more than the Fit page's {state.MAX_POST_SAMPLES:,} (at this "
                       f"sample's speed about {took}); the command line (`frl sample --samples {more}`) takes it.")
        else:
            st.caption(advice)
    if getattr(view, "over_budget", False):
        st.caption("The sampler did not go on to a longer attempt by itself: with this many patients and lists "
                   "this long, that would have taken more than about a minute. More Samples per chain on the Fit "
                   "page ask for a longer sample, as said above.")
    disagreement = getattr(view, "disagreement", ())
    if disagreement:
        # what the chains have not agreed on yet, rule by rule (frl_engine.diagnostics.rules_chains_disagree_on)
        st.caption("Where the chains disagree most: the share of each chain's sampled lists that hold the rule. "
                   "Chains that had converged would hold each rule about equally often.")
        st.dataframe(charts.disagreement_table(disagreement), hide_index=True, width="stretch",
                     key="disagreement_table",
                     column_config={f"chain {k + 1}": st.column_config.NumberColumn(f"chain {k + 1}", format="percent")
                                    for k in range(len(disagreement[0][1]))})
if view.map_groups_frequency < RARELY_SAMPLED:
    # A clinician reading "0.0%" next to their card deserves the reason (docs/search.md section 4).
    st.caption(f"The list shown is {charts.pct(view.map_list_frequency)} of the sampled lists, and "
               f"{charts.pct(view.map_groups_frequency)} group the training patients as it does. That is expected "
               "when the posterior spreads over many similar lists: the list shown is its highest point, and many "
               "slightly different lists share the rest of the probability. The risks and intervals of the list "
               "shown come from a separate run on that list alone.")

map_length = len(fit.model["rules"])
left, right = st.columns(2, gap="large")
left.plotly_chart(charts.length_histogram_chart(view.lengths, lam, map_length), width="stretch", key="length_hist",
                  config={"displaylogo": False})
left.caption(f"Red: the length of the list shown ({map_length}). Grey dots: the prior Poisson(λ)."
             + services.length_note(view.lengths, map_length))
right.plotly_chart(charts.acceptance_chart(view.acceptance, view.acceptance_per_chain), width="stretch",
                   key="acceptance_chart", config={"displaylogo": False})
right.caption("Metropolis–Hastings moves on the list: swap two rules, replace one, add one, remove one "
              f"(bars pooled, dots per chain). Sampling took {max(view.seconds, 0.01):.2f} s.")

st.plotly_chart(charts.inclusion_chart(view.inclusion, view.map_list), width="stretch", key="inclusion",
                config={"displaylogo": False})

st.subheader("Trace plots per chain", anchor=False)
t1, t2 = st.columns(2, gap="large")
t1.plotly_chart(charts.trace_chart(view.log_posterior_trace, title="Log posterior", y_title="log posterior",
                                   rhat=rhat_log, ess=view.ess.get("log_posterior")),
                width="stretch", key="trace_logpost", config={"displaylogo": False})
t2.plotly_chart(charts.trace_chart(view.length_trace, title="List length L", y_title="L", rhat=rhat_len,
                                   ess=view.ess.get("length"), step=True),
                width="stretch", key="trace_length", config={"displaylogo": False})

with st.expander("Acceptance rates per chain, and the sampler's text summary"):
    acc_table = charts.acceptance_table(view.acceptance, view.acceptance_per_chain, view.proposals)
    st.dataframe(acc_table, hide_index=True, width="stretch", key="acceptance_table",
                 column_config={c: st.column_config.NumberColumn(c, format="percent")
                                for c in acc_table.columns if c not in ("move", "proposals")})
    st.code(view.summary_text, language=None)
