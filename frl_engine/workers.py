"""Engine calls packaged as tasks for :func:`frl_engine.stopping.run_tasks`.

The dashboard runs a fit or a posterior sample in a worker process of its own so
that a Stop button (or a closed tab, or a server shutdown) can end it at once by
killing the process: a compiled annealing or sampling loop cannot be interrupted
from another thread.  The functions live here, in the engine, so that a worker
imports the engine only (not Streamlit).
"""

from __future__ import annotations

__all__ = ["fit", "sample_posterior", "warm_up"]


def fit(shared, estimator):
    """Fit ``estimator`` (unfitted, with its settings) on ``shared = (features, event)``; returns it fitted."""
    features, event = shared
    return estimator.fit(features, event)


def sample_posterior(shared, estimator, options: dict):
    """``estimator.sample_posterior(**options)`` (a fitted estimator with its training problem); returns the sample."""
    del shared
    return estimator.sample_posterior(**options)


def warm_up() -> None:
    """Import the engine and load its compiled kernels (a tiny fit and posterior sample) in a spare worker."""
    import numpy as np
    import pandas as pd

    from .errors import FRLError
    from .estimator import FallingRuleListClassifier

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.normal(size=200),
                          "c": rng.choice(["x", "y", "z"], 200)})
    y = (frame["a"].to_numpy() == 1) ^ (rng.random(200) < 0.2)
    estimator = FallingRuleListClassifier(n_steps=50, n_chains=2, random_state=0).fit(frame, y)
    try:
        estimator.sample_posterior(20, n_chains=2, random_state=0, n_jobs=1)
    except FRLError:
        pass
