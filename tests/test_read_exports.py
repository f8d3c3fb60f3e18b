"""Tables as hospital systems and European Excel write them: the delimiter, the decimal mark, the sheet,
stray spaces and missing-value markers in the outcome (frl_engine/io.py, frl_engine/sniff.py)."""

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.errors import DataError
from frl_engine.io import read_table, split_target
from frl_engine.sniff import text_dialect

ROWS = [("M1", 61, "75,3", "F ", "yes"), ("M2", 72, "80,1", "M", "no"), ("M3", 55, "?", "F", "no"),
        ("M4", 80, "66,0", " M", "yes")]


def _text(sep: str, decimal: str = ".") -> bytes:
    lines = [sep.join(["MRN", "Age", "Weight (kg)", "Sex", "Outcome"])]
    for mrn, age, weight, sex, outcome in ROWS:
        weight = weight if decimal == "," else weight.replace(",", ".")
        lines.append(sep.join([mrn, str(age), weight, sex, outcome]))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("sep, decimal, name, read_as", [
    (",", ".", "export.csv", None),
    (";", ",", "export.csv", "semicolon-separated, decimal comma"),
    (";", ".", "export.csv", "semicolon-separated"),
    ("\t", ".", "export.tsv", "tab-separated"),
    ("|", ".", "export.txt", "vertical bar-separated"),
])
def test_the_delimiter_and_the_decimal_mark_are_found_and_said(sep, decimal, name, read_as):
    frame = read_table(_text(sep, decimal), name)
    assert list(frame.columns) == ["MRN", "Age", "Weight (kg)", "Sex", "Outcome"]
    weights = pd.to_numeric(frame["Weight (kg)"], errors="coerce")
    assert weights.tolist()[:2] == [75.3, 80.1] and np.isnan(weights[2])
    assert frame.attrs.get("read_as") == read_as


def test_a_comma_separated_file_with_a_point_decimal_is_never_read_with_a_decimal_comma():
    assert text_dialect("a;b\n1,500;2.5\n") == (";", ".")  # thousands in one column, a point in another
    assert text_dialect("a,b\n1,2\n") == (",", ".")
    assert text_dialect("one column\n1\n2\n") == (",", ".")
    # a quoted comma inside a semicolon-separated file does not make it comma-separated
    assert text_dialect('name;dx\n"Smith, J";I50\n"Doe, A";E11\n')[0] == ";"


def test_spaces_around_text_cells_are_trimmed_so_one_level_is_one_level():
    frame = read_table(_text(","), "export.csv")
    assert sorted(frame["Sex"].unique()) == ["F", "M"]


def test_spellings_that_differ_only_in_case_are_one_level_the_most_frequent_one():
    frame = read_table(b"Sex,Dx\nF,I50.9\nf,i50.9\nF,E11\nM,E11\nm ,I50.9\nM,e11\n", "export.csv")
    assert frame["Sex"].tolist() == ["F", "F", "F", "M", "M", "M"]
    assert frame["Dx"].tolist() == ["I50.9", "I50.9", "E11", "E11", "I50.9", "E11"]
    assert frame.attrs["merged_spellings"] == {"Sex": 2, "Dx": 2}


def test_a_workbook_is_read_from_its_sheet_of_patients_not_its_cover_sheet():
    buffer = io.BytesIO()
    patients = pd.DataFrame({"Age": [61, 72, 55], "Outcome": ["yes", "no", "no"]})
    with pd.ExcelWriter(buffer) as writer:
        pd.DataFrame({"About": ["Export of 2024"]}).to_excel(writer, sheet_name="Cover", index=False)
        patients.to_excel(writer, sheet_name="Patients", index=False)
    frame = read_table(buffer.getvalue(), "export.xlsx")
    assert frame.equals(patients)
    assert frame.attrs["read_as"].startswith("sheet 'Patients' of 2")


