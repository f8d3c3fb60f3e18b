"""Numbers that exports write for "not known" (age 999, potassium -9): found, said at fit time and on the Data
page, and never mistaken for values (age 99 among ages up to 94, a base excess of -9)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.columns import number_codes, read_column


def _export(n=4000, seed=2) -> pd.DataFrame:
    """Age >= 75 and potassium >= 5 raise the risk; 4% of ages are 999 and 8% of potassium values -9."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 95, n).astype(float)
    potassium = np.round(rng.normal(4.2, 0.6, n), 1)
    died = rng.random(n) < 0.05 + 0.3 * (age >= 75) + 0.2 * (potassium >= 5.0)
    age[rng.random(n) < 0.04] = 999
    potassium[rng.random(n) < 0.08] = -9
    return pd.DataFrame({"age": age.astype(int), "potassium": potassium, "died": died.astype(int)})


def _codes(values):
    distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    return number_codes(distinct, counts)


def test_all_nines_far_from_the_other_values_are_codes():
    ages = list(range(18, 95)) * 3
    assert _codes(ages + [999] * 5) == [(999.0, 5)]
    assert _codes([2.4, 3.1, 4.0, 5.2, 6.1] * 6 + [-9] * 4) == [(-9.0, 4)]          # below values that are >= 0
    assert _codes(list(range(0, 11)) * 3 + [99] * 3) == [(99.0, 3)]                 # pain score 0 to 10
    assert _codes(ages + [999] * 3 + [-99] * 3) == [(999.0, 3), (-99.0, 3)]


def test_values_that_only_look_like_codes_are_values():
    ages = list(range(18, 95)) * 3
    assert _codes(ages + [99] * 5) == []                                 # age 99: not twice the oldest
    assert _codes(list(range(-15, 11)) * 2 + [-9] * 5) == []             # base excess -9: among the values
    assert _codes(ages + [999] * 2) == []                                # on two rows only: a value written once or twice
    assert _codes([1, 2, 3] * 3 + [999] * 5) == []                       # too few other numbers to judge
    assert _codes(list(range(100, 2000, 10)) + [999] * 5) == []          # inside the range


def test_a_zero_where_no_measurement_can_be_zero_is_a_code_and_a_zero_count_is_not():
    """The Pima diabetes table writes 0 for a BMI, a blood pressure or a glucose not taken: 0 far below every other
    value is a code; 0 next to values from 1 up (a count of ICU days, cigarettes a day) or next to small lab values
    (creatinine 0.4 to 3) is a value, and so is an income of 0 among incomes of 3,000 to 300,000."""
    bmi = list(np.round(np.linspace(18.2, 67.1, 60), 1)) * 3
    assert _codes(bmi + [0] * 11) == [(0.0, 11)]
    assert _codes(list(range(44, 200)) + [0] * 5) == [(0.0, 5)]                    # glucose
    assert _codes(list(range(21, 82)) + [0] * 3 + [999] * 4) == [(999.0, 4), (0.0, 3)]
    assert _codes(list(range(1, 31)) * 3 + [0] * 40) == []                          # ICU days
    assert _codes(list(np.round(np.linspace(0.4, 3.0, 50), 2)) + [0] * 5) == []      # creatinine
    assert _codes(list(range(3000, 300000, 3000)) + [0] * 5) == []                  # income
    assert _codes(bmi + [0] * 2) == []                                              # on two rows only


def test_zero_codes_are_said_and_emptied_like_the_others(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 1500
    bmi = np.round(rng.normal(32, 6, n).clip(18, 60), 1)
    died = rng.random(n) < 0.1 + 0.3 * (bmi >= 38)
    bmi[rng.random(n) < 0.03] = 0
    path = tmp_path / "pima.csv"
    pd.DataFrame({"BMI": bmi, "Age": rng.integers(21, 81, n), "died": died.astype(int)}).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "died"]) == 0
    n_zero = int((bmi == 0).sum())
    assert f"'BMI' (0 on {n_zero} rows, far from its other values" in capsys.readouterr().out
    assert main(["fit", str(path), "--target", "died", "--codes-as-missing"]) == 0
    out = capsys.readouterr().out
    assert f"BMI = 0 ({n_zero})" in out and "codes for not known: 'BMI'" not in out


