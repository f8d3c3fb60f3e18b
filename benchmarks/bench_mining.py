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

Run: ``.venv/bin/python benchmarks/bench_mining.py [--full]``
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also time mlxtend on all of Spambase (minutes)")
    run(full_reference=parser.parse_args().full)