def test_a_workbook_is_read_from_the_sheet_holding_the_outcome_or_the_sheet_asked_for(tmp_path, capsys):
    """A bigger lookup sheet of ICD codes beside the patients was read instead of them ("Outcome column 'died' is
    not in the data"), with no way to choose: the sheet holding --target is read, and --sheet names another."""
    rng = np.random.default_rng(0)
    n = 400
    age = rng.integers(20, 95, n)
    patients = pd.DataFrame({"age": age, "died": np.where(rng.random(n) < np.where(age >= 70, 0.4, 0.05), "yes", "no")})
    lookup = pd.DataFrame({"code": [f"I{i:03d}" for i in range(2000)], "description": ["a diagnosis"] * 2000})
    path = tmp_path / "export.xlsx"
    with pd.ExcelWriter(path) as writer:
        patients.to_excel(writer, sheet_name="Patients", index=False)
        lookup.to_excel(writer, sheet_name="ICD lookup", index=False)
    assert list(read_table(path).columns) == ["code", "description"]   # nothing wanted: the fullest sheet
    frame = read_table(path, wanted_columns=["Died"])   # any case, as --target is matched
    assert frame.equals(patients) and "sheet 'Patients' of 2" in frame.attrs["read_as"]
    assert "the one holding 'Died'" in frame.attrs["read_as"]
    assert list(read_table(path, sheet="icd LOOKUP", wanted_columns=["died"]).columns) == ["code", "description"]
    assert read_table(path, sheet="1").equals(patients)
    with pytest.raises(DataError, match="has no sheet 'Admissions'; its sheets are 'Patients', 'ICD lookup'"):
        read_table(path, sheet="Admissions")
    assert main(["fit", str(path), "--target", "died", "--steps", "500"]) == 0
    out = capsys.readouterr().out
    assert "sheet 'Patients' of 2" in out and "age >=" in out
    assert main(["fit", str(path), "--target", "died", "--sheet", "ICD lookup"]) == 2
    assert "Outcome column 'died' is not in the data" in capsys.readouterr().err
    csv = tmp_path / "patients.csv"
    patients.to_csv(csv, index=False)
    assert main(["fit", str(csv), "--target", "died", "--steps", "500", "--sheet", "Patients"]) == 0
    assert "Note: --sheet Patients is for workbooks; patients.csv is not one" in capsys.readouterr().out


def test_cells_excel_shows_as_percentages_are_read_as_those_percentages(tmp_path):
    """A cell stored as 0.33 and formatted `0%` shows 33% in Excel, and a CSV export of it writes `33%`, which is
    read as 33: the workbook's cell is read as 33 too (the list said `Smoking share >= 0.33` where the clinician
    reads 33%, and a model fitted on the workbook compared the CSV's 33 with 0.33). Other number formats, and text
    cells, are left as they are; the line says which columns."""
    import openpyxl

    rng = np.random.default_rng(1)
    shares = np.round(rng.uniform(0, 1, 300), 2)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Age", "Smoking share", "Ratio", "Died"])
    for share in shares:
        sheet.append([int(rng.integers(20, 90)), float(share), float(share), "yes" if share > 0.5 else "no"])
        sheet.cell(row=sheet.max_row, column=2).number_format = "0%"
        sheet.cell(row=sheet.max_row, column=3).number_format = "0.00"
    sheet.append([50, "n/a", 0.5, "no"])   # a text cell is not multiplied (n/a: missing)
    path = tmp_path / "export.xlsx"
    book.save(path)
    frame = read_table(path)
    assert frame["Smoking share"].iloc[:300].tolist() == [round(100 * v, 10) for v in shares]
    assert pd.isna(frame["Smoking share"].iloc[300]) and frame["Ratio"].iloc[:300].tolist() == shares.tolist()
    assert "with 'Smoking share' as the percentages Excel shows" in frame.attrs["read_as"]
    text = pd.DataFrame({"Smoking share": [f"{100 * v:.0f}%" for v in shares]})
    from frl_engine.columns import numeric_values

    assert np.allclose(numeric_values(text["Smoking share"], "s"), numeric_values(frame["Smoking share"].iloc[:300],
                                                                                  "s"))


