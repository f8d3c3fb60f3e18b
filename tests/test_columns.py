"""How a column of a real hospital export is read: missing markers, kinds and their reasons, code groups,
and the rule that every condition on a card earns its place."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frl_engine import FallingRuleListClassifier
from frl_engine.binarize import Binarizer
from frl_engine.columns import (FOLLOW_UP_REASON, MISSING_MARKERS, canonical_kind, category_label, category_labels, code_prefixes,
                                has_follow_up_name, LATER_OUTCOME_REASON, missing_mask, numeric_values, read_column, read_columns)
from frl_engine.errors import DataError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.mining import EARNS_ITS_PLACE, NEAR_UNIVERSAL, mine_rules
from frl_engine.rules import Condition

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sample_data"))
from make_raw_export import make_raw_export  # noqa: E402


def kind(name, values):
    return read_column(name, pd.Series(values)).kind


# --------------------------------------------------------------------------
# Missing markers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("marker", ["?", "", " ", "NA", "N/A", "n/a", "NULL", "null", "None", "NaN", "nan", "#N/A",
                                    "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#NULL!"])
def test_common_missing_markers_are_missing_in_any_column(marker):
    text = pd.Series(["home", marker, "rehab", "home"])
    numbers = pd.Series(["61", marker, "72", "45"])
    assert missing_mask(text).tolist() == [False, True, False, False]
    assert np.isnan(numeric_values(numbers, "Age")).tolist() == [False, True, False, False]
    assert Condition("Ward", "==", "home").evaluate(pd.DataFrame({"Ward": text})).tolist() == [True, False, False, True]
    assert Condition("Ward", "is missing").evaluate(pd.DataFrame({"Ward": text})).tolist() == [False, True, False, False]


def test_a_question_mark_never_becomes_a_condition():
    frame = pd.DataFrame({"race": ["Caucasian", "?", "AfricanAmerican", "?"] * 25,
                          "age": list(range(40, 90, 1)) * 2})
    names = [c.name for c in Binarizer().fit(frame).conditions_]
    assert "race is missing" in names and not any("?" in n for n in names)
    assert {"?", "na", "null", "none", "nan"} <= MISSING_MARKERS


# --------------------------------------------------------------------------
# Kinds, each on a small hand-made column
# --------------------------------------------------------------------------


def test_numbers_and_age_bands_are_numeric():
    assert kind("Age", [61.5, 72.0, 45.25, 80.0, 55.0]) == "numeric"
    bands = ["[70-80)", "[50-60)", "[80-90)", "[60-70)", "?", ">90"]
    reading = read_column("age", pd.Series(bands))
    assert reading.kind == "numeric" and "lower bound" in reading.reason
    assert numeric_values(pd.Series(bands), "age")[:3].tolist() == [70, 50, 80]
    assert Condition("age", ">=", 70).evaluate(pd.DataFrame({"age": bands})).tolist() == [True, False, True, False, False, True]


@pytest.mark.parametrize("groups", [["18-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80+"],
                                    ["0 - 17", "18 - 64", "65+"], ["18 to 29", "30 to 49", "50 and over"]])
def test_age_groups_written_without_brackets_are_bands_read_by_their_lower_bound(groups):
    """De-identified exports write age groups as 18-29 ... 80+: bands, so a rule can say AgeGroup >= 65 rather than
    one item per group. Day-month dates (15-03, 28-11) are not ranges (the first number is not always the lower)."""
    values = pd.Series(groups * 20)
    reading = read_column("AgeGroup", values)
    assert reading.kind == "numeric" and "read by their lower bound" in reading.reason
    lower = [float(g.split()[0].split("-")[0].rstrip("+")) for g in groups]
    assert numeric_values(values, "AgeGroup")[:len(groups)].tolist() == lower
    assert kind("visit_day", ["01-02", "15-03", "28-11", "05-06", "30-12", "02-01"] * 20) == "categorical"


def test_text_labels_are_categories_and_rare_levels_make_no_item_but_are_never_refused():
    values = ["InternalMedicine"] * 40 + ["Cardiology"] * 30 + [f"Rare{i}" for i in range(60)]
    frame = pd.DataFrame({"medical_specialty": values, "x": np.arange(130) % 7})
    binarizer = Binarizer(min_support=0.05).fit(frame)
    names = [c.name for c in binarizer.conditions_ if c.column == "medical_specialty"]
    # 62 values: no "is not" items (a grab bag), only the two frequent levels.
    assert names == ["medical_specialty = InternalMedicine", "medical_specialty = Cardiology"]
    assert "60 rarer levels without" in binarizer.column_table().set_index("column").loc["medical_specialty", "reason"]


def test_yes_no_columns_are_boolean():
    assert kind("BedSores", ["Yes", "no", "YES", None]) == "boolean"
    assert kind("Flag", [0, 1, 1, 0]) == "boolean"


@pytest.mark.parametrize("name", ["admission_type_id", "discharge_disposition_id", "admission_source_id", "ward_code",
                                  "payer_type", "drg", "MS_DRG", "icd9", "cpt", "mdc"])
def test_integer_labels_named_like_codes_are_nominal_never_thresholds(name):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.choice([1, 2, 3, 5, 6, 22, 28], 500), "Age": rng.integers(20, 90, 500)})
    binarizer = Binarizer(min_support=0.05).fit(frame)
    assert binarizer.column_table().set_index("column").loc[name, "kind"] == "nominal"
    ops = {c.op for c in binarizer.conditions_ if c.column == name}
    assert ops == {"==", "!="}  # levels and their negations, never thresholds
    assert f"{name} = 22" in [c.name for c in binarizer.conditions_]


@pytest.mark.parametrize("name", ["time_in_hospital", "hospital_los", "days_in_ward", "clinic_visits", "insulin_units",
                                  "number_of_wards", "LengthOfStay", "prior_hospital_admissions"])
def test_a_quantity_whose_name_mentions_a_place_keeps_its_thresholds(name):
    """UCI's diabetes export has ``time_in_hospital``, days from 1 to 14: a measurement, though "hospital" is in its
    name (a column named ``hospital`` or ``ward`` holds labels). It keeps thresholds (``time_in_hospital >= 5``)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.integers(1, 15, 500), "Age": rng.integers(20, 90, 500)})
    reading = read_column(name, frame[name])
    assert reading.kind == "numeric", reading.reason
    binarizer = Binarizer(min_support=0.05).fit(frame)
    assert {c.op for c in binarizer.conditions_ if c.column == name} <= {">=", "<"}


