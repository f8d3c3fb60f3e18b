"""The `frl` command line: fit, show, predict, and one-line errors for bad input."""

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "readmission.csv"


def small_table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "Age": rng.integers(20, 95, size=n),
        "BedSores": np.where(rng.random(n) < 0.25, "yes", "no"),
        "Ward": rng.choice(["medical", "surgical"], size=n),
    })
    risk = np.where((frame.Age >= 70) & (frame.BedSores == "yes"), 0.75, 0.1)
    frame["Readmitted"] = np.where(rng.random(n) < risk, "yes", "no")
    return frame


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "patients.csv"
    small_table().to_csv(path, index=False)
    return path


def run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_fit_prints_the_list_like_table_1_and_writes_the_model(table, tmp_path, capsys):
    out_path = tmp_path / "model.json"
    status, out, err = run(["fit", table, "--target", "Readmitted", "--steps", "2000", "--seed", "3", "--out", out_path], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("IF ") and any(line.startswith("ELSE ") for line in lines)
    assert "Readmitted = yes risk" in out and "%" in out
    model = json.loads(out_path.read_text())
    assert model["format"] == "frl-model" and model["outcome"]["positive_class"] == "yes"
    risks = [r["probability"] for r in model["rules"]] + [model["default"]["probability"]]
    assert risks == sorted(risks, reverse=True)
    assert sum(r["support"] for r in model["rules"]) + model["default"]["support"] == 600
    # Each printed risk and support is the model's.
    for rule in model["rules"]:
        assert f"{100 * rule['probability']:6.2f}%" in out and rule["name"] in out

    status, shown, _ = run(["show", out_path], capsys)
    assert status == 0 and shown.splitlines()[:len(lines) - 3] == lines[:len(lines) - 3]


def test_fit_names_the_columns_it_left_out_as_identifiers_and_how_to_use_one(tmp_path, capsys):
    """Whole numbers spread evenly under a name that says nothing (a survey's item Q7) read like record numbers: the
    fit says so in one line, with the --kind that uses them, and with that --kind the list finds their risk.  The
    same numbers named Income are a measurement by their name, used without a --kind."""
    rng = np.random.default_rng(5)
    n = 800
    income = rng.choice(np.arange(10_000, 200_000), n, replace=False)
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n), "Q7": income})
    frame["Outcome"] = np.where(rng.random(n) < np.where(income < 60_000, 0.6, 0.1), "Yes", "No")
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Outcome", "--seed", "1"], capsys)
    assert status == 0, err
    note = next(line for line in out.splitlines() if line.startswith("Left out as identifiers"))
    assert "'Q7'" in note and "--kind Q7=numeric" in note and "'Age'" not in note
    status, out, err = run(["fit", path, "--target", "Outcome", "--seed", "1", "--kind", "Q7=numeric"], capsys)
    assert status == 0, err
    assert "IF      Q7 < " in out and "Left out as identifiers" not in out
    # a column the user excluded is not announced again
    status, out, err = run(["fit", path, "--target", "Outcome", "--seed", "1", "--exclude", "Q7"], capsys)
    assert status == 0 and "Left out as identifiers" not in out
    named = tmp_path / "income.csv"
    frame.rename(columns={"Q7": "Income"}).to_csv(named, index=False)
    status, out, err = run(["fit", named, "--target", "Outcome", "--seed", "1"], capsys)
    assert status == 0 and "IF      Income < " in out and "Left out as identifiers" not in out


def _survival_table(n=500, seed=4):
    """Survival data as R's pbc holds it: the patients who died were followed for a shorter time, so the time of
    follow-up tells the outcome better than any finding, and it is known only afterwards."""
    rng = np.random.default_rng(seed)
    bili = np.round(rng.lognormal(0.3, 0.8, n), 1)
    died = rng.random(n) < np.where(bili >= 3, 0.6, 0.15)
    futime = np.where(died, rng.integers(40, 1500, n), rng.integers(1200, 4500, n))
    return pd.DataFrame({"futime": futime, "bili": bili, "age": rng.integers(30, 80, n),
                         "status": np.where(died, "dead", "alive")})


def test_a_follow_up_time_is_left_out_said_and_used_only_when_declared(tmp_path, capsys):
    path = tmp_path / "followup.csv"
    _survival_table().to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "status", "--positive", "dead", "--seed", "1"], capsys)
    assert status == 0, err
    rules = [line for line in out.splitlines() if line.startswith(("IF ", "ELSE IF "))]
    assert rules and not any("futime" in line for line in rules) and any("bili" in line for line in rules)
    note = next(line for line in out.splitlines() if line.startswith("Left out, named like a follow-up time"))
    assert "'futime'" in note and "--kind futime=numeric" in note and "as written they make no rule" not in out
    # declared, it is used: it heads the list, which is why it is left out by default
    status, out, err = run(["fit", path, "--target", "status", "--positive", "dead", "--seed", "1",
                            "--kind", "futime=numeric"], capsys)
    assert status == 0, err
    assert out.splitlines()[1].startswith("IF      futime < ") and "named like a follow-up time" not in out


