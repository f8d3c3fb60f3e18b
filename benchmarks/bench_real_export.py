"""Real-export benchmark (issue: real hospital exports at the defaults).

Generates the synthetic raw export (sample_data/make_raw_export.py: 100,000 encounters x 50 columns,
'?' markers, ICD-9 codes, nominal integer codes, near-constant medications, IDs, a three-valued
outcome) and prints:

- the wall time and peak resident memory of the whole `frl fit` process at the defaults
  (only the two ID columns excluded);
- whether the known generating list is recovered (each true rule's conditions on the fitted list);
- 5-fold stratified cross-validated AUROC (each patient's encounters in one fold) of the default FRL next to
  L2 logistic regression on the same columns (one-hot of frequent levels/codes, median-imputed numbers with missing indicators).

usage: python benchmarks/bench_real_export.py [--rows 100000] [--cv-rows 100000] [--folds 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))

from make_raw_export import TRUE_LIST, make_raw_export  # noqa: E402

from frl_engine.columns import read_columns  # noqa: E402
from frl_engine.estimator import FallingRuleListClassifier  # noqa: E402
from frl_engine.io import read_table, split_target  # noqa: E402

IDS = ["encounter_id", "patient_nbr"]
TARGET, EVENT = "readmitted", "<30"


def peak_rss_of(args: list[str]) -> tuple[float, float, str]:
    """Run a command; return (wall seconds, peak RSS MiB of the process tree, stdout)."""
    started = time.perf_counter()
    proc = psutil.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        try:
            rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"frl fit failed: {err.strip()}")
    return time.perf_counter() - started, peak / 2**20, out


def logistic_design(features: pd.DataFrame, min_frequency: int):
    """One-hot of frequent levels for categorical/code/nominal columns; numbers imputed with missing flags."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    readings = {r.name: r for r in read_columns(features)}
    numeric = [c for c, r in readings.items() if r.kind == "numeric"]
    labels = [c for c, r in readings.items() if r.kind in ("categorical", "code", "nominal", "boolean")]
    frame = features.copy()
    from frl_engine.columns import numeric_values, missing_mask
    for c in numeric:
        frame[c] = numeric_values(features[c], c)
    for c in labels:
        frame[c] = features[c].astype(str).where(~missing_mask(features[c]), "missing")
    pre = ColumnTransformer([
        ("numeric", Pipeline([("impute", SimpleImputer(strategy="median", add_indicator=True)),
                              ("scale", StandardScaler())]), numeric),
        ("labels", OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=min_frequency), labels),
    ])
    model = Pipeline([("pre", pre), ("logreg", LogisticRegression(C=1.0, max_iter=2000))])
    return frame[numeric + labels], model


def cross_validated(features: pd.DataFrame, event: np.ndarray, folds: int, seed: int = 0) -> dict:
    from sklearn.base import clone
    from sklearn.metrics import roc_auc_score

    from frl_engine.folds import patient_groups, stratified_folds

    design, logreg = logistic_design(features, min_frequency=max(20, len(features) // 1000))
    scores = {"FRL (defaults)": [], "logistic regression (L2)": []}
    lengths = []
    grouped = patient_groups(features)  # every encounter of a patient in one fold, as the product's folds
    for train, test in stratified_folds(event, folds, seed, None if grouped is None else grouped[1]):
        frl = FallingRuleListClassifier(exclude=IDS, random_state=seed).fit(features.iloc[train], event[train])
        lengths.append(len(frl.rules_))
        scores["FRL (defaults)"].append(roc_auc_score(event[test], frl.predict_proba(features.iloc[test])[:, 1]))
        model = clone(logreg).fit(design.iloc[train], event[train])
        scores["logistic regression (L2)"].append(roc_auc_score(event[test], model.predict_proba(design.iloc[test])[:, 1]))
    return {"scores": scores, "lengths": lengths}


PAPER_FRL = {"spam": 0.91, "mammo": 0.82, "breast": 0.95, "cars": 0.89}


def uci_at_defaults(folds: int = 5) -> None:
    """5-fold AUROC of the default fit on the UCI sets' raw columns, next to the paper's FRL figures."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    from frl_engine.datasets import load_dataset

    print(f"UCI sets at the defaults, raw columns, {folds}-fold AUROC (target: paper - 0.03):")
    for key, options in (("spam", {}), ("mammo", {}), ("breast", {"complete_rows": False}), ("cars", {})):
        data = load_dataset(key, ROOT.parent / "shared" / "uci", **options)
        scores, notes, started = [], set(), time.perf_counter()
        for train, test in StratifiedKFold(folds, shuffle=True, random_state=0).split(data.X, data.y):
            model = FallingRuleListClassifier(random_state=0).fit(data.X.iloc[train], data.y[train])
            notes.add(model.screening_note_.split(" candidate")[0])
            event = list(model.classes_).index(model.positive_class_)
            scores.append(roc_auc_score(data.y[test], model.predict_proba(data.X.iloc[test])[:, event]))
        screened = f"; {sorted(notes)[0].lower()} candidate rules" if any(notes) else ""
        print(f"    {key:<7} {data.X.shape[0]:>5} x {data.X.shape[1]:<3} AUROC {np.mean(scores):.3f} "
              f"(paper {PAPER_FRL[key]:.2f}) {time.perf_counter() - started:5.1f} s{screened}")


def run() -> None:
    """The section of benchmarks/run.py --all: the full-size export, then the UCI sets."""
    main([])
    uci_at_defaults()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cv-rows", type=int, default=100_000)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.csv"
        make_raw_export(args.rows, seed=0).to_csv(path, index=False)
        frl = str(Path(sys.executable).parent / "frl")
        command = [frl, "fit", str(path), "--target", TARGET, "--positive", EVENT, "--exclude", IDS[0],
                   "--exclude", IDS[1], "--out", str(Path(tmp) / "model.json")]
        seconds, peak, out = peak_rss_of(command)
        print(f"frl fit at defaults, {args.rows:,} x 50 raw export: {seconds:.1f} s wall, peak RSS {peak:.0f} MiB "
              "(targets: <= 30 s, <= 700 MiB)")
        print("\n".join("    " + line for line in out.strip().splitlines()))
        model = FallingRuleListClassifier.load(Path(tmp) / "model.json")
        fitted = [{c.column for c in rule.conditions} for rule in model.rule_objects_]
        found = sum(any({c.column for c in conditions} <= columns for columns in fitted) for conditions, _ in TRUE_LIST)
        print(f"known list: {found} of {len(TRUE_LIST)} true rules have their columns in one rule of the fitted list")

        features, event, _ = split_target(read_table(path).iloc[: args.cv_rows], TARGET, EVENT)
    started = time.perf_counter()
    cv = cross_validated(features, event, args.folds)
    print(f"{args.folds}-fold cross-validated AUROC on {len(features):,} rows ({time.perf_counter() - started:.0f} s):")
    for name, values in cv["scores"].items():
        print(f"    {name:<28} {np.mean(values):.3f} (sd {np.std(values):.3f})")
    gap = np.mean(cv["scores"]["FRL (defaults)"]) - np.mean(cv["scores"]["logistic regression (L2)"])
    print(f"    FRL minus logistic regression: {gap:+.3f} (target >= -0.010); list lengths {cv['lengths']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