@pytest.mark.parametrize("name", ["hospital", "nursing_unit", "stay_type", "length_group", "AdmissionType"])
def test_whole_numbers_named_as_a_place_or_a_type_stay_labels(name):
    rng = np.random.default_rng(0)
    assert read_column(name, pd.Series(rng.choice([1, 2, 3, 5, 12], 500))).kind == "nominal"


def test_a_few_decimal_codes_named_like_codes_are_codes_never_thresholds():
    """A cohort export of five ICD-9 codes (250.01, 428.0 ...): codes with their groups, not 'icd9_primary >= 414'."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"icd9_primary": rng.choice([250.01, 428.0, 414.01, 486.0, 496.0], 500),
                          "Age": rng.integers(20, 90, 500)})
    binarizer = Binarizer(min_support=0.05).fit(frame)
    assert binarizer.column_table().set_index("column").loc["icd9_primary", "kind"] == "code"
    assert not {c.op for c in binarizer.conditions_ if c.column == "icd9_primary"} & {">=", "<"}


@pytest.mark.parametrize("name", ["drg_weight", "DRG_Weight", "DRGWeight", "cpt_rvu", "zip_median_income",
                                  "postcode_distance_km", "drg_los"])
def test_a_measurement_named_after_a_code_is_numeric(name):
    """A DRG's relative weight, a procedure's RVUs, the median income of a ZIP code: amounts, with thresholds."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({name: np.round(rng.lognormal(0, 0.5, 500), 3), "Age": rng.integers(20, 90, 500)})
    binarizer = Binarizer(min_support=0.05).fit(frame)
    assert binarizer.column_table().set_index("column").loc[name, "kind"] == "numeric"
    assert {c.op for c in binarizer.conditions_ if c.column == name} == {">=", "<"}


def test_blood_pressures_written_as_pairs_are_left_out_with_how_to_use_them(tmp_path, capsys):
    """'127/85' read as text is a level of its own, so no level reaches the support and the column would make no
    item without a word; it is left out saying how to use it. A few pairs (visual acuities) stay categories."""
    from frl_engine.cli import main

    rng = np.random.default_rng(5)
    n = 1000
    pressures = [f"{a}/{b}" for a, b in zip(rng.integers(80, 200, n), rng.integers(40, 120, n))]
    reading = read_column("bp", pd.Series(pressures))
    assert reading.kind == "unsupported" and "split them into two numeric columns" in reading.reason
    assert read_column("BloodPressure", pd.Series([p + " mmHg" for p in pressures])).kind == "unsupported"
    assert kind("acuity", rng.choice(["20/20", "20/40", "20/200", "20/80"], n)) == "categorical"
    table = pd.DataFrame({"bp": pressures, "age": rng.integers(20, 90, n), "died": rng.choice(["yes", "no"], n)})
    table.to_csv(tmp_path / "vitals.csv", index=False)
    assert main(["fit", str(tmp_path / "vitals.csv"), "--target", "died"]) == 0
    out = capsys.readouterr().out
    assert "'bp': pairs of numbers such as" in out


def test_a_checkbox_column_is_a_flag_with_one_item_and_no_is_missing_item():
    """Checkbox exports write X (or Y, 1, a tick) where a finding is present and leave the cell blank where it is not:
    one value and blanks is a flag, not a constant. A lone number among blanks (a lab) and a mark on 0.3% are not."""
    rng = np.random.default_rng(1)
    n = 1000
    frame = pd.DataFrame({"CHF": np.where(rng.random(n) < .2, "X", None), "Diabetes": np.where(rng.random(n) < .3, "Y", None),
                          "Stroke": np.where(rng.random(n) < .1, 1.0, np.nan), "Tick": np.where(rng.random(n) < .2, "✓", None),
                          "Troponin": np.where(rng.random(n) < .2, 0.01, np.nan),
                          "Rare": np.where(rng.random(n) < .003, "X", None), "Age": rng.integers(20, 90, n)})
    binarizer = Binarizer(min_support=0.05).fit(frame)
    table = binarizer.column_table().set_index("column")
    assert table.loc[["CHF", "Tick"], "kind"].tolist() == ["categorical", "categorical"]
    assert table.loc[["Diabetes", "Stroke"], "kind"].tolist() == ["boolean", "boolean"]
    assert all(table.loc[c, "reason"].startswith("a flag") for c in ("CHF", "Diabetes", "Stroke", "Tick"))
    assert table.loc[["Troponin", "Rare"], "kind"].tolist() == ["constant", "constant"]
    items = {c.column: c.name for c in binarizer.conditions_ if c.column != "Age"}
    assert items == {"CHF": "CHF = X", "Diabetes": "Diabetes", "Stroke": "Stroke", "Tick": "Tick = ✓"}
    assert all(spec.flag and not spec.has_missing for spec in binarizer.specs_ if spec.name != "Age")
    assert not next(spec for spec in binarizer.specs_ if spec.name == "Age").flag


def test_lab_limits_written_with_their_unit_are_read_at_the_limit():
    """'<0.5 mg/dL' and '>10 mg/dL' among '1.2 mg/dL': numbers at the assay's limits, as '<0.5' and '>10' are."""
    values = pd.Series(["<0.5 mg/dL", "1.2 mg/dL", "3.4 mg/dL", ">10 mg/dL", "0.8 mg/dL", "2.2 mg/dL"] * 50)
    reading = read_column("Troponin", values)
    assert reading.kind == "numeric" and "read at that limit" in reading.reason and "mg/dL" in reading.reason
    assert numeric_values(values, "Troponin")[:6].tolist() == [0.5, 1.2, 3.4, 10.0, 0.8, 2.2]
    # without numbers around them, '<30 days' and '>30 days' are labels, as '<30' and '>30' are
    assert kind("prior_admission", ["<30 days", ">30 days", "NO"] * 50) == "categorical"
    # (named "readmitted", beside another outcome, the same column is a second outcome and left out)
    assert kind("readmitted", ["<30 days", ">30 days", "NO"] * 50) == "unsupported"