def test_a_second_outcome_beside_the_outcome_is_left_out_said_and_used_only_when_declared(tmp_path, capsys):
    """R's Rotterdam table holds recur (a relapse) beside death: a list for death read 'IF ... AND recur', which no
    one can use when the patient is seen."""
    rng = np.random.default_rng(4)
    n = 1500
    nodes = rng.integers(0, 15, n)
    recur = rng.random(n) < 0.2 + 0.04 * nodes
    death = rng.random(n) < np.where(recur, 0.8, 0.15)
    path = tmp_path / "rotterdam.csv"
    pd.DataFrame({"nodes": nodes, "recur": recur.astype(int), "death": death.astype(int)}).to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "death", "--seed", "1"], capsys)
    assert status == 0, err
    rules = [line for line in out.splitlines() if line.startswith(("IF ", "ELSE IF "))]
    assert rules and not any("recur" in line for line in rules) and any("nodes" in line for line in rules)
    note = next(line for line in out.splitlines() if line.startswith("Left out, named like a second outcome"))
    assert "'recur'" in note and "--kind recur=categorical" in note
    status, out, err = run(["fit", path, "--target", "death", "--seed", "1", "--kind", "recur=categorical"], capsys)
    assert status == 0, err
    assert out.splitlines()[1].startswith("IF      recur = 1 ") and "second outcome" not in out


def test_fit_names_the_columns_in_no_candidate_rule_and_what_to_do(tmp_path, capsys):
    """A diagnosis written as 200 free-text values (none on 5% of the patients) and a finding on 2% of them make no
    candidate rule at the default support: the fit says so in one line, and at a lower --min-support the finding is
    used."""
    rng = np.random.default_rng(11)
    n = 2000
    arrest = rng.random(n) < 0.02
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n), "AdmitDx": rng.choice([f"Dx {i}" for i in range(200)], n),
                          "CardiacArrest": np.where(arrest, "yes", "no")})
    frame["Died"] = np.where(rng.random(n) < np.where(arrest, 0.8, 0.1), "yes", "no")
    path = tmp_path / "findings.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Died", "--seed", "1"], capsys)
    assert status == 0, err
    note = next(line for line in out.splitlines() if line.startswith("In no candidate rule"))
    assert "(5% of patients)" in note and "'AdmitDx' (200 values)" in note and "'CardiacArrest'" in note
    assert "'Age'" not in note and "--min-support" in note
    status, out, err = run(["fit", path, "--target", "Died", "--seed", "1", "--min-support", "0.01"], capsys)
    assert status == 0, err
    assert "CardiacArrest" in out.split("\n\n")[0] and "'CardiacArrest'" not in out  # in the list, not in the note


def test_a_column_copied_under_another_coding_is_said_to_repeat_it_not_blamed_on_the_support(tmp_path, capsys):
    """An export with ``gender`` and a recoded copy ``sex`` (F / M): mining keeps one rule per set of patients, so no
    rule tests ``sex``. The fit says it repeats ``gender``, not that its values are too rare (they are on half the
    patients); the estimator records it."""
    frame = small_table(n=800, seed=3)
    frame.insert(1, "gender", np.where(np.random.default_rng(3).random(800) < 0.5, "Female", "Male"))
    frame.insert(2, "sex", frame["gender"].str[0])
    path = tmp_path / "copied.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Readmitted", "--seed", "1", "--steps", "300", "--chains", "2"],
                           capsys)
    assert status == 0, err
    assert "'sex' (the same as 'gender')" in out and "nothing is lost" in out
    assert "none of their values reaches the minimum support" not in out
    from frl_engine.estimator import FallingRuleListClassifier

    model = FallingRuleListClassifier(n_steps=300, n_chains=2, random_state=1).fit(frame.drop(columns="Readmitted"),
                                                                                   frame["Readmitted"])
    assert model.copied_columns_ == {"sex": "gender"}
    # the model file records them, so a list opened from it says so too (the dashboard's Rule list page)
    from dashboard import services

    saved = json.loads(model.to_json())
    assert saved["training"]["copied_columns"] == {"sex": "gender"}
    assert FallingRuleListClassifier.from_dict(saved).copied_columns_ == {"sex": "gender"}
    opened = services.FitResult(id="file-1", model=saved, source="file", label="model.json")
    assert "'sex' (the same as 'gender')" in services.copied_columns_note(opened)
    # without the copy nothing is said
    status, out, err = run(["fit", table_without(frame, "sex", tmp_path), "--target", "Readmitted", "--seed", "1",
                            "--steps", "300", "--chains", "2"], capsys)
    assert status == 0 and "the same as" not in out


def table_without(frame, column, tmp_path):
    path = tmp_path / f"without_{column}.csv"
    frame.drop(columns=column).to_csv(path, index=False)
    return path


