"""Data page fixes of issue 12, driven by Streamlit's AppTest: the sidebar names the current file, a raw
export's three-valued outcome gets a sensible event, and unreadable files get one plain message."""

import importlib.util
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from streamlit.testing.v1 import AppTest

from dashboard import services, state

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "dashboard" / "app.py")
JARGON = ("engine", "tokeniz", "C error", "zip file", "magic bytes", "Traceback", "Error:")

pytestmark = pytest.mark.skipif(not services.SAMPLE_PATH.is_file(), reason="sample data not generated")


@pytest.fixture
def at(monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    assert not app.exception
    return app


def upload(app, name, raw, mime="text/csv"):
    app.switch_page("views/data.py").run()
    app.radio(key=state.W_SOURCE).set_value(state.SOURCE_UPLOAD).run()
    app.file_uploader(key=state.W_UPLOAD).set_value((name, raw, mime)).run()
    assert not app.exception
    return app


def sidebar_text(app) -> str:
    return " ".join(m.value for m in app.sidebar.markdown)


def errors(app):
    return [e.value for e in app.error]


def _csv(n=300, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n), "Smoker": rng.choice(["yes", "no"], n),
                          "Outcome": rng.choice(["yes", "no"], n, p=[0.3, 0.7])})
    return frame.to_csv(index=False).encode()


def test_the_sidebar_names_the_current_file_after_each_upload(at):
    """Regression: the sidebar was drawn before the page loaded the upload, so it named the previous file."""
    assert "readmission.csv" in sidebar_text(at)  # also on the very first run (it was empty then)
    upload(at, "first.csv", _csv(300))
    assert "first.csv" in sidebar_text(at) and "300 rows" in sidebar_text(at)
    assert "readmission.csv" not in sidebar_text(at)
    at.file_uploader(key=state.W_UPLOAD).set_value(("second.csv", _csv(120, seed=1), "text/csv")).run()
    assert "second.csv" in sidebar_text(at) and "120 rows" in sidebar_text(at)
    assert "first.csv" not in sidebar_text(at)
    at.file_uploader(key=state.W_UPLOAD).set_value(("broken.xlsx", b"not a workbook", "text/plain")).run()
    assert "second.csv" in sidebar_text(at)  # a failed upload keeps the table in use, and the sidebar says so


