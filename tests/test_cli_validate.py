"""`frl validate MODEL NEW`: the printed numbers, the JSON, the HTML report, the model copy, and one-line errors."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from frl_engine.cli import main
from frl_engine.io import save_model
from test_validation_external import RISKS, hand_rules, model_dict, new_table


@pytest.fixture
def files(tmp_path):
    model_path, data_path = tmp_path / "model.json", tmp_path / "2025.csv"
    save_model(model_dict(), model_path)
    new_table(n=2000, seed=0).to_csv(data_path, index=False)
    return model_path, data_path


def run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_validate_prints_and_writes_the_result_the_report_and_the_model(files, tmp_path, capsys):
    model_path, data_path = files
    out, html_path, model_out = tmp_path / "ext.json", tmp_path / "report.html", tmp_path / "validated.json"
    status, printed, err = run(["validate", model_path, data_path, "--by", "Sex", "--out", out, "--html", html_path,
                                "--model-out", model_out], capsys)
    assert status == 0, err
    result = json.loads(out.read_text())
    frame = new_table(n=2000, seed=0)
    event = (frame["readmitted"] == "<30").to_numpy()
    assert result["auroc"] == pytest.approx(roc_auc_score(event, np.asarray(RISKS)[hand_rules(frame)]))
    assert result["n"] == 2000 and result["events"] == int(event.sum())
    assert [s["group"] for s in result["subgroups"]] == ["F", "M"]
    assert f"AUROC {result['auroc']:.3f} (95% CI {result['auroc_ci'][0]:.3f} to {result['auroc_ci'][1]:.3f})" in printed
    assert "Subgroup Sex = F:" in printed and "Ward = surgical" in printed
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script src=\"http" not in page and "plotly" in page.lower()
    assert "Decision curve" in page and "Calibration" in page and "By Sex" in page
    validated = json.loads(model_out.read_text())
    assert validated["external_validation"]["auroc"] == result["auroc"]
    assert validated["rules"] == model_dict()["rules"]  # the list itself is unchanged
    assert "external_validation" not in json.loads(model_path.read_text())


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.drop(columns=["readmitted"]), "no outcome column 'readmitted'"),
    (lambda f: f.assign(readmitted="NO"), "has no events"),
    (lambda f: f.head(1), "has 1 row of patients"),
    (lambda f: f.drop(columns=["Age"]), "lacks the column the model uses: 'Age'"),
    (lambda f: f.assign(Age=["old"] * len(f)), "'Age' holds text such as 'old'"),
])
def test_bad_second_files_get_one_line_and_status_2(files, tmp_path, capsys, change, expected):
    model_path, _ = files
    bad = tmp_path / "bad.csv"
    change(new_table(n=300, seed=1)).to_csv(bad, index=False)
    status, out, err = run(["validate", model_path, bad], capsys)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("frl: error: bad.csv") and expected in err
    assert "Traceback" not in err


def test_patients_without_an_outcome_are_refused_or_left_out_with_the_flag_fit_has(files, tmp_path, capsys):
    """New patients whose outcome is still empty (follow-up not over): one line saying what to do, and with
    --drop-missing-outcome, as `frl fit` has, the rest are validated and the count is said."""
    model_path, _ = files
    frame = new_table(n=600, seed=2)
    frame.loc[frame.index[:25], "readmitted"] = None
    path = tmp_path / "open.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["validate", model_path, path], capsys)
    assert status == 2 and "25 empty cells" in err and "--drop-missing-outcome" in err
    status, out, err = run(["validate", model_path, path, "--drop-missing-outcome", "--out", tmp_path / "r.json"],
                           capsys)
    assert status == 0, err
    assert out.splitlines()[0] == "Left out 25 patients whose readmitted is empty or not known (--drop-missing-outcome)."
    kept = frame.iloc[25:]
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["n"] == 575 and result["events"] == int((kept["readmitted"] == "<30").sum())


def test_a_missing_output_folder_is_refused_before_any_work(files, tmp_path, capsys):
    model_path, data_path = files
    status, _, err = run(["validate", model_path, data_path, "--html", tmp_path / "nope" / "r.html"], capsys)
    assert status == 2 and "folder" in err and "does not exist" in err


def test_outputs_that_cannot_be_written_or_name_another_format_are_refused_before_any_work(files, tmp_path, capsys):
    """An output on a disk that cannot be written was found only after the work (a fit's list then never printed),
    and `--out card.png` held a PDF, `--html report.pdf` HTML: each is refused first, with the name to give."""
    model_path, data_path = files
    cases = [(["validate", model_path, data_path, "--out", "/proc/r.json"], "the folder /proc cannot be written"),
             (["validate", model_path, data_path, "--html", tmp_path / "r.pdf"], "name it r.html"),
             (["validate", model_path, data_path, "--out", tmp_path / "r.xlsx"], "name it r.json"),
             (["validate", model_path, data_path, "--model-out", tmp_path], "is a folder"),
             (["card", model_path, "--out", tmp_path / "card.png"], "written as PDF, and a .png name would say "
                                                                    "otherwise; name it card.pdf"),
             (["fit", data_path, "--target", "readmitted", "--out", tmp_path / "model.csv"], "name it model.json"),
             (["fit", data_path, "--target", "readmitted", "--out", tmp_path / "m.json.gz"], "name it m.json\n"),
             (["reproduce", "--out", "/proc/repro"], "the folder /proc does not exist or cannot be written")]
    for argv, said in cases:
        status, out, err = run(argv, capsys)
        assert status == 2 and said in err and "Traceback" not in err, (argv, err)
        assert "AUROC" not in out and "IF " not in out   # nothing was done
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2025.csv", "model.json"]  # nothing written, no check file
    # a name without a suffix, or with one no format owns, is the user's choice
    status, _, err = run(["validate", model_path, data_path, "--out", tmp_path / "result"], capsys)
    assert status == 0 and (tmp_path / "result").is_file(), err


def test_a_file_that_is_not_a_model(files, tmp_path, capsys):
    _, data_path = files
    status, _, err = run(["validate", data_path, data_path], capsys)
    assert status == 2 and "not a model file" in err


def test_a_parquet_or_excel_table_gives_the_same_result_as_the_csv(files, tmp_path, capsys):
    model_path, data_path = files
    frame = new_table(n=2000, seed=0)
    results = []
    for name, write in (("2025.parquet", frame.to_parquet), ("2025.xlsx", frame.to_excel)):
        path = tmp_path / name
        write(path, index=False)
        out = tmp_path / f"{name}.json"
        status, _, err = run(["validate", model_path, path, "--out", out], capsys)
        assert status == 0, err
        results.append(json.loads(out.read_text()))
    out = tmp_path / "csv.json"
    assert run(["validate", model_path, data_path, "--out", out], capsys)[0] == 0
    expected = json.loads(out.read_text())
    for result in results:
        assert result["auroc"] == expected["auroc"] and result["rules"] == expected["rules"]


def _fit_on(path, tmp_path, capsys):
    model = tmp_path / "fitted.json"
    status, _, err = run(["fit", path, "--target", "readmitted", "--positive", "<30", "--out", model], capsys)
    assert status == 0, err
    return model


def test_validating_on_the_training_patients_is_said_and_never_printed_as_external(tmp_path, capsys):
    """The same file, or the same rows in another order, is the fit, not an external validation: the result,
    the printed headline, the model copy and the card all say so. Another period's table is external."""
    from frl_engine.io import load_model_dict
    from test_card_external import back_text
    from frl_engine.validation.external import TRAINING_ROWS_NOTE

    def with_lab(seed):   # a creatinine in mg/dL: rows of patients, most written differently from any other
        frame = new_table(n=1500, seed=seed)
        frame["Creatinine"] = np.round(np.random.default_rng(seed).lognormal(0.0, 0.4, len(frame)), 2)
        return frame

    train = tmp_path / "2024.csv"
    with_lab(1).to_csv(train, index=False)
    model = _fit_on(train, tmp_path, capsys)
    assert len(json.loads(model.read_text())["training"]["rows_sha256"]) == 64
    shuffled = tmp_path / "2024_sorted.csv"
    with_lab(1).sample(frac=1.0, random_state=0).to_csv(shuffled, index=False)
    later = tmp_path / "2025.csv"
    with_lab(2).to_csv(later, index=False)
    # the training CSV saved as Excel with every cell as text ("62" for 62, "?" kept): the same patients
    workbook = tmp_path / "2024_copy.xlsx"
    pd.read_csv(train, dtype=str, keep_default_na=False).to_excel(workbook, index=False)
    edited = tmp_path / "2024_edited.xlsx"
    changed = pd.read_csv(train, dtype=str, keep_default_na=False)
    changed.loc[0, "Age"] = "101"  # one cell changed: no longer the very rows
    changed.to_excel(edited, index=False)
    # the training rows with one cell edited, and among new patients (a validation on 2024 and 2025 together): the
    # exact fingerprints miss them, the model file's sample of its training rows does not
    both = tmp_path / "2024_2025.csv"
    pd.concat([pd.read_csv(train, dtype=str, keep_default_na=False),
               pd.read_csv(later, dtype=str, keep_default_na=False)]).to_csv(both, index=False)
    for table, same, share in ((train, True, None), (shuffled, True, None), (workbook, True, None),
                               (edited, False, 1.0), (both, False, 0.5), (later, False, None)):
        out, copy = tmp_path / f"{table.stem}.json", tmp_path / f"{table.stem}_model.json"
        report = tmp_path / f"{table.stem}.html"
        status, printed, err = run(["validate", model, table, "--out", out, "--model-out", copy, "--html", report],
                                   capsys)
        assert status == 0, err
        external = not same and share is None
        headline = re.search(r'<p class="headline">([^:<]+):', report.read_text()).group(1)
        assert headline == ("Externally validated" if external else "Not an external validation"), table.name
        title = re.search(r"<title>([^<]+)</title>", report.read_text()).group(1)
        assert title == (f"External validation on {table.name}" if external
                         else f"Validation on {table.name} (not external)"), title
        assert printed.startswith("Not an external validation:") is not external, (table.name, printed[:300])
        assert (TRAINING_ROWS_NOTE in printed) is same
        result = json.loads(out.read_text())
        assert result.get("same_as_training", False) is same
        assert (share is None) == ("training_share" not in result), table.name
        if share is not None:   # 1,500 training rows: all in the sample, so the share is counted, not estimated;
            # a 2025 patient written exactly as a 2024 one (about 1 in 200 here) counts too
            assert result["training_share"] == pytest.approx(share, abs=0.01), table.name
            assert f"about {100 * share:.0f}% of {table.name}'s rows are patients the model was fitted on" in printed
            assert f"about {100 * share:.0f}% of these rows are rows the model was fitted on" in printed
        assert json.loads(copy.read_text())["external_validation"].get("same_as_training", False) is same
        back = " ".join(back_text(load_model_dict(copy)).split())  # the printed card, parsed back from the PDF
        assert ("not externally validated (checked only on its training patients)" in back) is same
        assert ("not externally validated (about" in back) is (share is not None)
        assert ("externally validated: AUROC" in back) is external


def test_a_model_file_from_before_the_fingerprint_is_validated_as_before(files, tmp_path, capsys):
    model_path, data_path = files
    assert "rows_sha256" not in json.loads(model_path.read_text()).get("training", {})
    status, printed, err = run(["validate", model_path, data_path], capsys)
    assert status == 0 and printed.startswith("External validation on 2025.csv"), err


def test_an_outcome_coded_the_other_way_round_is_pointed_out(files, tmp_path, capsys):
    model_path, _ = files
    frame = new_table(n=2000, seed=0)
    frame["readmitted"] = np.where(frame["readmitted"] == "<30", "NO", "<30")  # events and non-events swapped
    flipped = tmp_path / "flipped.csv"
    frame.to_csv(flipped, index=False)
    status, printed, err = run(["validate", model_path, flipped], capsys)
    assert status == 0, err
    assert "the AUROC is below 0.5 beyond chance" in printed and "readmitted = <30 is the event" in printed
    status, printed, _ = run(["validate", model_path, files[1]], capsys)
    assert "below 0.5" not in printed