def test_a_fit_on_a_handful_of_patients_warns_that_they_are_too_few(tmp_path, capsys):
    """Twelve patients, three with the event: the list is fitted (the posterior is defined), with a warning that so
    few patients make a list that says little; the columns are not blamed on the support. 600 patients: no warning."""
    frame = small_table()
    events = frame["Readmitted"] == "yes"
    tiny = pd.concat([frame[events].head(3), frame[~events].head(9)])
    path = tmp_path / "tiny.csv"
    tiny.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Readmitted", "--seed", "1", "--steps", "300", "--chains", "2"],
                           capsys)
    assert status == 0, err
    assert "Warning: Only 12 patients, 3 of them with the event: too few" in out
    assert "reaches the minimum support" not in out and "the same as" not in out
    status, out, err = run(["fit", tmp_path / "tiny.csv", "--target", "Readmitted", "--positive", "no", "--seed", "1",
                            "--steps", "300", "--chains", "2"], capsys)
    assert status == 0 and "Only 12 patients, 3 of them without the event" in out
    full = tmp_path / "full.csv"
    frame.to_csv(full, index=False)
    status, out, err = run(["fit", full, "--target", "Readmitted", "--seed", "1", "--steps", "300", "--chains", "2"],
                           capsys)
    assert status == 0 and "too few" not in out


def test_checkbox_columns_make_the_rules_they_should_and_their_blanks_are_no_when_scoring(tmp_path, capsys):
    """CHF written X or blank, diabetes Y or blank: the list finds both; the model file marks them as flags, so scoring
    new patients does not call their blanks unknown (a model file without the mark still does)."""
    rng = np.random.default_rng(12)
    n = 3000
    chf, diabetes, age = rng.random(n) < .25, rng.random(n) < .3, rng.integers(20, 95, n).astype(float)
    died = rng.random(n) < 0.05 + 0.35 * chf + 0.1 * diabetes + 0.002 * (age - 20)
    age[rng.random(n) < 0.1] = np.nan   # unknown ages: a blank that is not a no
    frame = pd.DataFrame({"CHF": np.where(chf, "X", ""), "Diabetes": np.where(diabetes, "Y", ""), "Age": age,
                          "Died": np.where(died, "yes", "no")})
    path, model_path = tmp_path / "flags.csv", tmp_path / "flags.json"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Died", "--out", model_path], capsys)
    assert status == 0, err
    listed = out.split("\n\n")[0]
    assert "IF      CHF = X " in listed and "Diabetes " in listed
    columns = {c["name"]: c for c in json.loads(model_path.read_text())["binarizer"]["columns"]}
    assert columns["CHF"].get("flag") is True and columns["Diabetes"].get("flag") is True and "flag" not in columns["Age"]
    status, out, err = run(["predict", model_path, path, "--out", tmp_path / "scored.csv"], capsys)
    assert status == 0, err
    assert "'CHF' is empty" not in err and "'Diabetes' is empty" not in err
    # a model file written before the flag (and before the missing shares) still reads, with the blanks reported
    old = json.loads(model_path.read_text())
    for column in old["binarizer"]["columns"]:
        column.pop("flag", None)
        column.pop("missing", None)
    (tmp_path / "old.json").write_text(json.dumps(old))
    status, out, err = run(["predict", tmp_path / "old.json", path, "--out", tmp_path / "scored_old.csv"], capsys)
    assert status == 0 and "'CHF' is empty" in err


def test_fit_without_mining_still_prints_its_list(tmp_path, capsys):
    """--no-mining (the columns are the candidate rules) has no column reading: the fit's column notes are
    skipped, not an error."""
    rng = np.random.default_rng(9)
    n = 400
    frame = pd.DataFrame({"BedSores": rng.random(n) < 0.3, "Old": rng.random(n) < 0.5})
    frame["Outcome"] = np.where(rng.random(n) < np.where(frame.BedSores & frame.Old, 0.7, 0.1), "yes", "no")
    path = tmp_path / "boolean.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Outcome", "--no-mining", "--steps", "1000"], capsys)
    assert status == 0, err
    assert "THEN Outcome = yes risk" in out and "Left out as identifiers" not in out


def test_positive_on_an_outcome_of_three_values_says_what_counts_as_not_the_event(table, tmp_path, capsys):
    frame = small_table()
    frame["Readmitted"] = np.where(frame["Readmitted"] == "yes", "<30",
                                   np.where(np.arange(len(frame)) % 3 == 0, ">30", "NO"))
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Readmitted", "--positive", "<30", "--steps", "1000"], capsys)
    assert status == 0, err
    n_event = int((frame["Readmitted"] == "<30").sum())
    first = out.splitlines()[0]
    assert first.startswith(f"The event is Readmitted = '<30' ({n_event:,} patients); ")
    assert first.endswith(" count as not the event.") and "'NO'" in first and "'>30'" in first
    # with two values there is nothing to say
    status, out, _ = run(["fit", table, "--target", "Readmitted", "--positive", "yes", "--steps", "1000"], capsys)
    assert status == 0 and "count as not the event" not in out


