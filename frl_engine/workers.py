"""Engine calls packaged as tasks for :func:`frl_engine.stopping.run_tasks`.

The dashboard runs a fit or a posterior sample in a worker process of its own so
that a Stop button (or a closed tab, or a server shutdown) can end it at once by
killing the process: a compiled annealing or sampling loop cannot be interrupted
from another thread.  The functions live here, in the engine, so that a worker
imports the engine only (not Streamlit).

What the engine says it is doing (``progress=``: "searching 5,000 candidate rules: chains 5 to 8") comes
back from the worker through a :class:`ProgressRelay`: one line of text in a small file of the system's
temporary folder, written by the worker and read by the page, and removed when the job ends.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["ProgressRelay", "fit", "sample_posterior", "warm_up"]


class ProgressRelay:
    """One line of progress text passed from a worker process to the process that waits for it.

    Call it with the text (it is the engine's ``progress`` callable, pickled to the worker with the task);
    :meth:`read` returns the latest line, "" before the first.  The text is written whole to a file beside
    the relay's and moved over it, so a reader never sees half a line; a write or read that fails (the file
    removed under it) is ignored: progress text is never worth failing the work for.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        if path is None:
            handle, path = tempfile.mkstemp(prefix="frl-progress-", suffix=".txt")
            os.close(handle)
        self.path = str(path)

    def __call__(self, text: str) -> None:
        part = f"{self.path}.{os.getpid()}.part"
        try:
            Path(part).write_text(str(text), encoding="utf-8")
            os.replace(part, self.path)
        except OSError:
            pass

    def read(self) -> str:
        try:
            return Path(self.path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return ""

    def clear(self) -> None:
        """Forget the last line (a new stage of the work starts)."""
        self("")

    def remove(self) -> None:
        """Delete the file (the work is over)."""
        try:
            os.remove(self.path)
        except OSError:
            pass


def fit(shared, estimator, progress=None):
    """Fit ``estimator`` (unfitted, with its settings) on ``shared = (features, event)``; returns it fitted.
    ``progress`` (e.g. a :class:`ProgressRelay`) is told what the fit is doing."""
    features, event = shared
    return estimator.fit(features, event, progress=progress)


def sample_posterior(shared, estimator, options: dict, progress=None):
    """``estimator.sample_posterior(**options)`` (a fitted estimator with its training problem); returns the sample.
    ``progress`` (e.g. a :class:`ProgressRelay`) is told as each attempt of the schedule starts."""
    del shared
    return estimator.sample_posterior(**options, progress=progress)


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
