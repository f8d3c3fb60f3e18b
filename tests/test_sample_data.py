"""The synthetic readmission table and the known list that generated it (sample_data/)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from frl_engine.binarize import Binarizer, infer_column_kind
from frl_engine.errors import DataError
from frl_engine.rules import Rule, mine_rules

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
SCRIPT = SAMPLE_DIR / "make_sample_data.py"
CSV = SAMPLE_DIR / "readmission.csv"


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("make_sample_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table():
    return pd.read_csv(CSV)


@pytest.fixture(scope="module")
def binarizer(table, generator):
    return Binarizer(exclude=["PatientID", generator.OUTCOME]).fit(table)


def test_the_csv_is_what_the_script_writes(tmp_path):
    out = tmp_path / "readmission.csv"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, capture_output=True, text=True)
    assert out.read_bytes() == CSV.read_bytes()


def test_columns_have_the_documented_kinds(table):
    kinds = {column: infer_column_kind(table[column]) for column in table.columns}
    assert kinds == {
        "PatientID": "identifier", "Age": "numeric", "AdmissionType": "categorical", "LengthOfStay": "numeric",
        "PriorAdmissions": "numeric", "Creatinine": "numeric", "DischargeTo": "categorical", "BedSores": "boolean",
        "NoShow": "boolean", "PoorPrognosis": "boolean", "LivesAlone": "boolean", "Diabetes": "boolean",
        "Readmitted30d": "boolean",
    }
    assert len(table) == 3000 and table["PatientID"].is_unique
    assert 0 < table["Creatinine"].isna().sum() < 0.05 * len(table)
    assert table.drop(columns="Creatinine").notna().all().all()


def test_the_identifier_column_is_left_out_by_default_with_the_reason(table):
    binarizer = Binarizer(exclude=["Readmitted30d"]).fit(table)
    assert "PatientID" not in {c.column for c in binarizer.conditions_}
    reading = binarizer.column_table().set_index("column").loc["PatientID"]
    assert reading["kind"] == "identifier" and "different value in 100% of rows" in reading["reason"]


def test_observed_rates_match_the_true_list_within_sampling_error(table, generator):
    position = generator.rule_positions(table)
    event = table[generator.OUTCOME].eq("yes").to_numpy()
    risks = [risk for _, risk in generator.TRUE_LIST] + [generator.DEFAULT_RISK]
    assert all(a > b for a, b in zip(risks, risks[1:])), "the true list must fall"
    for line, risk in enumerate(risks):
        captured = position == line
        assert captured.mean() >= 0.05, f"line {line} captures too few patients to be learnable"
        standard_error = np.sqrt(risk * (1 - risk) / captured.sum())
        observed = event[captured].mean()
        assert abs(observed - risk) < 3.5 * standard_error, (line, observed, risk)


def test_every_true_condition_is_an_item_and_every_true_rule_is_mined(table, generator, binarizer):
    for conditions, _ in generator.TRUE_LIST:
        for condition in conditions:
            assert condition in binarizer.conditions_, condition.name
    items = binarizer.transform(table)
    candidates = mine_rules(items, binarizer.conditions_, min_support=0.05, max_conditions=2)
    for conditions, _ in generator.TRUE_LIST:
        rule = Rule(conditions)
        assert rule in candidates.rules, rule.name
        assert rule.evaluate(table).mean() >= 0.05
