"""Long work that can be stopped, and that leaves no worker process behind.

One mechanism serves the command line, the dashboard and every engine module
that runs many fits (cross-validation, external validation, exploration):

* a :class:`CancelToken` -- a flag the caller sets (a Stop button, a closed
  browser tab, Ctrl-C) and the work checks between fits;
* :func:`run_tasks` -- runs ``fn(shared, *task)`` for each task, in this
  process (``n_jobs=1``) or in worker processes of its *own* pool (joblib's
  loky executor; never the shared reusable one, so stopping one job never
  touches another's workers).  While it waits it checks the token; on cancel
  (or on an error, or a signal) it kills its workers at once and raises
  :class:`Stopped`.  Workers run at a lower priority (``nice``) from their
  start (the parent lowers it as soon as they exist, before their imports),
  so a busy machine still answers a web page quickly;
* a process-wide cap on worker processes, :data:`WORKER_SLOTS` (one slot per
  core): a pool takes as many free slots as it may use and waits for one when
  none is free, so two users' jobs share the cores instead of starving each
  other; while a job waits, a pool of several workers gives a slot back after its
  next task (down to one) and takes it again once nobody waits, so a fit started
  beside a long grid waits one task, not the grid.  The results never depend on
  how many workers ran;
* :func:`stop_on_signals` for the command line: SIGINT (Ctrl-C) and SIGTERM
  cancel :data:`PROCESS_TOKEN`, raise :class:`Interrupted` (a KeyboardInterrupt) in the main thread
  (which kills the pools it was waiting on) and, should the main thread be
  busy in compiled code, a watchdog kills every child process and exits
  after :data:`GRACE_SECONDS`.  The CLI then prints ``frl: stopped`` and exits
  with 130 (SIGINT) or 143 (SIGTERM).

Use it like this::

    from frl_engine.stopping import CancelToken, run_tasks

    token = CancelToken()                  # keep it where a Stop button can reach it
    results = run_tasks(fit_one_fold, [(k,) for k in range(5)], shared=(X, y), n_jobs=-1, token=token,
                        on_done=lambda done, total: print(done, "of", total))
    # elsewhere, e.g. from the dashboard's Stop button:  token.cancel("stopped by the user")

``fit_one_fold(shared, k)`` must be a module-level function (it is pickled to
the workers); ``shared`` is sent once per worker, not once per task.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["Stopped", "Interrupted", "CancelToken", "PROCESS_TOKEN", "WorkerSlots", "WORKER_SLOTS", "run_tasks", "stop_on_signals",
           "kill_all_workers", "live_worker_pids", "prestart_spare", "spare_pids", "GRACE_SECONDS", "WORKER_NICE"]

#: After a signal, how long the main thread gets to stop by itself before every child is killed and the process exits.
GRACE_SECONDS = 3.0
#: Priority drop of worker processes (0 = none): the server's own thread and other users' pages come first.
WORKER_NICE = 10
_POLL = 0.1


class Stopped(Exception):
    """The work was stopped on request (Stop button, closed tab, Ctrl-C, SIGTERM); ``reason`` says which."""

    def __init__(self, reason: str = "stopped", signum: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.signum = signum


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by :func:`stop_on_signals` on SIGINT or SIGTERM (``signum`` says which).

    A :class:`KeyboardInterrupt`, so code that already handles Ctrl-C handles it too, and no
    ``except Exception`` swallows it.
    """

    def __init__(self, reason: str = "stopped", signum: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.signum = signum


class CancelToken:
    """A one-way flag: once cancelled it stays cancelled.  Safe to share between threads.

    ``poll`` (optional): a function without arguments asked each time the token is read; when it
    returns True the token cancels itself (reason ``"stopped"``).  It lets a caller that has its
    own stop flag (e.g. a callback) stop :func:`run_tasks` within its 0.1 s check.
    """

    def __init__(self, poll: Callable[[], bool] | None = None):
        self._event = threading.Event()
        self._poll = poll
        self.reason = ""
        self.signum: int | None = None

    def cancel(self, reason: str = "stopped", signum: int | None = None) -> None:
        if not self._event.is_set():
            self.reason, self.signum = reason, signum
        self._event.set()

    @property
    def cancelled(self) -> bool:
        if not self._event.is_set() and self._poll is not None and self._poll():
            self.cancel("stopped")
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Stopped` if the token was cancelled (call it between fits)."""
        if self.cancelled:
            raise Stopped(self.reason or "stopped", self.signum)

    def _clear(self) -> None:  # only for PROCESS_TOKEN, when a new command starts in the same process (tests)
        self._event.clear()
        self.reason, self.signum = "", None

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on cancel; True if cancelled."""
        return self._event.wait(timeout)


#: Set by the command line once it has printed its "stopped" line (the watchdog then prints nothing).
REPORTED = threading.Event()

#: The token of the whole process, cancelled by :func:`stop_on_signals` (and checked by every :func:`run_tasks`).
PROCESS_TOKEN = CancelToken()


class WorkerSlots:
    """A counting cap on worker processes shared by everything in this process (one slot per core by default)."""

    def __init__(self, capacity: int | None = None):
        self.capacity = int(capacity or os.cpu_count() or 1)
        self._free = self.capacity
        self._waiting = 0
        self._cond = threading.Condition()

    @property
    def free(self) -> int:
        with self._cond:
            return self._free

    @property
    def waiting(self) -> int:
        """How many callers are waiting in :meth:`acquire` for a slot (another session's job)."""
        with self._cond:
            return self._waiting

    def try_acquire(self, wanted: int = 1) -> int:
        """Take up to ``wanted`` free slots without waiting, and none while another caller waits for one."""
        with self._cond:
            if self._waiting:
                return 0
            taken = min(max(0, int(wanted)), self._free)
            self._free -= taken
            return taken

    def acquire(self, wanted: int, token: CancelToken | None = None, on_wait: Callable[[], object] | None = None) -> int:
        """Take between 1 and ``wanted`` slots, waiting (cancellably) until at least one is free; returns how many.

        ``on_wait`` is called once when the slots are all busy; if it returns a callable, that is called once
        the slots are taken (a page that said "waiting for a free processor" stops saying it then).
        """
        wanted = max(1, int(wanted))
        waited = None
        try:
            with self._cond:
                if self._free < 1:
                    self._waiting += 1
                    try:
                        while self._free < 1:
                            if token is not None and token.cancelled or PROCESS_TOKEN.cancelled:
                                raise Stopped((token.reason if token is not None and token.cancelled
                                               else PROCESS_TOKEN.reason) or "stopped")
                            if on_wait is not None and waited is None:
                                told = on_wait()
                                waited = told if callable(told) else (lambda: None)
                            self._cond.wait(_POLL)
                    finally:
                        self._waiting -= 1
                taken = min(wanted, self._free)
                self._free -= taken
        finally:
            if waited is not None:  # no longer waiting: slots taken, or stopped while waiting
                waited()
        return taken

    def release(self, n: int) -> None:
        with self._cond:
            self._free = min(self.capacity, self._free + int(n))
            self._cond.notify_all()


#: The process-wide cap (the dashboard server's: all sessions' jobs together use at most one worker per core).
WORKER_SLOTS = WorkerSlots()

_live_pools: set = set()
_live_lock = threading.Lock()
_SHARED: dict = {}


def _lower_priority(pid: int, nice: int) -> None:
    """Set process ``pid``'s (0: this thread's) nice value to at least ``nice`` (lowering a priority needs no rights)."""
    try:
        if os.getpriority(os.PRIO_PROCESS, pid) < nice:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
    except OSError:  # pragma: no cover - gone already, or not allowed here: it runs at normal priority
        pass


def _renice(pool) -> None:
    """Lower the priority of a pool's workers as soon as they exist.

    A new worker spends its first second or two importing pandas, scikit-learn and the engine, before its
    initializer runs: without this, that start-up competed at full priority with the web server (one pool per
    method of a dashboard validation starts two workers each time).
    """
    if WORKER_NICE:
        for pid in _pool_pids(pool):
            _lower_priority(pid, WORKER_NICE)


def _init_worker(nice: int, shared) -> None:
    if nice:
        _lower_priority(0, nice)
    # A worker never reacts to the terminal's Ctrl-C itself: its parent decides and kills it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _SHARED["data"] = shared


def _call_in_worker(fn, args):
    return fn(_SHARED.get("data"), *args)


def _call_with(fn, shared, args):
    return fn(shared, *args)


def _run_warm(warm) -> None:
    warm()


def _thread_env(workers: int) -> dict:
    threads = str(max(1, (os.cpu_count() or 1) // max(workers, 1)))
    return {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


# ---------------------------------------------------------------------------------------------- a warm spare
_spares: list = []  # idle one-worker pools, started (and warmed) ahead of need
_spare_warm: list = []  # the warm-up function of the spares, if any
_spare_lock = threading.Condition()
_spare_making: list = []  # one entry while a spare is being started
#: A single killable task waits this long for a spare that is warming up rather than starting its own worker.
SPARE_WAIT_SECONDS = 10.0


def _new_single_pool():
    from joblib.externals.loky import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=1, initializer=_init_worker, initargs=(WORKER_NICE, None),
                               env=_thread_env(1))


def prestart_spare(warm: Callable | None = None) -> None:
    """Keep one idle worker process ready (in the background), so a single killable task starts at once.

    ``warm`` (a module-level function without arguments) runs in it first, e.g. to import the engine
    and load its compiled kernels.  The dashboard calls this at start-up: a fit or a posterior sample
    then runs in a worker (killable by Stop) without paying the second or two a new process costs.
    """
    with _spare_lock:
        if warm is not None and not _spare_warm:
            _spare_warm.append(warm)
        warm = _spare_warm[0] if _spare_warm else None
        if _spares or _spare_making:
            return
        _spare_making.append(1)

    def make() -> None:
        try:
            _make()
        finally:
            with _spare_lock:
                _spare_making.clear()
                _spare_lock.notify_all()

    def _make() -> None:
        pool = _new_single_pool()
        try:
            if warm is not None:
                future = pool.submit(_call_with, _run_warm, warm, ())
                _renice(pool)
                future.result()
        except Exception:  # noqa: BLE001 - a spare that fails to warm is simply not kept
            _kill_pool(pool)
            return
        with _spare_lock:
            if not _spares and _spare_warm and not PROCESS_TOKEN.cancelled:
                _spares.append(pool)
                return
        pool.shutdown(wait=False)

    threading.Thread(target=make, name="frl-spare-worker", daemon=True).start()


def spare_pids() -> list[int]:
    """Process ids of the idle spare worker(s)."""
    with _spare_lock:
        return [pid for pool in _spares for pid in _pool_pids(pool)]


def _take_spare(token: CancelToken | None = None):
    """An idle spare, waiting (cancellably) for one that is warming up; None if there is none."""
    deadline = time.monotonic() + SPARE_WAIT_SECONDS
    with _spare_lock:
        while not _spares and _spare_making and time.monotonic() < deadline:
            if (token is not None and token.cancelled) or PROCESS_TOKEN.cancelled:
                return None
            _spare_lock.wait(_POLL)
        return _spares.pop() if _spares else None


def _return_spare(pool) -> bool:
    with _spare_lock:
        if not _spares and _spare_warm and not PROCESS_TOKEN.cancelled:
            _spares.append(pool)
            return True
    return False


def _pool_pids(pool) -> list[int]:
    processes = getattr(pool, "_processes", None) or {}
    return [p.pid for p in list(processes.values()) if getattr(p, "pid", None)]


def _kill_pool(pool, futures=()) -> None:
    """Kill a pool's workers now and wait (briefly) until they are gone."""
    pids = _pool_pids(pool)
    del futures  # loky fails the pending futures itself (cancelling them here would race with it)
    manager = getattr(pool, "_executor_manager_thread", None)
    try:
        pool.shutdown(wait=False, kill_workers=True)
    except Exception:  # noqa: BLE001 - a broken pool is being thrown away anyway
        pass
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=2.0)  # loky kills the workers and releases its queues and locks
    _kill_pids(pids)  # whatever is still alive
    with _live_lock:
        _live_pools.discard(pool)


def _kill_pids(pids: Sequence[int], timeout: float = 2.0) -> None:
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=timeout)


def live_worker_pids() -> list[int]:
    """Process ids of the workers of every pool still running in this process."""
    with _live_lock:
        pools = list(_live_pools)
    return [pid for pool in pools for pid in _pool_pids(pool)]


def kill_all_workers() -> None:
    """Kill every pool :func:`run_tasks` started in this process, and the idle spare (server shutdown, CLI)."""
    with _live_lock:
        pools = list(_live_pools)
    with _spare_lock:
        pools += _spares
        _spares.clear()
        _spare_warm.clear()  # no new spare after this
    for pool in pools:
        _kill_pool(pool)


def _effective_jobs(n_jobs: int | None, n_tasks: int) -> int:
    cpus = os.cpu_count() or 1
    if n_jobs is None:
        n_jobs = 1
    elif n_jobs < 0:
        n_jobs = max(cpus + 1 + n_jobs, 1)
    return max(1, min(int(n_jobs), n_tasks))


def _reason(token: CancelToken | None) -> Stopped:
    source = token if token is not None and token.cancelled else PROCESS_TOKEN
    return Stopped(source.reason or "stopped", source.signum)


def run_tasks(fn: Callable, tasks: Iterable[Sequence], *, shared: Any = None, n_jobs: int | None = 1,
              token: CancelToken | None = None, on_done: Callable[[int, int], None] | None = None,
              processes: bool | None = None, on_wait: Callable[[], object] | None = None,
              slots: WorkerSlots | None = None, on_result: Callable[[int, Any], None] | None = None) -> list:
    """``[fn(shared, *task) for task in tasks]``, stoppable, optionally in worker processes.

    Parameters
    ----------
    fn : callable
        A module-level function ``fn(shared, *task)``; it must not rely on state of this process.
    tasks : iterable of tuples
        The arguments of each call; give the slowest first so the workers stay busy.
    shared : object
        Sent once to each worker (e.g. the data table) and passed as ``fn``'s first argument.
    n_jobs : int or None
        Worker processes (None or 1: in this process, one task after the other; -1: one per core).
        Fewer run when :data:`WORKER_SLOTS` has fewer free slots; the results do not depend on it.
    token : CancelToken, optional
        Checked between tasks and every 0.1 s while waiting; :data:`PROCESS_TOKEN` is always checked too.
    on_done : callable, optional
        ``on_done(done, total)`` in this process after each finished task (in completion order).
    processes : bool, optional
        Force worker processes even for one worker (True), e.g. for one long fit that must be killable.
    on_wait : callable, optional
        Called once if the work has to wait for a free worker slot; a callable it returns is called when
        the slots are taken (:meth:`WorkerSlots.acquire`).
    slots : WorkerSlots, optional
        The cap to take workers from (default :data:`WORKER_SLOTS`, the process-wide one).
    on_result : callable, optional
        ``on_result(index, result)`` in this process after each finished task (before ``on_done``),
        ``index`` being the task's position in ``tasks``: partial results and per-task progress.

    Returns
    -------
    list
        The results in the order of ``tasks``.

    Raises
    ------
    Stopped
        The token (or a signal) stopped the work; every worker of this call is dead when it is raised.
    Exception
        The first exception a task raised (the other tasks are stopped and their workers killed).
    """
    tasks = [tuple(t) for t in tasks]
    total = len(tasks)
    if total == 0:
        return []
    slots = slots or WORKER_SLOTS
    wanted = _effective_jobs(n_jobs, total)
    use_processes = processes if processes is not None else wanted > 1

    def stopped() -> bool:
        return (token is not None and token.cancelled) or PROCESS_TOKEN.cancelled

    if not use_processes:
        results = []
        taken = slots.acquire(1, token, on_wait)
        try:
            for done, task in enumerate(tasks, start=1):
                if stopped():
                    raise _reason(token)
                results.append(fn(shared, *task))
                if on_result is not None:
                    on_result(done - 1, results[-1])
                if on_done is not None:
                    on_done(done, total)
        finally:
            slots.release(taken)
        return results

    from joblib.externals.loky import ProcessPoolExecutor

    taken = slots.acquire(wanted, token, on_wait)
    pool = None
    futures: dict = {}
    clean = False
    spare = None
    try:
        if stopped():
            raise _reason(token)
        if taken == 1:
            spare = _take_spare(token)
        if spare is not None:  # a warm idle worker: the shared data goes with the task
            pool = spare
            prestart_spare()  # the next one warms up meanwhile
        else:
            pool = ProcessPoolExecutor(max_workers=taken, initializer=_init_worker, initargs=(WORKER_NICE, shared),
                                       env=_thread_env(taken))
        with _live_lock:
            _live_pools.add(pool)
        # At most one task per worker is handed to the pool at a time: the pool then holds no queue of
        # waiting tasks, so killing it is immediate and clean.
        queue_of_tasks = iter(enumerate(tasks))
        results: list = [None] * total
        pending = set()
        done_count = 0

        def submit_next() -> bool:
            item = next(queue_of_tasks, None)
            if item is not None:
                future = (pool.submit(_call_with, fn, shared, item[1]) if spare is not None
                          else pool.submit(_call_in_worker, fn, item[1]))
                futures[future] = item[0]
                pending.add(future)
            return item is not None

        workers = taken   # the pool's size; ``taken`` (the slots held) may fall below it while others wait
        for _ in range(taken):
            submit_next()
        _renice(pool)  # the workers exist now (they start with the first submit): lower their priority at once
        while pending:
            finished, _ = cf.wait(pending, timeout=_POLL, return_when=cf.FIRST_COMPLETED)
            for future in finished:
                pending.discard(future)
                results[futures[future]] = future.result()  # re-raises a task's exception
                done_count += 1
                if on_result is not None:
                    on_result(futures[future], results[futures[future]])
                if on_done is not None:
                    on_done(done_count, total)
                if not stopped():
                    # Take turns: while another job waits for a slot, a pool of several gives one back after a
                    # task (its worker idles), down to one; once nobody waits, it takes free slots back.
                    if taken > 1 and slots.waiting:
                        slots.release(1)
                        taken -= 1
                    elif taken < workers:
                        taken += slots.try_acquire(workers - taken)
                    while len(pending) < taken and submit_next():
                        pass
            if stopped():
                raise _reason(token)
        clean = True
        return results
    finally:
        if pool is not None:
            if clean:
                with _live_lock:
                    _live_pools.discard(pool)
                if not (spare is not None and _return_spare(pool)):
                    pool.shutdown(wait=True)
            else:
                _kill_pool(pool, futures)
        slots.release(taken)


# ---------------------------------------------------------------------------------------------- command line
def _children_pids() -> list[int]:
    """Child processes, except loky's resource tracker (it cleans up shared memory and exits with us)."""
    try:
        import psutil

        pids = []
        for child in psutil.Process().children(recursive=True):
            try:
                if any("resource_tracker" in part for part in child.cmdline()):
                    continue
            except psutil.Error:
                continue
            pids.append(child.pid)
        return pids
    except Exception:  # noqa: BLE001
        return []


def kill_children() -> None:
    """Kill every child process of this process (joblib's, ours, anyone's)."""
    kill_all_workers()
    _kill_pids(_children_pids())


@contextmanager
def stop_on_signals(message: str = "frl: stopped", stream=None):
    """While inside: SIGINT and SIGTERM stop the work (see the module docstring); restores the handlers after.

    The main thread gets :class:`Interrupted` raised at once (which kills the pools it waits on); a watcher
    thread, woken by the signal itself even when the main thread is busy in compiled code, kills every
    child process and exits with ``128 + signal`` if the main thread has not finished
    :data:`GRACE_SECONDS` later.  Only the main thread can install signal handlers; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield PROCESS_TOKEN
        return
    stream = stream or sys.stderr
    PROCESS_TOKEN._clear()
    REPORTED.clear()
    previous = {}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    finished = threading.Event()

    def on_signal(signum: int) -> None:
        PROCESS_TOKEN.cancel(f"stopped by {signal.Signals(signum).name}", signum)
        if finished.wait(GRACE_SECONDS):
            return
        # Still running (busy in compiled code, or the interpreter waiting for threads that are
        # still computing at exit): end it now.
        kill_children()
        try:
            if not REPORTED.is_set():
                print(message, file=stream, flush=True)
        finally:
            os._exit(128 + signum)

    def watcher() -> None:
        try:
            while True:
                data = os.read(read_fd, 1)
                if not data or finished.is_set():
                    return
                if data[0] in (signal.SIGINT, signal.SIGTERM):
                    break
        except OSError:
            return
        finally:
            os.close(read_fd)
        on_signal(data[0])

    def handler(signum, frame):  # noqa: ARG001
        if PROCESS_TOKEN.cancelled and PROCESS_TOKEN.signum is not None and getattr(handler, "raised", False):
            return  # a second signal: the watcher is already counting down
        handler.raised = True
        PROCESS_TOKEN.cancel(f"stopped by {signal.Signals(signum).name}", signum)
        raise Interrupted(f"stopped by {signal.Signals(signum).name}", signum)

    old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=watcher, name="frl-stop-watcher", daemon=True).start()
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handler)
    try:
        yield PROCESS_TOKEN
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        signal.set_wakeup_fd(old_wakeup)
        if not PROCESS_TOKEN.cancelled:
            finished.set()  # a signal keeps the watcher armed: the process must end within the grace time
        os.close(write_fd)  # wakes the watcher with end-of-file (it ignores that once it is counting down)
