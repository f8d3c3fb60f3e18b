"""Tables saved by SPSS, Stata and SAS (frl_engine/stat_files.py): read in memory with their value labels, so a
card says ``ward = Cardiology`` where the file stores 12, and the codes an analyst labelled "Unknown" are missing."""

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest

pyreadstat = pytest.importorskip("pyreadstat")

from frl_engine.cli import main  # noqa: E402
from frl_engine.errors import DataError  # noqa: E402
from frl_engine.io import read_table  # noqa: E402
from frl_engine.stat_files import apply_value_labels  # noqa: E402

WARDS = {3: "Surgery", 7: "ICU", 12: "Cardiology"}
SEXES = {1: "Male", 2: "Female", 9: "Unknown"}
SEVERITIES = {1: "mild", 2: "moderate", 3: "severe"}
OUTCOMES = {0: "No", 1: "Yes"}


def _ward_table(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """Codes as SPSS stores them: death more likely with age, in cardiology and with severity; age 999 = unknown."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 95, n).astype(float)
    age[rng.random(n) < 0.03] = 999
    ward = rng.choice(list(WARDS), n).astype(float)
    severity = rng.choice(list(SEVERITIES), n).astype(float)
    logit = -4 + 0.05 * np.where(age == 999, 60, age) + 1.2 * (ward == 12) + 0.6 * (severity - 1)
    return pd.DataFrame({
        "age": age, "ward": ward, "sex": rng.choice(list(SEXES), n, p=[.48, .48, .04]).astype(float),
        "severity": severity, "died": (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float),
        "admitted": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")})


LABELS = {"age": {999: "Unknown"}, "ward": WARDS, "sex": SEXES, "severity": SEVERITIES, "died": OUTCOMES}


def _written(tmp_path, frame, name, **kwargs) -> bytes:
    path = tmp_path / name
    writer = {".sav": pyreadstat.write_sav, ".dta": pyreadstat.write_dta, ".xpt": pyreadstat.write_xport}[path.suffix]
    writer(frame, str(path), **kwargs)
    return path.read_bytes()


def test_an_spss_file_reads_as_its_labels_with_the_codes_labelled_unknown_missing(tmp_path):
    codes = _ward_table()
    raw = _written(tmp_path, codes, "ward.sav", variable_value_labels=LABELS,
                   variable_measure={"severity": "ordinal"})
    frame = read_table(raw, "ward.sav")          # bytes, as an upload: nothing written
    # fully labelled columns are their labels, cell by cell
    for column, labels in (("ward", WARDS), ("sex", SEXES), ("died", OUTCOMES)):
        assert frame[column].tolist() == [labels[int(v)] for v in codes[column]]
    # an ordinal column keeps its numbers (its order makes thresholds); a measurement's "Unknown" code is missing
    assert frame["severity"].tolist() == codes["severity"].tolist()
    unknown = codes["age"] == 999
    assert frame["age"][unknown].isna().all() and frame["age"][~unknown].tolist() == codes["age"][~unknown].tolist()
    assert pd.api.types.is_datetime64_any_dtype(frame["admitted"])
    assert frame.attrs["read_as"] == ("an SPSS data file; value labels used for 3 columns (ward, sex, died); the "
                                      "ordinal column severity kept as numbers; codes labelled as no value read as "
                                      "missing (age: 999 (Unknown))")


def test_the_analysts_own_missing_values_are_missing(tmp_path):
    codes = _ward_table(400).assign(los=lambda t: np.where(np.arange(len(t)) % 10 == 0, 99.0, 3.0 + np.arange(len(t)) % 7))
    raw = _written(tmp_path, codes, "ward.sav", missing_ranges={"los": [99]})    # SPSS: 99 declared user-missing
    frame = read_table(raw, "ward.sav")
    declared = codes["los"] == 99
    assert frame["los"][declared].isna().all() and frame["los"][~declared].tolist() == codes["los"][~declared].tolist()


def _as_csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_stata_and_sas_transport_files_read_as_the_csv_of_the_same_table(tmp_path):
    codes = _ward_table().drop(columns="admitted")
    stata = read_table(_written(tmp_path, codes, "ward.dta", variable_value_labels={"ward": WARDS, "died": OUTCOMES}),
                       "ward.dta")
    labelled = codes.assign(ward=codes["ward"].map(WARDS), died=codes["died"].map(OUTCOMES))
    pd.testing.assert_frame_equal(stata, read_table(_as_csv(labelled), "ward.csv"), check_dtype=False)
    assert stata.attrs["read_as"] == "a Stata data file; value labels used for 2 columns (ward, died)"
    sas = read_table(_written(tmp_path, codes, "ward.xpt"), "ward.xpt")   # SAS keeps its formats elsewhere: codes
    pd.testing.assert_frame_equal(sas, read_table(_as_csv(codes), "ward.csv"), check_dtype=False)
    assert sas.attrs["read_as"] == "a SAS data file"


def test_value_labels_are_used_only_where_every_value_has_one():
    frame = pd.DataFrame({"ward": [12.0, 3.0, 7.0, np.nan], "los": [1.0, 2.0, 99.0, 4.0], "sex": ["M", "F ", "F", "M"],
                          "score": [0.0, 1.0, 2.0, 3.0]})
    notes = apply_value_labels(frame, {"ward": {12: "Cardiology", 3: "Surgery", 7: "ICU"},   # 12 and 12.0: one code
                                       "los": {99: "Not recorded"},
                                       "sex": {"M": "Male", "F": "Female"},               # labels on text codes
                                       "score": {0: "None", 3: "Severe"}})                # two of four: a scale
    assert frame["ward"].tolist()[:3] == ["Cardiology", "Surgery", "ICU"] and pd.isna(frame["ward"][3])
    assert frame["sex"].tolist() == ["Male", "Female", "Female", "Male"]
    assert frame["los"].tolist()[:2] == [1.0, 2.0] and pd.isna(frame["los"][2])
    # "None" is a word for no value, but 0 is a score here: a partly labelled column keeps its numbers, and only
    # its codes labelled as no value are emptied
    assert frame["score"].tolist()[1:] == [1.0, 2.0, 3.0] and pd.isna(frame["score"][0])
    assert notes == ["value labels used for 2 columns (ward, sex)",
                     "codes labelled as no value read as missing (los: 99 (Not recorded); score: 0 (None))"]


def test_frl_fit_on_an_spss_file_prints_labels_and_the_list_of_the_same_table_as_csv(tmp_path, capsys):
    import json

    codes = _ward_table()
    (tmp_path / "ward.sav").write_bytes(_written(tmp_path, codes, "ward.sav", variable_value_labels=LABELS,
                                                 variable_measure={"severity": "ordinal"}))
    as_text = codes.drop(columns="admitted").assign(
        ward=codes["ward"].map(WARDS), sex=codes["sex"].map(SEXES), died=codes["died"].map(OUTCOMES),
        age=codes["age"].where(codes["age"] != 999))
    (tmp_path / "ward.csv").write_bytes(_as_csv(as_text))
    models = {}
    for name in ("ward.sav", "ward.csv"):
        out = tmp_path / f"{name}.json"
        assert main(["fit", str(tmp_path / name), "--target", "died", "--seed", "0", "--out", str(out)]) == 0
        models[name] = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "Read ward.sav as an SPSS data file; value labels used for 3 columns" in printed
    rules = [(rule["name"], rule["support"], rule["n_positive"]) for rule in models["ward.sav"]["rules"]]
    assert rules == [(rule["name"], rule["support"], rule["n_positive"]) for rule in models["ward.csv"]["rules"]]
    names = " ".join(name for name, _, _ in rules)
    assert "ward = Cardiology" in names and "999" not in names and "ward = 12" not in names
    assert models["ward.sav"]["outcome"]["positive_class"] == "Yes"


@pytest.mark.parametrize("content, name, message", [
    ("csv", "ward.sav", "ward.sav could not be read: it is not an SPSS data file but plain text: if it is "
                        "comma-separated, rename it to .csv"),
    ("sav", "ward.csv", "ward.csv could not be read: it is not a CSV file but an SPSS data file: rename it to .sav"),
    ("sav", "ward.dta", "ward.dta could not be read: it is not a Stata data file but an SPSS data file: rename it "
                        "to .sav"),
    ("dta", "ward.xlsx", "ward.xlsx could not be read: it is not an Excel workbook but a Stata data file: rename it "
                         "to .dta"),
    ("cut", "ward.sav", "ward.sav could not be read as an SPSS data file: it may be damaged or cut short"),
])
def test_a_statistics_file_under_the_wrong_name_or_cut_short_gets_a_plain_message(tmp_path, content, name, message):
    codes = _ward_table(200)
    raw = {"csv": lambda: _as_csv(codes),
           "sav": lambda: _written(tmp_path, codes, "w.sav"),
           "dta": lambda: _written(tmp_path, codes, "w.dta"),
           "cut": lambda: _written(tmp_path, codes, "w.sav")[:400]}[content]()
    with pytest.raises(DataError, match=re.escape(message)):
        read_table(raw, name)


def test_frl_fit_on_a_cut_short_spss_file_exits_with_one_line(tmp_path, capsys):
    cut = tmp_path / "cut.sav"
    cut.write_bytes(_written(tmp_path, _ward_table(200), "w.sav")[:400])
    assert main(["fit", str(cut), "--target", "died"]) == 2
    err = capsys.readouterr().err
    assert "cut.sav could not be read as an SPSS data file" in err and "Traceback" not in err


def test_a_zipped_spss_file_is_read_and_said(tmp_path):
    raw = _written(tmp_path, _ward_table(300), "ward.sav", variable_value_labels={"ward": WARDS})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("export/ward.sav", raw)
    frame = read_table(buffer.getvalue(), "export.zip")
    pd.testing.assert_frame_equal(frame, read_table(raw, "ward.sav"))
    assert frame.attrs["read_as"].startswith("the table export/ward.sav inside it; an SPSS data file; value labels")


def test_frl_predict_writes_an_spss_file_for_spss_users_and_refuses_sas7bdat_before_scoring(tmp_path, capsys):
    data = tmp_path / "ward.sav"
    data.write_bytes(_written(tmp_path, _ward_table(), "ward.sav", variable_value_labels=LABELS))
    model = tmp_path / "model.json"
    assert main(["fit", str(data), "--target", "died", "--seed", "0", "--out", str(model)]) == 0
    scored_path = tmp_path / "scored.sav"
    assert main(["predict", str(model), str(data), "--out", str(scored_path)]) == 0
    scored, _ = pyreadstat.read_sav(str(scored_path))
    frame = read_table(data)
    assert scored["ward"].tolist() == frame["ward"].tolist()
    assert set(scored["rule"]) <= set(range(1, 20)) and scored["risk"].between(0, 1).all()
    capsys.readouterr()
    refused = tmp_path / "scored.sas7bdat"
    assert main(["predict", str(model), str(data), "--out", str(refused)]) == 2
    err = capsys.readouterr().err
    assert "cannot be written here: name the output .sav, .dta, .xpt" in err and "Traceback" not in err
    assert not refused.exists()


def test_the_dashboard_reads_a_stata_upload_as_the_engine_does(tmp_path):
    from dashboard import services

    raw = _written(tmp_path, _ward_table(300), "ward.dta", variable_value_labels={"ward": WARDS})
    pd.testing.assert_frame_equal(services.load_table(raw, "ward.dta").frame, read_table(raw, "ward.dta"))