def test_predict_adds_risk_and_rule_number(table, tmp_path, capsys):
    model_path = tmp_path / "model.json"
    assert run(["fit", table, "--target", "Readmitted", "--steps", "1000", "--out", model_path], capsys)[0] == 0
    scored_path = tmp_path / "scored.csv"
    status, out, err = run(["predict", model_path, table, "--out", scored_path], capsys)
    assert status == 0, err
    scored = pd.read_csv(scored_path)
    model = json.loads(model_path.read_text())
    risks = [r["probability"] for r in model["rules"]] + [model["default"]["probability"]]
    assert list(scored.columns[-2:]) == ["risk", "rule"]
    np.testing.assert_allclose(scored["risk"], np.asarray(risks)[scored["rule"] - 1])
    counts = scored["rule"].value_counts().sort_index().tolist()
    assert counts == [r["support"] for r in model["rules"]] + [model["default"]["support"]]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def bad_inputs(tmp_path):
    good = small_table(300)
    cases = {}
    cases["empty file"] = (["fit", write(tmp_path, "empty.csv", ""), "--target", "Readmitted"], "empty")
    cases["header only"] = (["fit", write(tmp_path, "header.csv", "Age,Readmitted\n"), "--target", "Readmitted"], "no rows")
    cases["unknown target"] = (["fit", write(tmp_path, "t.csv", good.to_csv(index=False)), "--target", "Outcome"], "'Outcome' is not in the data")
    one = good.assign(Readmitted="yes")
    cases["one class"] = (["fit", write(tmp_path, "one.csv", one.to_csv(index=False)), "--target", "Readmitted"], "only one value")
    three = good.assign(Readmitted=np.resize(["yes", "no", "maybe"], 300))
    cases["three classes"] = (["fit", write(tmp_path, "three.csv", three.to_csv(index=False)), "--target", "Readmitted"], "--positive")
    junk = good.astype({"Age": object})
    junk.loc[junk.index[::5], "Age"] = "abc"  # a fifth of the ages: more than a few text results
    cases["junk in numeric"] = (["fit", write(tmp_path, "junk.csv", junk.to_csv(index=False)), "--target", "Readmitted",
                                 "--kind", "Age=numeric"], "'Age'")
    nothing = pd.DataFrame({c: np.nan for c in good.columns if c != "Readmitted"}, index=good.index).assign(Readmitted=good["Readmitted"])
    cases["no usable column"] = (["fit", write(tmp_path, "miss.csv", nothing.to_csv(index=False)), "--target", "Readmitted"], "No column can make an item")
    cases["duplicate columns"] = (["fit", write(tmp_path, "dup.csv", "Age,Age,Readmitted\n1,2,yes\n3,4,no\n"), "--target", "Readmitted"], "duplicate column")
    cases["unknown kind"] = (["fit", write(tmp_path, "k.csv", good.to_csv(index=False)), "--target", "Readmitted", "--kind", "Age=colour"], "Unknown column kind 'colour'")
    cases["no rule reaches support"] = (["fit", write(tmp_path, "s.csv", good.to_csv(index=False)), "--target", "Readmitted", "--min-support", "0.99"], "min_support")
    cases["model not ours"] = (["show", write(tmp_path, "m.json", json.dumps({"weights": [1, 2]}))], "not a falling rule list model")
    cases["model not json"] = (["predict", write(tmp_path, "m.txt", "hello"), write(tmp_path, "d.csv", good.to_csv(index=False))], "not valid JSON")
    cases["missing file"] = (["fit", tmp_path / "nope.csv", "--target", "Readmitted"], "not found")
    cases["wrong extension"] = (["fit", write(tmp_path, "data.rds", "a,b\n1,2\n"), "--target", "b"], "unsupported file type")
    return cases


CASES = [
    "empty file", "header only", "unknown target", "one class", "three classes", "junk in numeric",
    "no usable column", "duplicate columns", "unknown kind", "no rule reaches support",
    "model not ours", "model not json", "missing file", "wrong extension"]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_gets_one_line_and_a_non_zero_exit(case, tmp_path, capsys):
    argv, expected = bad_inputs(tmp_path)[case]
    status, out, err = run(argv, capsys)
    assert status == 2
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("frl: error: ") and expected in err, err


