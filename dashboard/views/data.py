"""Data: bring a table, pick the outcome, decide how each column becomes items."""

import html

import streamlit as st

from dashboard import state, ui

# The header first: this is the landing page, and the engine import below takes a second on a cold server.
ui.header("Data", "A table of patients: one row per patient, one column per finding, and the outcome to predict. "
                  "Uploaded files stay in this session's memory and are never written to disk.")

from dashboard import charts, services  # noqa: E402
from frl_engine.errors import FRLError, MissingOutcomeError  # noqa: E402
from frl_engine.columns import LATER_OUTCOME_REASON  # noqa: E402
from frl_engine.io import event_label, event_values  # noqa: E402

ss = st.session_state
SMALL_TABLE = 100  # fewer patients than this: the page says a list fitted on them means little

# ---------------------------------------------------------------- source
source = st.radio("Data source", [state.SOURCE_SAMPLE, state.SOURCE_UPLOAD], key=state.W_SOURCE,
                  persist_state=state.PERSIST, horizontal=True, label_visibility="collapsed")
if source == state.SOURCE_UPLOAD:
    upload = st.file_uploader(
        "Table of patients: CSV (also ;- or tab-separated), Excel (.xlsx, .ods), Parquet, SPSS (.sav), Stata (.dta) or "
        "SAS (.sas7bdat, .xpt); also .csv.gz or .zip",
        key=state.W_UPLOAD,
        help="The first row must hold the column names; one row per patient.")
    st.caption(f"Up to {services.max_upload_mb()} MB. A larger file is refused by the uploader and marked in red "
               "(point at it to read why); the table loaded before stays in use.")
    if upload is None:
        ss[state.UPLOAD_SEEN] = None
        ss[state.DATA_ERROR] = None
        if ss[state.DATA] is not None and ss[state.PENDING_UPLOAD] is None:
            st.caption(f"No file chosen: still using **{ui.md(ss[state.DATA].name)}**.")
    elif upload.file_id != ss[state.UPLOAD_SEEN]:
        # Keep the file's bytes first (instant): if the user goes to another page before the table is read,
        # that page reads it (ui.require_data), so an upload is never dropped for the table before it.
        ss[state.UPLOAD_SEEN] = upload.file_id
        ss[state.PENDING_UPLOAD] = (upload.name, upload.getvalue())
elif ss[state.DATA] is None or not ss[state.DATA].is_sample:
    ss[state.PENDING_UPLOAD] = None  # the user went back to the sample before an upload was read
    try:
        state.set_data(services.load_sample())
    except FRLError as exc:
        ss[state.DATA_ERROR] = str(exc)

if ss[state.PENDING_UPLOAD] is not None:
    ui.read_pending_upload()
if ss[state.DATA_ERROR]:
    st.error(ss[state.DATA_ERROR], icon=":material/error:")
    if ss[state.DATA] is not None:
        st.caption(f"Still using **{ui.md(ss[state.DATA].name)}**, the last table that loaded.")

data = ui.require_data()
frame = data.frame

# in the uploader's units (1 MB = 1,000,000 bytes): it showed 50.7MB where this line read 48.4 MB
size = f"{data.n_bytes / 1000:,.0f} KB" if data.n_bytes < 1000 ** 2 else f"{data.n_bytes / 1000 ** 2:,.1f} MB"
read_as = frame.attrs.get("read_as")
st.markdown(f":material/description: **{ui.md(data.name)}**{' (sample data)' if data.is_sample else ''} · {size}"
            + (f" · read as {ui.md(read_as)}" if read_as and not data.is_sample else ""))