def test_the_column_reading_says_so_and_still_reads_numbers():
    frame = _export()
    reading = read_column("age", frame["age"])
    assert reading.kind == "numeric"
    assert reading.number_codes == f"999 on {int((frame['age'] == 999).sum())} rows, far from its other values, 18 to 94"
    assert "a code for not known?" in reading.reason
    assert read_column("died", frame["died"]).number_codes == ""


def test_the_fit_warns_naming_the_columns_and_what_to_do(tmp_path, capsys):
    path = tmp_path / "export.csv"
    frame = _export()
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "died"]) == 0
    out = capsys.readouterr().out
    n_age = int((frame["age"] == 999).sum())
    assert f"Warning: numbers that look like codes for not known: 'age' (999 on {n_age} rows" in out
    assert "'potassium' (-9 on" in out and "fit again with --codes-as-missing" in out
    # emptied, the codes are missing values and the warning is gone
    cleaned = frame.assign(age=frame["age"].where(frame["age"] != 999), potassium=frame["potassium"].where(
        frame["potassium"] != -9))
    cleaned.to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "died"]) == 0
    assert "codes for not known" not in capsys.readouterr().out


@pytest.mark.skipif(not __import__("dashboard.services", fromlist=["x"]).SAMPLE_PATH.is_file(),
                    reason="sample data not generated")
def test_the_data_page_warns_about_number_codes(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from dashboard import state
    from tests.test_dashboard_data_page import APP, upload

    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    upload(at, "export.csv", _export().to_csv(index=False).encode())
    warnings = " ".join(w.value for w in at.warning)
    assert "look like codes for *not known*" in warnings and "**age**: 999 on" in warnings
    assert "**potassium**: \\-9 on" in warnings or "**potassium**: -9 on" in warnings
    assert at.selectbox(key=state.W_TARGET).value == "died" and not at.exception
    # the button empties those cells for the session: the warning goes, the name says what was done
    at.button(key="w_codes_as_missing").click().run()
    assert not at.exception and not any("codes for *not known*" in w.value for w in at.warning)
    data = at.session_state[state.DATA]
    frame = _export()
    assert int(data.frame["age"].isna().sum()) == int((frame["age"] == 999).sum())
    assert int(data.frame["potassium"].isna().sum()) == int((frame["potassium"] == -9).sum())
    assert "read as not known: age = 999" in data.name and "potassium = -9" in data.name
    assert at.selectbox(key=state.W_TARGET).value == "died"


def test_validation_on_new_patients_names_a_code_in_a_rule_column(tmp_path, capsys):
    train, later, model = tmp_path / "export.csv", tmp_path / "later.csv", tmp_path / "model.json"
    frame = _export()
    frame.assign(age=frame["age"].where(frame["age"] != 999), potassium=frame["potassium"].where(
        frame["potassium"] != -9)).to_csv(train, index=False)        # fitted on a cleaned export
    assert main(["fit", str(train), "--target", "died", "--out", str(model)]) == 0
    assert "age >= " in capsys.readouterr().out
    new = _export(seed=5)
    new.to_csv(later, index=False)                                    # the next export has the codes again
    assert main(["validate", str(model), str(later)]) == 0
    out = capsys.readouterr().out
    assert f"column 'age': 999 on {int((new['age'] == 999).sum())} rows, far from its other values" in out
    assert "run again with --codes-as-missing" in out
    # --codes-as-missing empties them, says what, and the note is gone
    assert main(["validate", str(model), str(later), "--codes-as-missing"]) == 0
    out = capsys.readouterr().out
    assert f"Read as not known (--codes-as-missing): age = 999 ({int((new['age'] == 999).sum())})" in out
    assert "column 'age': 999" not in out


def test_fit_with_codes_as_missing_reads_them_as_missing_and_says_what(tmp_path, capsys):
    path = tmp_path / "export.csv"
    frame = _export()
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "died", "--codes-as-missing"]) == 0
    out = capsys.readouterr().out
    n_age, n_k = int((frame["age"] == 999).sum()), int((frame["potassium"] == -9).sum())
    assert f"Read as not known (--codes-as-missing): age = 999 ({n_age}); potassium = -9 ({n_k})." in out
    assert "codes for not known:" not in out
    cleaned = frame.assign(age=frame["age"].where(frame["age"] != 999), potassium=frame["potassium"].where(
        frame["potassium"] != -9))
    cleaned.to_csv(path, index=False)                                 # the same as emptying the cells by hand
    assert main(["fit", str(path), "--target", "died"]) == 0
    by_hand = capsys.readouterr().out
    assert out[out.index("        Conditions"):out.index("Fitted in")] == by_hand[by_hand.index("        Conditions"):
                                                                                  by_hand.index("Fitted in")]
    assert main(["fit", str(path), "--target", "died", "--codes-as-missing"]) == 0   # nothing to empty: said
    assert "no number looks like a code for not known; nothing was emptied" in capsys.readouterr().out


