"""Speed of external validation (``frl validate``) at real size.

A five-rule list (numeric thresholds, a category, yes/no columns) scored on
100,000 new patients with 40 extra columns: the whole ``validate_model`` (column
checks, scoring, DeLong AUROC, calibration fits, per-rule table, decision curve),
then with four subgroups (``by``), then ``frl validate`` from the CSV file to the
printed result, JSON and HTML report.  Then the synthetic raw export: a list
fitted on its first 70,000 encounters, validated on the later 30,000.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from frl_engine.validation.external import validate_model

RULES = [
    ("Age >= 75 AND BedSores", 0.55), ("PriorAdmissions >= 3", 0.38), ("DischargeTo = nursing", 0.27),
    ("Creatinine >= 2 AND NoShow", 0.18), ("Age >= 60", 0.11),
]
DEFAULT = 0.05


def _condition(text):
    for op in (">=", "<"):
        if f" {op} " in text:
            column, value = text.split(f" {op} ")
            return {"column": column, "op": op, "value": float(value)}
    if " = " in text:
        column, value = text.split(" = ")
        return {"column": column, "op": "==", "value": value}
    return {"column": text, "op": "is true", "value": None}


def model() -> dict:
    rules = [{"name": name, "conditions": [_condition(c) for c in name.split(" AND ")], "probability": p,
              "support": 1000, "n_positive": int(1000 * p)} for name, p in RULES]
    return {"format": "frl-model", "format_version": 1, "created_at": "2026-11-01T00:00:00+00:00",
            "outcome": {"target": "readmitted", "positive_class": "<30", "classes": ["not <30", "<30"], "title": None},
            "hyperparameters": {"lam": 8.0, "min_support": 0.05, "max_conditions": 2, "n_steps": 5000,
                                "random_state": 0},
            "training": {"n_rows": 6000, "n_positive": 900, "positive_rate": 0.15, "data_name": "2024.csv"},
            "rules": rules, "default": {"probability": DEFAULT, "support": 1000, "n_positive": 50},
            "parameters": {"K": 0.05, "gammas": [1.5] * 6, "log_posterior": -1.0}, "binarizer": None,
            "feature_names": [], "n_features": 0, "posterior": None, "validation": None}


def table(n=100_000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "Age": rng.integers(18, 100, n).astype(float), "BedSores": rng.choice(["yes", "no"], n, p=[0.2, 0.8]),
        "PriorAdmissions": rng.poisson(1.2, n), "DischargeTo": rng.choice(["home", "nursing", "rehab"], n),
        "Creatinine": np.round(rng.lognormal(0, 0.5, n), 2), "NoShow": rng.choice([0, 1], n, p=[0.85, 0.15]),
        "Sex": rng.choice(["F", "M"], n), "Band": rng.choice(["A", "B", "C", "D"], n),
    })
    for k in range(40):
        frame[f"extra_{k}"] = rng.normal(size=n)
    from frl_engine.estimator import FallingRuleListClassifier

    risk = FallingRuleListClassifier.from_dict(model()).predict_proba(frame)[:, 1]
    draw = rng.random(n)
    frame["readmitted"] = np.where(draw < risk, "<30", np.where(draw < risk + 0.2, ">30", "NO"))
    return frame


def _best_of(function, repeats=3):
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def run() -> None:
    _run_synthetic()
    run_raw_export()


def _run_synthetic() -> None:
    frame, m = table(), model()
    validate_model(m, frame.head(1000))  # imports, first calls
    seconds = _best_of(lambda: validate_model(m, frame))
    print(f"validate_model, 100,000 patients x 48 columns, 5 rules: {seconds:.2f} s")
    seconds = _best_of(lambda: validate_model(m, frame, by="Band"))
    print(f"  with 4 subgroups (by=Band): {seconds:.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        frame.to_csv(folder / "new.csv", index=False)
        (folder / "model.json").write_text(json.dumps(m))
        command = [sys.executable, "-m", "frl_engine.cli", "validate", str(folder / "model.json"),
                   str(folder / "new.csv"), "--by", "Sex", "--out", str(folder / "ext.json"), "--html",
                   str(folder / "report.html")]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        print(f"frl validate from a {(folder / 'new.csv').stat().st_size / 1e6:.0f} MB CSV to the printed result, "
              f"JSON and HTML report (whole process): {time.perf_counter() - started:.1f} s")


def run_raw_export() -> None:
    """The synthetic raw export (sample_data/make_raw_export.py): fit on the first 70,000 encounters at the
    defaults, validate on the last 30,000 (a later period) with ``frl validate --by gender``."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "sample_data"))
    from make_raw_export import make_raw_export

    frame = make_raw_export(100_000, seed=0)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        frame.iloc[:70_000].to_csv(folder / "early.csv", index=False)
        frame.iloc[70_000:].to_csv(folder / "later.csv", index=False)
        subprocess.run([sys.executable, "-m", "frl_engine.cli", "fit", str(folder / "early.csv"), "--target",
                        "readmitted", "--positive", "<30", "--exclude", "encounter_id", "--exclude", "patient_nbr",
                        "--out", str(folder / "model.json")], check=True, capture_output=True)
        later = pd.read_csv(folder / "later.csv")
        m = json.loads((folder / "model.json").read_text())
        seconds = _best_of(lambda: validate_model(m, later, by="gender"))
        result = validate_model(m, later, by="gender")
        print(f"raw export, {len(m['rules'])}-rule list fitted on 70,000 encounters, validated on the later 30,000 "
              f"(50 columns, '?' markers, ICD-9 codes): validate_model {seconds:.2f} s; {result.headline()}, "
              f"calibration slope {result.calibration_slope:.2f}, flagged rules {len(result.overall.flagged)}")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "frl_engine.cli", "validate", str(folder / "model.json"),
                        str(folder / "later.csv"), "--by", "gender", "--html", str(folder / "report.html")],
                       check=True, capture_output=True)
        print(f"  frl validate on that CSV (whole process, with the HTML report): {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    run()