sheets = frame.attrs.get("sheets") or []
if len(sheets) > 1 and data.raw is not None and frame.attrs.get("sheet") in sheets:
    # a workbook of several sheets: the one with the most cells is read first; a bigger lookup sheet is not patients
    current = frame.attrs["sheet"]
    chosen = st.selectbox("Sheet of the workbook", sheets, index=sheets.index(current), format_func=ui.visible,
                          key=f"sheet_{data.sha256}", help="The sheet that holds one row per patient.")
    if chosen != current:
        try:
            state.set_data(services.load_table(data.raw, data.name, sheet=chosen))
        except FRLError as exc:
            st.error(f"Sheet {ui.md(chosen)} cannot be used: {ui.md(exc)}", icon=":material/error:")
        else:
            st.rerun()
unread = frame.attrs.get("unread_sheets") or []
if unread:   # a year per sheet: half the patients would be missing from the list without a word that stands out
    st.warning(f"Sheet{'s' if len(unread) > 1 else ''} {', '.join(f'**{ui.md(n)}**' for n in unread)} of this "
               f"workbook {'have' if len(unread) > 1 else 'has'} the same columns as the sheet read, and "
               f"{'their' if len(unread) > 1 else 'its'} patients are not in this table. Put all the patients on one "
               "sheet to use them.", icon=":material/layers:")
if frame.attrs.get("left_out"):
    st.caption(f":material/content_cut: Left out of the file: {ui.md(frame.attrs['left_out'])}.")
if frame.attrs.get("unnamed"):
    st.caption(f":material/label_off: In the file, {ui.md(frame.attrs['unnamed'])}.")
merged = frame.attrs.get("merged_spellings")
if merged:
    st.caption(":material/merge: Spellings that differ only in case were merged into the most frequent one: "
               + ", ".join(f"{ui.md(column)} ({n})" for column, n in merged.items()) + ".")
# The engine's own count ('?', NA, blanks and text results read as missing), from the cached column profile.
profile = services.profile_columns_cached(data.key, frame)
missing = float(profile["missing"].mean()) / 100 if len(profile) else 0.0
codes = profile.attrs.get("number_codes") or {}
text_cells = profile.attrs.get("text_as_missing") or {}
if text_cells:  # a lab result "pending" among numbers: the patient is placed as if the value were not known
    st.info("Text in columns of numbers, read as missing (those patients meet none of the column's conditions): "
            + "; ".join(f"**{ui.md(column)}**: {ui.md(cells)}" for column, cells in text_cells.items())
            + ". If a cell holds a number written another way, correct it in the export.",
            icon=":material/text_fields:")
wordy = profile.attrs.get("text_among_numbers") or {}
if wordy:  # an age written 'seventy' on a third of the rows: read as text, its numbers meet no threshold
    st.warning("Read as text, not numbers, as too many cells hold text: "
               + "; ".join(f"**{ui.md(column)}**: {ui.md(cells)}" for column, cells in wordy.items())
               + ". Its numbers meet no threshold in a rule: correct or empty those cells in the export.",
               icon=":material/text_fields:")
if codes:
    st.warning("Numbers that look like codes for *not known*: "
               + "; ".join(f"**{ui.md(column)}**: {ui.md(note)}" for column, note in codes.items())
               + ". They are read as numbers, so 999 counts as a large value in a rule such as ≥ 75 (and 0 as a small "
                 "one, < 25): if they mean "
                 "not known, read them as missing (the button below, for this session; your file is not changed), "
                 "or empty those cells in the export.",
               icon=":material/warning:")

    def read_codes_as_missing(data=data, columns=tuple(codes)):
        target = ss.get(state.W_TARGET)
        state.set_data(services.without_number_codes(data, columns))
        if target in data.frame.columns:
            ss[state.W_TARGET] = target  # a callback runs before the picker is drawn again
            state.reset_event()

    st.button("Read these codes as missing", key="w_codes_as_missing", icon=":material/block:",
              on_click=read_codes_as_missing)


