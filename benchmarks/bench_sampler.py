"""Speed of the posterior sampler (issue: sampler).

* One chain, 10,000 full sweeps (Steps 1-4) of the compiled loop on data the
  size of the paper's Spambase run (4601 rows, 550 candidate rules, rule
  density 0.25, a planted 5-rule list with risks .84 .70 .54 .40 .25 and
  default .14, paper section 4), after warm-up; target: at most 2 s.
* ``sample_posterior`` end to end with 4 chains (parallel processes) on the
  same data: sweeps per second per chain and in total, wall time included
  (process start-up, result assembly, diagnostics, the fixed-list risk run).
* If ``sample_data/readmission.csv`` exists: the same through the estimator.

Run: ``.venv/bin/python benchmarks/bench_sampler.py``
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from frl_engine.anneal import anneal  # noqa: E402
from frl_engine.model import Hyperparameters, PackedProblem, fit_list  # noqa: E402
from frl_engine.sampler import run_chain, sample_posterior  # noqa: E402
from frl_engine.simulate import PAPER_PROBABILITIES, simulate_rule_list_data  # noqa: E402

READMISSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample_data", "readmission.csv")


def _chain_seconds(problem: PackedProblem, order, n_sweeps: int, seed: int) -> tuple[float, float]:
    """Seconds of ``n_sweeps`` sweeps of one compiled chain, and its Step 3 acceptance rate."""
    fit = fit_list(problem, order)
    args = (problem.rules, problem.y, problem.all_rows, problem.cum_weights, problem.log_weights, problem.consts,
            np.asarray(order, dtype=np.int64), fit.K, np.asarray(fit.gammas, dtype=float))
    run_chain(np.random.default_rng(0), *args, 10, 10, 1, False)  # warm-up: compile or load the cache
    best = np.inf
    acceptance = 0.0
    for repeat in range(3):
        start = time.perf_counter()
        out = run_chain(np.random.default_rng(seed + repeat), *args, 0, n_sweeps, 1, False)
        best = min(best, time.perf_counter() - start)
        acceptance = out[6].sum() / max(out[5].sum(), 1)
    return best, acceptance


def synthetic(n_rows: int = 4601, n_rules: int = 550, seed: int = 0) -> dict:
    data = simulate_rule_list_data(np.random.default_rng(seed), n_rows, n_rules=n_rules, density=0.25,
                                   probabilities=PAPER_PROBABILITIES)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    map_order = anneal(problem, n_steps=5000, n_chains=2, random_state=seed).best.order
    n_sweeps = 10_000
    seconds, acceptance = _chain_seconds(problem, map_order, n_sweeps, seed)
    sample_posterior(problem, n_samples=20, n_chains=4, burn_in=0, start=map_order, random_state=0)  # warm workers
    n_samples = 10_000
    start = time.perf_counter()
    result = sample_posterior(problem, n_samples=n_samples, n_chains=4, burn_in=n_samples, start=map_order,
                              random_state=1)
    wall = time.perf_counter() - start
    total_sweeps = 4 * 2 * n_samples
    return {"rows": n_rows, "rules": n_rules, "map_length": len(map_order),
            "true_list_recovered": tuple(map_order) == data.true_order,
            "one_chain_sweeps": n_sweeps, "one_chain_seconds": seconds, "one_chain_sweeps_per_second": n_sweeps / seconds,
            "one_chain_acceptance": float(acceptance),
            "four_chain_sweeps": total_sweeps, "four_chain_wall_seconds": wall,
            "four_chain_sweeps_per_second_total": total_sweeps / wall,
            "four_chain_sweeps_per_second_per_chain": total_sweeps / 4 / wall,
            "rhat": result.rhat, "ess": result.ess, "acceptance": result.acceptance["all"],
            "map_list_frequency": result.map_list_frequency}


def readmission() -> dict | None:
    if not os.path.exists(READMISSION):
        return None
    import pandas as pd

    from frl_engine.estimator import FallingRuleListClassifier

    frame = pd.read_csv(READMISSION)
    target = "Readmitted30d"
    X, y = frame.drop(columns=[target]), (frame[target] == "yes")
    model = FallingRuleListClassifier(random_state=0, exclude=("PatientID",)).fit(X, y)
    problem = model.problem_
    order = model.map_fit_.order
    n_sweeps = 10_000
    seconds, _ = _chain_seconds(problem, order, n_sweeps, 0)
    n_samples = 5_000
    model.sample_posterior(20, n_chains=4, burn_in=0, random_state=0)
    start = time.perf_counter()
    model.sample_posterior(n_samples, n_chains=4, burn_in=n_samples, random_state=1)
    wall = time.perf_counter() - start
    return {"rows": problem.n_rows, "rules": problem.n_rules, "target": target, "map_length": len(order),
            "one_chain_sweeps_per_second": n_sweeps / seconds, "one_chain_seconds": seconds,
            "four_chain_wall_seconds": wall, "four_chain_sweeps_per_second_total": 4 * 2 * n_samples / wall}


def run() -> dict:
    figures = {"synthetic": synthetic(), "readmission": readmission()}
    s = figures["synthetic"]
    print("Posterior sampler (full sweeps = Steps 1-4 of paper section 3.2)")
    print(f"  synthetic {s['rows']} rows x {s['rules']} rules (density 0.25, planted 5-rule list; MAP length "
          f"{s['map_length']}, planted list recovered: {s['true_list_recovered']})")
    print(f"    one chain, compiled loop: {s['one_chain_sweeps']} sweeps in {s['one_chain_seconds']:.3f} s = "
          f"{s['one_chain_sweeps_per_second']:,.0f} sweeps/s (target: 10,000 sweeps in <= 2 s; "
          f"MH acceptance {s['one_chain_acceptance']:.3f})")
    print(f"    sample_posterior, 4 chains x (10,000 burn-in + 10,000 kept) in parallel processes: "
          f"{s['four_chain_wall_seconds']:.2f} s wall = {s['four_chain_sweeps_per_second_total']:,.0f} sweeps/s total, "
          f"{s['four_chain_sweeps_per_second_per_chain']:,.0f} per chain (wall time includes result assembly)")
    print(f"    R-hat log posterior {s['rhat']['log_posterior']:.3f}, L {s['rhat']['length']:.3f}; "
          f"ESS {s['ess']['log_posterior']:.0f}, {s['ess']['length']:.0f}; MAP list in "
          f"{100 * s['map_list_frequency']:.1f}% of samples")
    r = figures["readmission"]
    if r is None:
        print("  sample_data/readmission.csv not found: skipped")
    else:
        print(f"  readmission.csv ({r['rows']} rows x {r['rules']} candidate rules, target {r['target']!r}, "
              f"MAP length {r['map_length']}): one chain {r['one_chain_sweeps_per_second']:,.0f} sweeps/s; "
              f"4 chains x 10,000 sweeps via the estimator in {r['four_chain_wall_seconds']:.2f} s = "
              f"{r['four_chain_sweeps_per_second_total']:,.0f} sweeps/s total")
    return figures


if __name__ == "__main__":
    run()