def test_frl_predict_says_how_a_workbook_was_read_and_copies_its_percent_cells_as_stored(tmp_path, capsys):
    """`frl predict` on a workbook said nothing of the sheet read or of the percentages, and wrote EF 39 where the
    cell stores 0.39; a `.tsv` output was comma-separated."""
    import openpyxl

    rng = np.random.default_rng(3)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Patients"
    sheet.append(["EF", "Died"])
    ef = np.round(rng.uniform(0.15, 0.7, 400), 2)
    for value in ef:
        sheet.append([float(value), "yes" if value < 0.35 and rng.random() < 0.7 else "no"])
        sheet.cell(row=sheet.max_row, column=1).number_format = "0%"
    lookup = book.create_sheet("Lookup")
    for i in range(1000):
        lookup.append([f"I{i:03d}", "a diagnosis"])
    path = tmp_path / "echo.xlsx"
    book.save(path)
    model = tmp_path / "m.json"
    assert main(["fit", str(path), "--target", "Died", "--steps", "500", "--out", str(model)]) == 0
    capsys.readouterr()
    scored = tmp_path / "scored.tsv"
    assert main(["predict", str(model), str(path), "--out", str(scored)]) == 0
    err = capsys.readouterr().err
    assert "Read echo.xlsx as sheet 'Patients' of 2" in err and "'EF' as the percentages Excel shows" in err
    written = pd.read_csv(scored, sep="\t")
    assert list(written.columns[:2]) == ["EF", "Died"] and written["EF"].tolist() == ef.tolist()   # as stored


def test_a_workbooks_cells_keep_their_types_text_numbers_dates_and_yes_no():
    """Read by calamine (ten times faster than openpyxl on 100,000 rows): each cell as Excel typed it."""
    import datetime

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["MRN", "Age", "Weight", "Admitted", "Diabetic", "Lactate", "Died"])
    sheet.append(["00012", 61, 75.3, datetime.date(2024, 3, 4), True, "=1/0", "Yes"])   # a formula not computed
    sheet.append(["00013", 72, 80.0, datetime.datetime(2024, 3, 5, 10, 30), False, 1.5, "No"])
    sheet.append(["00014", 55, None, datetime.date(2024, 3, 6), True, 2.25, "No"])
    buffer = io.BytesIO()
    book.save(buffer)
    frame = read_table(buffer.getvalue(), "export.xlsx")
    assert frame["MRN"].tolist() == ["00012", "00013", "00014"]          # text stays text: its zeros kept
    assert frame["Age"].tolist() == [61, 72, 55] and pd.api.types.is_integer_dtype(frame["Age"])
    assert frame["Weight"].tolist()[:2] == [75.3, 80.0] and np.isnan(frame["Weight"][2])
    assert frame["Admitted"].tolist() == [pd.Timestamp(2024, 3, 4), pd.Timestamp(2024, 3, 5, 10, 30),
                                          pd.Timestamp(2024, 3, 6)]
    assert frame["Diabetic"].tolist() == [True, False, True]
    assert np.isnan(frame["Lactate"][0]) and frame["Lactate"].tolist()[1:] == [1.5, 2.25]


def test_a_missing_value_marker_in_the_outcome_is_missing_not_an_outcome_value():
    frame = pd.DataFrame({"Age": [61, 72, 55, 80], "Outcome": ["yes", "no", "?", "yes"]})
    with pytest.raises(DataError) as info:
        split_target(frame, "Outcome", "yes")  # "?" must not become a patient without the event
    assert "1 missing values (written '?')" in str(info.value)


