"""Which column and which event value the data page offers first (dashboard/services.py; issue 12)."""

import importlib.util
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import services

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

SCRIPT = Path(__file__).resolve().parents[1] / "sample_data" / "make_raw_export.py"


@pytest.fixture(scope="module")
def raw_export():
    spec = importlib.util.spec_from_file_location("make_raw_export", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.make_raw_export(3000, seed=1)


def test_the_raw_exports_outcome_is_readmitted_not_a_medication_flag(raw_export):
    """Regression: the last yes/no column (a medication flag such as metformin) used to be suggested."""
    assert services.suggest_target(raw_export) == "readmitted"
    assert services.suggest_target(raw_export.iloc[:, ::-1]) == "readmitted"  # wherever it stands


def test_an_outcome_name_wins_over_yes_no_columns():
    frame = pd.DataFrame({"Outcome": ["died", "alive", "transferred", "alive"], "Smoker": ["yes", "no"] * 2,
                          "Diabetic": ["no", "yes"] * 2})
    assert services.suggest_target(frame) == "Outcome"


@pytest.mark.parametrize("name", ["readmitted", "Readmitted30d", "readmission_30_days", "DEATH_EVENT", "died",
                                  "mortality_1y", "y", "label", "target", "Survived", "vital_status"])
def test_names_that_say_outcome(name):
    frame = pd.DataFrame({"Smoker": ["yes", "no"] * 3, name: ["a", "b", "a", "a", "b", "a"], "Ward": list("ABCABC")})
    assert services.suggest_target(frame) == name


@pytest.mark.parametrize("name", ["readmission_date", "event_id", "A1Cresult", "number_inpatient", "smoking_status",
                                  "time_to_event", "diabetesMed", "metformin"])
def test_names_that_do_not(name):
    assert services.outcome_name_rank(name) is None


def test_the_most_telling_name_first_and_two_values_before_three():
    frame = pd.DataFrame({"label": ["x", "y"] * 3, "readmitted": ["NO", ">30", "<30"] * 2,
                          "readmitted_30d": ["yes", "no"] * 3})
    assert services.suggest_target(frame) == "readmitted_30d"
    assert services.suggest_target(frame.drop(columns="readmitted_30d")) == "readmitted"


def test_a_column_named_like_an_outcome_with_far_too_many_values_is_passed_over():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"outcome_score": rng.normal(size=200), "Relapse": rng.choice(["yes", "no"], 200)})
    assert services.outcome_name_rank("outcome_score") is not None
    assert services.suggest_target(frame) == "Relapse"


def test_without_an_outcome_name_a_near_constant_flag_is_not_suggested():
    n = 2000
    frame = pd.DataFrame({"Relapse": np.where(np.arange(n) % 5 == 0, "yes", "no"),
                          "acetohexamide": np.where(np.arange(n) == 7, "Steady", "No")})  # one row in 2,000
    assert services.suggest_target(frame) == "Relapse"


def test_suggest_event_for_three_values_is_the_rarest_that_is_not_no(raw_export):
    outcome = raw_export["readmitted"]
    counts = outcome.value_counts()
    assert counts["<30"] < counts[">30"]  # so the rarer non-"NO" value is "<30"
    assert services.suggest_event(outcome) == "<30"
    assert services.suggest_event(pd.Series(["none", "mild", "severe", "mild", "none", "mild"])) == "severe"
    # but numbers after the 0 are codes, which only the codebook reads: R's pbc status is 0 censored, 1 transplant
    # (the rarest: 25 patients) and 2 dead (161), so the page waits for the user's pick instead of offering 1
    assert services.suggest_event(pd.Series(["0", "1", "2", "1", "0"])) is None
    assert services.suggest_event(pd.Series([0] * 232 + [1] * 25 + [2] * 161)) is None
    # and a word naming the event wins over the rarer of the others: Dead, not Transplant
    assert services.suggest_event(pd.Series(["Alive"] * 232 + ["Transplant"] * 25 + ["Dead"] * 161)) == "Dead"