def test_the_installed_console_script_runs_without_traceback(tmp_path):
    frl = Path(sys.executable).parent / "frl"
    result = subprocess.run([str(frl), "fit", str(tmp_path / "absent.csv"), "--target", "y"], capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr and "not found" in result.stderr
    for command in ("fit", "show", "predict"):
        helped = subprocess.run([str(frl), command, "--help"], capture_output=True, text=True)
        assert helped.returncode == 0 and "usage: frl " + command in helped.stdout


@pytest.mark.skipif(not SAMPLE.exists(), reason="sample data not generated")
def test_fit_on_the_bundled_sample_data(tmp_path, capsys):
    status, out, err = run(["fit", SAMPLE, "--target", "Readmitted30d", "--exclude", "PatientID", "--seed", "0"], capsys)
    assert status == 0, err
    assert "PatientID" not in out


def test_fit_validate_stores_the_cross_validated_auroc(table, tmp_path, capsys):
    out_path = tmp_path / "model.json"
    status, out, err = run(["fit", table, "--target", "Readmitted", "--steps", "1000", "--validate", "3",
                            "--out", out_path], capsys)
    assert status == 0, err
    validation = json.loads(out_path.read_text())["validation"]
    assert validation["n_folds"] == 3 and 0.6 < validation["auroc_mean"] <= 1.0
    assert f"{validation['auroc_mean']:.3f}" in out


def test_sample_writes_a_model_with_credible_intervals_for_the_card(table, tmp_path, capsys):
    model_path = tmp_path / "model.json"
    status, out, err = run(["sample", table, "--target", "Readmitted", "--steps", "1000", "--samples", "200",
                            "--jobs", "1", "--model-out", model_path], capsys)
    assert status == 0, err
    model = json.loads(model_path.read_text())
    posterior = model["posterior"]
    risks = [r["probability"] for r in model["rules"]] + [model["default"]["probability"]]
    assert len(posterior["risk_lower"]) == len(risks)
    for low, risk, high in zip(posterior["risk_lower"], risks, posterior["risk_upper"]):
        assert 0 <= low <= high <= 1 and low - 0.05 <= risk <= high + 0.05


def test_a_sample_too_small_to_show_the_ess_is_said_before_it_runs(table, capsys):
    status, out, err = run(["sample", table, "--target", "Readmitted", "--steps", "500", "--samples", "50",
                            "--sampler-chains", "2", "--jobs", "1", "--explain-columns"], capsys)
    assert status == 0, err
    assert re.search(r"^column +kind +items", out, re.MULTILINE) and out.index("column ") < out.index("IF ")
    assert "50 samples x 2 chains = 100 draws seldom show an ESS of 400" in out
    assert "--samples 200 at the very least" in out   # 200 x 2 draws: no advice the end of the run contradicts
    assert out.index("seldom show an ESS") < out.index("IF ")  # said before the work, not after
    # after the work: how much longer a sample would give ESS 400, as --samples, and about how long it would take
    factor = float(re.search(r"about ([\d.,]+) times as many sweeps would give 400", out).group(1).replace(",", ""))
    line = re.search(r"About ([\d.,]+) times as long a sample \(--samples (\d+)\) would take about ([\d.]+) "
                     r"(s|minutes) at this run's speed", out)
    seconds = float(re.search(r"Sampled in ([\d.]+) s\.", out).group(1))
    more = max(100, math.ceil(50 * factor / 100) * 100)   # rounded up to a hundred a chain
    assert int(line.group(2)) == more
    # the factor and the time are those of the sample asked for, so that the three agree
    assert float(line.group(1).replace(",", "")) == pytest.approx(more / 50, rel=0.02)
    took = float(line.group(3)) * (60 if line.group(4) == "minutes" else 1)
    assert took == pytest.approx(seconds * more / 50, rel=0.05, abs=1)


def test_sample_tempers_the_list_prior_when_asked_and_refuses_it_without_replicas(table, tmp_path, capsys):
    out_path = tmp_path / "posterior.json"
    status, out, err = run(["sample", table, "--target", "Readmitted", "--steps", "500", "--samples", "100",
                            "--sampler-chains", "2", "--jobs", "1", "--thin", "2", "--temperatures", "3",
                            "--temper-prior", "--out", out_path], capsys)
    assert status == 0, err
    assert "parallel tempering, 3 replicas per chain" in out and "(likelihood and list prior tempered)" in out
    data = json.loads(out_path.read_text())
    assert data["prior_tempered"] is True and len(data["temperatures"]) == 3
    status, out, err = run(["sample", table, "--target", "Readmitted", "--steps", "500", "--samples", "100",
                            "--temper-prior"], capsys)
    assert status != 0 and "Traceback" not in err
    assert "--temper-prior tempers the replicas of --temperatures" in err + out
    assert "IF " not in out   # refused before the fit


def test_a_list_without_rules_is_printed_and_explained(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"Age": rng.integers(20, 95, 500), "Smoker": np.where(rng.random(500) < 0.3, "yes", "no"),
                          "Outcome": np.where(rng.random(500) < 0.2, "yes", "no")})
    path = tmp_path / "noise.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", path, "--target", "Outcome"], capsys)
    assert status == 0, err
    assert out.splitlines()[1].startswith("ALWAYS") and "No rule beats the overall risk" in out
    assert "(--max-conditions 1, a higher --min-support)" in out
    # already one condition a rule: the advice does not ask for what was given
    status, out, err = run(["fit", path, "--target", "Outcome", "--max-conditions", "1"], capsys)
    assert status == 0 and out.splitlines()[1].startswith("ALWAYS"), err
    assert "(a higher --min-support)" in out and "--max-conditions 1" not in out