@pytest.fixture(scope="module")
def raw_export_csv():
    script = ROOT / "sample_data" / "make_raw_export.py"
    spec = importlib.util.spec_from_file_location("make_raw_export", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.make_raw_export(2000, seed=3).to_csv(index=False).encode()


def test_a_raw_export_offers_readmitted_and_the_event_less_than_30_days(at, raw_export_csv):
    upload(at, "diabetic_data.csv", raw_export_csv)
    assert at.selectbox(key=state.W_TARGET).value == "readmitted"
    event = at.selectbox(key=state.W_EVENT)
    assert sorted(event.options) == sorted(["<30", ">30", "NO"])
    assert event.value == "<30"
    said = " ".join(m.value for m in at.markdown)
    assert "readmitted = &lt;30" in said and "&gt;30, NO count as no event" in said
    # encounters of repeated patients (patient_nbr) are rows, as the fit and the card count them
    assert re.search(r"[\d,]+ of [\d,]+ rows \(", said) and not re.search(r"[\d,]+ of [\d,]+ patients \(", said)
    assert not any("pick which value" in e for e in errors(at))
    event.set_value(">30").run()
    assert not at.exception
    said = " ".join(m.value for m in at.markdown)
    assert "readmitted = &gt;30" in said and "&lt;30, NO count as no event" in said


def test_further_values_of_a_three_valued_outcome_can_count_as_the_event_any_readmission(at, raw_export_csv):
    upload(at, "diabetic_data.csv", raw_export_csv)
    frame = pd.read_csv(__import__("io").BytesIO(raw_export_csv))
    also = at.multiselect(key=state.W_EVENT_ALSO)
    assert sorted(also.options) == [">30", "NO"] and also.value == []   # the picked event is not offered again
    also.set_value([">30"]).run()
    assert not at.exception and not errors(at)
    said = " ".join(m.value for m in at.markdown)
    n_any = int((frame["readmitted"] != "NO").sum())
    assert "readmitted = &lt;30 or &gt;30" in said and "NO counts as no event" in said
    assert f"{n_any:,} of {len(frame):,} rows" in said   # encounters of repeated patients (patient_nbr)
    at.switch_page("views/fit.py").run()
    assert "readmitted = <30 or >30" in " ".join(c.value for c in at.caption).replace("\\", "")
    at.switch_page("views/data.py").run()
    at.selectbox(key=state.W_EVENT).set_value(">30").run()   # now the event itself: no longer a further value
    assert not at.exception and at.multiselect(key=state.W_EVENT_ALSO).value == []
    assert sorted(at.multiselect(key=state.W_EVENT_ALSO).options) == ["<30", "NO"]


def test_a_two_valued_outcome_has_no_further_event_values_to_pick(at):
    upload(at, "small.csv", _csv())
    assert at.selectbox(key=state.W_EVENT).value == "yes"
    assert not [m for m in at.multiselect if m.key == state.W_EVENT_ALSO]


def test_a_three_valued_outcome_without_a_no_value_waits_for_the_users_pick(at):
    frame = pd.DataFrame({"Age": np.arange(60) % 50 + 20, "Outcome": ["home", "rehab", "nursing"] * 20})
    upload(at, "places.csv", frame.to_csv(index=False).encode())
    assert at.selectbox(key=state.W_TARGET).value == "Outcome"
    assert at.selectbox(key=state.W_EVENT).value is None
    assert any("pick which value counts as the event" in e for e in errors(at))
    at.selectbox(key=state.W_EVENT).set_value("rehab").run()
    assert not any("pick which value" in e for e in errors(at))


UNREADABLE = [
    ("notes.xlsx", b"Age,Outcome\n61,yes\n72,no\n", "not an Excel workbook"),
    ("blob.csv", np.random.default_rng(5).integers(0, 256, 3000, dtype=np.uint8).tobytes(), "not a CSV file"),
    ("empty.csv", b"", "is empty"),
]


@pytest.mark.parametrize("name, raw, words", UNREADABLE)
def test_an_unreadable_file_gets_one_plain_message_and_the_session_goes_on(at, name, raw, words):
    upload(at, "good.csv", _csv(200))
    kept = at.session_state[state.DATA]
    at.file_uploader(key=state.W_UPLOAD).set_value((name, raw, "application/octet-stream")).run()
    assert not at.exception
    shown = errors(at)
    assert len(shown) == 1 and words in shown[0] and name in shown[0], shown
    assert not any(word.lower() in shown[0].lower() for word in JARGON), shown[0]
    assert at.session_state[state.DATA] is kept
    assert any("Still using" in c.value and "good.csv" in c.value for c in at.caption)
    # still usable: the next good file replaces the table and the message goes away
    at.file_uploader(key=state.W_UPLOAD).set_value(("better.csv", _csv(250, seed=2), "text/csv")).run()
    assert at.session_state[state.DATA].name == "better.csv" and not errors(at)
    assert at.selectbox(key=state.W_TARGET).value == "Outcome"


def test_a_semicolon_export_with_decimal_commas_is_read_and_the_page_says_how(at):
    rng = np.random.default_rng(1)
    n = 300
    lines = ["Age;Weight;Outcome"] + [f"{a};{w:.1f};{o}".replace(".", ",") for a, w, o in
                                      zip(rng.integers(20, 90, n), rng.normal(75, 12, n), rng.choice(["yes", "no"], n))]
    upload(at, "export.csv", ("\n".join(lines) + "\n").encode())
    assert not errors(at)
    data = at.session_state[state.DATA]
    assert list(data.frame.columns) == ["Age", "Weight", "Outcome"] and data.frame["Weight"].dtype.kind == "f"
    assert any("read as semicolon-separated, decimal comma" in m.value for m in at.markdown)


def test_a_report_footer_and_a_repeated_header_are_left_out_and_said_on_the_data_page(at):
    body = _csv(300).decode()
    header, rows = body.split("\n", 1)
    raw = (header + "\n" + rows + header + "\n" + rows + "Total,600,\nMean,54.2,\n").encode()
    upload(at, "joined.csv", raw)
    frame = at.session_state[state.DATA].frame
    assert len(frame) == 600 and sorted(frame["Outcome"].unique()) == ["no", "yes"]
    captions = " ".join(c.value for c in at.caption)
    assert "Left out of the file" in captions and "1 repeated header line" in captions and "'Total'" in captions
    assert not errors(at)


def test_missing_cells_count_question_marks_as_the_engine_does(at):
    frame = pd.DataFrame({"Age": ["?"] * 150 + [str(v) for v in range(150)], "Outcome": ["yes", "no"] * 150})
    upload(at, "marks.csv", frame.to_csv(index=False).encode())
    shown = {m.label: m.value for m in at.metric}
    assert shown["Missing cells"] == "25.0%"  # 150 of 600 cells, written '?'


def test_a_table_of_only_the_outcome_says_so_on_the_data_and_fit_pages(at):
    """Regression: the page said "The table has no columns" next to "Columns 1", and "Pick the outcome above"
    although the outcome was picked."""
    upload(at, "only.csv", b"outcome\nDeceased\nAlive\nAlive\nDeceased\n" * 50)
    assert any("holds only the outcome column 'outcome'" in e for e in errors(at)), errors(at)
    assert not any("Pick the outcome above" in i.value for i in at.info)
    at.switch_page("views/fit.py").run()
    assert any("holds only the outcome column" in e for e in errors(at))
    assert "fit_button" not in [b.key for b in at.button]  # nothing to fit


def _captions(app) -> str:
    return " ".join(c.value for c in app.caption)


def test_a_wide_table_says_how_many_rules_mining_found_and_that_the_fit_may_take_a_minute(at):
    """Regression: a table whose mining found thousands more rules than the fit keeps showed "5,000 candidate
    rules", and a fit of a minute or more came with no word beforehand."""
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({f"finding_{j:03d}": rng.choice(["yes", "no"], 300) for j in range(120)})
    wide["Outcome"] = rng.choice(["yes", "no"], 300, p=[0.3, 0.7])
    upload(at, "wide.csv", wide.to_csv(index=False).encode())
    at.switch_page("views/fit.py").run()
    assert not at.exception and not errors(at)
    line = next(m.value for m in at.markdown if ":material/rule:" in m.value)
    mined = int(re.search(r"\*\*([\d,]+) candidate rules", line).group(1).replace(",", ""))
    assert mined > services.MAX_RULES  # 120 one-condition rules and about 7,000 pairs
    assert f"The search uses the {services.MAX_RULES:,} strongest" in _captions(at)
    assert f"one of all {mined:,}" in _captions(at)  # the prior's B: every rule mined
    assert "a fit can take from seconds to a minute or two" in _captions(at)

    upload(at, "narrow.csv", _csv())  # a few columns: neither note
    at.switch_page("views/fit.py").run()
    assert "strongest" not in _captions(at) and "a minute or two" not in _captions(at)


def test_a_checkbox_outcome_is_read_with_its_blanks_as_no_event_and_said(at):
    """Died written X where the patient died, blank otherwise: the event X is offered, the blanks count as no event,
    and the page says so under the outcome (a blank that means not known would need the export fixed)."""
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n), "Died": np.where(rng.random(n) < 0.25, "X", "")})
    upload(at, "deaths.csv", frame.to_csv(index=False).encode())
    at.selectbox(key=state.W_TARGET).set_value("Died").run()
    assert not at.exception and not errors(at)
    assert at.selectbox(key=state.W_EVENT).value == "X"
    n_blank = int((frame["Died"] == "").sum())
    said = " ".join(c.value for c in at.caption)
    assert f"The {n_blank:,} blank cells of **Died** count as no event" in said


