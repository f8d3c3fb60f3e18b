"""Long work (annealing, posterior sampling, cross-validation) on a background thread.

A Streamlit script run must finish quickly for the page to stay responsive, and
a rerun (any widget change) would abort a fit running inside it.  So a fit runs
in a :class:`Job`: a daemon thread that calls :mod:`dashboard.services` and
reports its progress and results through this small, lock-protected object.
The job lives in the session state; the page polls it from a fragment
(:func:`dashboard.ui.job_progress`) and the script thread -- never the worker --
moves finished results into the session state (:func:`dashboard.state.collect_jobs`).

Nothing here imports Streamlit (or, at import time, the engine), so it is unit-tested
without it and the first page can be drawn before the engine is loaded.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("frl_dashboard")

#: Shown for any error that is not one of the engine's user-facing FRLErrors.
GENERIC_ERROR = ("Something went wrong on our side and the work stopped. Your earlier results are kept; "
                 "try again, or change the settings. (The details are in the server log.)")


class Job:
    """One piece of background work with named stages.

    Parameters
    ----------
    kind : str
        Which slot of the session it occupies (``"fit"``, ``"validation"``).
    label : str
        What it does, for the progress text ("Fitting the list").
    stages : sequence of str
        The stages it goes through, in order; progress is ``stage / len(stages)``.
    meta : dict
        Anything the collector needs to know (where the fit came from...).
    """

    def __init__(self, kind: str, label: str, stages: Sequence[str], meta: dict | None = None):
        self.id = uuid.uuid4().hex[:12]
        self.kind = kind
        self.label = label
        self.stages = tuple(stages)
        self.meta = dict(meta or {})
        self.started = time.monotonic()
        self.finished: float | None = None
        self._lock = threading.Lock()
        self._stage = 0
        self._fraction = 0.0
        self._detail = ""
        self._stage_started = self.started
        self._results: list[Any] = []
        self.error: str | None = None
        self.error_detail: str | None = None
        self.thread: threading.Thread | None = None

    # ---- called by the worker
    def stage(self, index: int, detail: str = "") -> None:
        """Enter stage ``index`` (0-based)."""
        with self._lock:
            self._stage = max(0, min(int(index), len(self.stages)))
            self._fraction = 0.0
            self._detail = detail
            self._stage_started = time.monotonic()

    def advance(self, fraction: float, detail: str = "") -> None:
        """How far the current stage is (0 to 1), for a bar that moves within a long stage."""
        with self._lock:
            self._fraction = max(0.0, min(float(fraction), 1.0))
            if detail:
                self._detail = detail

    def publish(self, result: Any) -> None:
        """Hand a (partial or final) result to the page; the latest one wins."""
        with self._lock:
            self._results.append(result)

    # ---- read by the page
    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def version(self) -> int:
        """How many results were published so far."""
        with self._lock:
            return len(self._results)

    def latest(self) -> Any:
        with self._lock:
            return self._results[-1] if self._results else None

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def progress(self) -> tuple[float, str]:
        """``(fraction done, one-line text)`` for a progress bar."""
        with self._lock:
            stage, fraction, detail = self._stage, self._fraction, self._detail
        if self.done:
            return 1.0, f"{self.label}: {'failed' if self.failed else 'done'} in {self.elapsed():.1f} s"
        n = max(len(self.stages), 1)
        name = self.stages[stage] if stage < len(self.stages) else "Finishing"
        text = f"{self.label} · step {min(stage + 1, n)} of {n}: {name}"
        if detail:
            text += f" ({detail})"
        text += f" · {self.elapsed():.0f} s"
        return min((stage + fraction) / n, 0.99), text


def start(job: Job, work: Callable[[Job], Any]) -> Job:
    """Run ``work(job)`` on a daemon thread; its return value is published last.

    An :class:`~frl_engine.errors.FRLError` becomes ``job.error`` verbatim (it is
    written for the user); anything else becomes :data:`GENERIC_ERROR`, with the
    traceback logged on the server, never shown on the page.
    """

    from frl_engine.errors import FRLError

    def run() -> None:
        try:
            result = work(job)
            if result is not None:
                job.publish(result)
        except FRLError as exc:
            job.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a background failure must never reach the page as a traceback
            log.error("Background job %s (%s) failed:\n%s", job.id, job.label, traceback.format_exc())
            job.error = GENERIC_ERROR
            job.error_detail = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        finally:
            job.finished = time.monotonic()

    job.thread = threading.Thread(target=run, name=f"frl-{job.kind}-{job.id}", daemon=True)
    job.thread.start()
    return job


def wait(job: Job, timeout: float = 120.0) -> bool:
    """Block until the job is finished (tests and scripts); True if it finished in time."""
    if job.thread is not None:
        job.thread.join(timeout)
    return job.done
