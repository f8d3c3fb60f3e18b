"""Exploration benchmark (issue: interactive hyperparameter exploration).

Prints

1. the wall time of a 3 x 3 x 2 grid (lam 2,4,8 x min support 0.02,0.05,0.1 x max conditions 1,2) with
   5 stratified folds on 20,000 rows of the generated raw export (sample_data/make_raw_export.py,
   IDs excluded), all local cores: target <= 2 minutes on the 2-core machine;
2. for each UCI set of the paper (/work/shared/uci or --uci DIR) and the raw export: the 5-fold
   cross-validated AUROC and length of the default list (lam 8, support 5%, 2 conditions), of the
   tuned list (the grid's recommended cell: the shortest list within one SE of the best AUROC) and of
   L2 logistic regression (nested grid search), all on the same folds.  UCI sets: TUNE_GRID (lam 2,4,8,16 x
   support .01,.02,.05,.1 x 1-3 conditions); the raw export: the timed 3 x 3 x 2 grid.  The tuned AUROC is the
   grid's own cross-validated figure for that cell, so it carries a small selection optimism.  With
   --thresholds 3,5,9 the UCI grid also varies the thresholds per number (the tuned cell then names its own).
3. with --why, for the sets where the goal is missed, reference figures on the same folds that say where the
   gap comes from: L2 logistic regression on the list's own items (the binarizer fitted on each training
   fold: the same yes/no facts, added up instead of ordered), a CART tree with at most 11 leaves (11 groups,
   as many as a 10-rule list), and the grid with 5 and 9 thresholds per number.

usage: python benchmarks/bench_explore.py [--uci DIR] [--rows 20000] [--sets mammo,cars] [--skip-speed]
                                          [--skip-accuracy] [--thresholds 3,5,9] [--why]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))

from frl_engine.evaluate import cross_validate_models  # noqa: E402
from frl_engine.explore import explore  # noqa: E402

GRID = {"lam": (2, 4, 8), "min_support": (0.02, 0.05, 0.1), "max_conditions": (1, 2)}
TUNE_GRID = {"lam": (2, 4, 8, 16), "min_support": (0.01, 0.02, 0.05, 0.1), "max_conditions": (1, 2, 3)}
DEFAULT_CELL = {"lam": 8.0, "min_support": 0.05, "max_conditions": 2, "n_thresholds": 3}
UCI_SETS = ("mammo", "breast", "cars", "spam", "raw")
IDS = ["encounter_id", "patient_nbr"]


def raw_export(rows: int, seed: int = 0):
    from make_raw_export import make_raw_export

    from frl_engine.io import split_target

    frame = make_raw_export(n_rows=rows, seed=seed)
    X, y, _ = split_target(frame, "readmitted", "<30")
    return X, y


def speed(rows: int) -> None:
    X, y = raw_export(rows)
    started = time.perf_counter()
    result = explore(X, y, **GRID, n_folds=5, random_state=0, params={"exclude": IDS}, n_jobs=-1)
    seconds = time.perf_counter() - started
    print(f"3 x 3 x 2 grid x 5 folds on {rows:,} rows of the raw export ({X.shape[1]} columns), {result.where}: "
          f"{seconds:.1f} s (target <= 120 s)")
    print(result.format_table(limit=5))


def _row(name, cell, logreg):
    return (f"{name:<12} {cell['auroc_default']:>8.3f} {cell['n_default']:>6} {cell['auroc_tuned']:>8.3f} "
            f"{cell['n_tuned']:>6}  {cell['tuned']:<34} {logreg:>7.3f} {logreg - cell['auroc_tuned']:>+7.3f}")


def compare(name: str, X, y, params: dict, grid: dict) -> str:
    started = time.perf_counter()
    cells = {k: tuple(sorted(set(v) | {DEFAULT_CELL[k]})) for k, v in grid.items()}
    result = explore(X, y, **cells, n_folds=5, random_state=0, params=params, n_jobs=-1)
    table = result.table
    default = table[(table.lam == 8) & (table.min_support == 0.05) & (table.max_conditions == 2)
                    & (table.n_thresholds == 3)].iloc[0]
    rec = result.recommended
    logreg = cross_validate_models(X, y, n_folds=5, methods=("logreg",), random_state=0, n_jobs=-1)
    cell = {"auroc_default": default.auroc_mean, "n_default": int(default.n_rules), "auroc_tuned": rec.auroc_mean,
            "n_tuned": int(rec.n_rules),
            "tuned": f"lam {rec.lam:g}, support {rec.min_support:g}, <= {int(rec.max_conditions)} cond."
                     + (f", {int(rec.n_thresholds)} thr." if len(cells.get("n_thresholds", ())) > 1 else "")}
    line = _row(name, cell, logreg.summary("logreg").auroc_mean)
    best = result.sorted_table().iloc[0]
    return line + f"   (best cell {best.auroc_mean:.3f} with {int(best.n_rules)} rules; {time.perf_counter() - started:.0f} s)"


def accuracy(uci: Path, rows: int, sets, thresholds=(3,)) -> None:
    from frl_engine.datasets import load_dataset

    print(f"{'data':<12} {'default':>8} {'rules':>6} {'tuned':>8} {'rules':>6}  {'tuned cell':<34} {'LogReg':>7} "
          f"{'gap':>7}")
    print("(AUROC: 5-fold stratified CV, seed 0, the same folds in every column; gap = LogReg - tuned)")
    for key in [s for s in sets if s != "raw"]:
        try:
            data = load_dataset(key, uci)
        except Exception as exc:  # noqa: BLE001 - a missing file is reported, the others still run
            print(f"{key:<12} not run: {exc}")
            continue
        print(compare(key, data.X, data.y, {}, {**TUNE_GRID, "n_thresholds": tuple(thresholds)}), flush=True)
    if "raw" not in sets:
        return
    X, y = raw_export(rows)
    print(compare(f"raw {rows // 1000}k", X, y, {"exclude": IDS}, GRID), flush=True)  # the timed grid


def why(uci: Path, key: str = "mammo") -> None:
    """Reference figures on the same folds (see the module docstring, 3)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import roc_auc_score
    from sklearn.tree import DecisionTreeClassifier

    from frl_engine.binarize import Binarizer
    from frl_engine.datasets import load_dataset
    from frl_engine.folds import stratified_folds

    data = load_dataset(key, uci)
    X, y = data.X, np.asarray(data.y, bool)
    items_lr, tree = [], []
    for train, test in stratified_folds(y, 5, 0):
        binarizer = Binarizer(min_support=0.01).fit(X.iloc[train])
        a, b = binarizer.transform(X.iloc[train]), binarizer.transform(X.iloc[test])
        model = LogisticRegressionCV(Cs=10, cv=3, max_iter=5000).fit(a, y[train])
        items_lr.append(roc_auc_score(y[test], model.decision_function(b)))
        cart = DecisionTreeClassifier(max_leaf_nodes=11, min_samples_leaf=10, random_state=0).fit(a, y[train])
        tree.append(roc_auc_score(y[test], cart.predict_proba(b)[:, 1]))
    print(f"{key}: L2 logistic regression on the list's own items (support 1%): {np.mean(items_lr):.3f}; "
          f"CART on the same items, <= 11 leaves: {np.mean(tree):.3f}")
    for n in (5, 9):
        result = explore(X, y, **TUNE_GRID, n_folds=5, random_state=0, params={"n_thresholds": n}, n_jobs=-1)
        rec, best = result.recommended, result.sorted_table().iloc[0]
        print(f"{key}, {n} thresholds per number: recommended {rec.auroc_mean:.3f} with {int(rec.n_rules)} rules "
              f"({rec.rules}); best cell {best.auroc_mean:.3f} with {int(best.n_rules)} rules", flush=True)