def test_a_count_is_numeric_and_its_tail_gets_thresholds():
    # Mostly 0, like number_inpatient: the quartiles tie, so the values above 0 are cut too.
    rng = np.random.default_rng(1)
    counts = np.where(rng.random(5000) < 0.65, 0, rng.geometric(0.45, 5000))
    spec = Binarizer(min_support=0.05).fit(pd.DataFrame({"number_inpatient": counts})).specs_[0]
    assert spec.kind == "numeric" and {1.0, 2.0} <= set(spec.thresholds)
    assert all(float(t).is_integer() for t in spec.thresholds)


def test_an_identifier_and_a_repeated_patient_number_are_left_out_with_the_reason():
    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame({"encounter_id": rng.permutation(10**6)[:n], "patient_nbr": rng.integers(0, 300, n) * 7 + 10**5,
                          "MRN": [f"M{i:06d}" for i in rng.integers(0, 250, n)], "Age": rng.integers(20, 90, n)})
    readings = {r.name: r for r in read_columns(frame)}
    assert readings["encounter_id"].kind == "identifier" and "different value" in readings["encounter_id"].reason
    assert readings["patient_nbr"].kind == "identifier" and "repeated" in readings["patient_nbr"].reason
    assert readings["MRN"].kind == "identifier"
    assert readings["Age"].kind == "numeric"
    assert {c.column for c in Binarizer().fit(frame).conditions_} == {"Age"}


ENCOUNTER_NAMES = ("hadm_id", "stay_id", "episode_id", "admission_no", "Admission Number", "Fall-Nr", "account_number",
                   "Aufnahmenummer", "Versichertennummer", "FIN", "CSN", "HAR", "IPP", "NIP", "NHI")


@pytest.mark.parametrize("name", ENCOUNTER_NAMES)
def test_an_encounter_or_account_number_that_repeats_is_an_identifier_by_its_name(name):
    """Sorted stay numbers, each repeated (a different value in about half the rows): named like an encounter's,
    an account's or a case's number, they are left out, not cut at a threshold (`Fall-Nr >= 101400`)."""
    rng = np.random.default_rng(0)
    stays = np.sort(rng.integers(100_000, 101_800, 3000))
    assert 0.4 < len(np.unique(stays)) / len(stays) < 0.5
    reading = read_column(name, pd.Series(stays))
    assert reading.kind == "identifier" and "named like an identifier" in reading.reason, reading.reason


@pytest.mark.parametrize("name, kind", [("admission_type_id", "nominal"), ("length_of_stay", "numeric"),
                                        ("fin_class", "nominal"), ("stay_days", "numeric")])
def test_names_near_an_encounter_number_keep_their_reading(name, kind):
    rng = np.random.default_rng(1)
    values = rng.integers(1, 9, 3000) if kind == "nominal" else rng.integers(1, 200, 3000)
    assert read_column(name, pd.Series(values)).kind == kind


@pytest.mark.parametrize("name", ["insurance", "marital_status", "religion", "language", "nationality"])
def test_whole_number_labels_named_like_a_category_are_categories(name):
    values = np.random.default_rng(2).integers(1, 6, 2000)
    reading = read_column(name, pd.Series(values))
    assert reading.kind == "nominal", reading.reason


@pytest.mark.parametrize("name, values, what", [
    ("admit_date", 44_927 + np.arange(700), "Excel serial days"),
    ("AdmitDate", 44_927.25 + np.arange(700), "Excel serial days"),
    ("discharge_dt", 1_672_531_200 + 86_400 * np.arange(700), "seconds since 1970"),
    ("Aufnahmedatum", 1_672_531_200_000 + 86_400_000 * np.arange(700), "milliseconds since 1970"),
])
def test_dates_stored_as_numbers_are_said_and_make_no_rule(name, values, what):
    rng = np.random.default_rng(3)
    series = pd.Series(rng.permutation(np.repeat(values, 3)))
    reading = read_column(name, series)
    assert reading.kind == "unsupported" and what in reading.reason, reading.reason
    assert read_column("total_charges", series).kind == "numeric"  # the same numbers, not named like a date
    assert read_column(name, series, declared="numeric").kind == "numeric"  # the user's word wins


def test_whole_number_charges_and_minutes_are_measurements_not_identifiers():
    """A different value in nearly every row is not enough to make an identifier: whole-dollar charges and a
    length of stay in minutes crowd where most patients are, record numbers spread evenly over their range."""
    rng = np.random.default_rng(3)
    n = 1000
    frame = pd.DataFrame({
        "total_charges": rng.lognormal(9, 1, n).round().astype(int),  # whole dollars, long right tail
        "los_minutes": (rng.gamma(1.5, 3000, n) + 60).round().astype(int),
        "record": rng.permutation(n) + 50_000,  # sequential record numbers, shuffled
        "reference": rng.choice(10**9, n, replace=False),  # random 9-digit numbers
        "visit_key": rng.lognormal(9, 1, n).round().astype(int),  # a measurement's spread, but named like a key
    })
    readings = {r.name: r for r in read_columns(frame)}
    for name in ("total_charges", "los_minutes"):
        assert readings[name].kind == "numeric", readings[name].reason
    assert "spread like a measurement" in readings["total_charges"].reason
    for name in ("record", "reference", "visit_key"):
        assert readings[name].kind == "identifier", readings[name].reason
    conditions = {c.column for c in Binarizer().fit(frame).conditions_}
    assert conditions == {"total_charges", "los_minutes"}
    # with too few patients to tell a spread apart, a column named like nothing stays left out (said, and can be
    # declared); one named like a measurement is one by its name
    few = read_column("c17", frame["total_charges"].iloc[:150])
    assert few.kind == "identifier" and "declare a kind" in few.reason
    named = read_column("total_charges", frame["total_charges"].iloc[:150])
    assert named.kind == "numeric" and "named like a measurement" in named.reason