def leave_out_repeated_rows(data):
    # only rows are left out: the outcome, its event and the column settings stay as the user set them
    kept = {key: ss.get(key) for key in (state.W_TARGET, state.W_EVENT, state.W_EVENT_ALSO)}
    fewer = services.without_repeated_records(data)
    state.set_data(fewer)
    ss.update(kept)  # a callback runs before the pickers are drawn again
    if data.key in ss[state.COLUMN_TABLES]:
        ss[state.COLUMN_TABLES][fewer.key] = ss[state.COLUMN_TABLES][data.key]


ui.repeated_rows_warning(data, key="w_drop_repeated_rows", leave_out=leave_out_repeated_rows)
c1, c2, c3 = st.columns(3)
c1.metric("Patients (rows)", f"{data.n_rows:,}", border=True)
c2.metric("Columns", f"{data.n_columns:,}", border=True)
c3.metric("Missing cells", charts.pct(missing), border=True)  # "<0.1%", not "0.0%", for a few
if st.toggle("Show the first rows", key="w_preview_rows"):  # drawn only on request: a table grid is not free
    st.dataframe(frame.head(100), hide_index=True, key="data_preview")

# ---------------------------------------------------------------- outcome
st.subheader("Outcome", anchor=False)
columns = list(frame.columns)
if ss.get(state.W_TARGET) not in columns:
    ss[state.W_TARGET] = services.suggest_target(frame)
    state.reset_event()
o1, o2, o3 = st.columns([1, 1, 2])
target = o1.selectbox("Outcome column", columns, key=state.W_TARGET, persist_state=state.PERSIST,
                      on_change=state.reset_event, format_func=ui.visible,
                      help="The yes/no outcome the rule list predicts, e.g. readmission within 30 days.")
for column, value in services.single_valued_outcomes(frame):
    st.warning(f"**{ui.md(column)}** looks like an outcome, but every patient in this file has '{ui.md(value)}': "
               "a model needs patients with and without the event. Was the export filtered on it?",
               icon=":material/filter_alt:")
if data.n_rows < SMALL_TABLE:
    st.warning(f"{data.n_rows} patients are very few: a rule list fitted on them can print risks that no new "
               f"patient bears out. Aim for hundreds of patients, with dozens of events.", icon=":material/warning:")
values = services.outcome_values(frame[target]) if target in frame.columns else []
if ss.get(state.W_EVENT) not in values:
    ss[state.W_EVENT] = services.plain(services.suggest_event(frame[target])) if values else None
o2.selectbox("Value that counts as the event", values, key=state.W_EVENT, persist_state=state.PERSIST,
             format_func=ui.visible,
             placeholder="Pick the event value", disabled=not values,
             help="Patients with this value are the events; all other values are 'no event'.")
if len(values) > 2:  # e.g. readmitted NO / >30 / <30: "any readmission" is <30 and >30
    further = [v for v in values if v != ss.get(state.W_EVENT)]
    ss[state.W_EVENT_ALSO] = [v for v in ss.get(state.W_EVENT_ALSO) or () if v in further]
    o2.multiselect("Also counts as the event", further, key=state.W_EVENT_ALSO, persist_state=state.PERSIST,
                   format_func=ui.visible,
                   placeholder="No other value", disabled=ss.get(state.W_EVENT) is None,
                   help="Further values whose patients are events too, e.g. both <30 and >30 for any readmission; "
                        "the values left count as 'no event'.")
