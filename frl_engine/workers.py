"""Engine calls packaged as tasks for :func:`frl_engine.stopping.run_tasks`.

The dashboard runs a fit or a posterior sample in a worker process of its own so
that a Stop button (or a closed tab, or a server shutdown) can end it at once by
killing the process: a compiled annealing or sampling loop cannot be interrupted
from another thread.  The functions live here, in the engine, so that a worker
imports the engine only (not Streamlit).
"""

from __future__ import annotations

__all__ = ["fit", "sample_posterior"]


def fit(shared, estimator):
    """Fit ``estimator`` (unfitted, with its settings) on ``shared = (features, event)``; returns it fitted."""
    features, event = shared
    return estimator.fit(features, event)


def sample_posterior(shared, estimator, options: dict):
    """``estimator.sample_posterior(**options)`` (a fitted estimator with its training problem); returns the sample."""
    del shared
    return estimator.sample_posterior(**options)