def test_charges_spread_evenly_are_a_measurement_by_their_name():
    """Charges drawn evenly over a range look like random record numbers to the spread test; the name says
    "how much", so they stay a measurement, and the same numbers named like a key stay left out."""
    rng = np.random.default_rng(0)
    charges = pd.Series(rng.choice(np.arange(1_000, 900_000), 1000, replace=False))
    for name in ("total_charges", "TotalCost", "los_minutes", "drg_weight"):
        reading = read_column(name, charges)
        assert reading.kind == "numeric" and "named like a measurement" in reading.reason, (name, reading.reason)
    for name in ("encounter_id", "visit_key", "c17", "payment_ref", "charge_code", "cost_center", "paid_claim_seq"):
        assert read_column(name, charges).kind == "identifier", name  # a measure word, but not the last one
    rules = FallingRuleListClassifier(random_state=0, n_steps=300, n_chains=2).fit(
        pd.DataFrame({"total_charges": charges}), rng.random(1000) < np.where(charges > 600_000, 0.7, 0.1)).rules_
    assert rules and all(rule.startswith("total_charges >= ") for rule in rules)


def test_amounts_written_with_a_currency_or_a_unit_are_measurements_whatever_their_spread():
    """Charges spread evenly over a range would read like record numbers, but nobody writes a record number
    as "$43,860" or "72 kg": such a column is a measurement, and a plain evenly spread one stays left out."""
    rng = np.random.default_rng(4)
    n = 1000
    dollars = rng.choice(np.arange(1_000, 60_000), n, replace=False)
    frame = pd.DataFrame({"TotalCharges": [f"${d:,}" for d in dollars], "Weight": [f"{g} g" for g in dollars],
                          "Frais": [f"{d:,}".replace(",", "\u00a0") for d in dollars],  # a French export's 43 860
                          "Plain": dollars})
    readings = {r.name: r for r in read_columns(frame)}
    for name in ("TotalCharges", "Weight", "Frais"):
        assert readings[name].kind == "numeric", readings[name].reason
        assert "written as amounts" in readings[name].reason
    assert readings["Plain"].kind == "identifier"
    conditions = [c.name for c in Binarizer().fit(frame[["TotalCharges"]]).conditions_]
    assert "TotalCharges >= 32000" in conditions  # the median of 1,000 to 60,000, read from "$31,927"-like text


def test_a_near_constant_column_makes_no_item():
    values = ["No"] * 995 + ["Steady"] * 5
    reading = read_column("acetohexamide", pd.Series(values))
    assert reading.kind == "near-constant" and "99.5%" in reading.reason
    mostly_missing = read_column("lab", pd.Series(["?"] * 995 + ["3.1"] * 3 + ["4.2"] * 2))
    assert mostly_missing.kind == "near-constant" and "missing" in mostly_missing.reason


def test_codes_get_items_for_frequent_codes_and_their_groups():
    # Many rare 250.x codes: none reaches 5% alone, their group does.
    codes = [f"250.{i:02d}" for i in range(1, 31)] * 2 + ["428"] * 40 + ["428.0"] * 10 + ["V57"] * 30 + \
            [f"{c}" for c in range(600, 660)]
    frame = pd.DataFrame({"diag_1": codes})
    reading = read_column("diag_1", frame["diag_1"])
    assert reading.kind == "code"
    binarizer = Binarizer(min_support=0.05).fit(frame)
    names = [c.name for c in binarizer.conditions_]
    assert "diag_1 starts with 250" in names and not any(n.startswith("diag_1 = 250.") for n in names)
    assert "diag_1 = 428" in names and "diag_1 starts with 428" in names and "diag_1 = V57" in names
    items = binarizer.transform(frame)
    group = items[:, names.index("diag_1 starts with 250")]
    assert group.sum() == 60 and group.tolist() == frame["diag_1"].str.startswith("250").tolist()
    # Each item is the same truth as its condition evaluated on the table (the model file's semantics).
    for j, condition in enumerate(binarizer.conditions_):
        assert items[:, j].tolist() == condition.evaluate(frame).tolist(), condition.name


def test_code_prefixes_run_from_specific_to_general():
    assert code_prefixes("250.83") == ["250", "25"]
    assert code_prefixes("V57") == ["V57", "V5", "V"]
    assert code_prefixes("E909") == ["E909", "E90", "E9", "E"]


def test_kinds_can_be_overridden_and_unknown_kinds_are_refused():
    frame = pd.DataFrame({"stage": [1, 2, 3, 4, 5, 6] * 20, "Age": np.arange(120) % 50 + 30})
    assert Binarizer().fit(frame).column_table().set_index("column").loc["stage", "kind"] == "numeric"
    chosen = Binarizer(column_kinds={"stage": "category"}).fit(frame)
    row = chosen.column_table().set_index("column").loc["stage"]
    assert row["kind"] == "categorical" and row["reason"] == "chosen by you; 'is not' items for 6"
    assert {c.op for c in chosen.conditions_ if c.column == "stage"} == {"==", "!="}
    left_out = Binarizer(column_kinds={"Age": "identifier"}).fit(frame)
    assert "Age" not in {c.column for c in left_out.conditions_}
    with pytest.raises(DataError, match="Unknown column kind 'colour' for column 'stage'"):
        canonical_kind("colour", "stage")


def test_the_raw_export_reads_as_documented():
    frame = make_raw_export(3000, seed=0)
    readings = {r.name: r.kind for r in read_columns(frame.drop(columns="readmitted"))}
    assert readings["encounter_id"] == readings["patient_nbr"] == "identifier"
    assert readings["admission_type_id"] == readings["discharge_disposition_id"] == "nominal"
    assert readings["diag_1"] == readings["diag_2"] == readings["diag_3"] == "code"
    assert readings["age"] == readings["number_inpatient"] == readings["num_lab_procedures"] == "numeric"
    assert readings["examide"] in ("constant", "near-constant") and readings["race"] == "categorical"


# --------------------------------------------------------------------------
# Every condition earns its place (a property over random data)
# --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_items=st.integers(3, 9), max_conditions=st.integers(2, 3),
       n_rows=st.integers(60, 400))
