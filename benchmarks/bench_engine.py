"""Speed and memory of the MAP search (issue: engine).

* 5000 annealing steps on data the size of the paper's Spambase run (4601 rows,
  550 candidate rules, rule density 0.25, a planted 5-rule list), after warm-up,
  and the ratio to 5000 calls of the bare bit-vector capture-count kernel for a
  list of the same length (the physical floor: the search cannot count faster).
* The same at 100,000 rows x 500 rules, and the peak memory of a whole
  ``fit`` from a boolean frame (measured in a fresh process) against
  3 x (packed rule matrix + input frame).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numba
import numpy as np
import pandas as pd

from frl_engine.anneal import anneal
from frl_engine.bits import capture_counts_from
from frl_engine.model import Hyperparameters, PackedProblem
from frl_engine.simulate import simulate_rule_list_data


@numba.njit(nogil=True)
def bare_kernel(rules, y, all_rows, order, n_calls):
    """``n_calls`` full capture counts of one list: no objective, no moves."""
    length = order.shape[0]
    remaining = np.empty((length + 1, rules.shape[1]), dtype=np.uint64)
    n_cap = np.zeros(length + 1)
    n_pos = np.zeros(length + 1)
    total = 0.0
    for _ in range(n_calls):
        remaining[0] = all_rows
        capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
        total += n_cap[0]
    return total


def _best_of(function, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def annealing_speed(n_rows: int, n_rules: int, n_steps: int = 5000, seed: int = 0) -> dict:
    data = simulate_rule_list_data(np.random.default_rng(seed), n_rows, n_rules=n_rules)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    anneal(problem, n_steps=50, random_state=0)  # warm-up (compile or load the cache)
    result = anneal(problem, n_steps=n_steps, random_state=1)
    # the annealing kernel alone: one chain of the paper's plain annealing (no polish, no restarts)
    seconds = _best_of(lambda: anneal(problem, n_steps=n_steps, random_state=1, polish=False))
    # the default search of one chain per round: greedy start, polish, basin hopping, restarts until two agree
    search = _best_of(lambda: anneal(problem, n_steps=n_steps, random_state=1), repeats=3)
    order = np.asarray(result.best.order, dtype=np.int64)
    bare_kernel(problem.rules, problem.y, problem.all_rows, order, 10)
    bare = _best_of(lambda: bare_kernel(problem.rules, problem.y, problem.all_rows, order, n_steps))
    return {"rows": n_rows, "rules": n_rules, "steps": n_steps, "list_length": len(order),
            "anneal_seconds": seconds, "search_seconds": search, "chains": len(result.chain_values),
            "bare_kernel_seconds": bare, "ratio_to_bare_kernel": seconds / bare}


_MEMORY_PROBE = r"""
import json, resource, sys
import numpy as np, pandas as pd
from frl_engine import FallingRuleListClassifier
from frl_engine.simulate import simulate_rule_list_data
n_rows, n_rules = int(sys.argv[1]), int(sys.argv[2])
FallingRuleListClassifier(mine_rules=False, n_steps=10, n_chains=1).fit(pd.DataFrame({"a": [True, False] * 5}), [0, 1] * 5)
data = simulate_rule_list_data(np.random.default_rng(0), n_rows, n_rules=n_rules)
frame = pd.DataFrame(data.coverage, columns=[f"rule{j}" for j in range(n_rules)])
y = data.y
del data
frame_bytes = int(frame.memory_usage(index=False, deep=True).sum())
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")   # reset the peak (VmHWM) to the current resident size
current = status("VmRSS")
model = FallingRuleListClassifier(mine_rules=False, n_steps=5000, n_chains=1, random_state=0).fit(frame, y)
peak = status("VmHWM")
print(json.dumps({"frame_bytes": frame_bytes, "packed_bytes": int(model.problem_.rules.nbytes),
                  "rss_before_fit": current, "peak_rss": peak, "fit_extra": peak - current}))