def test_a_column_left_out_reads_left_out_in_its_type_cell_not_a_grey_none(at):
    """An identifier (and an empty column) is left out by default: its Type cell was empty, which the column table
    draws as a grey "None". It now reads "left out", one of the Type's choices (a value outside them is drawn as an
    error), and the Type cannot be emptied back to None."""
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"PatientID": [f"P{i:05d}" for i in range(n)], "Age": rng.integers(20, 90, n),
                          "Empty": [None] * n, "Outcome": rng.choice(["yes", "no"], n)})
    upload(at, "ids.csv", frame.to_csv(index=False).encode())
    [editor] = [d for d in at.dataframe if d.key and d.key.startswith("columns_editor_")]
    types = editor.value.set_index("column")["kind"]
    assert types["PatientID"] == "left out" and types["Empty"] == "left out" and types["Age"] == "numeric"
    assert not editor.value["kind"].isna().any()
    config = json.loads(editor.proto.columns)["kind"]
    assert "left out" in config["type_config"]["options"] and config["required"] is True
    items = next(d for d in at.dataframe if "item" in d.value.columns).value
    assert "PatientID" not in set(items["column"]) and "Age" in set(items["column"])


def test_the_data_page_says_what_an_edit_of_the_column_table_does(at):
    """The Why cell keeps the engine's reading; under the table, a caption says what the user's edits do, and that
    Use ticked again on an identifier whose Type is still "left out" makes no item."""
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"PatientID": [f"P{i:05d}" for i in range(n)], "Age": rng.integers(20, 90, n),
                          "Smoker": rng.choice(["yes", "no"], n), "Outcome": rng.choice(["yes", "no"], n)})
    raw = frame.to_csv(index=False).encode()
    upload(at, "ids.csv", raw)
    assert not any("Your changes" in c.value for c in at.caption)
    tables = at.session_state[state.COLUMN_TABLES]
    key = services.bytes_key(raw)
    table = tables[key].copy()
    table.loc[table["column"] == "PatientID", "use"] = True
    table.loc[table["column"] == "Age", "kind"] = "categorical"
    tables[key] = table
    at.session_state[state.COLUMN_TABLES] = tables
    at.run()
    assert not at.exception
    [said] = [c.value for c in at.caption if "Your changes" in c.value]
    assert "PatientID: Use is ticked, but its Type is still left out, so it makes no item" in said
    assert "Age: used as categorical \\(your choice; the engine reads it as numeric\\)" in said
    items = next(d for d in at.dataframe if "item" in d.value.columns).value
    assert "PatientID" not in set(items["column"]) and not any(">" in item for item in items["item"])  # no Age >= 60


