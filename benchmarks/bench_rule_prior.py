"""The rule prior over every mined rule against the prior over the rules kept (``rule_prior``).

A simulation with a known answer: a wide table of 3,000 patients, 80 lab values of pure noise, and two real
risk factors (heart failure, and age through a logistic model).  Mining finds about 118,000 rules; the search
keeps 5,000.  For each seed this prints, for both priors, the list's length, how many of its conditions are on
a noise lab (the truth: none should be), the fit time, and the 5-fold cross-validated AUROC on the simulated
patients when ``--cv`` is given.

usage: python benchmarks/bench_rule_prior.py [--seeds 0-7] [--cv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from frl_engine.estimator import FallingRuleListClassifier  # noqa: E402
from test_rule_prior import lab_conditions, wide_table_of_labs  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-7", help="data and fit seeds, e.g. 0-7 or 0,3,5")
    parser.add_argument("--cv", action="store_true", help="also 5-fold cross-validated AUROC (slower)")
    args = parser.parse_args(argv)
    if "-" in args.seeds:
        first, last = map(int, args.seeds.split("-"))
        seeds = list(range(first, last + 1))
    else:
        seeds = [int(s) for s in args.seeds.split(",")]
    totals = {"mined": [0, 0, 0.0], "kept": [0, 0, 0.0]}
    print(f"{'seed':>4}  {'prior':<6} {'rules':>5} {'lab conditions':>14} {'fit s':>6}"
          + ("  AUROC" if args.cv else "") + "  list")
    for seed in seeds:
        frame, y = wide_table_of_labs(seed)
        for prior in ("mined", "kept"):
            start = time.perf_counter()
            model = FallingRuleListClassifier(random_state=seed, rule_prior=prior).fit(frame, y)
            seconds = time.perf_counter() - start
            labs = lab_conditions(model)
            auroc = ""
            if args.cv:
                folds = StratifiedKFold(5, shuffle=True, random_state=seed)
                scores = cross_val_score(FallingRuleListClassifier(random_state=seed, rule_prior=prior), frame, y,
                                         cv=folds, scoring="roc_auc")
                auroc = f"  {np.mean(scores):.3f}"
            totals[prior][0] += len(model.rule_objects_)
            totals[prior][1] += labs
            totals[prior][2] += seconds
            names = " | ".join(" AND ".join(c.name for c in r.conditions) for r in model.rule_objects_)
            print(f"{seed:>4}  {prior:<6} {len(model.rule_objects_):>5} {labs:>14} {seconds:>6.1f}{auroc}  {names}",
                  flush=True)
        print(f"      (mined {model.n_mined_rules_:,} rules, kept {len(model.candidate_names_):,})")
    for prior, (rules, labs, seconds) in totals.items():
        print(f"{prior}: {rules} rules, {labs} lab conditions, {seconds:.1f} s of fitting over {len(seeds)} seeds")


def run() -> None:
    """The section of ``benchmarks/run.py --all``: eight seeds, no cross-validation."""
    main([])


if __name__ == "__main__":
    main()