def test_an_empty_column_and_a_name_column_are_left_out_with_the_reason_not_refused(tmp_path, capsys):
    """A real export has empty columns and identifiers: the fit goes on and --explain-columns says why."""
    good = pd.read_csv(SAMPLE).rename(columns={"Readmitted30d": "Readmitted"})
    frame = good.assign(Notes=np.nan, PatientName=[f"patient {i}" for i in range(len(good))])
    status, out, err = run(["fit", write(tmp_path, "x.csv", frame.to_csv(index=False)), "--target", "Readmitted",
                            "--explain-columns"], capsys)
    assert status == 0, err
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "(empty)" in lines["Notes"] and "no values" in lines["Notes"]
    assert "(identifier)" in lines["PatientName"] and "(identifier)" in lines["PatientID"]
    assert "IF " in out and "PatientName" not in out.split("IF ", 1)[1]



def test_help_and_one_line_errors_need_neither_scikit_learn_nor_numba():
    """The parser and the early errors load no model code, so `frl --help` or a wrong path answers in about a
    second instead of three."""
    script = ("import sys\nfrom frl_engine.cli import main\n"
              "status = main(['fit', 'absent.csv', '--target', 'y'])\n"
              "print(status, 'sklearn' in sys.modules, 'numba' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["2", "False", "False"], done.stdout + done.stderr
    assert "not found" in done.stderr


def test_no_output_option_writes_over_the_files_a_command_reads_or_over_another_output(table, tmp_path, capsys):
    """An export or a model written over by a slip of ``--out`` is lost: every output option of every command is
    refused, before any work, when it names the table or model the command reads, or another output."""
    model = tmp_path / "model.json"
    assert run(["fit", table, "--target", "Readmitted", "--steps", "300", "--chains", "2", "--out", model],
               capsys)[0] == 0
    kept = {path: path.read_bytes() for path in (table, model)}
    refused = {
        "fit --out the table": ["fit", table, "--target", "Readmitted", "--out", table],
        "sample --model-out the table": ["sample", table, "--target", "Readmitted", "--model-out", table],
        "sample --out the table": ["sample", table, "--target", "Readmitted", "--out", table],
        "predict --out the model": ["predict", model, table, "--out", model],
        "validate --out the table": ["validate", model, table, "--out", table],
        "validate --html the model": ["validate", model, table, "--html", model],
        "validate --model-out the table": ["validate", model, table, "--model-out", table],
        "evaluate --html the table": ["evaluate", table, "--target", "Readmitted", "--html", table],
        "explore --out the table": ["explore", table, "--target", "Readmitted", "--out", table],
        "card --out the model": ["card", model, "--out", model],
    }
    for case, argv in refused.items():
        status, out, err = run(argv, capsys)
        assert status == 2 and "would be written over and lost" in err and "Traceback" not in err, (case, err)
    same = tmp_path / "result.json"
    status, _, err = run(["validate", model, table, "--out", same, "--html", same], capsys)
    assert status == 2 and "--out and --html both name" in err and not same.exists()
    # the same file named another way (a relative path) is the same file
    status, _, err = run(["fit", table, "--target", "Readmitted", "--out", Path(os.path.relpath(table))], capsys)
    assert status == 2 and "is the table being read" in err
    assert {path: path.read_bytes() for path in (table, model)} == kept


def test_a_damaged_model_file_is_refused_by_every_command_not_printed_or_used(table, tmp_path, capsys):
    """A risk of 150% or NaN, risks that rise, or rules whose patients do not add up to the training rows cannot
    come from a fit: ``show``, ``predict``, ``validate`` and ``card`` each refuse the file in one line (the card
    alone used to), instead of printing 'risk is 150.00%' or scoring patients with it."""
    model = tmp_path / "model.json"
    assert run(["fit", table, "--target", "Readmitted", "--steps", "300", "--chains", "2", "--out", model],
               capsys)[0] == 0
    good = json.loads(model.read_text())
    assert len(good["rules"]) >= 1

    def damaged(name, change):
        broken = json.loads(json.dumps(good))
        change(broken)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(broken))   # NaN is written as NaN, as a hand-edited file may hold it
        return path

    cases = {
        "risk above 1": (lambda m: m["rules"][0].update(probability=1.5), "rule 1's risk is 1.5"),
        "risk not a number": (lambda m: m["rules"][0].update(probability=float("nan")), "rule 1's risk is nan"),
        "risk below 0": (lambda m: m["default"].update(probability=-0.1), "the ELSE rule's risk is -0.1"),
        "rising risks": (lambda m: m["default"].update(probability=0.99), "the ELSE rule's risk (0.99) is above"),
        "rules emptied": (lambda m: m.update(rules=[]), "its rules catch"),
        "support not whole": (lambda m: m["default"].update(support=12.5), "support is 12.5"),
    }
    for case, (change, expected) in cases.items():
        path = damaged(case.replace(" ", "_"), change)
        for argv in (["show", path], ["predict", path, table], ["validate", path, table],
                     ["card", path, "--out", tmp_path / "card.pdf"]):
            status, out, err = run(argv, capsys)
            assert status == 2 and expected in err and "is damaged" in err, (case, argv[0], err)
            assert "Traceback" not in err and err.count("\n") == 1 and "%" not in out, (case, argv[0], err)
    assert not (tmp_path / "card.pdf").exists()
    assert run(["show", model], capsys)[0] == 0   # the file as fit wrote it is still read