def run_speed() -> None:
    """The grid timing only (benchmarks/run.py)."""
    speed(20_000)


def run_accuracy() -> None:
    """The tuned-vs-default-vs-LogReg table only (benchmarks/run.py --all)."""
    accuracy(Path("/work/shared/uci") if Path("/work/shared/uci").is_dir() else ROOT.parent / "shared" / "uci",
             20_000, UCI_SETS)


def run(argv=()) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uci", default="/work/shared/uci", help="folder with the raw UCI files")
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the raw export (default 20,000)")
    parser.add_argument("--sets", default=",".join(UCI_SETS), help=f"UCI sets (default {','.join(UCI_SETS)})")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--thresholds", default="3",
                        help="thresholds per number to add to the UCI tuning grid, e.g. 3,5,9 (default 3)")
    parser.add_argument("--why", action="store_true", help="reference figures for Mammographic (see 3. above)")
    args = parser.parse_args(list(argv))
    if not args.skip_speed:
        speed(args.rows)
    if not args.skip_accuracy:
        accuracy(Path(args.uci), args.rows, [s for s in args.sets.split(",") if s],
                 [int(v) for v in args.thresholds.split(",") if v])
    if args.why:
        why(Path(args.uci))


if __name__ == "__main__":
    run(sys.argv[1:])
