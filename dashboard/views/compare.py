"""Compare: two lists side by side (how lambda and the minimum support change the list)."""

import streamlit as st

from dashboard import charts, services, state, ui
from frl_engine.errors import FRLError

ss = st.session_state

ui.header("Compare", "Fit with different settings and read the two lists side by side: a smaller λ gives a "
                     "shorter list, a higher minimum support gives broader rules.")
fit = ui.require_fit()
history = ss[state.HISTORY]

# ---------------------------------------------------------------- fit a variant of the current list
base = fit if fit.source == "fit" else next((f for f in reversed(history) if f.source == "fit"), None)
if base is not None:
    with st.container(border=True):
        st.markdown(f"**Fit a variant** of the current list's data and columns ({ui.md(base.spec.data_name)}, "
                    f"outcome {ui.md(base.spec.target)} = {ui.event_md(base.spec.event)}); it appears as **B** below and "
                    "does not replace the current list.")
        v1, v2, v3, v4, v5, v6 = st.columns([2, 2, 1.3, 1.3, 1, 1.4], vertical_alignment="bottom")
        v1.slider("λ", 1.0, 20.0, step=0.5, key=state.W_VAR_LAM, persist_state=state.PERSIST,
                  help="Prior mean list length.")
        v2.slider("Min support (%)", 1.0, 50.0, step=0.5, key=state.W_VAR_SUPPORT, persist_state=state.PERSIST,
                  format="%.1f%%")
        v3.selectbox("Max conditions", [1, 2, 3], key=state.W_VAR_MAX_CONDITIONS, persist_state=state.PERSIST)
        v4.number_input("Steps", 100, 100_000, step=500, key=state.W_VAR_STEPS, persist_state=state.PERSIST)
        v5.number_input("Seed", 0, 2**31 - 1, step=1, key=state.W_VAR_SEED, persist_state=state.PERSIST)
        running = state.running("fit")
        clicked = v6.button("Fit variant", type="primary", key="variant_button", icon=":material/play_arrow:",
                            disabled=running or state.busy() is not None, width="stretch")
    if clicked and not running:
        settings = services.FitSettings(
            lam=float(ss[state.W_VAR_LAM]), min_support=round(float(ss[state.W_VAR_SUPPORT]) / 100, 6),
            max_conditions=int(ss[state.W_VAR_MAX_CONDITIONS]), n_steps=int(ss[state.W_VAR_STEPS]),
            n_chains=base.spec.settings.n_chains, seed=int(ss[state.W_VAR_SEED]))
        try:
            features, y, _ = services.split_outcome(base.data.frame, base.spec.target, base.spec.event)
            ui.start_fit(base.spec.with_settings(settings, None), base.data, features, y, navigate=None,
                         make_current=False, compare_slot="B")
        except FRLError as exc:
            st.error(str(exc), icon=":material/error:")
    ui.job_progress("fit")
    error = ss[state.FIT_ERROR]
    if error and not state.running("fit"):
        ui.show_message(*error)

if len(history) < 2:
    st.info("Only one list so far: fit a variant above (or refit on the Fit page) to compare two lists.",
            icon=":material/info:")
    st.stop()

ids = [f.id for f in history]
names = {f.id: f"#{i + 1} · {len(f.model['rules'])} rules · {f.label}" for i, f in enumerate(history)}
if ss.get(state.W_COMPARE_A) not in ids:
    ss[state.W_COMPARE_A] = fit.id if fit.id in ids else ids[-2]
if ss.get(state.W_COMPARE_B) not in ids:
    ss[state.W_COMPARE_B] = next((i for i in reversed(ids) if i != ss[state.W_COMPARE_A]), ids[-1])
s1, s2 = st.columns(2, gap="large")
a_id = s1.selectbox("List A", ids, key=state.W_COMPARE_A, persist_state=state.PERSIST, format_func=names.get)
b_id = s2.selectbox("List B", ids, key=state.W_COMPARE_B, persist_state=state.PERSIST, format_func=names.get)
a, b = state.find_fit(a_id), state.find_fit(b_id)

summary = charts.compare_summary({"A": a.model, "B": b.model}).T
if a.spec is not None and b.spec is not None and (a.spec.data_key, a.spec.target) != (b.spec.data_key, b.spec.target):
    st.warning("A and B were fitted on different tables or outcomes (see **Data** and **Outcome** below): their risks "
               "are of different patients and their log posteriors cannot be compared.", icon=":material/compare:")
st.dataframe(summary, width="stretch", key="compare_summary", height=38 + 35 * len(summary) + 2)

only_a, both, only_b = charts.shared_rules(a.model, b.model)
left, right = st.columns(2, gap="large")
with left:
    st.markdown(f"**A** · {ui.md(names[a_id])}")
    st.html(charts.rule_list_html(a.model, show_then=False, compact=True))
    if a.id != fit.id and st.button("Make A the current list", key="make_a_current"):
        ss[state.FIT] = a
        st.rerun()
with right:
    st.markdown(f"**B** · {ui.md(names[b_id])}")
    st.html(charts.rule_list_html(b.model, show_then=False, compact=True))
    if b.id != fit.id and st.button("Make B the current list", key="make_b_current"):
        ss[state.FIT] = b
        st.rerun()

st.markdown(f"**Rules in both lists:** {' · '.join(ui.md(r) for r in sorted(both)) or 'none'}  \n"
            f"**Only in A:** {' · '.join(ui.md(r) for r in sorted(only_a)) or 'none'}  \n"
            f"**Only in B:** {' · '.join(ui.md(r) for r in sorted(only_b)) or 'none'}")
st.plotly_chart(charts.compare_risk_chart({"A": a.model, "B": b.model}), width="stretch", key="compare_chart",
                config={"displaylogo": False})