def test_every_condition_of_a_mined_rule_earns_its_place(seed, n_items, max_conditions, n_rows):
    rng = np.random.default_rng(seed)
    rates = rng.choice([0.3, 0.6, 0.98, 0.995, 1.0], size=n_items)
    items = rng.random((n_rows, n_items)) < rates
    items[:, 1] |= items[:, 0] & (rng.random(n_rows) < 0.999)  # nearly implied by item 0
    conditions = [Condition(f"c{j}", "is true") for j in range(n_items)]
    mined = mine_rules(items, conditions, min_support=0.05, max_conditions=max_conditions, max_rules=10**6) \
        if items.mean(axis=0).min() < NEAR_UNIVERSAL else None
    if mined is None:
        return
    index = {c: j for j, c in enumerate(conditions)}
    for rule in mined.rules:
        columns = [index[c] for c in rule.conditions]
        cover = items[:, columns].all(axis=1).sum()
        for c in columns:  # no condition is near-universal
            assert items[:, c].mean() < NEAR_UNIVERSAL
        for drop in range(len(columns)):
            others = [c for k, c in enumerate(columns) if k != drop]
            if others:
                without = items[:, others].all(axis=1).sum()
                assert cover <= (1 - EARNS_ITS_PLACE) * without + 1e-9, rule.name


# --------------------------------------------------------------------------
# The raw export at the defaults, end to end
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw_export_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("raw") / "export.csv"
    make_raw_export(6000, seed=3).to_csv(path, index=False)
    return path


