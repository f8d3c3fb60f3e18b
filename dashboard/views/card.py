"""Card & downloads: the laminated card (preview and PDF), the model file, the scored data; open a saved model."""

import json
import logging

import streamlit as st

from dashboard import charts, services, state, ui
from frl_engine.card import missing_glyphs_note
from frl_engine.errors import FRLError

log = logging.getLogger("frl_dashboard")
ss = st.session_state

ui.header("Card & downloads", "The list printed on a card to laminate (the paper's closing point), the model file "
                              "it came from, and your data with each patient's rule and risk.")

# ---------------------------------------------------------------- open a saved model
with st.expander("Open a saved model file (.json) instead", icon=":material/upload_file:"):
    upload = st.file_uploader("Model file", key=state.W_MODEL_FILE, label_visibility="collapsed",
                              help="A .json model saved from this dashboard or by `frl fit --out`.")
    if upload is None:
        ss[state.MODEL_FILE_SEEN] = None
        ss[state.MODEL_FILE_ERROR] = None
    elif upload.file_id != ss[state.MODEL_FILE_SEEN]:
        ss[state.MODEL_FILE_SEEN] = upload.file_id
        try:
            state.accept_model_file(services.load_model_file(upload.getvalue(), upload.name, state.new_id("file")))
            ss[state.MODEL_FILE_ERROR] = None
        except FRLError as exc:
            ss[state.MODEL_FILE_ERROR] = str(exc)
        except Exception:  # noqa: BLE001
            log.exception("Opening the model file %s failed", upload.name)
            ss[state.MODEL_FILE_ERROR] = f"{upload.name} could not be opened as a falling rule list model."
    if ss[state.MODEL_FILE_ERROR]:
        st.error(ss[state.MODEL_FILE_ERROR], icon=":material/error:")
        if ss[state.FIT] is not None:
            st.caption("The current list is kept.")

fit = ui.require_fit()
model = fit.model
default_title = f"Risk of {charts.outcome_label(model)}"

left, right = st.columns([1, 2], gap="large")
with left:
    st.radio("Card size", list(services.CARD_SIZES), key=state.W_CARD_SIZE, persist_state=state.PERSIST,
             format_func=lambda s: services.CARD_SIZES[s],
             help="A list too long for the size moves up to the next size, or onto a second card.")
    st.text_input("Title on the card", key=state.W_CARD_TITLE, persist_state=state.PERSIST, placeholder=default_title,
                  max_chars=120,
                  help="Leave empty to use the outcome.")
    title = ss[state.W_CARD_TITLE].strip() or None
    model_text = json.dumps(model, sort_keys=True)
    pdf = None
    try:
        pdf = services.card_pdf(model_text, ss[state.W_CARD_SIZE], title)
        glyphs = missing_glyphs_note(model, title)
        if glyphs:
            st.warning(glyphs, icon=":material/font_download_off:")
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001
        ui.show_error(exc, what="drawing the card")

    st.markdown("**Downloads**")
    stem = ui.file_stem((model.get("outcome") or {}).get("target"), "model")
    if pdf is not None:
        st.download_button("Card (PDF)", pdf, file_name=f"{stem}-card.pdf", mime="application/pdf",
                           icon=":material/picture_as_pdf:", key="download_card", on_click="ignore", width="stretch",
                           type="primary")
    st.download_button("Model (JSON)", services.model_json(model), file_name=f"{stem}-model.json",
                       mime="application/json", icon=":material/data_object:", key="download_model",
                       on_click="ignore", width="stretch")
    if fit.data is not None and fit.rule_index is not None:
        data, index = fit.data, fit.rule_index
        st.download_button("Scored data (CSV)", lambda: services.scored_csv(data.frame, index, model),
                           file_name=f"{stem}-scored.csv", mime="text/csv", icon=":material/download:",
                           key="download_scores", on_click="ignore", width="stretch",
                           help="Your table with frl_rule (1 = top rule), frl_rule_text and frl_risk for each patient.")
    else:
        st.caption("Scored data: only for a list fitted in this session (a model file holds no patients).")
    st.caption(f"Model ID {services.model_identifier(model)} is printed on the back of the card, so a card can be "
               "traced to its model file.")
    ui.registry_note(model)

with right:
    if pdf is not None:
        images = services.card_preview(model_text, ss[state.W_CARD_SIZE], title)
        if images:
            front, back = st.tabs(["Front", "Back"])
            front.image(images[0], caption="Front: print at 100% (actual size), cut on the marks.", width="stretch")
            if len(images) > 1:
                back.image(images[1], caption="Back: how the list was made.", width="stretch")
        else:
            st.info("The preview needs `pdftoppm` (Debian package poppler-utils), which is not installed; the PDF "
                    "download works without it.", icon=":material/info:")