def test_a_second_outcome_is_left_out_and_said_above_the_table(at):
    """Rotterdam's recur beside death: left out, and said where the column table is seen."""
    rng = np.random.default_rng(3)
    n = 300
    recur = rng.random(n) < 0.4
    frame = pd.DataFrame({"nodes": rng.integers(0, 15, n), "recur": recur.astype(int),
                          "death": (rng.random(n) < np.where(recur, 0.7, 0.2)).astype(int)})
    upload(at, "rotterdam.csv", frame.to_csv(index=False).encode())
    assert at.session_state[state.W_TARGET] == "death"
    [said] = [i.value for i in at.info if "second outcome" in i.value]
    assert "**recur**" in said and "set its Type and tick **Use**" in said
    [editor] = [d for d in at.dataframe if d.key and d.key.startswith("columns_editor_")]
    assert editor.value.set_index("column").loc["recur", "kind"] == "left out"
    items = next(d for d in at.dataframe if "item" in d.value.columns).value
    assert "recur" not in set(items["column"]) and "nodes" in set(items["column"])


def test_a_follow_up_time_is_left_out_and_said_above_the_table_until_the_user_takes_it_back(at):
    """R's pbc, flchain and whas500 carry the time of follow-up, which heads every list it is in and is known only
    afterwards: the Data page leaves it out, says so where it is seen, and stops saying so once it is used."""
    rng = np.random.default_rng(3)
    n = 300
    died = rng.random(n) < 0.3
    frame = pd.DataFrame({"futime": np.where(died, rng.integers(40, 1500, n), rng.integers(1200, 4500, n)),
                          "bili": np.round(rng.lognormal(0.3, 0.8, n), 1), "status": np.where(died, "dead", "alive")})
    raw = frame.to_csv(index=False).encode()
    upload(at, "pbc.csv", raw)
    [said] = [i.value for i in at.info if "follow-up time" in i.value]
    assert "**futime**" in said and "set its Type to numeric and tick **Use**" in said
    [editor] = [d for d in at.dataframe if d.key and d.key.startswith("columns_editor_")]
    assert editor.value.set_index("column").loc["futime", "kind"] == "left out"
    items = next(d for d in at.dataframe if "item" in d.value.columns).value
    assert "futime" not in set(items["column"]) and "bili" in set(items["column"])
    tables = at.session_state[state.COLUMN_TABLES]
    key = services.bytes_key(raw)
    table = tables[key].copy()
    table.loc[table["column"] == "futime", ["use", "kind"]] = [True, "numeric"]
    tables[key] = table
    at.session_state[state.COLUMN_TABLES] = tables
    at.run()
    assert not at.exception and not any("follow-up time" in i.value for i in at.info)
    items = next(d for d in at.dataframe if "item" in d.value.columns).value
    assert "futime" in set(items["column"])