def test_frl_fit_says_how_it_read_a_semicolon_file(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 400
    age = rng.integers(20, 90, n)
    weight = np.round(rng.normal(75, 12, n), 1)
    outcome = np.where(rng.random(n) < 0.15 + 0.5 * (age > 70), "yes", "no")
    text = "Age;Weight;Outcome\n" + "\n".join(f"{a};{str(w).replace('.', ',')};{o}"
                                               for a, w, o in zip(age, weight, outcome))
    path = tmp_path / "export.csv"
    path.write_text(text + "\n", encoding="utf-8")
    status = main(["fit", str(path), "--target", "Outcome", "--explain-columns"])
    printed, err = capsys.readouterr()
    assert status == 0, err
    assert "Read export.csv as semicolon-separated, decimal comma." in printed
    assert any(line.startswith("Weight") and "numeric" in line for line in printed.splitlines())


def test_spellings_of_one_outcome_that_differ_in_case_or_spaces_are_one_outcome():
    frame = pd.DataFrame({"Age": [61, 72, 55, 80, 66], "Died": ["Yes", "no", "YES", "yes ", "No"]})
    features, event, positive = split_target(frame, "Died")
    assert event.tolist() == [True, False, True, True, False] and positive == "Yes"
    assert split_target(frame, "Died", "YES")[1].tolist() == event.tolist()


def test_external_validation_reads_the_event_the_same_way():
    from frl_engine.validation.external import outcome_events

    frame = pd.DataFrame({"Died": ["YES", "no", "Yes ", "No"]})
    assert outcome_events(frame, "Died", "Yes").tolist() == [True, False, True, False]


@pytest.mark.parametrize("values, kind, numbers", [
    (["<0.5", "2.5", "3.1", ">150", "7"], "numeric", [0.5, 2.5, 3.1, 150.0, 7.0]),  # at the assay's limits
    (["95%", "90%", "88.5%"], "numeric", [95.0, 90.0, 88.5]),
    (["1,250", "12,000", "980", "3,400.50"], "numeric", [1250.0, 12000.0, 980.0, 3400.5]),
    (["<30", ">30", "NO"], "categorical", None),  # labels, not limits: no plain number among them
])
def test_lab_limits_percentages_and_thousands_separators_are_numbers(values, kind, numbers):
    from frl_engine.columns import numeric_values, read_column

    series = pd.Series(values * 40)
    reading = read_column("result", series)
    assert reading.kind == kind, reading.reason
    if numbers is not None:
        assert numeric_values(pd.Series(values), "result").tolist() == numbers


def test_a_rule_on_a_lab_column_with_limits_predicts_new_patients_the_same_way():
    rng = np.random.default_rng(4)
    n = 1200
    crp = np.round(rng.lognormal(2, 1, n), 1)
    text = np.where(crp < 1, "<1", np.where(crp > 150, ">150", crp.astype(str)))
    y = rng.random(n) < 0.1 + 0.5 * (crp > 20)
    from frl_engine.estimator import FallingRuleListClassifier

    model = FallingRuleListClassifier(random_state=0).fit(pd.DataFrame({"CRP": text}), y)
    assert any(rule.startswith("CRP >=") for rule in model.rules_)
    numeric = model.predict_proba(pd.DataFrame({"CRP": np.clip(crp, 1, 150)}))[:, 1]
    assert np.allclose(model.predict_proba(pd.DataFrame({"CRP": text}))[:, 1], numeric)


def test_title_lines_above_the_header_of_a_report_export_are_skipped_and_said():
    body = "Age,Sex,Died\n61,F,yes\n72,M,no\n55,,no\n"
    for text in ("Mortality report,,\nGenerated 2024-05-01,,\n,,\n" + body,  # padded, as Excel writes them
                 "Mortality report\nGenerated 2024-05-01\n\n" + body):  # or not
        frame = read_table(text.encode(), "report.csv")
        assert list(frame.columns) == ["Age", "Sex", "Died"] and len(frame) == 3
        assert frame.attrs["read_as"] == "a table whose header is on line 4 (the 3 lines above it skipped)"
    # a title line with a comma of its own, above a table of a few patients: fewer cells than the table's rows
    for title, n_skipped in (("Mortality report, ward 5\nGenerated 2024-05-01\n", 2), ("Mortality report, ward 5\n", 1)):
        for n_patients in (2, 3):
            short = read_table((title + "".join(body.splitlines(keepends=True)[:n_patients + 1])).encode(), "r.csv")
            assert list(short.columns) == ["Age", "Sex", "Died"] and len(short) == n_patients
            assert short.attrs["read_as"].endswith(f"(the {n_skipped} line{'s' if n_skipped > 1 else ''} above it skipped)")
    # R's write.table: a header one cell short of the rows (the row names) is the header, not a title line
    named_rows = read_table(b"Age,Sex,Died\n1,61,F,yes\n2,72,M,no\n3,55,F,no\n", "r.csv")
    assert list(named_rows.columns) == ["Age", "Sex", "Died"] and len(named_rows) == 3
    # an ordinary table, even with an unnamed first column (a saved index), keeps its first line as the header
    plain = read_table(b",Age,Died\n0,61,yes\n1,72,no\n", "plain.csv")
    assert list(plain.columns)[1:] == ["Age", "Died"] and "read_as" not in plain.attrs

    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        pd.DataFrame([["Mortality report"], ["Generated 2024-05-01"]]).to_excel(writer, index=False, header=False)
        pd.DataFrame({"Age": [61, 72], "Died": ["yes", "no"]}).to_excel(writer, index=False, startrow=3)
    book = read_table(buffer.getvalue(), "report.xlsx")
    assert list(book.columns) == ["Age", "Died"] and book["Age"].tolist() == [61, 72]
    assert book.attrs["read_as"] == "a table whose header is on row 4 (the 3 rows above it skipped)"


def test_a_row_of_group_headings_above_the_column_names_is_skipped_and_said():
    """Excel reports group their columns under headings (Demographics, Labs, Outcome) on a row above the names."""
    body = "Age,Sex,Lactate,Creatinine,Died\n61,F,3.1,0.9,yes\n72,M,1.2,1.4,no\n55,F,?,0.8,no\n"
    frame = read_table(("Demographics,,Labs,,Outcome\n" + body).encode(), "grouped.csv")
    assert list(frame.columns) == ["Age", "Sex", "Lactate", "Creatinine", "Died"] and len(frame) == 3
    assert frame.attrs["read_as"] == "a table whose header is on line 2 (the 1 line above it skipped)"
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        pd.DataFrame([["Demographics", None, "Labs", None, "Outcome"]]).to_excel(writer, index=False, header=False)
        read_table(body.encode(), "body.csv").to_excel(writer, index=False, startrow=1)
    book = read_table(buffer.getvalue(), "grouped.xlsx")
    assert list(book.columns) == ["Age", "Sex", "Lactate", "Creatinine", "Died"] and book["Age"].tolist() == [61, 72, 55]
    # a header with a blank name stays the header: over a first patient of numbers, of text only, or with a missing value
    for text, n_rows in ((",Age,Died\n0,61,yes\n1,72,no\n", 2), ("Sex,,Ward\nM,note,A\nF,x,B\nM,y,C\n", 3),
                         ("Sex,,Age\nM,note,?\nF,x,60\nM,y,71\n", 3)):
        kept = read_table(text.encode(), "plain.csv")
        assert "read_as" not in kept.attrs and len(kept) == n_rows, text


def test_a_row_of_units_under_the_header_is_left_out_and_said():
    """Lab reports write each column's unit on the line under its name: not a patient (it made the outcome look
    missing for one patient and the numbers text)."""
    body = "61,3.1,0.9,yes\n72,1.2,1.4,no\n55,?,0.8,no\n80,4.4,2.1,yes\n"
    for units in ("years,mmol/L,mg/dL,\n", "(years),[mmol/L],10^9/L,\n", "yrs,%,µmol/L,\n"):
        frame = read_table(("Age,Lactate,Creatinine,Died\n" + units + body).encode(), "labs.csv")
        assert len(frame) == 4 and frame["Age"].tolist() == [61, 72, 55, 80], units
        assert pd.api.types.is_numeric_dtype(frame["Creatinine"]) and frame["Died"].notna().all()
        assert "a row of units, not a patient" in frame.attrs["left_out"]
    buffer = io.BytesIO()
    pd.DataFrame([["years", "mmol/L", "mg/dL", None], [61, 3.1, 0.9, "yes"], [72, 1.2, 1.4, "no"], [55, 2.2, 0.8, "no"]],
                 columns=["Age", "Lactate", "Creatinine", "Died"]).to_excel(buffer, index=False)
    book = read_table(buffer.getvalue(), "labs.xlsx")
    assert len(book) == 3 and "a row of units" in book.attrs["left_out"]
    # a first patient is kept: with one number, with a lab's "no result" word, or with one word over one column
    for first in ("61,mmol/L,mg/dL,yes\n", "pending,pending,0.9,no\n"):
        kept = read_table(("Age,Lactate,Creatinine,Died\n" + first + body).encode(), "labs.csv")
        assert len(kept) == 5 and "left_out" not in kept.attrs, first
    one = read_table(b"Lactate,Sex,Died\nmmol/L,F,yes\n3.1,M,no\n1.2,F,no\n", "one.csv")
    assert len(one) == 3 and "left_out" not in one.attrs


def test_a_last_patient_who_fills_one_cell_is_a_patient_not_a_footer():
    """Checkbox columns left blank make many patients fill one cell (their age): the last such line is kept; a line
    of text under the patient numbers ("Confidential") is still a footer."""
    rng = np.random.default_rng(3)
    lines = ["Age,CHF,Diabetes,Died"] + [f"{a},{'X' if c else ''},{'Y' if d else ''},{'X' if y else ''}"
                                         for a, c, d, y in zip(rng.integers(20, 90, 300), rng.random(300) < .2,
                                                               rng.random(300) < .3, rng.random(300) < .2)]
    lines += ["31,,,"]
    frame = read_table(("\n".join(lines) + "\n").encode(), "flags.csv")
    assert len(frame) == 301 and frame["Age"].iloc[-1] == 31 and "left_out" not in frame.attrs
    footed = read_table(("\n".join(lines + ["Confidential - do not distribute,,,"]) + "\n").encode(), "flags.csv")
    assert len(footed) == 301 and "a footer, not patients" in footed.attrs["left_out"]
    assert footed["Age"].iloc[-1] == 31 and pd.api.types.is_numeric_dtype(footed["Age"])


def test_a_checkbox_outcome_counts_its_blanks_as_no_event_once_the_event_is_named(tmp_path, capsys):
    """Died written X where the patient died and left blank otherwise: without --positive the fit asks (a blank may
    mean not known); with --positive X the blanks are no event, said. '?' or 'NA' in it still mean not known."""
    frame = pd.DataFrame({"Age": [61, 72, 55, 80, 47, 66], "Died": ["X", None, None, "X", None, None]})
    with pytest.raises(DataError, match=r"holds one value, 'X' \(2 patients\), and blanks \(4\).*--positive X"):
        split_target(frame, "Died")
    features, event, positive = split_target(frame, "Died", "X")
    assert positive == "X" and event.tolist() == [True, False, False, True, False, False]
    assert features.attrs["outcome_blank_as_no"] == 4 and list(features.columns) == ["Age"]
    unknown = frame.assign(Died=["X", "?", None, "X", "NA", None])
    with pytest.raises(DataError, match="missing values"):
        split_target(unknown, "Died", "X")
    rng = np.random.default_rng(4)
    n = 600
    age = rng.integers(20, 90, n)
    died = rng.random(n) < np.where(age >= 70, 0.5, 0.1)
    path = tmp_path / "deaths.csv"
    pd.DataFrame({"Age": age, "Died": np.where(died, "X", "")}).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "Died", "--positive", "X"]) == 0
    out = capsys.readouterr().out
    assert f"the {int((~died).sum()):,} blank cells count as no event" in out and "IF      Age >= " in out


