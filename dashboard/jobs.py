"""Long work (annealing, posterior sampling, cross-validation) on a background thread.

A Streamlit script run must finish quickly for the page to stay responsive, and
a rerun (any widget change) would abort a fit running inside it.  So a fit runs
in a :class:`Job`: a daemon thread that calls :mod:`dashboard.services` and
reports its progress and results through this small, lock-protected object.
The job lives in the session state; the page polls it from a fragment
(:func:`dashboard.ui.job_progress`) and the script thread -- never the worker --
moves finished results into the session state (:func:`dashboard.state.collect_jobs`).

Stopping: every job has a :class:`~frl_engine.stopping.CancelToken` (``job.token``) that
the work passes to the engine, whose heavy parts run in worker processes
(:func:`frl_engine.stopping.run_tasks`) that are killed on cancel.  A job ends by
``job.stop()`` (the Stop button), when its browser session has been gone for
:data:`SESSION_GRACE_SECONDS` (a closed tab; checked by one watcher thread per
server, :func:`watch_sessions`), and when the server shuts down (SIGTERM).  All
sessions' jobs together run at most one worker per core
(:data:`frl_engine.stopping.WORKER_SLOTS`); a job that has to wait for a free
worker says so in its progress text.

Nothing here imports Streamlit at import time (or the engine's heavy parts), so it is
unit-tested without it and the first page can be drawn before the engine is loaded.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from frl_engine.stopping import CancelToken, Stopped, kill_all_workers

log = logging.getLogger("frl_dashboard")

#: A job whose browser session has been disconnected this long is stopped (a dropped connection that comes back
#: within it keeps its session; a reload starts a new one, which the page asks the browser to confirm first).
SESSION_GRACE_SECONDS = 2.0
WATCH_SECONDS = 0.5
STOPPED_TEXT = "Stopped."

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
        self.token = CancelToken()
        self.stopped = False  # ended by stop() before it finished
        self.session_id: str | None = None  # the Streamlit session that started it (None outside a server)
        self.waiting = False  # waiting for a free worker slot
        self.published: float | None = None  # when the latest result was published
        self._relay = None  # a ProgressRelay: what the engine in a worker process says it is doing

    def quiet_seconds(self) -> float:
        """Seconds since the job started or last published a result (the page polls quickly just after either)."""
        return time.monotonic() - max(self.started, self.published or self.started)

    # ---- called by the page (Stop button), the session watcher, the server's shutdown
    def stop(self, reason: str = "stopped by the user") -> None:
        """Ask the job to end now: its worker processes are killed within a second or so."""
        if not self.done:
            self.token.cancel(reason)
            flag = self.meta.get("stop")  # a job that polls its own stop flag (the Explore page's) stops too
            if isinstance(flag, threading.Event):
                flag.set()

    def wait_for_worker(self):
        """Called by the engine when all worker slots are busy (another session's job): shown in the progress.
        Returns what the engine calls once it has its slots (:meth:`frl_engine.stopping.WorkerSlots.acquire`)."""
        with self._lock:
            self.waiting = True
        return self._got_worker

    def _got_worker(self) -> None:
        with self._lock:
            self.waiting = False

    # ---- called by the worker
    def relay(self):
        """The :class:`frl_engine.workers.ProgressRelay` to hand the engine in a worker process as its ``progress``:
        its latest line replaces the stage's detail in :meth:`progress` (made on first use, removed when the job
        ends)."""
        from frl_engine.workers import ProgressRelay

        with self._lock:
            if self._relay is None:
                self._relay = ProgressRelay()
            return self._relay

    def close_relay(self) -> None:
        with self._lock:
            relay, self._relay = self._relay, None
        if relay is not None:
            relay.remove()

    def stage(self, index: int, detail: str = "") -> None:
        """Enter stage ``index`` (0-based); the engine's last line of the stage before is forgotten."""
        with self._lock:
            self._stage = max(0, min(int(index), len(self.stages)))
            self._fraction = 0.0
            self._detail = detail
            self._stage_started = time.monotonic()
            relay = self._relay
        if relay is not None:
            relay.clear()

    def advance(self, fraction: float, detail: str = "") -> None:
        """How far the current stage is (0 to 1), for a bar that moves within a long stage."""
        with self._lock:
            self.waiting = False
            self._fraction = max(0.0, min(float(fraction), 1.0))
            if detail:
                self._detail = detail

    def publish(self, result: Any) -> None:
        """Hand a (partial or final) result to the page; the latest one wins."""
        with self._lock:
            self._results.append(result)
            self.published = time.monotonic()

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
            stage, fraction, detail, relay = self._stage, self._fraction, self._detail, self._relay
        said = relay.read() if relay is not None and not self.done else ""
        if self.done:
            outcome = "stopped" if self.stopped else ("failed" if self.failed else "done")
            return 1.0, f"{self.label}: {outcome} after {self.elapsed():.1f} s"
        if self.token.cancelled:
            return min((stage + fraction) / max(len(self.stages), 1), 0.99), f"{self.label} · stopping…"
        n = max(len(self.stages), 1)
        name = self.stages[stage] if stage < len(self.stages) else "Finishing"
        text = f"{self.label} · step {min(stage + 1, n)} of {n}: {name}"
        if said:   # the engine's own words, once it has said something, in place of the stage's settings
            text += f" · {said}"
        elif detail:
            text += f" ({detail})"
        if self.waiting:
            text += " · waiting for a free processor (another analysis is running on this server)"
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
            job.token.check()  # stopped at the very end: its result is not wanted either
            if result is not None:
                job.publish(result)
        except Stopped:
            job.stopped = True
        except FRLError as exc:
            if job.token.cancelled:
                job.stopped = True
            else:
                job.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a background failure must never reach the page as a traceback
            if job.token.cancelled:  # e.g. a worker killed under a pool that was being stopped
                job.stopped = True
                return
            log.error("Background job %s (%s) failed:\n%s", job.id, job.label, traceback.format_exc())
            job.error = GENERIC_ERROR
            job.error_detail = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        finally:
            job.close_relay()
            job.finished = time.monotonic()
            with _registry_lock:
                _running.discard(job)

    if job.session_id is None:
        job.session_id = _current_session_id()
    with _registry_lock:
        _running.add(job)
    if job.session_id is not None:
        watch_sessions()
    job.thread = threading.Thread(target=run, name=f"frl-{job.kind}-{job.id}", daemon=True)
    job.thread.start()
    return job