def test_a_value_holding_a_right_to_left_override_is_shown_visibly_in_the_outcome_choices(at):
    """A select box shows its options as text, not markdown: an event value holding U+202E would show the rest of
    the option reversed; it reads <U+202E>, as on the page's text and on a terminal. The value itself is kept."""
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n),
                          "Outcome\u202e": rng.choice(["died\u202edeliver", "home"], n, p=[0.3, 0.7])})
    upload(at, "rlo.csv", frame.to_csv(index=False).encode())
    outcome = at.selectbox(key=state.W_TARGET)
    assert outcome.value == "Outcome\u202e" and "Outcome<U+202E>" in outcome.options
    event = at.selectbox(key=state.W_EVENT)
    assert "died<U+202E>deliver" in event.options and event.value == "died\u202edeliver"
    assert not any("\u202e" in option for option in [*outcome.options, *event.options])


def test_a_workbook_of_several_sheets_offers_its_sheets_and_reads_the_one_picked(at):
    """A bigger lookup sheet of ICD codes beside the patients was read first (the most filled cells): the sheet with
    a column named like an outcome is read instead, the Data page offers the workbook's sheets, and picking one reads
    it as the table; a sheet that is no table gets a message and the table in use stays."""
    import io

    rng = np.random.default_rng(0)
    n = 300
    patients = pd.DataFrame({"Age": rng.integers(20, 90, n), "Died": rng.choice(["yes", "no"], n, p=[0.3, 0.7])})
    lookup = pd.DataFrame({"code": [f"I{i:03d}" for i in range(1000)], "description": ["a diagnosis"] * 1000})
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        patients.to_excel(writer, sheet_name="Patients", index=False)
        lookup.to_excel(writer, sheet_name="ICD lookup", index=False)
        pd.DataFrame({"About": []}).to_excel(writer, sheet_name="Empty", index=False)
    upload(at, "export.xlsx", buffer.getvalue(),
           "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    [sheet] = [s for s in at.selectbox if s.label == "Sheet of the workbook"]
    # the sheet with a column named like an outcome (Died), not the bigger lookup
    assert sheet.options == ["Patients", "ICD lookup", "Empty"] and sheet.value == "Patients"
    assert list(at.session_state[state.DATA].frame.columns) == ["Age", "Died"]
    assert "the one with a column named like an outcome ('Died')" in at.session_state[state.DATA].frame.attrs["read_as"]
    sheet.set_value("ICD lookup").run()
    assert list(at.session_state[state.DATA].frame.columns) == ["code", "description"]
    [sheet] = [s for s in at.selectbox if s.label == "Sheet of the workbook"]
    sheet.set_value("Patients").run()
    assert not at.exception
    assert list(at.session_state[state.DATA].frame.columns) == ["Age", "Died"]
    assert at.selectbox(key=state.W_TARGET).value == "Died"
    assert not any("same columns as the sheet read" in w.value for w in at.warning)
    [sheet] = [s for s in at.selectbox if s.label == "Sheet of the workbook"]
    sheet.set_value("Empty").run()
    assert not at.exception and any("Sheet Empty cannot be used" in e for e in errors(at))
    assert list(at.session_state[state.DATA].frame.columns) == ["Age", "Died"]


def test_sheets_with_the_same_columns_as_the_one_read_are_a_warning_not_a_caption(at):
    """A year per sheet: the patients of the sheets not read are missing from the list; that was a caption."""
    import io

    rng = np.random.default_rng(1)
    years = {str(year): pd.DataFrame({"Age": rng.integers(20, 90, n), "Died": rng.choice(["yes", "no"], n)})
             for year, n in ((2020, 300), (2021, 200))}
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        for name, frame in years.items():
            frame.to_excel(writer, sheet_name=name, index=False)
    upload(at, "years.xlsx", buffer.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    [said] = [w.value for w in at.warning if "same columns as the sheet read" in w.value]
    assert "**2021**" in said and "patients are not in this table" in said
