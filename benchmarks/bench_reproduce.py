"""Time the whole reproduction of the paper: `frl reproduce --data-dir DIR --simulation`.

* Section 5: 4 UCI data sets x 5 stratified folds x 5 methods (FRL, SVM and
  LogReg with nested grid search, CART, RF), all cores; budget 10 minutes on
  the 2-core CI machine.
* Table 5's figure: 5000 annealing steps (one chain) on each whole data set.
* Section 4: the simulation study, 7 sizes x 100 replicates x 5000 steps.

Prints the tables (ours beside the paper's), the time per data set and in
total.  The data folder is ``$FRL_UCI_DIR`` or ``../shared/uci`` beside the
repository.

Run: ``.venv/bin/python benchmarks/bench_reproduce.py [DATA_DIR] [--no-simulation]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frl_engine.reproduce import format_reproduction, reproduce_experiments, simulation_study  # noqa: E402

DEFAULT_DIR = Path(os.environ.get("FRL_UCI_DIR", Path(__file__).resolve().parents[2] / "shared" / "uci"))
BUDGET_SECONDS = 600


def run(data_dir=None, simulation: bool = True) -> dict:
    """Run the reproduction, print the tables and times, return the figures."""
    data_dir = Path(data_dir) if data_dir else DEFAULT_DIR
    if not data_dir.is_dir():
        print(f"UCI data folder {data_dir} not found: skipped (set FRL_UCI_DIR)")
        return {}
    started = time.perf_counter()
    lines = []
    result = reproduce_experiments(data_dir, n_jobs=-1, progress=lambda line: (print(line, flush=True),
                                                                                lines.append(line)))
    study = simulation_study(n_jobs=-1) if simulation else None
    if study is not None:
        print(f"Simulation study: {len(study.sizes)} sizes x {study.n_replicates} replicates in "
              f"{study.elapsed_seconds:.1f} s", flush=True)
        result = replace(result, simulation=study)
    total = time.perf_counter() - started
    print()
    print(format_reproduction(result))
    print()
    print(f"{'data set':<26}{'CV s':>8}{'5000 steps s':>14}")
    for run_ in result.datasets.values():
        print(f"{run_.title:<26}{run_.evaluation.elapsed_seconds:>8.1f}{run_.anneal_seconds:>14.3f}")
    print(f"Section 5 (4 data sets x 5 folds x 5 methods): {result.elapsed_seconds:.1f} s")
    if study is not None:
        print(f"Section 4 simulation ({len(study.sizes)} sizes x {study.n_replicates} replicates): "
              f"{study.elapsed_seconds:.1f} s")
    verdict = "within" if total <= BUDGET_SECONDS else "OVER"
    print(f"Whole reproduction: {total:.1f} s on {os.cpu_count()} core(s), {verdict} the {BUDGET_SECONDS} s budget")
    figures = {"total_seconds": total, "section5_seconds": result.elapsed_seconds,
               "simulation_seconds": None if study is None else study.elapsed_seconds}
    for key, run_ in result.datasets.items():
        figures[f"{key}_cv_seconds"] = run_.evaluation.elapsed_seconds
        figures[f"{key}_anneal_seconds"] = run_.anneal_seconds
        figures[f"{key}_frl_auroc"] = run_.evaluation.summary("frl").auroc_mean
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", nargs="?", default=None, help=f"UCI folder (default {DEFAULT_DIR})")
    parser.add_argument("--no-simulation", action="store_true", help="skip the section 4 simulation study")
    args = parser.parse_args(argv)
    figures = run(args.data_dir, simulation=not args.no_simulation)
    return 0 if not figures or figures["total_seconds"] <= BUDGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