def test_a_race_or_a_sex_is_not_offered_as_the_outcome_and_a_relapse_is():
    """Ecdat's DoctorContacts: the last yes/no column was ``black``; R's nwtco: ``in.subcohort`` (a study-design
    flag) after ``rel``, the relapse."""
    rng = np.random.default_rng(0)
    n = 200
    contacts = pd.DataFrame({"mdu": rng.integers(0, 9, n), "physlim": rng.choice([0, 1], n),
                             "sex": rng.choice(["f", "m"], n), "black": rng.choice([0, 1], n, p=[0.8, 0.2])})
    assert services.suggest_target(contacts) == "physlim"
    assert services.suggest_target(contacts.assign(child=rng.choice([0, 1], n))) == "physlim"   # a child is no outcome
    nwtco = pd.DataFrame({"histol": rng.choice([1, 2], n), "rel": rng.choice([0, 1], n, p=[0.85, 0.15]),
                          "age": rng.integers(1, 100, n), "in.subcohort": rng.choice([True, False], n)})
    assert services.suggest_target(nwtco) == "rel"
    only = pd.DataFrame({"age": rng.integers(1, 100, n), "black": rng.choice([0, 1], n, p=[0.8, 0.2])})
    assert services.suggest_target(only) == "black"   # when nothing else is two-valued, it is still offered


def test_missing_outcomes_are_no_value_to_suggest():
    """Regression: '?' and blanks were counted as outcome values, so Yes / No / ? offered '?' (then 'No')."""
    assert services.suggest_event(pd.Series(["Yes", "No", "No", "?", "", "No", "Yes"])) == "Yes"
    assert services.suggest_event(pd.Series(["NO", ">30", "<30", "?", "?", "?", "<30", "NO", "Unknown"])) == ">30"
    assert services.suggest_event(pd.Series(["yes", "YES ", "no", None, "?"])) == "yes"


def test_suggest_event_for_three_values_offers_the_one_that_names_an_event():
    """Deceased / Discharged home / Transferred: no value reads as "no", one names an event."""
    outcome = pd.Series(["Discharged home", "Transferred", "Deceased", "Transferred", "Discharged home"])
    assert services.suggest_event(outcome) == "Deceased"
    assert services.suggest_event(pd.Series(["died", "home", "rehab", "Died"])) == "died"
    assert services.suggest_event(pd.Series(["Died", "Expired", "home"])) is None   # two name an event: the user picks


def test_the_command_line_asks_for_the_event_of_three_values_and_offers_one(tmp_path, capsys):
    from frl_engine.cli import main

    path = tmp_path / "discharges.csv"
    pd.DataFrame({"age": [50, 60, 70, 80, 90, 55], "outcome": ["Deceased", "Discharged home", "Transferred",
                                                               "Deceased", "Transferred", "Discharged home"]}
                 ).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "outcome"]) == 2
    err = capsys.readouterr().err
    assert "has 3 values (Deceased, Discharged home, Transferred), not two" in err
    assert "e.g. --positive Deceased" in err and "give --positive again for each further value" in err


def test_suggest_event_leaves_the_pick_to_the_user_when_no_value_reads_as_no():
    assert services.suggest_event(pd.Series(["home", "rehab", "nursing", "home"])) is None
    assert services.suggest_event(pd.Series(["no", "No event", "yes", "maybe"])) is None  # two 'no' values
    assert services.suggest_event(pd.Series(["only"] * 4)) is None


def test_suggest_event_for_two_values_is_the_engines_choice():
    series = pd.Series(["yes", "no", "no"])
    assert services.suggest_event(series) == services.default_event(series) == "yes"
    assert services.suggest_event(pd.Series([0, 1, 1])) == 1


def test_an_outcome_column_with_one_value_is_still_offered_before_any_yes_no_finding():
    """An export filtered on its outcome (death = No on every row) must not make 'sex' the outcome."""
    frame = pd.DataFrame({"age": np.arange(40) + 30, "sex": ["M", "F"] * 20, "death": ["No"] * 38 + ["?", ""]})
    assert services.suggest_target(frame) == "death"
    frame["readmitted"] = ["yes", "no", "no", "no"] * 10  # a usable outcome still comes first
    assert services.suggest_target(frame) == "readmitted"