inputs = None
try:
    inputs = ui.training_inputs(data, columns=False)   # the columns are read below, after their editor
    chosen = {str(v) for v in event_values(inputs.event)}
    others = [str(v) for v in values if str(v) not in chosen]
    rest = (f"; {html.escape(', '.join(others))} count{'s' if len(others) == 1 else ''} as no event"
            if len(others) > 1 or len(chosen) > 1 else "")
    o3.markdown(f"<div style='padding-top:1.9rem'>Event <b>{html.escape(str(target))} = "
                f"{html.escape(event_label(inputs.event))}</b>: "
                f"{inputs.n_events:,} of {data.n_rows:,} {services.row_word(data)} "
                f"({100 * inputs.n_events / data.n_rows:.1f}%)"
                f"{rest}</div>", unsafe_allow_html=True)
    blanks = inputs.features.attrs.get("outcome_blank_as_no")
    if blanks:  # a checkbox outcome: X where the event happened, blank where not
        st.caption(f":material/check_box: The {blanks:,} blank cells of **{ui.md(target)}** count as no event: it holds "
                   f"one value, {ui.md(event_label(inputs.event))}, where the event happened, and blanks elsewhere (a "
                   "checkbox outcome). If a blank means *not known*, fix the export: no patient is then known to be "
                   "without the event.")
except MissingOutcomeError as exc:  # patients lost to follow-up: leave them out, if the user says so
    st.error(f"{exc}. If {target} is not the outcome, pick the outcome column above.", icon=":material/error:")

    def leave_out_missing_outcome(data=data, target=target):
        chosen, also = ss.get(state.W_EVENT), list(ss.get(state.W_EVENT_ALSO) or [])
        state.set_data(services.without_missing_outcome(data, target))
        ss[state.W_TARGET] = target  # a callback runs before the picker is drawn again
        state.reset_event()
        values = [services.plain(v) for v in services.outcome_values(ss[state.DATA].frame[target])]
        if chosen is not None and chosen in values:   # the event the user picked stays picked
            ss[state.W_EVENT] = chosen
            ss[state.W_EVENT_ALSO] = [v for v in also if v in values and v != chosen]

    st.button(f"Leave out the {exc.n_missing:,} patients whose {target} is empty or not known", key="w_drop_missing_outcome",
              icon=":material/content_cut:", on_click=leave_out_missing_outcome)
except FRLError as exc:
    st.error(str(exc), icon=":material/error:")

# ---------------------------------------------------------------- columns
st.subheader("Columns", anchor=False)
st.caption("How the engine reads each column, and why. Change a type, give your own thresholds for a numeric column "
           "(e.g. `45, 60`; blank = automatic quartiles), or untick **Use** to leave a column out. Identifiers, "
           "empty and near-constant columns (one value on 99% of rows) are left out by default; `?`, `NA`, `NULL` "
           "and blanks are missing.")
table = state.column_table(data)
shown = table[table["column"] != target]
version = ss.get(f"editor_version_{data.key}", 0)
edited = st.data_editor(
    shown, key=f"columns_editor_{data.key}_{version}", hide_index=True, num_rows="fixed", width="stretch",
    height=min(640, 38 + 35 * len(shown) + 2),
    column_config={
        "column": st.column_config.TextColumn("Column", disabled=True),
        "use": st.column_config.CheckboxColumn("Use", help="Untick to leave the column out of the rules."),
        "kind": st.column_config.SelectboxColumn(
            "Type", options=list(services.COLUMN_TYPES), required=True,
            help="numeric: thresholds (Age ≥ 60); categorical: one item per frequent value (DischargeTo = home); "
                 "boolean: one yes item (BedSores); code: ICD/ATC codes with groups (diag_1 starts with 428); "
                 "code list: several codes in one cell, 428|250.01 (diagnoses includes 428); "
                 "nominal: whole numbers that are labels (discharge_disposition_id = 22), never thresholds; "
                 "left out: no items (identifiers, empty or near-constant columns, dates). To use such a column, "
                 "pick its type and tick **Use**."),
        "thresholds": st.column_config.TextColumn("Thresholds", help="Numeric columns only: cut points separated "
                                                  "by commas. Blank = the engine's rounded quartiles."),
        "detected": st.column_config.TextColumn("Read as", disabled=True),
        "missing": st.column_config.NumberColumn("Missing", format="%.1f%%", disabled=True),
        "distinct": st.column_config.NumberColumn("Distinct", format="%d", disabled=True),
        "examples": st.column_config.TextColumn("Examples", disabled=True, width="medium"),
        "note": st.column_config.TextColumn("Why", disabled=True, width="large"),
    },
)
if not edited.equals(shown):
    updated = table.copy()
    updated.loc[edited.index, ["use", "kind", "thresholds"]] = edited[["use", "kind", "thresholds"]]
    state.store_column_table(data, updated)
    table = updated