def test_a_measurement_given_as_the_outcome_is_one_message_saying_what_to_do(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"Age": rng.integers(20, 90, 200), "LengthOfStay": rng.integers(1, 40, 200)})
    path = tmp_path / "stays.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "LengthOfStay"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "looks like a measurement, not an outcome" in err and "yes/no column" in err
    # a coded outcome with a few values still asks which one is the event
    coded = pd.DataFrame({"Age": [61, 72, 55, 80], "Discharge": [1, 2, 3, 2]})
    with pytest.raises(DataError, match="say which value is the event"):
        split_target(coded, "Discharge")


def test_frl_predict_keeps_the_users_cells_and_writes_the_way_the_file_was_written(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 300
    sex = rng.choice(["F", "M"], n)
    died = np.where(rng.random(n) < np.where(sex == "F", 0.5, 0.1), "yes", "no")
    train = tmp_path / "train.csv"
    pd.DataFrame({"Sex": sex, "Died": died}).to_csv(train, index=False)
    model = tmp_path / "model.json"
    assert main(["fit", str(train), "--target", "Died", "--out", str(model)]) == 0
    new = tmp_path / "new.csv"
    new.write_text("Sex;Weight\nf ;70,5\nM;80,25\nF;66,0\n", encoding="utf-8")
    out = tmp_path / "scored.csv"
    assert main(["predict", str(model), str(new), "--out", str(out)]) == 0
    capsys.readouterr()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "Sex;Weight;risk;rule"
    assert lines[1].startswith("f ;70,5;") and lines[2].startswith("M;80,25;")  # the cells as written
    cells = [line.split(";") for line in lines[1:]]
    assert cells[0][2] == cells[2][2] != cells[1][2]  # "f " is scored as "F"
    assert "," in cells[0][2]  # a decimal comma, as in the input


# ---------------------------------------------------------------- compressed exports
def _zip(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_gzip_compressed_or_zipped_export_reads_as_the_same_table_and_says_so():
    """Large exports are sent compressed: ``export.csv.gz``, a ``.csv`` that is gzip inside, a ``.zip`` holding the
    one table (in a folder, with the ``__MACOSX`` copies macOS adds), a workbook or a semicolon file inside."""
    import gzip

    plain = read_table(_text(";", ","), "export.csv")
    for raw, name, said in (
            (gzip.compress(_text(";", ",")), "export.csv.gz", "a gzip-compressed table; semicolon-separated"),
            (gzip.compress(_text(";", ",")), "export.csv", "a gzip-compressed table; semicolon-separated"),
            (gzip.compress(_text(";", ",")), "export.gz", "a gzip-compressed table; semicolon-separated"),
            (_zip({"export/ward.csv": _text(";", ","), "__MACOSX/export/._ward.csv": b"\x00\x05"}), "export.zip",
             "the table export/ward.csv inside it; semicolon-separated")):
        frame = read_table(raw, name)
        pd.testing.assert_frame_equal(frame, plain)
        assert frame.attrs["read_as"] == said + ", decimal comma"
    workbook = io.BytesIO()
    plain.to_excel(workbook, index=False)
    from_zip = read_table(_zip({"ward.xlsx": workbook.getvalue(), "notes.pdf": b"%PDF-1.4"}), "ward.zip")
    np.testing.assert_array_equal(from_zip["Weight (kg)"].to_numpy(float), plain["Weight (kg)"].to_numpy(float))
    assert from_zip.attrs["read_as"].startswith("the table ward.xlsx inside it")


@pytest.mark.parametrize("raw, name, message", [
    (_zip({"a.csv": _text(","), "b.csv": _text(",")}), "two.zip", "two.zip holds 2 tables among its 2 file(s) (a.csv, b.csv)"),
    (_zip({"readme.pdf": b"%PDF-1.4"}), "docs.zip", "docs.zip holds no table (.csv, .tsv, .txt, .xlsx, .ods, .parquet, or an SPSS, Stata or SAS file)"),
    (_text(","), "export.csv.gz", "it is named .gz but is plain text, not a gzip file: rename it without .gz"),
    (_text(","), "export.zip", "it is named .zip but is plain text, not a ZIP file"),
    (b"PK\x03\x04" + b"\x00" * 60, "export.zip", "the ZIP file is damaged"),
])
def test_a_compressed_file_that_is_not_one_table_gets_a_plain_message(raw, name, message):
    with pytest.raises(DataError, match=re.escape(message)):
        read_table(raw, name)


def test_a_cut_short_gzip_file_gets_a_plain_message_and_frl_fit_reads_a_compressed_export(tmp_path, capsys):
    import gzip

    rng = np.random.default_rng(1)
    n = 400
    age = rng.integers(20, 90, n)
    outcome = np.where(rng.random(n) < 0.1 + 0.5 * (age > 70), "yes", "no")
    text = ("Age,Outcome\n" + "\n".join(f"{a},{o}" for a, o in zip(age, outcome)) + "\n").encode()
    path = tmp_path / "export.csv.gz"
    path.write_bytes(gzip.compress(text))
    assert main(["fit", str(path), "--target", "Outcome"]) == 0
    printed = capsys.readouterr().out
    assert "Read export.csv.gz as a gzip-compressed table." in printed and "Age >=" in printed
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress(text)[:200])
    assert main(["fit", str(cut), "--target", "Outcome"]) != 0
    err = capsys.readouterr().err
    assert "cut.csv.gz could not be read: the gzip file is damaged or cut short" in err and "Traceback" not in err


def test_the_dashboard_takes_a_zipped_export_and_refuses_other_kinds_plainly():
    from dashboard import services

    loaded = services.load_table(_zip({"ward.csv": _text(",")}), "ward.zip")
    pd.testing.assert_frame_equal(loaded.frame, read_table(_text(","), "ward.csv"))
    with pytest.raises(DataError, match=r"unsupported file type '\.7z'.*\.csv\.gz, or a \.zip holding one table"):
        services.load_table(b"7z\xbc\xaf\x27\x1c", "ward.7z")


def test_a_small_compressed_file_that_unpacks_past_the_limit_is_refused_before_it_fills_the_memory(monkeypatch):
    import gzip

    import frl_engine.sniff as sniff

    monkeypatch.setattr(sniff, "MAX_UNPACKED_BYTES", 1000)
    big = b"Age,Outcome\n" + b"61,yes\n" * 1000                    # 7 kB of text, far less compressed
    for raw, name in ((gzip.compress(big), "export.csv.gz"), (_zip({"export.csv": big}), "export.zip")):
        assert len(raw) < 1000
        with pytest.raises(DataError, match=re.escape(f"{name} unpacks to more than")):
            read_table(raw, name)
    assert len(read_table(gzip.compress(big[:900]), "export.csv.gz")) == 127


@pytest.mark.parametrize("name, said", [("extract.dat", "its name ends in '.dat'"),
                                        ("LAB_EXPORT", "its name has no extension"),
                                        ("ward.asc", "its name ends in '.asc'")])
def test_a_text_export_under_a_name_text_exports_use_is_read_as_delimited_text_and_said(name, said):
    frame = read_table(_text(";", ","), name)
    pd.testing.assert_frame_equal(frame, read_table(_text(";", ","), "export.csv"))
    assert frame.attrs["read_as"] == f"delimited text ({said}); semicolon-separated, decimal comma"


def test_a_file_under_another_name_is_refused_saying_what_it_holds():
    with pytest.raises(DataError, match=re.escape("notes.rds: unsupported file type '.rds' (it holds plain text): use a .csv")):
        read_table(_text(","), "notes.rds")
    with pytest.raises(DataError, match=re.escape("extract.dat: unsupported file type '.dat' (it holds a PDF document)")):
        read_table(b"%PDF-1.4\n...", "extract.dat")


def test_a_uci_data_file_is_read_as_text_and_its_missing_header_is_named():
    """The paper's UCI files end in .data and have no header line: read as text, then the plain header message."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared" / "uci" / "spambase.data"
    if not path.exists():
        pytest.skip(f"{path} not found")
    with pytest.raises(DataError, match=re.escape("spambase.data: the first line holds numbers (0, 0.64, 0.64, 0, 0.32, ...)")):
        read_table(path)


def _ods(rows) -> bytes:
    """A LibreOffice (OpenDocument) spreadsheet of ``rows``, written as the format says: a ZIP holding its XML."""
    def cell(value):
        if isinstance(value, (int, float)):
            return f'<table:table-cell office:value-type="float" office:value="{value}"><text:p>{value}</text:p></table:table-cell>'
        if value is None:
            return "<table:table-cell/>"
        return f'<table:table-cell office:value-type="string"><text:p>{value}</text:p></table:table-cell>'
    body = "".join("<table:table-row>" + "".join(cell(v) for v in row) + "</table:table-row>" for row in rows)
    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content '
               'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body>'
               f'<office:spreadsheet><table:table table:name="Patients">{body}</table:table></office:spreadsheet>'
               '</office:body></office:document-content>')
    manifest = ('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
                '<manifest:file-entry manifest:full-path="/" '
                'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
                '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
                '</manifest:manifest>')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/manifest.xml", manifest)
        archive.writestr("content.xml", content)
    return buffer.getvalue()


def test_a_libreoffice_spreadsheet_reads_as_the_same_table_as_its_csv():
    rows = [["MRN", "Age", "Lactate", "Outcome"], ["M1", 61, 2.5, "yes"], ["M2", 72, None, "no"], ["M3", 55, 1.25, "no"]]
    frame = read_table(_ods(rows), "ward.ods")
    text = "\n".join(",".join("" if v is None else str(v) for v in row) for row in rows).encode()
    pd.testing.assert_frame_equal(frame, read_table(text, "ward.csv"), check_dtype=False)
    with pytest.raises(DataError, match=re.escape("ward.ods could not be read: it is not a LibreOffice spreadsheet but "
                                                  "plain text: if it is comma-separated, rename it to .csv")):
        read_table(text, "ward.ods")