def _frl(*args):
    frl = Path(sys.executable).parent / "frl"
    return subprocess.run([str(frl), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_frl_fit_on_the_raw_export_at_defaults_prints_a_clean_list(raw_export_csv, tmp_path):
    out = tmp_path / "model.json"
    done = _frl("fit", raw_export_csv, "--target", "readmitted", "--positive", "<30", "--exclude", "encounter_id",
                "--exclude", "patient_nbr", "--out", out)
    assert done.returncode == 0, done.stderr
    model = FallingRuleListClassifier.load(out)
    frame = pd.read_csv(raw_export_csv, keep_default_na=False)
    assert model.rules_, done.stdout
    for rule in model.rule_objects_:
        for condition in rule.conditions:
            assert "?" not in condition.name
            assert condition.evaluate(frame).mean() < NEAR_UNIVERSAL, condition.name
            if condition.column in ("admission_type_id", "discharge_disposition_id", "admission_source_id"):
                assert condition.op in ("==", "!="), condition.name  # codes, never thresholds
            assert condition.column not in ("encounter_id", "patient_nbr")
        if len(rule.conditions) > 1:
            cover = rule.evaluate(frame).sum()
            for drop in range(len(rule.conditions)):
                others = [c for k, c in enumerate(rule.conditions) if k != drop]
                without = np.logical_and.reduce([c.evaluate(frame) for c in others]).sum()
                assert cover <= 0.99 * without, rule.name
    # The first rule of the generating list is found.
    assert any(c.column == "number_inpatient" for c in model.rule_objects_[0].conditions)


def test_frl_fit_explains_columns_and_takes_kinds(raw_export_csv):
    done = _frl("fit", raw_export_csv, "--target", "readmitted", "--positive", "<30", "--explain-columns",
                "--kind", "time_in_hospital=nominal", "--kind", "payer_code=identifier")
    assert done.returncode == 0, done.stderr
    table = {line.split()[0]: line for line in done.stdout.splitlines() if line and not line.startswith(" ")}
    assert "identifier" in table["encounter_id"] and "different value" in table["encounter_id"]
    assert "identifier" in table["patient_nbr"]
    assert "code" in table["diag_1"] and "nominal" in table["discharge_disposition_id"]
    assert "nominal" in table["time_in_hospital"] and "chosen by you" in table["time_in_hospital"]
    assert "(identifier)" in table["payer_code"]
    bad = _frl("fit", raw_export_csv, "--target", "readmitted", "--positive", "<30", "--kind", "age=colour")
    assert bad.returncode == 2 and bad.stderr.startswith("frl: error: Unknown column kind 'colour'")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_spambase_fits_at_the_defaults_by_screening(tmp_path):
    from frl_engine.datasets import load_dataset

    data = load_dataset("spam", ROOT.parent / "shared" / "uci")
    model = FallingRuleListClassifier(random_state=0, n_steps=500, search="paper").fit(data.X, data.y)
    assert model.screening_note_.startswith("Kept 5,000 of ")
    assert len(model.candidate_names_) == 5000 and model.rules_


def test_dates_written_as_text_are_unsupported_with_what_to_do():
    dates = pd.Series(pd.date_range("2020-01-01", periods=300, freq="D").strftime("%Y-%m-%d"))
    reading = read_column("admit_date", dates)
    assert reading.kind == "unsupported" and "days" in reading.reason
    assert read_column("visit", pd.Series(["03/04/2021", "?", "12/11/2020"] * 10)).kind == "unsupported"


def test_dates_written_several_ways_in_one_column_are_dates_not_thousands_of_categories():
    """Two systems joined: 2020-01-05, 05/01/2020, 01/05/2020, 05.01.2020 and 05 Jan 2020 in one column. No one
    writing holds 90% of the values, yet every value is a date: said as dates (2,500 text categories before)."""
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(2500) % 700, unit="D")
    forms = ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d %b %Y"]
    written = pd.Series([day.strftime(forms[i % 5]) for i, day in enumerate(days)])
    reading = read_column("admit_date", written)
    assert reading.kind == "unsupported" and reading.reason.startswith("dates such as")
    # words among dates are not hidden by it: a column of ward names with a few dates stays categorical
    assert kind("ward", ["north", "south", "east", "2020-01-05"] * 50) == "categorical"


@pytest.mark.parametrize("form", ["%b %d, %Y", "%d-%b-%Y", "%d%b%Y", "%d-%b-%y", "%d %B %Y", "%d-%b-%Y %H:%M",
                                  "%Y-%m-%dT%H:%M:%SZ"])
def test_dates_with_the_months_name_are_dates_not_identifiers(form):
    """SAS writes 01JAN2020, Oracle 01-JAN-20, reports Jan 1, 2020: dates, said as dates (every value differs, so
    they read as an identifier before). Month names alone (Jan, Feb) stay categories."""
    dates = pd.Series(pd.date_range("2020-01-01", periods=300, freq="D").strftime(form)).str.upper()
    reading = read_column("admitted", dates)
    assert reading.kind == "unsupported" and reading.reason.startswith("dates such as")
    assert kind("admit_month", ["Jan", "Feb", "Mar"] * 50) == "categorical"


def test_a_near_constant_column_never_reads_as_one_value_on_100_percent():
    """Regression: 1,999 of 2,000 rows read "'1' on 100.0% of rows", as if the column were constant."""
    frame = pd.DataFrame({"flag": ["1"] * 1999 + ["2"], "other": ["a"] * 1990 + ["b"] * 10})
    reasons = {r.name: r.reason for r in read_columns(frame)}
    assert reasons["flag"] == "'1' on 1,999 of 2,000 rows: makes no item"
    assert reasons["other"] == "'a' on 99.5% of rows: makes no item"


@pytest.mark.parametrize("values", [
    pd.Series([" a", "b ", "a", "C", None, "b"], dtype=object),                 # text, stripped
    pd.Series(["x", "y", pd.NA, "x"], dtype="string"),
    pd.Series([2.0, -0.0, 0.0, 2.5, np.nan, 2.0]),                             # 2.0 written 2
    pd.Series([3, 1, 3, 12], dtype="int64"),
    pd.Series(pd.Categorical(["lo", "hi", "lo"])),
    pd.Series([True, False, True]),
    pd.Series([True, 1, 1.0, "1", " True", 2, np.True_], dtype=object),        # mixed kinds that compare equal
])
def test_category_labels_of_a_column_are_each_values_own_label(values):
    """The labels of a whole column, computed once per distinct value, are each value's label, in place."""
    labels = category_labels(values)
    assert labels.index.equals(values.index)
    assert labels.tolist() == [category_label(v) for v in values.tolist()]


def test_a_long_column_of_numbers_written_as_text_is_parsed_once_and_read_the_same_each_time():
    """A fit reads a column three times (its kind, the binariser's thresholds, the items of its rows); a column of
    many distinct numbers written as text ("76 774", "0.85 mg/dL") is parsed the first time and its numbers
    kept, and a caller that changes what it got does not change what the next one reads."""
    from frl_engine import columns

    rng = np.random.default_rng(0)
    charges = pd.Series([f"{v // 1000} {v % 1000:03d}" for v in rng.integers(1_000, 90_000, 5_000)], dtype=object)
    charges[::7] = "?"
    before = columns._parse_number_cells_kept.cache_info()
    first = numeric_values(charges, "charges")
    first[:] = -1.0                                     # what one reader does to its copy
    second = numeric_values(charges.copy(), "charges")  # the same cells, another Series
    after = columns._parse_number_cells_kept.cache_info()
    assert after.misses == before.misses + 1 and after.hits == before.hits + 1
    expected = [np.nan if text == "?" else float(text.replace(" ", "")) for text in charges]
    np.testing.assert_array_equal(second, expected)
    mixed = pd.Series(["1 500", "2,5", "7,25"] * 400 + [f"{i},5" for i in range(1_000)], dtype=object)
    assert numeric_values(mixed, "dose")[0] == 1500.0 and numeric_values(mixed, "dose")[1] == 2.5  # decimal commas


@pytest.mark.parametrize("values", [np.array([3, -12, 0, 10**14], dtype=np.int64),
                                    np.array([7, 2**40], dtype=np.uint64),
                                    np.array([10**16 + 1, 5], dtype=np.int64)])
def test_whole_numbers_written_at_once_are_written_as_each_alone(values):
    """An integer column's distinct values (record numbers, codes) are labelled in one go, as one by one."""
    from frl_engine.columns import _distinct_labels

    assert _distinct_labels(values, values.astype(object)) == [category_label(v) for v in values]


def test_a_column_of_text_and_numbers_put_together_counts_one_level_per_value():
    """Two exports concatenated: one wrote diagnosis 250 as text, the other as a number. "250" and 250 are one
    level, as the items read them (``diag = 250`` catches both), not two levels with duplicated examples."""
    rng = np.random.default_rng(0)
    code = rng.choice(["250", "428", "V57"], 1200)
    as_number = (rng.random(1200) < 0.5) & (code != "V57")
    diag = pd.Series([int(c) if a else c for c, a in zip(code, as_number)], dtype=object)
    diag[diag == "428"] = " 428"  # and a padded cell, as the items read it (trimmed)
    reading = read_column("diag", diag)
    assert reading.n_levels == 3 and sorted(reading.examples.split(", ")) == ["250", "428", "V57"]
    spec_conditions = [c.name for c in Binarizer().fit(diag.to_frame("diag")).conditions_]
    assert spec_conditions.count("diag = 250") == 1
    caught = Binarizer().fit(diag.to_frame("diag")).transform(diag.to_frame("diag"))[:, spec_conditions.index("diag = 250")]
    assert np.array_equal(caught, code == "250")


def test_one_text_cell_among_thousands_of_numbers_is_counted_not_rounded_to_nothing():
    """One 'pending' CRP among 3,000 numbers: 0.03% would print as "0.0% text", which reads as none; the count is
    said instead. A larger share keeps its percentage."""
    rng = np.random.default_rng(0)
    one = read_column("crp", pd.Series([str(v) for v in rng.integers(0, 30, 3000)] + ["pending"]))
    assert one.kind == "numeric" and one.text_as_missing == "1 cell of text such as 'pending'"
    three = read_column("crp", pd.Series([str(v) for v in rng.integers(0, 30, 6000)] + ["pending", "TNP", "TNP"]))
    assert three.text_as_missing.startswith("3 cells of text such as ")
    some = read_column("crp", pd.Series([str(v) for v in rng.integers(0, 30, 300)] + ["pending"]))
    assert some.text_as_missing == "0.3% text such as 'pending'"


def test_a_column_of_dates_is_left_out_in_words_not_by_its_storage_type():
    """`datetime64[us] values` meant nothing to a clinician: the reason says dates, with one as an example."""
    dates = pd.Series(pd.to_datetime(["2020-01-01", "2021-03-04"] * 20))
    reading = read_column("Admitted", dates)
    assert reading.kind == "unsupported" and reading.reason.startswith("dates such as '2020-01-01': turn them")
    assert "datetime64" not in reading.reason
    stays = pd.Series(pd.to_timedelta(["1 days", "3 days"] * 20))
    assert read_column("stay", stays).reason.startswith("durations such as")


@pytest.mark.parametrize("name", ["time", "Time", "futime", "lenfol", "survival_time", "Survival_in_days",
                                  "days_to_death", "OS_months", "PFS time", "time.to.event", "fu_days", "follow-up",
                                  "FollowUp_months", "time_to_relapse", "censor_time", "tte"])
def test_a_follow_up_time_is_left_out_by_its_name_with_the_reason(name):
    rng = np.random.default_rng(0)
    series = pd.Series(rng.integers(10, 4000, 300), name=name)
    reading = read_column(name, series)
    assert reading.kind == "unsupported" and reading.reason == FOLLOW_UP_REASON and not reading.used
    assert read_column(name, series, declared="numeric").kind == "numeric"   # the user may still use it


@pytest.mark.parametrize("name", ["time_in_hospital", "diagtime", "time_to_antibiotics", "Months_from_Diagnosis",
                                  "los", "days_in_icu", "admit_time", "start", "edrel"])
def test_times_known_while_the_patient_is_seen_are_read_as_measurements(name):
    rng = np.random.default_rng(0)
    reading = read_column(name, pd.Series(np.round(rng.uniform(0.5, 40, 300), 1), name=name))
    assert reading.kind == "numeric" and not has_follow_up_name(name)


@pytest.mark.parametrize("name, values", [("recur", [0, 1]), ("Death", ["Alive", "Dead"]), ("status", [0, 1, 2]),
                                           ("event", ["yes", "no"]), ("fstat", [1, 0]), ("relapse", ["Y", "N"])])
def test_a_second_outcome_beside_the_outcome_is_left_out_by_its_name(name, values):
    """R's Rotterdam table holds recur (a relapse) beside death: a list for death read 'IF rtime < 1900 AND recur'."""
    series = pd.Series(values * 100, name=name)
    reading = read_column(name, series)
    assert reading.kind == "unsupported" and reading.reason == LATER_OUTCOME_REASON and not reading.used
    assert read_column(name, series, declared="categorical").kind == "categorical"   # the user may still use it


@pytest.mark.parametrize("name, values", [("status", ["inpatient", "outpatient"]), ("recur", list(range(12))),
                                          ("event_type", [0, 1]), ("died_in_icu_before", [0, 1]),
                                          ("outcome", ["ward A", "ward B", "ward C"])])
def test_a_finding_whose_name_only_looks_like_an_outcome_is_kept(name, values):
    """A status of words of its own, a count of 12 values, a longer name: findings, not a second outcome."""
    reading = read_column(name, pd.Series(values * 30, name=name))
    assert reading.used and reading.reason != LATER_OUTCOME_REASON


def test_a_column_named_time_that_holds_words_is_not_called_a_follow_up_time():
    series = pd.Series(["morning", "evening", "night"] * 100, name="time")
    assert read_column("time", series).kind == "categorical"


def test_sex_written_0_and_1_is_two_values_not_a_finding():
    """R's colon and whas500 write sex 0/1: read as a flag, a rule said 'sex AND etype = 2', which no reader can
    turn into a patient. Read as the values 0 and 1, a rule says 'sex = 1'; any other 0/1 column stays a flag."""
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({"sex": rng.integers(0, 2, n), "diabetes": rng.integers(0, 2, n)})
    assert read_column("sex", frame["sex"]).kind == "categorical"
    assert read_column("Gender", frame["sex"]).kind == "categorical"
    assert read_column("diabetes", frame["diabetes"]).kind == "boolean"
    assert read_column("sex", pd.Series(["m", "f"] * 300)).kind == "categorical"
    y = rng.random(n) < 0.15 + 0.5 * (frame["sex"] == 1)
    rules = FallingRuleListClassifier(random_state=0).fit(frame, y).rules_
    assert rules == ["sex = 1"]


def test_a_column_of_numbers_with_too_much_text_is_read_as_text_and_says_so(tmp_path, capsys):
    """An age written 'seventy' on a third of the rows: more text than a column of numbers holds, so each number is a
    level of its own and meets no threshold. It used to be said only as 'text labels (241 values)'."""
    from frl_engine.cli import main

    rng = np.random.default_rng(2)
    n = 420
    age = np.array([str(a) for a in rng.uniform(30, 80, n)], dtype=object)   # ages with days, as R writes them
    age[rng.random(n) < 1 / 3] = "seventy"
    reading = read_column("age", pd.Series(age))
    assert reading.kind == "categorical" and reading.text_among_numbers.startswith("'seventy' on ")
    assert "correct or empty those cells" in reading.reason
    frame = pd.DataFrame({"age": age, "bili": np.round(rng.lognormal(0.3, 0.8, n), 1),
                          "died": rng.choice(["Yes", "No"], n)})
    frame.to_csv(tmp_path / "textage.csv", index=False)
    assert main(["fit", str(tmp_path / "textage.csv"), "--target", "died"]) == 0
    out = capsys.readouterr().out
    assert "Read as text labels, not numbers, as too many cells hold text: 'age' ('seventy' on " in out
    # words that are truly labels, and a few text results among numbers, are not this
    assert not read_column("ward", pd.Series([f"ward {i}" for i in range(30)] * 10)).text_among_numbers
    few = pd.Series(list(np.round(rng.uniform(1, 9, 295), 2)) + ["pending"] * 5)
    assert read_column("crp", few).kind == "numeric"


def test_numbers_the_user_made_a_pandas_category_are_labels_never_thresholds():
    """X["txgrp"].astype("category"): the user says the numbers are labels; they were read as numbers ('grp < 2')."""
    rng = np.random.default_rng(0)
    n = 600
    plain = pd.DataFrame({"grp": rng.integers(1, 4, n), "age": rng.integers(20, 90, n)})
    y = rng.random(n) < 0.1 + 0.6 * (plain["grp"] == 2)
    labelled = plain.assign(grp=plain["grp"].astype("category"))
    assert read_column("grp", plain["grp"]).kind == "numeric"
    assert read_column("grp", labelled["grp"]).kind == "categorical"
    model = FallingRuleListClassifier(random_state=0).fit(labelled, y)
    assert model.rules_ == ["grp = 2"]
    # the same patients with the numbers as numbers get the same risks, from the model and from its file
    risks = model.predict_proba(labelled)[:, 1]
    assert np.allclose(model.predict_proba(plain)[:, 1], risks)
    assert np.allclose(FallingRuleListClassifier.from_dict(model.to_dict()).predict_proba(plain)[:, 1], risks)


@pytest.mark.parametrize("name", ["pgtime", "stop", "tstop", "dtime", "tdeath", "time_death", "surv_months",
                                  "survival_time_months", "futime_days", "time_days", "last_followup_days",
                                  "recurrence_free_survival", "time_on_study", "ttr", "rtime", "ftime", "time169",
                                  "rltime", "crtime", "eventT"])
def test_more_names_of_follow_up_times_from_real_survival_tables(name):
    """R's stagec (pgtime), bladder (stop), cgd (tstop) and the names a regression sweep tried."""
    assert has_follow_up_name(name)


@pytest.mark.parametrize("name", ["time_to_dialysis", "days_to_transplant", "hours_since_admission",
                                  "duration_of_symptoms", "time_to_surgery", "time_since_diagnosis", "stop_reason",
                                  "osmolality", "days", "week", "surgery_time", "daytime", "onset_time",
                                  "lifetime", "bedtime"])
def test_durations_that_can_be_known_when_the_patient_is_seen_are_not_follow_up_times(name):
    assert not has_follow_up_name(name)


def test_a_patient_id_that_repeats_is_an_identifier_and_a_site_id_is_not():
    """R's bladder: 340 rows of 85 patients under 'id'; its list read 'id >= 64' while the folds grouped by it."""
    patients = pd.Series(np.repeat(np.arange(1, 86), 4))
    assert read_column("id", patients).kind == "identifier"
    sites = pd.Series(np.repeat(np.arange(1, 5), 85))
    assert read_column("id", sites).kind != "identifier"


def test_names_from_r_clinical_tables_say_what_their_numbers_are():
    """pec's Pbc3 ptno (a patient number) headed its list as 'ptno < 270'; R's lung read 'inst < 11' (an
    institution); KMsurv larynx's diagyr (year of diagnosis, 70 to 78) was read as diagnosis codes; HSAUR3's
    schizophrenia2 month 0 (the first visit) was offered as a code for not known; respiratory's subject (1 to 56,
    five visits each, per centre) was a number with thresholds."""
    rng = np.random.default_rng(0)
    n = 300
    assert read_column("ptno", pd.Series(rng.permutation(np.arange(1, 1200))[:n])).kind == "identifier"
    assert read_column("inst", pd.Series(rng.integers(1, 19, n))).kind == "nominal"
    assert read_column("diagyr", pd.Series(rng.integers(70, 79, n))).kind == "numeric"
    visits = pd.Series(np.repeat([0, 2, 4, 6, 8, 10], 50))
    assert not read_column("month", visits).number_codes and read_column("bmi", visits).number_codes
    subject = pd.Series(np.tile(np.arange(1, 57), 5))
    assert read_column("subject", subject).kind == "identifier"
    assert read_column("subject", pd.Series(rng.integers(1, 3, n))).kind != "identifier"   # a 1/2 code stays


@pytest.mark.parametrize("values", [["None", "Mild", "Moderate", "Severe"], ["Freq", "Some", "None"],
                                    ["none", "light", "heavy"], ["-", "+", "++", "trace"], ["+", "-"]])
def test_none_and_a_minus_on_a_scale_are_its_lowest_level_not_missing(values):
    """MASS's survey (Exer: Freq / Some / None), a pain scale, a dipstick (- / + / ++), a blood group's Rh (+ / -):
    'None' and '-' were read as missing, and the card said 'IF pain is missing' of the patients without pain."""
    series = pd.Series(values * 30)
    assert not missing_mask(series).any()
    reading = read_column("finding", series)
    assert reading.kind == "categorical" and reading.n_levels == len(values) and reading.missing_share == 0


@pytest.mark.parametrize("values", [["home", "None", "rehab"], ["Yes", "No", "None"], ["61", "None", "72"],
                                    ["home", "-", "rehab"], ["1.2", "-", "0.8"]])
def test_none_and_a_minus_elsewhere_stay_missing(values):
    series = pd.Series(values * 30)
    assert missing_mask(series).tolist() == [v in ("None", "-") for v in values] * 30


def test_a_list_on_a_pain_scale_names_no_pain_as_a_level(tmp_path):
    rng = np.random.default_rng(5)
    n = 1500
    pain = rng.choice(["None", "Mild", "Moderate", "Severe"], n)
    died = rng.random(n) < np.where(pain == "None", 0.6, 0.1)
    model = FallingRuleListClassifier(random_state=0).fit(pd.DataFrame({"pain": pain}), died)
    assert model.rules_[0] == "pain = None"
    # one new patient without pain, alone in the table: still the level the model knows, not a missing value
    alone = model.predict_proba(pd.DataFrame({"pain": ["None"]}))[0, 1]
    assert alone == pytest.approx(model.predict_proba(pd.DataFrame({"pain": pain}))[pain == "None"][0, 1])


@pytest.mark.parametrize("name", ["physician", "attending_id", "service", "surgeon", "team"])
def test_a_doctor_or_a_service_numbered_is_a_label_not_a_dose(name):
    """A physician numbered 1 to 40 and a service 1 to 12 were read as numbers: 'physician >= 21' meant nothing."""
    series = pd.Series(np.random.default_rng(0).integers(1, 41, 400))
    assert read_column(name, series).kind == "nominal"
    assert read_column("n_services", series).kind == "numeric"   # a count stays a number