follow_up = services.follow_up_columns(table, target)
if follow_up:   # said above the fold of the table: its Why column is wide, and this one decides what a card can use
    st.info(f"Left out, named like a follow-up time: **{ui.md(', '.join(follow_up))}**. A time until the outcome or "
            "the end of follow-up is known only afterwards, so a rule on it could not be used when a patient is "
            "seen. If it is known then, set its Type to numeric and tick **Use**.", icon=":material/schedule:")
later = services.follow_up_columns(table, target, reason=LATER_OUTCOME_REASON)
if later:   # a second outcome (Rotterdam's recur beside death): a list on it reads "IF recur"
    st.info(f"Left out, named like a second outcome: **{ui.md(', '.join(later))}**. An event such as a relapse or a "
            "death is known only after the patient is seen, so a rule on it could not be used then. If it is known "
            "then, set its Type and tick **Use**.", icon=":material/schedule:")
edit_notes = services.column_edit_notes(table, target)
if edit_notes:  # the Why cells keep the engine's reading: say what the edits do instead
    st.caption("Your changes: " + " ".join(ui.md(note) for note in edit_notes))
if st.button("Reset columns to the engine's defaults", icon=":material/restart_alt:", type="tertiary"):
    del ss[state.COLUMN_TABLES][data.key]
    ss[f"editor_version_{data.key}"] = version + 1
    st.rerun()

# ---------------------------------------------------------------- items
st.subheader("Items", anchor=False)
ready = False
if inputs is None:
    st.info("Pick the outcome above to see the items." if not target else
            "The items appear once the outcome above can be used (see the message under it).", icon=":material/info:")
else:
    try:
        choices = services.column_choices(table, target)
        preview = services.item_preview(data.key, target, choices, inputs.features)
    except FRLError as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001
        ui.show_error(exc, what="binarising the columns")
    else:
        ready = True
        for column, outside in preview.outside_thresholds:
            st.warning(f"Your thresholds for **{ui.md(column)}** include {ui.md(outside)}: an item there holds every "
                       "patient or none, so it makes no rule. Check them for a typo (600 for 60).",
                       icon=":material/warning:")
        n_columns = preview.table["column"].nunique()
        st.caption(f"{len(preview.table)} yes/no items from {n_columns} columns: the building blocks of the rules. "
                   "A rule joins up to a few items with AND. Missing values never match an item, except "
                   "'is missing'." + (f" No items from: {ui.md(', '.join(preview.constant))}."
                                      if preview.constant else ""))
        fit = ss[state.FIT]  # after a fit of these columns: the items of a copied column make no rule of their own
        if (fit is not None and fit.spec is not None and fit.spec.data_key == data.key and fit.spec.target == target
                and fit.spec.choices == choices):
            copied = services.copied_columns_note(fit, ui.md)
            if copied:
                st.caption(f":material/content_copy: {copied}")
        with st.container(key="items"):
            st.dataframe(
                charts.item_table_display(preview.table), hide_index=True, width="stretch", key="items_table",
                height=min(560, 38 + 35 * len(preview.table) + 2),
                column_config={
                    "item": st.column_config.TextColumn("Item"),
                    "column": st.column_config.TextColumn("Column"),
                    "patients": st.column_config.NumberColumn("Patients covered", format="%d"),
                    "percent": st.column_config.ProgressColumn("Share of patients", format="%.0f%%", min_value=0,
                                                               max_value=100),
                })
if ready:
    ui.link("fit", "Next: fit the rule list", ":material/arrow_forward:")