def test_a_threshold_outside_the_columns_values_is_warned_about_not_blamed_on_the_support(table, tmp_path, capsys):
    """``--threshold Age=600`` (a typo for 60) makes items that hold every patient or none: the fit says so, names
    the column's range, and does not call it a column whose values are too rare."""
    status, out, err = run(["fit", table, "--target", "Readmitted", "--threshold", "Age=600,0.5", "--steps", "300",
                            "--chains", "2"], capsys)
    assert status == 0
    assert "thresholds outside the column's values" in out and "'Age' 0.5, 600 (its values are 20 to 94)" in out
    assert "none of their values reaches the minimum support" not in out
    status, out, _ = run(["fit", table, "--target", "Readmitted", "--threshold", "Age=60", "--steps", "300",
                          "--chains", "2"], capsys)
    assert status == 0 and "outside the column's values" not in out


def test_a_column_given_two_thresholds_or_two_kinds_is_refused_not_half_read(table, capsys):
    """Repeating ``--threshold Age=...`` used to keep the last one silently (45 and 60 dropped for 70)."""
    status, _, err = run(["fit", table, "--target", "Readmitted", "--threshold", "Age=45,60", "--threshold",
                          "Age=70"], capsys)
    assert status == 2 and "--threshold names 'Age' twice" in err
    status, _, err = run(["fit", table, "--target", "Readmitted", "--kind", "Ward=categorical", "--kind",
                          "Ward=nominal"], capsys)
    assert status == 2 and "--kind names 'Ward' twice" in err


def test_numbers_written_in_another_unit_than_at_fit_time_are_said_when_scoring(tmp_path, capsys):
    """A weight written '72 kg' at fit time and '160 lbs' in the table scored is read as 160 kg by the rule's
    threshold: the unit is kept in the model file and ``frl predict`` names the column and both units."""
    rng = np.random.default_rng(4)
    n = 1500
    kg = rng.integers(45, 130, size=n)
    event = rng.random(n) < np.where(kg >= 100, 0.6, 0.1)
    frame = pd.DataFrame({"Weight": [f"{w} kg" for w in kg], "Ward": rng.choice(["a", "b"], size=n),
                          "Died": np.where(event, "yes", "no")})
    data, model = tmp_path / "train.csv", tmp_path / "model.json"
    frame.to_csv(data, index=False)
    assert run(["fit", data, "--target", "Died", "--steps", "500", "--chains", "2", "--out", model], capsys)[0] == 0
    written = json.loads(model.read_text())
    assert any(c["column"] == "Weight" for rule in written["rules"] for c in rule["conditions"])
    assert {c["name"]: c.get("unit") for c in written["binarizer"]["columns"]}["Weight"] == "kg"
    pounds, kilos = tmp_path / "lbs.csv", tmp_path / "kg.csv"
    frame.drop(columns="Died").assign(Weight=[f"{round(w * 2.2046)} lbs" for w in kg]).to_csv(pounds, index=False)
    frame.drop(columns="Died").to_csv(kilos, index=False)
    status, _, err = run(["predict", model, pounds, "--out", tmp_path / "scored.csv"], capsys)
    assert status == 0 and "column 'Weight' is written in 'lbs' here and in 'kg' at fit time" in err, err
    status, _, err = run(["predict", model, kilos, "--out", tmp_path / "scored2.csv"], capsys)
    assert status == 0 and "is written in" not in err, err


@pytest.mark.parametrize("argv, expected", [
    (["--n-thresholds", "0"], "frl: error: --n-thresholds must be at least 1, got 0"),
    (["--min-support", "2"], "frl: error: --min-support must be at most 1"),
    (["--max-conditions", "0"], "frl: error: --max-conditions must be at least 1"),
    (["--kind", "Sex=numeric"], "frl: error: --kind names column 'Sex', which is not in the data"),
    (["--exclude", "Age,Ward"], "frl: error: --exclude names 'Age,Ward', which is not a column but 2: name each "
                                "column on its own (--exclude Age --exclude Ward)"),
])
def test_a_bad_setting_is_named_by_the_option_the_user_typed(table, argv, expected, capsys):
    """The command line's messages name its options (``--n-thresholds``), not the Python parameters behind them
    (``n_thresholds``); a comma-separated ``--exclude`` says to name each column on its own."""
    status, _, err = run(["fit", table, "--target", "Readmitted", *argv], capsys)
    assert status == 2 and err.startswith(expected) and err.count("\n") == 1, err


