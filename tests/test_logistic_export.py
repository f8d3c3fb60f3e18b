"""The logistic export of benchmarks/bench_logistic_export.py, reduced: read as a hospital export, and a fit
at the defaults finds its strongest risk factors (the full-size timing is the benchmark's)."""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sample_data"))

from make_logistic_export import EVENT, TARGET, make_logistic_export  # noqa: E402

from frl_engine import FallingRuleListClassifier  # noqa: E402
from frl_engine.columns import read_columns  # noqa: E402


def test_the_logistic_export_reads_as_its_traits_say():
    frame = make_logistic_export(3000, seed=1)
    assert frame.shape == (3000, 36) and 0.1 < (frame[TARGET] == EVENT).mean() < 0.4
    kinds = {r.name: r.kind for r in read_columns(frame.drop(columns=[TARGET]))}
    assert kinds["charges"] == "numeric" and kinds["smoker"] == "boolean" and kinds["insulin"] == "boolean"
    assert kinds["diag_1"] == "code" and kinds["admission_type_id"] == "nominal" and kinds["creatinine"] == "numeric"
    assert kinds["encounter_id"] == "identifier" and kinds["patient_nbr"] == "identifier"


def test_a_default_fit_puts_the_strongest_risk_factors_in_its_list():
    frame = make_logistic_export(2000, seed=1)  # 6 s; at 3,000 rows the search walks for 23 s to the same factors
    model = FallingRuleListClassifier(random_state=0).fit(frame.drop(columns=[TARGET]), frame[TARGET] == EVENT)
    text = " ".join(model.rules_)
    assert "admission_type_id = 3" in text and "diag_1 starts with 428" in text
    assert np.all(np.diff(model.probabilities_) <= 1e-12)