# ---------------------------------------------------------------------------------------------- the watcher
_running: "weakref.WeakSet[Job]" = weakref.WeakSet()
_registry_lock = threading.Lock()
_watcher: threading.Thread | None = None
_watcher_lock = threading.Lock()


def running_jobs() -> list[Job]:
    """Every job of this server that has not finished (all sessions)."""
    with _registry_lock:
        return [job for job in _running if not job.done]


def stop_all(reason: str = "the server is shutting down") -> None:
    """Stop every job of this server and kill every worker process (server shutdown)."""
    for job in running_jobs():
        job.stop(reason)
    kill_all_workers()


def _current_session_id() -> str | None:
    """The Streamlit session of the calling script thread, or None (tests, scripts, bare mode)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        return ctx.session_id if ctx is not None else None
    except Exception:  # noqa: BLE001
        return None


def _runtime():
    try:
        from streamlit.runtime import Runtime

        return Runtime.instance() if Runtime.exists() else None
    except Exception:  # noqa: BLE001 - no Streamlit server here (tests, scripts)
        return None


def _watch() -> None:
    gone_since: dict[str, float] = {}
    while True:
        time.sleep(WATCH_SECONDS)
        runtime = _runtime()
        if runtime is None:
            continue
        try:
            stopping = runtime.state.name in ("STOPPING", "STOPPED")
        except Exception:  # noqa: BLE001
            stopping = False
        if stopping:
            stop_all()
            continue
        now = time.monotonic()
        for job in running_jobs():
            sid = job.session_id
            if sid is None:
                continue
            if runtime.is_active_session(sid):
                gone_since.pop(sid, None)
            elif now - gone_since.setdefault(sid, now) >= SESSION_GRACE_SECONDS:
                log.info("Session %s is gone: stopping its job %s (%s)", sid, job.id, job.label)
                job.stop("the browser tab was closed")


def watch_sessions() -> None:
    """Start (once per server process) the thread that stops the jobs of closed sessions and of a stopping server."""
    global _watcher
    with _watcher_lock:
        if _watcher is not None and _watcher.is_alive():
            return
        _watcher = threading.Thread(target=_watch, name="frl-job-watcher", daemon=True)
        _watcher.start()
        # At interpreter exit, before Python joins the worker pools' threads: stop the jobs, kill the workers.
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            try:
                register(stop_all)
            except RuntimeError:  # already shutting down
                pass


def wait(job: Job, timeout: float = 120.0) -> bool:
    """Block until the job is finished (tests and scripts); True if it finished in time."""
    if job.thread is not None:
        job.thread.join(timeout)
    return job.done