def test_predict_with_codes_as_missing_places_a_code_as_not_known(tmp_path, capsys):
    train, model, one = tmp_path / "export.csv", tmp_path / "model.json", tmp_path / "today.csv"
    frame = _export()
    frame.assign(age=frame["age"].where(frame["age"] != 999), potassium=frame["potassium"].where(
        frame["potassium"] != -9)).to_csv(train, index=False)        # cleaned by hand: the model records no code
    assert main(["fit", str(train), "--target", "died", "--out", str(model)]) == 0
    capsys.readouterr()
    new = _export(seed=7)
    new.to_csv(one, index=False)
    assert main(["predict", str(model), str(one), "--codes-as-missing"]) == 0
    captured = capsys.readouterr()
    assert "Read as not known (--codes-as-missing): age = 999" in captured.err      # the scores stay on stdout
    scored = pd.read_csv(__import__("io").StringIO(captured.out))
    assert len(scored) == len(new) and "Read as not known" not in captured.out
    unknown_age = (new["age"] == 999).to_numpy()
    fitted = json.loads(model.read_text())
    top = fitted["rules"][0]["conditions"]
    assert any(c["column"] == "age" and c["op"] == ">=" for c in top)          # the top rule reads age
    assert not (scored["rule"].to_numpy()[unknown_age] == 1).any()              # a code never meets age >= t


def test_a_model_fitted_with_codes_as_missing_reads_new_patients_the_same_way(tmp_path, capsys):
    """The model file keeps the codes (``training.codes_read_as_missing``): ``frl predict`` and ``frl validate``
    empty exactly those values in a new table without being asked, and say so."""
    train, model, later = tmp_path / "export.csv", tmp_path / "model.json", tmp_path / "later.csv"
    _export().to_csv(train, index=False)
    assert main(["fit", str(train), "--target", "died", "--codes-as-missing", "--out", str(model)]) == 0
    capsys.readouterr()
    assert json.loads(model.read_text())["training"]["codes_read_as_missing"] == {"age": [999.0], "potassium": [-9.0]}
    new = _export(seed=7)
    new.to_csv(later, index=False)
    n_age = int((new["age"] == 999).sum())
    assert main(["predict", str(model), str(later)]) == 0
    captured = capsys.readouterr()
    assert f"Read as not known, as at fit time: age = 999 ({n_age}); potassium = -9" in captured.err
    assert "look like a code" not in captured.err and "--codes-as-missing (or empty" not in captured.err
    scored = pd.read_csv(__import__("io").StringIO(captured.out))
    assert not (scored["rule"].to_numpy()[(new["age"] == 999).to_numpy()] == 1).any()
    assert main(["validate", str(model), str(later)]) == 0
    out = capsys.readouterr().out
    assert f"read as not known, as at fit time: age = 999 ({n_age})" in out
    assert "column 'age': 999" not in out


def test_the_data_pages_button_is_kept_in_the_dashboards_model():
    from dashboard import jobs, services

    frame = _export(2000)
    data = services.without_number_codes(services.LoadedData("export.csv", "k", frame, 1000), ["age", "potassium"])
    features, y, positive = services.split_outcome(data.frame, "died", None)
    choices = services.column_choices(services.profile_columns(data.frame), "died")
    spec = services.FitSpec(data.key, data.name, "died", positive, choices,
                            services.FitSettings(n_steps=500, n_chains=2, seed=0), None)
    job = jobs.start(jobs.Job("fit", "Fitting", services.FIT_STAGES[:1]), services.fit_work(spec, data, features, y, "f"))
    assert jobs.wait(job, 120) and not job.failed, job.error
    assert job.latest().model["training"]["codes_read_as_missing"] == {"age": [999.0], "potassium": [-9.0]}


