"""Models: the model registry. Every list fitted here is kept with its provenance; find one by the ID on its card,
open it as the current list, or retire it (hidden from the list, never deleted)."""

import streamlit as st

from dashboard import services, state, ui
from frl_engine.errors import FRLError

ss = st.session_state

ui.header("Models", "Every list fitted here (and with `frl fit --register`) is kept in the model registry: what it "
                    "was fitted on, with which settings and seed, and how it validated. Type the model ID printed "
                    "on the back of a card to find its model.")
if ss[state.REGISTRY_ERROR]:
    st.warning(ss[state.REGISTRY_ERROR], icon=":material/warning:")

find, show_all = st.columns([3, 1], vertical_alignment="bottom")
find.text_input("Find a model by its ID", key=state.W_MODELS_FIND, persist_state=state.PERSIST, max_chars=64,
                placeholder="the ID on the back of the card, e.g. 3fa2c1d9e0 (the first digits are enough)")
show_all.toggle("Show retired models", key=state.W_MODELS_ALL, persist_state=state.PERSIST)
wanted = (ss[state.W_MODELS_FIND] or "").strip()
try:
    registry = services.model_registry()
    entries = [registry.get(wanted)] if wanted else registry.entries(include_retired=bool(ss[state.W_MODELS_ALL]))
    in_use, retired = registry.count()
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

st.caption(f"Registry {ui.md(registry.location)} (set FRL\\_REGISTRY to use another file or a shared server): "
           f"{in_use} model{'s' if in_use != 1 else ''} in use, {retired} retired.")
if not entries:
    st.info("No models registered yet: every list fitted on the **Fit** page is kept here.", icon=":material/info:")
    ui.link("fit", "Go to Fit", ":material/tune:")
    st.stop()

table = services.registry_table(entries)
if not any(e.retired for e in entries):
    table = table.drop(columns="Retired")
st.dataframe(table, hide_index=True, width="stretch", key="models_table",
             column_config={"Retired": st.column_config.CheckboxColumn(width="small"),
                            "Intervals": st.column_config.CheckboxColumn(
                                width="small", help="The model holds its risks' 95% credible intervals (posterior)"),
                            "Extends": st.column_config.TextColumn(
                                width="small",
                                help="The entry this one extends: the same fit before its posterior or validation"),
                            "Note": st.column_config.TextColumn(width="medium"),
                            "By": st.column_config.TextColumn(width="small"),
                            "Rules": st.column_config.NumberColumn(width="small")})

by_id = {e.model_id: e for e in entries}
if ss.get(state.W_MODELS_PICK) not in by_id:
    # This session's current list first (on a shared server the newest entry may be another user's), else the newest
    mine = services.model_identifier(ss[state.FIT].model) if ss[state.FIT] is not None else None
    ss[state.W_MODELS_PICK] = mine if mine in by_id else entries[0].model_id


def _describe(model_id: str) -> str:
    e = by_id[model_id]
    return (f"{model_id} · {e.created_at.replace('T', ' ')[:16]} · {e.data_text()}" + (f" · {e.note}" if e.note else "")
            + (" · retired" if e.retired else ""))


pick = st.selectbox("Model", list(by_id), key=state.W_MODELS_PICK, format_func=_describe)
entry = by_id[pick]
fit = ss[state.FIT]
current = fit is not None and services.model_identifier(fit.model) == entry.model_id

with st.container(border=True):
    st.markdown(f"**Model ID {entry.model_id}**" + (" · the current list" if current else "")
                + (f" · retired {entry.retired_at.replace('T', ' ')[:16]} UTC" if entry.retired else ""))
    st.caption(ui.md(services.registry_caption(entry)))
    model = entry.model
    st.markdown("  \n".join(
        [f"{'IF' if i == 0 else 'ELSE IF'} {ui.md(r['name'])} → **{100 * r['probability']:.1f}%**"
         for i, r in enumerate(model["rules"])] + [f"ELSE → **{100 * model['default']['probability']:.1f}%**"]))
    n1, n2 = st.columns([4, 1], vertical_alignment="bottom")
    note = n1.text_input("Note", value=entry.note or "", key=f"models_note_{entry.model_id}", max_chars=500,
                         placeholder="e.g. printed for ward 7, March 2027", help="Kept with the model; earlier notes "
                         "stay in its history.")
    save_note = n2.button("Save note", key="models_save_note", icon=":material/edit_note:", width="stretch",
                          disabled=not note.strip() or note.strip() == (entry.note or ""))
    b1, b2, b3 = st.columns(3)
    opened = b1.button("Open as the current list", key="models_open", type="primary", icon=":material/open_in_new:",
                       disabled=current, width="stretch")
    b2.download_button("Model (JSON)", entry.model_bytes, file_name=f"model-{entry.model_id}.json",
                       mime="application/json", key="models_download", on_click="ignore", icon=":material/data_object:",
                       width="stretch", help="Byte for byte the registered model file.")
    retire = b3.button("Retire", key="models_retire", icon=":material/archive:", disabled=entry.retired,
                       width="stretch", help="Hide it from the list (never deleted: `Show retired models` finds it).")
    with st.expander("Settings, data and software"):
        st.json({"data": None if entry.data is None else {
                    "name": entry.data.name, "sha256": entry.data.sha256, "rows": entry.data.n_rows,
                    "columns": list(entry.data.columns), "outcome": entry.data.outcome, "event": entry.data.event},
                 "hyperparameters": entry.hyperparameters, "seed": entry.seed,
                 "software": entry.software_version, "environment": entry.environment,
                 "created_by": entry.created_by, "command": entry.command, "host": entry.host,
                 "cross_validation": entry.cross_validation, "external_validation": entry.external_validation,
                 "extends": entry.parent_sha256[:10] if entry.parent_sha256 else None}, expanded=False)

if opened:
    try:
        state.accept_model_file(services.open_registered(entry.sha256, state.new_id("registry")))
        ui.go_to("rules", "Read the rule list", ":material/arrow_forward:")
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")
if save_note:
    try:
        registry.attach_results(entry.sha256, note=note.strip(), user_name=services.dashboard_user() or "dashboard")
        st.rerun()
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")
if retire:
    try:
        registry.retire(entry.sha256, user_name=services.dashboard_user() or "dashboard")
        st.rerun()
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")