def test_card_and_show_refuse_the_same_damaged_files_with_one_line(table, tmp_path, capsys):
    """A hand-edited model file: a rule name that is not its conditions would print a rule the model never applies,
    and counts written as text stopped `frl show` half-way with a traceback. Card and show refuse each with one line
    (found by an outside-in sweep: the card printed them)."""
    model_path = tmp_path / "m.json"
    assert run(["fit", table, "--target", "Readmitted", "--steps", "300", "--chains", "2", "--out", model_path],
               capsys)[0] == 0
    good = json.loads(model_path.read_text())
    edits = {
        "name": (lambda m: m["rules"][0].update(name="Ward = surgical"), "does not match its conditions"),
        "op": (lambda m: m["rules"][0]["conditions"][0].update(op="LIKE"), "Unknown condition operator 'LIKE'"),
        "event list": (lambda m: m["outcome"].update(positive_class=["yes", "no"]), "not one value"),
        "rows as text": (lambda m: m["training"].update(n_rows=str(m["training"]["n_rows"])), "not a whole number"),
        "rate as text": (lambda m: m["training"].update(positive_rate="lots"), "not a share between 0 and 1"),
        "outcome as text": (lambda m: m.update(outcome="Readmitted"), "'outcome' section is str"),
        "more events than rows": (lambda m: m["training"].update(n_positive=m["training"]["n_rows"] + 1),
                                  "more events than training rows"),
    }
    for case, (edit, expected) in edits.items():
        damaged = json.loads(json.dumps(good))
        edit(damaged)
        path = tmp_path / "damaged.json"
        path.write_text(json.dumps(damaged))
        for argv in (["card", path, "--out", tmp_path / "card.pdf"], ["show", path]):
            status, out, err = run(argv, capsys)
            assert status == 2 and expected in err, (case, argv[0], err)
            assert "Traceback" not in err and err.count("\n") == 1, (case, argv[0], err)
        assert not (tmp_path / "card.pdf").exists(), case
    assert run(["card", model_path, "--out", tmp_path / "card.pdf"], capsys)[0] == 0


@pytest.mark.parametrize("command, value, expected", [
    ("sample", "0", "0 processes cannot run anything"), ("sample", "-2", "or -1 for one per core, got -2"),
    ("evaluate", "0", "0 processes cannot run anything"), ("explore", "0", "0 processes cannot run anything"),
])
def test_a_jobs_count_that_cannot_run_is_refused_by_its_flag_before_any_work(table, command, value, expected, capsys):
    """`--jobs 0` named the engine's n_jobs, and `frl sample` refused it only after the whole fit."""
    started = time.perf_counter()
    with pytest.raises(SystemExit) as stopped:   # argparse's own exit, as for any flag it refuses
        main([command, str(table), "--target", "Readmitted", "--jobs", value])
    out, err = capsys.readouterr()
    assert stopped.value.code == 2 and "argument --jobs" in err and expected in err and out == ""
    assert time.perf_counter() - started < 5   # refused while reading the command line, before any fit


@pytest.mark.parametrize("command", ["fit", "sample", "evaluate", "explore"])
@pytest.mark.parametrize("value, expected", [("0", "give 1 or more annealing steps per chain (default 5000), got 0"),
                                             ("-5", "got -5"), ("many", "expected a whole number, got 'many'")])
def test_zero_annealing_steps_are_refused_by_the_flag(table, command, value, expected, capsys):
    """`--steps 0` ran about 20 times slower than the default (the search left to its walks), unsaid."""
    with pytest.raises(SystemExit) as stopped:
        main([command, str(table), "--target", "Readmitted", "--steps", value])
    out, err = capsys.readouterr()
    assert stopped.value.code == 2 and "argument --steps" in err and expected in err and out == ""


def test_show_prints_a_sampled_models_credible_intervals_only_where_the_sample_supports_them(table, tmp_path, capsys):
    """`frl show` of a `frl sample --model-out` file: each row's 95% credible interval beside its risk, and the
    sample's verdict; a sample that did not converge prints no interval (as the card), and says so."""
    model_path = tmp_path / "model.json"
    status, out, err = run(["sample", table, "--target", "Readmitted", "--steps", "1000", "--samples", "500",
                            "--jobs", "1", "--seed", "3", "--model-out", model_path], capsys)
    assert status == 0, err
    model = json.loads(model_path.read_text())
    posterior = model["posterior"]
    status, out, err = run(["show", model_path], capsys)
    assert status == 0, err
    rows = [line for line in out.splitlines() if re.match(r"(IF|ELSE IF|ELSE|ALWAYS) ", line)]
    assert len(rows) == len(model["rules"]) + 1
    assert f"Posterior sample: {posterior['n_samples']:,} draws from {posterior['n_chains']} chains." in out
    assert posterior["verdict"] in out
    assert posterior["converged"], posterior["verdict"]   # this seed's sample converges
    assert "95% CrI" in out.splitlines()[0]
    for row, low, high in zip(rows, posterior["risk_lower"], posterior["risk_upper"]):
        assert row.endswith(f"{100 * low:.1f}% to {100 * high:.1f}%")
    model["posterior"]["converged"] = False    # the same file had the sample not converged
    unconverged = tmp_path / "unconverged.json"
    unconverged.write_text(json.dumps(model))
    status, out, err = run(["show", unconverged], capsys)
    assert status == 0, err
    assert "CrI" not in out and "% to " not in out
    assert "No credible intervals are printed: the risks are point estimates." in out
