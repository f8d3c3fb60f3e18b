"""Compile the engine's numba kernels once, into their on-disk cache.

The annealing, the exact MAP solver and the posterior sampler are compiled
with numba (``cache=True``).  The first call after an install compiles them,
which takes tens of seconds; every later process loads them from the cache in
a fraction of a second.  ``make run`` and ``make test`` run this module right
after installing, so that neither the first fit in the dashboard nor the first
posterior sample makes a clinician wait.

    python -m frl_engine.warmup
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd


def warm_up() -> float:
    """Fit and sample a tiny problem through every compiled path; return the seconds it took."""
    from frl_engine import FallingRuleListClassifier
    from frl_engine.row_order import take_rows

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.random(300) < 0.4, "b": rng.normal(size=300), "c": rng.choice(["x", "y"], 300)})
    y = (frame["a"].to_numpy() & (rng.random(300) < 0.8)) | (rng.random(300) < 0.1)
    model = FallingRuleListClassifier(n_steps=200, n_chains=1, random_state=0).fit(frame, y)
    model.sample_posterior(50, n_chains=1, random_state=0, n_jobs=1, extend=False)
    # From row_order.MIN_ROWS rows the search re-packs the rows (frl_engine.row_order): its one kernel too.
    take_rows(model.problem_, np.arange(model.problem_.n_rows)[::-1].copy())
    return time.perf_counter() - started


def main() -> int:
    seconds = warm_up()
    print(f"frl_engine: compiled kernels ready ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
