"""Long work that can be stopped: frl_engine.stopping, and the command line under Ctrl-C and SIGTERM.

Every test that stops work checks with psutil that no worker process is left.  The
time limits below are liveness guards (a hang fails instead of blocking the suite),
not speed claims: the stop times are printed by the CLI test and measured in
benchmarks.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest

from frl_engine.stopping import CancelToken, Stopped, WorkerSlots, live_worker_pids, run_tasks

ROOT = Path(__file__).resolve().parents[1]
FRL = str(Path(sys.executable).parent / "frl")


def square_plus(shared, x):
    return x * x + shared


def sleep_then(shared, seconds):
    time.sleep(seconds)
    return os.getpid()


def own_priority(shared, _):
    return os.getpriority(os.PRIO_PROCESS, 0)


def fail_on(shared, x):
    if x == shared:
        raise ValueError(f"task {x} failed")
    time.sleep(0.2 if x != shared else 0)
    return x


def alive(pids):
    out = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def wait_for(condition, timeout=60.0, every=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not reached in time")


def test_results_in_task_order_in_process_and_in_workers():
    tasks = [(x,) for x in range(7)]
    expected = [x * x + 10 for x in range(7)]
    seen = []
    assert run_tasks(square_plus, tasks, shared=10, n_jobs=1, on_done=lambda d, t: seen.append((d, t))) == expected
    assert seen == [(d, 7) for d in range(1, 8)]
    assert run_tasks(square_plus, tasks, shared=10, n_jobs=2) == expected
    assert run_tasks(square_plus, tasks[:1], shared=10, processes=True) == expected[:1]
    assert live_worker_pids() == []  # pools that finished are shut down


def test_workers_run_at_the_lower_priority_and_report_each_result_with_its_task():
    from frl_engine.stopping import WORKER_NICE

    seen = []
    niceness = run_tasks(own_priority, [(i,) for i in range(4)], n_jobs=2,
                         on_result=lambda index, value: seen.append(index))
    expected = min(19, max(WORKER_NICE, os.getpriority(os.PRIO_PROCESS, 0)))
    assert niceness == [expected] * 4  # set once (not stacked on top of the start-up renice)
    assert sorted(seen) == [0, 1, 2, 3]
    # A token that polls the caller's own stop flag stops the run like a cancelled one.
    flag = threading.Event()
    token = CancelToken(poll=flag.is_set)
    assert not token.cancelled
    flag.set()
    with pytest.raises(Stopped):
        run_tasks(square_plus, [(1,), (2,)], shared=0, n_jobs=2, token=token)
    assert token.cancelled and live_worker_pids() == []


def test_a_cancelled_token_kills_the_workers_and_raises_stopped():
    token = CancelToken()
    outcome = {}

    def work():
        try:
            run_tasks(sleep_then, [(60,)] * 4, n_jobs=2, token=token)
        except Stopped as exc:
            outcome["stopped"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    workers = wait_for(lambda: live_worker_pids() if len(live_worker_pids()) == 2 else None)
    assert len(alive(workers)) == 2
    token.cancel("stopped by the test")
    thread.join(30)
    assert not thread.is_alive()
    assert str(outcome["stopped"]) == "stopped by the test"
    assert alive(workers) == []
    assert live_worker_pids() == []


def test_a_failing_task_stops_the_others_and_its_error_reaches_the_caller():
    with pytest.raises(ValueError, match="task 3 failed"):
        run_tasks(fail_on, [(x,) for x in range(8)], shared=3, n_jobs=2)
    assert live_worker_pids() == []


def test_worker_slots_cap_the_processes_and_a_waiting_job_can_be_stopped():
    slots = WorkerSlots(1)
    token_a, token_b = CancelToken(), CancelToken()
    waited, outcome = threading.Event(), {}

    def job_a():
        try:
            run_tasks(sleep_then, [(60,)], processes=True, token=token_a, slots=slots)
        except Stopped:
            outcome["a"] = "stopped"

    def job_b():
        try:
            run_tasks(sleep_then, [(60,)], processes=True, token=token_b, slots=slots, on_wait=waited.set)
        except Stopped:
            outcome["b"] = "stopped"

    a = threading.Thread(target=job_a)
    a.start()
    wait_for(lambda: len(live_worker_pids()) == 1)
    b = threading.Thread(target=job_b)
    b.start()
    assert waited.wait(30)  # b waits: the one slot is a's
    assert len(live_worker_pids()) == 1
    token_b.cancel()
    b.join(30)
    assert outcome["b"] == "stopped"
    token_a.cancel()
    a.join(30)
    assert outcome["a"] == "stopped" and live_worker_pids() == [] and slots.free == 1


def slow_square(shared, x):
    time.sleep(shared)
    return x * x


def test_a_long_pool_gives_a_slot_to_a_job_that_waits_and_takes_it_back_after():
    """One clinician's grid of 16 tasks on both cores and another's single fit: the fit waited for the whole grid
    (more than 90 s on the dashboard). The grid now gives a slot back after its next task, so the fit starts within
    about one task and ends long before the grid; the grid takes the slot back after, and its results are the same."""
    slots = WorkerSlots(2)
    times = {}

    def grid():
        times["grid"] = run_tasks(slow_square, [(x,) for x in range(16)], shared=0.5, n_jobs=2, slots=slots)
        times["grid end"] = time.monotonic()

    def fit():
        run_tasks(sleep_then, [(0.2,)], processes=True, slots=slots,
                  on_wait=lambda: times.setdefault("fit waited", time.monotonic()))
        times["fit end"] = time.monotonic()

    first = threading.Thread(target=grid)
    first.start()
    assert wait_for(lambda: slots.free == 0 and len(live_worker_pids()) >= 2, timeout=60)
    second = threading.Thread(target=fit)
    second.start()
    second.join(120)
    first.join(120)
    assert times["grid"] == [x * x for x in range(16)]
    assert "fit waited" in times   # it did have to wait: the grid held both slots
    assert times["grid end"] - times["fit end"] > 1.5, times   # about 4 s of the grid were left when the fit ended
    assert slots.free == 2 and slots.waiting == 0


def test_a_job_that_waited_for_a_slot_is_told_when_it_has_one():
    """The page says "waiting for a free processor" while the slots are busy and stops saying it once the
    job has its slots, not only when its first result arrives (an exploration's first cell can take minutes)."""
    from dashboard.jobs import Job

    slots = WorkerSlots(1)
    assert slots.acquire(1) == 1
    job = Job("explore", "Exploring", ["Cross-validating the grid"])
    taken = {}
    waiter = threading.Thread(target=lambda: taken.setdefault("n", slots.acquire(2, on_wait=job.wait_for_worker)))
    waiter.start()
    assert wait_for(lambda: job.waiting, timeout=10)
    assert "waiting for a free processor" in job.progress()[1]
    slots.release(1)
    waiter.join(10)
    assert taken["n"] == 1 and not job.waiting and "waiting" not in job.progress()[1]
    assert slots.free == 0
    slots.release(1)
    told = threading.Event()
    assert slots.acquire(1, on_wait=told.set) == 1 and not told.is_set()  # free slots: nobody is told anything


def test_cross_validation_stops_between_fits_and_leaves_no_worker():
    from frl_engine.validation.crossval import cross_validate_models

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.choice(["x", "y"], 300)})
    y = rng.random(300) < 0.3
    token = CancelToken()
    done = []

    def progress(d, t):
        done.append(d)
        token.cancel("enough")

    with pytest.raises(Stopped, match="enough"):
        cross_validate_models(X, y, n_folds=3, methods=("cart", "frl"), frl_params={"n_steps": 200, "n_chains": 1},
                              n_jobs=2, progress=progress, cancel=token)
    assert 1 <= len(done) < 6 and live_worker_pids() == []