def test_the_python_api_keeps_the_codes_it_was_fitted_without_and_reads_new_patients_the_same_way(tmp_path, capsys):
    """``empty_number_codes`` records the codes in the table's ``attrs``; the fit keeps them
    (``codes_read_as_missing_``), ``apply`` and ``predict_proba`` read a new patient's 999 as not known, and the
    model file carries them, as ``frl fit --codes-as-missing`` does."""
    from frl_engine import FallingRuleListClassifier
    from frl_engine.columns import empty_number_codes
    from frl_engine.errors import ModelFileError

    frame = _export()
    y = frame.pop("died")
    cleaned, emptied = empty_number_codes(frame)
    assert len(emptied) == 2 and cleaned["age"].isna().sum() == (frame["age"] == 999).sum()
    model = FallingRuleListClassifier(n_steps=500, n_chains=2, random_state=0).fit(cleaned, y)
    assert model.codes_read_as_missing_ == {"age": [999.0], "potassium": [-9.0]}
    assert any(c.column == "age" and c.op == ">=" for rule in model.rule_objects_ for c in rule.conditions)
    new = _export(seed=7).drop(columns="died")
    by_hand = new.assign(age=new["age"].where(new["age"] != 999),
                         potassium=new["potassium"].where(new["potassium"] != -9))
    coded = (new["age"] == 999).to_numpy()
    np.testing.assert_array_equal(model.apply(new), model.apply(by_hand))
    np.testing.assert_array_equal(model.predict_proba(new), model.predict_proba(by_hand))
    assert (new["age"] == 999).sum() > 0 and new.loc[coded, "age"].eq(999).all()   # the caller's table is unchanged
    # the same list fitted on a table that recorded nothing reads 999 as an age, so the record is what changes it
    bare = cleaned.copy()
    bare.attrs = {}
    plain = FallingRuleListClassifier(n_steps=500, n_chains=2, random_state=0).fit(bare, y)
    assert plain.codes_read_as_missing_ == {} and plain.rules_ == model.rules_
    assert (plain.apply(new)[coded] != model.apply(new)[coded]).any()
    # the model file keeps them, and a model read back (or written by frl fit --codes-as-missing) reads so too
    path = tmp_path / "model.json"
    model.save(path)
    assert json.loads(path.read_text())["training"]["codes_read_as_missing"] == {"age": [999.0], "potassium": [-9.0]}
    assert "codes_read_as_missing" not in plain.to_dict()["training"]
    loaded = FallingRuleListClassifier.load(path)
    assert loaded.codes_read_as_missing_ == model.codes_read_as_missing_
    np.testing.assert_array_equal(loaded.apply(new), model.apply(by_hand))
    train, cli_model = tmp_path / "export.csv", tmp_path / "cli.json"
    frame.assign(died=y).to_csv(train, index=False)
    assert main(["fit", str(train), "--target", "died", "--codes-as-missing", "--steps", "500", "--out",
                 str(cli_model)]) == 0
    from_cli = FallingRuleListClassifier.load(cli_model)
    np.testing.assert_array_equal(from_cli.apply(new), from_cli.apply(by_hand))
    damaged = model.to_dict(target="died")
    damaged["training"]["codes_read_as_missing"] = [999]
    with pytest.raises(ModelFileError, match="codes_read_as_missing"):
        FallingRuleListClassifier.from_dict(damaged)
    # the command line says so in one line, whichever command reads the entry
    bad, later = tmp_path / "damaged.json", tmp_path / "later.csv"
    bad.write_text(json.dumps(damaged))
    _export(seed=7).to_csv(later, index=False)
    for command in ("predict", "validate"):
        assert main([command, str(bad), str(later)]) != 0
        err = capsys.readouterr().err
        assert "training.codes_read_as_missing must map each column to its codes" in err, command
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
