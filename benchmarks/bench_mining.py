"""Speed of rule mining: our bit-vector miner against mlxtend's FP-Growth (the reference).

* Spambase (UCI, 4601 rows, 57 numeric columns) binarised with the default
  ``Binarizer`` (quartile thresholds), mined at the paper's settings
  (min_support 0.05, max_conditions 2); target for ``method="bitset"``: at
  most 1 s. Best of 5 runs.
* Both methods on the same rows restricted to 10 columns (47-56), where
  mlxtend takes about a second, and checked to return the same rules.
* mlxtend on all 57 columns takes minutes (pure-Python FP-Growth on dense
  items), so it runs only with ``--full`` (``run(full_reference=True)``).
* The sample readmission table, both methods.
* ``--wide``: a wide export, 100,000 rows x 300 lab values and 60 checkbox flags (about 1.7 million two-condition
  rules), mined at the defaults with the outcome screening to 5,000 rules, as ``frl fit`` does: the time of
  ``mine_packed`` (session 53: each rule's words read once, counted, hashed and counted against the events,
  instead of AND-ed into blocks of bit vectors three times) and of the whole default fit.

Run: ``.venv/bin/python benchmarks/bench_mining.py [--full] [--wide]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from frl_engine.binarize import Binarizer  # noqa: E402
from frl_engine.datasets import load_spambase  # noqa: E402
from frl_engine.rules import mine_rules  # noqa: E402

SPAMBASE = os.environ.get("FRL_SPAMBASE", "/work/shared/uci/spambase.data")
READMISSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample_data", "readmission.csv")
SETTINGS = dict(min_support=0.05, max_conditions=2, max_rules=1_000_000)
SUBSET = list(range(47, 57))


def _best_seconds(function, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def _mine(table: pd.DataFrame, method: str, repeats: int, exclude=()) -> tuple[float, object]:
    binarizer = Binarizer(exclude=list(exclude))
    items = binarizer.fit_transform(table)
    return _best_seconds(lambda: mine_rules(items, binarizer.conditions_, method=method, **SETTINGS), repeats)


def run(full_reference: bool = False) -> dict:
    """Time both miners, print the figures and return them.

    Parameters
    ----------
    full_reference : bool, default False
        Also time mlxtend on all of Spambase (several minutes).

    Returns
    -------
    dict
        Seconds and rule counts; keys are printed with their values.
    """
    figures: dict = {}
    if os.path.exists(SPAMBASE):
        features = load_spambase(SPAMBASE).X
        binarize_seconds, binarizer = _best_seconds(lambda: Binarizer().fit(features), 3)
        items = binarizer.transform(features)
        mine_rules(items, binarizer.conditions_, **SETTINGS)  # warm-up
        seconds, mined = _best_seconds(lambda: mine_rules(items, binarizer.conditions_, **SETTINGS), 5)
        figures.update(spambase_rows=len(features), spambase_items=items.shape[1], spambase_rules=len(mined.rules),
                       spambase_binarize_seconds=binarize_seconds, spambase_bitset_seconds=seconds)
        print(f"Spambase: {len(features)} rows, {items.shape[1]} items (binarised in {binarize_seconds:.3f} s), "
              f"{len(mined.rules):,} rules at support 5%, up to 2 conditions")
        print(f"  bitset:   {seconds:.3f} s (target <= 1 s)")
        if full_reference:
            start = time.perf_counter()
            reference = mine_rules(items, binarizer.conditions_, method="fpgrowth", **SETTINGS)
            figures["spambase_fpgrowth_seconds"] = time.perf_counter() - start
            figures["spambase_same_rules"] = reference.rules == mined.rules
            print(f"  fpgrowth: {figures['spambase_fpgrowth_seconds']:.1f} s (mlxtend), "
                  f"same rules: {figures['spambase_same_rules']}")
        else:
            print("  fpgrowth: not run on all columns (minutes); use --full")

        subset = features.iloc[:, SUBSET]
        bitset_seconds, bitset = _mine(subset, "bitset", 5)
        fpgrowth_seconds, reference = _mine(subset, "fpgrowth", 1)
        figures.update(subset_columns=len(SUBSET), subset_rules=len(bitset.rules),
                       subset_bitset_seconds=bitset_seconds, subset_fpgrowth_seconds=fpgrowth_seconds,
                       subset_same_rules=bitset.rules == reference.rules)
        print(f"Spambase, columns 47-56 only ({len(bitset.rules):,} rules): bitset {bitset_seconds:.4f} s, "
              f"fpgrowth {fpgrowth_seconds:.2f} s, same rules: {figures['subset_same_rules']}")
    else:
        print(f"Spambase not found at {SPAMBASE} (set FRL_SPAMBASE): skipped")

    if os.path.exists(READMISSION):
        table = pd.read_csv(READMISSION)
        exclude = ("PatientID", "Readmitted30d")
        bitset_seconds, bitset = _mine(table, "bitset", 5, exclude)
        fpgrowth_seconds, reference = _mine(table, "fpgrowth", 1, exclude)
        figures.update(readmission_rules=len(bitset.rules), readmission_bitset_seconds=bitset_seconds,
                       readmission_fpgrowth_seconds=fpgrowth_seconds,
                       readmission_same_rules=bitset.rules == reference.rules)
        print(f"Sample readmission table ({len(table)} rows, {len(bitset.rules)} rules): bitset {bitset_seconds:.4f} s, "
              f"fpgrowth {fpgrowth_seconds:.2f} s, same rules: {figures['readmission_same_rules']}")
    return figures


def wide(n_rows: int = 100_000, n_labs: int = 300, n_flags: int = 60) -> dict:
    """Mining and the whole default fit on a wide export (lab values and checkbox flags); prints the figures."""
    import numpy as np

    from frl_engine import FallingRuleListClassifier
    from frl_engine.mining import mine_packed

    rng = np.random.default_rng(0)
    labs = rng.normal(size=(n_rows, n_labs)).round(2)
    table = pd.DataFrame(labs, columns=[f"lab_{i:03d}" for i in range(n_labs)])
    for j in range(n_flags):
        table[f"flag_{j}"] = np.where(rng.random(n_rows) < 0.1 + 0.005 * j, "Y", "")
    logit = -2 + 0.8 * labs[:, 0] + 0.6 * (labs[:, 1] > 1) + 0.5 * (table["flag_3"] == "Y")
    died = rng.random(n_rows) < 1 / (1 + np.exp(-logit))
    binarizer = Binarizer().fit(table)
    packed = binarizer.transform_packed(table)
    start = time.perf_counter()
    mined = mine_packed(packed, n_rows, binarizer.conditions_, event=died)
    mining_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model = FallingRuleListClassifier(random_state=0).fit(table, died)
    fit_seconds = time.perf_counter() - start
    print(f"Wide export: {n_rows:,} rows x {table.shape[1]} columns, {len(binarizer.conditions_)} items, "
          f"{mined.n_mined:,} rules mined, {len(mined.rules):,} kept: mining {mining_seconds:.1f} s; "
          f"the whole default fit {fit_seconds:.1f} s ({len(model.rules_)} rules)")
    return {"wide_mining_seconds": mining_seconds, "wide_fit_seconds": fit_seconds, "wide_rules_mined": mined.n_mined}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also time mlxtend on all of Spambase (minutes)")
    parser.add_argument("--wide", action="store_true", help="also mine and fit a wide export (100,000 x 360)")
    arguments = parser.parse_args()
    run(full_reference=arguments.full)
    if arguments.wide:
        wide()