# ---------------------------------------------------------------------------------------------- the CLI
@pytest.fixture(scope="module")
def slow_table(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 20_000
    frame = pd.DataFrame({f"x{i}": rng.normal(size=n).round(2) for i in range(8)})
    frame["ward"] = rng.choice(["a", "b", "c", "?"], n)
    frame["y"] = np.where(rng.random(n) < 0.2 + 0.2 * (frame["x0"] > 0), "yes", "no")
    path = tmp_path_factory.mktemp("stop") / "table.csv"
    frame.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("command, signum, status, ready", [
    (["evaluate"], signal.SIGTERM, 143, "workers"),
    (["evaluate"], signal.SIGINT, 130, "workers"),
    (["sample", "--samples", "2000000", "--steps", "300"], signal.SIGTERM, 143, "Fitted in"),  # chains on threads
    (["fit", "--validate", "5"], signal.SIGINT, 130, "workers"),
])
def test_a_signal_ends_the_command_and_all_its_workers_with_one_line(slow_table, command, signum, status, ready):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([FRL, command[0], slow_table, "--target", "y", *command[1:]], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        me = psutil.Process(process.pid)
        workers = []
        if ready == "workers":
            workers = wait_for(lambda: [p.pid for p in me.children(recursive=True)
                                        if "resource_tracker" not in " ".join(p.cmdline())]
                               if len(me.children(recursive=True)) >= 2 else None, timeout=120)
        else:  # wait until the long part has started
            while ready not in process.stdout.readline():
                assert process.poll() is None
            time.sleep(1.0)
            assert process.poll() is None
        started = time.monotonic()
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
        print(f"frl {command[0]} ended {time.monotonic() - started:.2f} s after {signal.Signals(signum).name}")
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status
    assert err == "frl: stopped\n"
    assert wait_for(lambda: alive(workers) == [], timeout=10)


def test_the_estimator_does_not_import_the_evaluation_layer():
    code = ("import sys, frl_engine.estimator, frl_engine.cli; "
            "bad = [m for m in sys.modules if m.startswith('frl_engine.validation') or m == 'frl_engine.evaluate']; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def mark_warm():
    os.environ["FRL_TEST_WARMED"] = "yes"


def warmed_pid(shared, x):
    return os.getpid(), os.environ.get("FRL_TEST_WARMED"), shared + x


def test_a_warm_spare_worker_runs_a_single_task_and_is_replaced_after_a_kill():
    from frl_engine import stopping

    try:
        stopping.prestart_spare(mark_warm)
        spare = wait_for(lambda: stopping.spare_pids(), timeout=60)
        pid, warmed, value = run_tasks(warmed_pid, [(2,)], shared=40, processes=True)[0]
        assert (pid, warmed, value) == (spare[0], "yes", 42)  # the warmed worker did it, with the shared data
        assert len(wait_for(lambda: stopping.spare_pids(), timeout=60)) == 1  # one spare stays ready
        token, busy = CancelToken(), []

        def stop_when_busy():
            busy.extend(wait_for(lambda: live_worker_pids(), timeout=60))
            token.cancel()

        threading.Thread(target=stop_when_busy).start()
        with pytest.raises(Stopped):
            run_tasks(sleep_then, [(60,)], processes=True, token=token)
        assert len(busy) == 1 and alive(busy) == []  # the busy (spare) worker was killed ...
        fresh = wait_for(lambda: stopping.spare_pids(), timeout=60)
        assert set(fresh).isdisjoint(busy)  # ... and another one is ready
    finally:
        stopping.kill_all_workers()
    assert stopping.spare_pids() == [] and alive(fresh) == []