"""


def fit_memory(n_rows: int = 100_000, n_rules: int = 500) -> dict:
    """Peak resident memory of ``fit`` above what the process held just before it."""
    out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(n_rows), str(n_rules)], capture_output=True,
                         text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    budget = 3 * (figures["packed_bytes"] + figures["frame_bytes"])
    figures["budget_3x"] = budget
    figures["fit_extra_over_packed_plus_frame"] = figures["fit_extra"] / (figures["packed_bytes"] + figures["frame_bytes"])
    return figures


def fit_overhead(n_rows: int = 4601, n_rules: int = 550, repeats: int = 30) -> dict:
    """A whole estimator fit on boolean rules (mine_rules=False), and the part of it spent in the search.

    The search is timed inside each fit (the estimator's ``_search_list``, wrapped), so the share
    outside it is measured on the same calls; medians over ``repeats`` fits.
    """
    from frl_engine.estimator import FallingRuleListClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((n_rows, n_rules)) < 0.25, columns=[f"rule{j}" for j in range(n_rules)])
    y = rng.random(n_rows) < 0.3
    model = FallingRuleListClassifier(mine_rules=False, random_state=0).fit(X, y)  # warm-up
    search_list = FallingRuleListClassifier._search_list
    spent = []

    def timed(self, candidates, event, *args, **kwargs):
        started = time.perf_counter()
        out = search_list(self, candidates, event, *args, **kwargs)
        spent.append(time.perf_counter() - started)
        return out

    whole, search = [], []
    FallingRuleListClassifier._search_list = timed
    try:
        for _ in range(repeats):
            started = time.perf_counter()
            model.fit(X, y)
            whole.append(time.perf_counter() - started)
            search.append(spent[-1])
    finally:
        FallingRuleListClassifier._search_list = search_list
    outside = np.asarray(whole) - np.asarray(search)
    return {"fit_seconds": float(np.median(whole)), "search_seconds": float(np.median(search)),
            "outside_share": float(np.median(outside / np.asarray(whole)))}


def run() -> dict:
    overhead = fit_overhead()
    print(f"Whole fit on 4601 x 550 boolean rules (defaults, mine_rules=False): {1000 * overhead['fit_seconds']:.1f} ms, "
          f"of which the search {1000 * overhead['search_seconds']:.1f} ms; outside the search "
          f"{100 * overhead['outside_share']:.0f}% (target <= 10%)")
    spam = annealing_speed(4601, 550)
    big = annealing_speed(100_000, 500)
    memory = fit_memory()
    mb = 1 / 2**20
    print("Annealing kernel (5000 steps of the paper's plain annealing, one chain, best of 5 after warm-up), "
          "and the default search (anneal(n_chains=1): polish, basin hopping, rounds until two chains agree)")
    for row in (spam, big):
        print(f"  {row['rows']:>7} rows x {row['rules']} rules: {row['anneal_seconds']:.3f} s "
              f"(list length {row['list_length']}); bare capture kernel x5000: {row['bare_kernel_seconds']:.4f} s; "
              f"ratio {row['ratio_to_bare_kernel']:.1f}; default search {row['search_seconds']:.3f} s "
              f"({row['chains']} chains)")
    print(f"  paper (Spambase, 5000 steps): 102 s -> speed-up x{102 / spam['anneal_seconds']:.0f}")
    print(f"Memory of fit on 100,000 x 500 boolean frame: input frame {memory['frame_bytes'] * mb:.1f} MiB, "
          f"packed rules {memory['packed_bytes'] * mb:.1f} MiB, fit's extra peak {memory['fit_extra'] * mb:.1f} MiB "
          f"= {memory['fit_extra_over_packed_plus_frame']:.2f} x (packed + frame); budget 3 x = {memory['budget_3x'] * mb:.1f} MiB")
    return {"spambase_size": spam, "large": big, "memory": memory}


if __name__ == "__main__":
    run()
