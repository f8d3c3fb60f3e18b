"""The synthetic raw hospital export (sample_data/make_raw_export.py) and the list that generated its event."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "sample_data" / "make_raw_export.py"
SMALL = 3000
LARGE = 100_000  # the default size; the simulation checks need it (about a second to make)


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("make_raw_export", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def small(gen):
    return gen.make_raw_export(SMALL, seed=7)


@pytest.fixture(scope="module")
def large(gen):
    return gen.make_raw_export(LARGE, seed=11)


def test_shape_and_columns_are_those_of_the_uci_export(gen, small):
    assert small.shape == (SMALL, 50)
    assert list(small.columns) == list(gen.COLUMNS)
    assert list(small.columns[:3]) == ["encounter_id", "patient_nbr", "race"]
    assert list(small.columns[-3:]) == ["change", "diabetesMed", "readmitted"]
    assert len(gen.MEDICATIONS) == 23 and set(gen.MEDICATIONS) <= set(small.columns)


def test_same_seed_same_table_other_seed_other_table(gen, small):
    pd.testing.assert_frame_equal(gen.make_raw_export(SMALL, seed=7), small)
    other = gen.make_raw_export(SMALL, seed=8)
    assert not other["readmitted"].equals(small["readmitted"])
    assert not other["diag_1"].equals(small["diag_1"])


def test_cli_writes_the_table_and_it_reads_back_unchanged(gen, tmp_path):
    out = tmp_path / "export.csv"
    result = subprocess.run([sys.executable, str(SCRIPT), "--rows", "500", "--seed", "3", "--out", str(out)],
                            check=True, capture_output=True, text=True)
    assert "500 rows x 50 columns" in result.stdout
    back = pd.read_csv(out, keep_default_na=False)  # "None" in max_glu_serum is a value, not missing
    pd.testing.assert_frame_equal(back, gen.make_raw_export(500, seed=3))


def test_cli_refuses_a_missing_out(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--rows", "10"], capture_output=True, text=True)
    assert result.returncode == 2 and "--out" in result.stderr


def test_missing_markers_are_question_marks_at_uci_rates(small):
    share = {column: small[column].eq("?").mean() for column in ("race", "payer_code", "medical_specialty",
                                                                 "weight")}
    assert 0.005 < share["race"] < 0.05
    assert 0.33 < share["payer_code"] < 0.47
    assert 0.42 < share["medical_specialty"] < 0.56
    assert share["weight"] > 0.95
    assert small.drop(columns=["race", "payer_code", "medical_specialty", "weight", "diag_1", "diag_2",
                               "diag_3"]).ne("?").all().all()


def test_categories_use_the_export_labels(gen, small):
    assert set(small["race"]) <= {"Caucasian", "AfricanAmerican", "Hispanic", "Other", "Asian", "?"}
    assert small["gender"].value_counts().to_dict().get("Unknown/Invalid", 0) >= 1
    assert set(small["gender"]) == {"Female", "Male", "Unknown/Invalid"}
    assert set(small["age"]) <= set(gen.AGE_BINS) and small["age"].isin(gen.AGE_BINS[5:]).mean() > 0.6
    assert set(small["max_glu_serum"]) <= {"None", "Norm", ">200", ">300"} and small["max_glu_serum"].eq(
        "None").mean() > 0.9
    assert set(small["A1Cresult"]) <= {"None", "Norm", ">7", ">8"}
    assert 0.78 < small["A1Cresult"].eq("None").mean() < 0.88
    assert small["payer_code"].nunique() >= 12 and small["medical_specialty"].nunique() >= 30


def test_nominal_codes_and_counts_are_integers_in_range(small):
    ranges = {"admission_type_id": (1, 8), "discharge_disposition_id": (1, 28), "admission_source_id": (1, 25),
              "time_in_hospital": (1, 14), "num_lab_procedures": (1, 132), "num_procedures": (0, 6),
              "num_medications": (1, 81), "number_diagnoses": (1, 16)}
    for column, (low, high) in ranges.items():
        assert small[column].dtype == np.int64
        assert low <= small[column].min() and small[column].max() <= high, column
    for column in ("number_outpatient", "number_emergency", "number_inpatient"):
        assert small[column].min() == 0 and small[column].eq(0).mean() > 0.6 and small[column].max() >= 5


ICD9 = re.compile(r"^(\d{1,3}(\.\d{1,2})?|V\d{2}|E\d{3}|\?)$")


def test_diagnoses_are_icd9_text_with_v_e_codes_and_sub_codes(small):
    for column in ("diag_1", "diag_2", "diag_3"):
        codes = small[column]
        assert codes.map(lambda c: bool(ICD9.match(c))).all(), codes[~codes.str.match(ICD9)].head()
        assert codes.str.contains(".", regex=False).any(), column
        assert codes.str.startswith("250.").any() and codes.str.startswith("V").any(), column
    both = pd.concat([small["diag_2"], small["diag_3"]])
    assert both.str.startswith("E").mean() > 0.02
    assert small["diag_3"].eq("?").any()
    assert small["diag_1"].str.startswith("428").mean() > 0.05


def test_diagnoses_have_as_many_distinct_codes_as_the_uci_file(large):
    for column in ("diag_1", "diag_2", "diag_3"):
        assert 700 <= large[column].nunique() <= 900, column


def test_missing_secondary_diagnoses_follow_number_diagnoses(small):
    assert small.loc[small["number_diagnoses"] < 2, "diag_2"].eq("?").all()
    assert small.loc[small["number_diagnoses"] < 3, "diag_3"].eq("?").all()


def test_medication_columns_are_mostly_no_and_some_constant(gen, small):
    for name in gen.NEAR_CONSTANT_MEDICATIONS:
        assert small[name].eq("No").mean() >= 0.99, name
    assert len(gen.NEAR_CONSTANT_MEDICATIONS) >= 14
    assert small["examide"].eq("No").all() and small["citoglipton"].eq("No").all()
    for name in ("metformin", "insulin", "glipizide"):
        assert small[name].eq("No").mean() < 0.95, name
    assert set(small["insulin"]) == {"No", "Steady", "Up", "Down"}
    meds = small[list(gen.MEDICATIONS)]
    assert (small["diabetesMed"].eq("Yes") == meds.ne("No").any(axis=1)).all()
    assert small.loc[meds.isin(["Up", "Down"]).any(axis=1), "change"].eq("Ch").all()
    assert set(small["change"]) == {"No", "Ch"}


def test_encounters_are_unique_and_patients_come_back(small, large):
    assert small["encounter_id"].is_unique and small["encounter_id"].is_monotonic_increasing
    for table in (small, large):
        share_unique = table["patient_nbr"].nunique() / len(table)
        assert 0.65 < share_unique < 0.75
    per_patient = large.groupby("patient_nbr")
    assert per_patient.size().max() >= 5
    assert (per_patient["race"].nunique() == 1).all() and (per_patient["age"].nunique() == 1).all()


def test_three_outcomes_with_the_event_near_11_percent(gen, small):
    assert set(small["readmitted"]) == {"NO", ">30", "<30"}
    expected = gen.event_risk(small).mean()
    assert 0.10 < expected < 0.12
    sd = np.sqrt(expected * (1 - expected) / len(small))
    assert abs(small["readmitted"].eq("<30").mean() - expected) < 4 * sd
    assert 0.30 < small["readmitted"].eq(">30").mean() < 0.40


def test_the_true_list_falls_and_each_rule_covers_well_over_5_percent(gen, large):
    risks = [risk for _, risk in gen.TRUE_LIST] + [gen.DEFAULT_RISK]
    assert 4 <= len(gen.TRUE_LIST) <= 6 and all(a > b for a, b in zip(risks, risks[1:]))
    position = gen.rule_positions(large)
    for index, (conditions, _) in enumerate(gen.TRUE_LIST):
        support = np.logical_and.reduce([c.evaluate(large) for c in conditions]).mean()
        assert support > 0.07, conditions
        assert (position == index).mean() > 0.05, conditions


def test_event_rate_within_each_rule_matches_its_stated_risk(gen, large):
    """A simulation check: the observed rate on the rows a line captures is within 4 binomial sd of its risk."""
    table = gen.summary(large)
    for row in table.itertuples():
        sd = np.sqrt(row.stated_risk * (1 - row.stated_risk) / row.captured)
        assert abs(row.observed_rate - row.stated_risk) < 4 * sd, row.rule
    # the same from first principles, without summary()
    alive = ~large["discharge_disposition_id"].isin([11, 19, 20, 21])
    inpatient = alive & (large["number_inpatient"] >= 2)
    rate = large.loc[inpatient, "readmitted"].eq("<30").mean()
    assert abs(rate - 0.30) < 4 * np.sqrt(0.3 * 0.7 / inpatient.sum())


def test_those_who_died_are_never_readmitted(gen, large):
    died = large["discharge_disposition_id"].isin(gen.EXPIRED_CODES)
    assert died.sum() > 500
    assert large.loc[died, "readmitted"].eq("NO").all()


def test_later_readmission_depends_mildly_on_medications_and_stay(large):
    not_event = large[large["readmitted"] != "<30"]
    later = not_event["readmitted"].eq(">30")
    for column in ("num_medications", "time_in_hospital"):
        a, b = not_event.loc[later, column], not_event.loc[~later, column]
        se = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert a.mean() - b.mean() > 4 * se, column
