"""The Explore page (AppTest, no browser): run a grid, stop a run, make a cell's list the current fit."""

import logging
import os
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import explore_jobs, jobs, services, state
from streamlit_server import server_workers
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import read_table, split_target

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")

pytestmark = pytest.mark.skipif(not services.SAMPLE_PATH.is_file(), reason="sample data missing")


@pytest.fixture
def at(monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    monkeypatch.delenv(explore_jobs.SCHEDULER_ENV, raising=False)
    app = AppTest.from_file(APP, default_timeout=120)
    app.run()
    assert not app.exception
    app.switch_page("views/explore.py").run()
    assert not app.exception
    return app


def small_grid(app):
    app.session_state["w_ex_lam"] = [2.0, 8.0]
    app.session_state["w_ex_support"] = [5.0, 10.0]
    app.session_state["w_ex_conditions"] = [2]
    app.session_state["w_ex_folds"] = 3
    app.session_state[state.W_STEPS] = 5000
    app.session_state[state.W_CHAINS] = 4
    app.session_state[state.W_POSTERIOR] = False
    app.run()


def finish(app, key=explore_jobs.JOB):
    job = app.session_state[key]
    assert jobs.wait(job, 300)
    app.run()
    assert not app.exception


def test_the_page_runs_the_grid_and_a_cell_becomes_the_current_fit(at):
    small_grid(at)
    assert "4 cells × 3 folds" in " ".join(c.value for c in at.caption)
    assert "this machine" in " ".join(c.value for c in at.caption)
    at.button(key="explore_run_button").click().run()
    assert not at.exception
    finish(at)
    run = at.session_state[explore_jobs.RESULT]
    table = run.result.table
    assert len(table) == 4 and not run.result.stopped
    assert any("Recommended" in s.value for s in at.success)
    # Choose the lam 2, support 10% cell and make its list the current fit.
    index = int(table.index[(table.lam == 2) & (table.min_support == 0.1)][0])
    at.selectbox(key="w_ex_cell").set_value(index).run()
    at.button(key="explore_use_button").click().run()
    assert not at.exception
    for job in at.session_state[state.JOBS].values():
        assert jobs.wait(job, 120)
    at.run()
    fit = at.session_state[state.FIT]
    assert fit is not None and fit.spec.settings.lam == 2 and fit.spec.settings.min_support == 0.1
    assert [r["name"] for r in fit.model["rules"]] == table.loc[index, "rules"].split(" | ")
    # The Fit page's settings follow the chosen cell.
    assert at.session_state[state.W_LAM] == 2 and at.session_state[state.W_SUPPORT] == 10
    # The engine fitted directly with the cell's settings gives the same list.
    X, y, _ = split_target(read_table(services.SAMPLE_PATH), "Readmitted30d", None)
    direct = FallingRuleListClassifier(lam=2, min_support=0.1, max_conditions=2, n_steps=5000, n_chains=4,
                                       exclude=("PatientID",), random_state=0).fit(X, y)
    assert [r["name"] for r in fit.model["rules"]] == direct.rules_


def test_thresholds_per_number_are_a_grid_dimension_and_the_chosen_cell_keeps_its_own(at):
    small_grid(at)
    at.session_state["w_ex_lam"] = [4.0]
    at.session_state["w_ex_support"] = [10.0]
    at.session_state["w_ex_thresholds"] = [1, 5]
    at.run()
    assert "2 cells × 3 folds" in " ".join(c.value for c in at.caption)
    at.button(key="explore_run_button").click().run()
    finish(at)
    table = at.session_state[explore_jobs.RESULT].result.table
    assert table["n_thresholds"].tolist() == [1, 5]
    index = int(table.index[table.n_thresholds == 5][0])
    at.selectbox(key="w_ex_cell").set_value(index).run()
    at.button(key="explore_use_button").click().run()
    for job in at.session_state[state.JOBS].values():
        assert jobs.wait(job, 120)
    at.run()
    assert not at.exception
    fit = at.session_state[state.FIT]
    assert fit.spec.settings.n_thresholds == 5 and at.session_state[state.W_N_THRESHOLDS] == 5
    assert [r["name"] for r in fit.model["rules"]] == table.loc[index, "rules"].split(" | ")
    X, y, _ = split_target(read_table(services.SAMPLE_PATH), "Readmitted30d", None)
    direct = FallingRuleListClassifier(lam=4, min_support=0.1, max_conditions=2, n_thresholds=5, n_steps=5000,
                                       n_chains=4, exclude=("PatientID",), random_state=0).fit(X, y)
    assert [r["name"] for r in fit.model["rules"]] == direct.rules_


def test_stop_keeps_the_finished_cells(at):
    small_grid(at)
    at.session_state["w_ex_lam"] = [1.0, 2.0, 4.0, 8.0]
    at.session_state["w_ex_support"] = [2.0, 3.0, 5.0, 10.0]
    at.session_state["w_ex_conditions"] = [1, 2]
    at.run()
    at.button(key="explore_run_button").click().run()
    job = at.session_state[explore_jobs.JOB]
    assert not job.done
    at.button(key="explore_stop_button").click().run()
    assert job.meta["stop"].is_set()
    finish(at)
    run = at.session_state[explore_jobs.RESULT]
    assert run.result.stopped and len(run.result.table) < 32
    finished = len(run.result.table)
    said = " ".join(w.value for w in at.warning)
    # never "0 of 18 cells had finished; they are shown below" over an empty page
    assert (f"Stopped: {finished} of " in said) if finished else ("Stopped before any of the" in said), said


def test_a_bad_grid_is_one_message_and_nothing_runs(at):
    small_grid(at)
    at.session_state["w_ex_lam"] = []
    at.run()
    assert at.button(key="explore_run_button").disabled


def test_a_configured_scheduler_is_named_on_the_page(monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    monkeypatch.setenv(explore_jobs.SCHEDULER_ENV, "tcp://10.1.2.3:8786")
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    app.switch_page("views/explore.py").run()
    assert not app.exception
    assert any("Dask cluster" in c.value and "tcp://10.1.2.3:8786" in c.value for c in app.caption)


def test_tune_then_fit_on_the_fit_page_fits_the_recommended_cell(at):
    small_grid(at)
    at.switch_page("views/fit.py").run()
    assert not at.exception
    at.button(key="tune_button").click().run()
    assert not at.exception
    finish(at)  # the grid ran on the Explore page (the button switched there)...
    at.switch_page("views/explore.py").run()  # (AppTest re-requests the page it last switched to)
    for job in at.session_state[state.JOBS].values():  # ...then the recommended cell's fit
        assert jobs.wait(job, 120)
    at.run()
    rec = at.session_state[explore_jobs.RESULT].result.recommended
    fit = at.session_state[state.FIT]
    assert fit is not None and fit.spec.settings.lam == rec["lam"]
    assert fit.spec.settings.min_support == rec["min_support"]
    assert [r["name"] for r in fit.model["rules"]] == rec["rules"].split(" | ")
    tuning = fit.model["training"]["tuning"]  # how the settings were chosen travels with the model, as with the CLI
    assert tuning["rule"] == "one standard error" and tuning["chosen"]["lam"] == rec["lam"]
    assert tuning["auroc_mean"] == pytest.approx(rec["auroc_mean"]) and "optimistic" in tuning["note"]


# ---------------------------------------------------------------------------------------------- the server-wide cap
def heavy_workers() -> list[int]:
    """Worker processes of this process (the AppTest "server"): every child but loky's resource tracker."""
    return server_workers(os.getpid())


class WorkerCounter:
    """Counts the heavy workers every 20 ms on a thread; ``most`` is the largest count seen."""

    def __init__(self):
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.most = max(self.most, len(heavy_workers()))
            self._stop.wait(0.02)

    def stop(self):
        self._stop.set()
        self._thread.join()


def test_an_exploration_takes_its_workers_from_the_server_wide_cap_and_stop_ends_them(at):
    """Another session's validation holds every core: the exploration waits (and says so) instead of starting
    workers of its own; once the validation is stopped it gets them; the server never runs more workers than
    the cap; the Explore page's Stop kills them and keeps the finished cells."""
    import time

    from frl_engine.stopping import WORKER_SLOTS
    from test_dashboard import fit
    from test_dashboard_stop import start_validation
    from test_stopping import alive, wait_for

    other = AppTest.from_file(APP, default_timeout=120)
    other.run()
    fit(other, **{state.W_POSTERIOR: False})
    counter = WorkerCounter()
    try:
        validation = start_validation(other, methods=("svm",), folds=5)
        wait_for(lambda: len(heavy_workers()) >= WORKER_SLOTS.capacity or validation.done, timeout=120)
        assert not validation.done

        small_grid(at)
        at.session_state["w_ex_lam"] = [1.0, 2.0, 4.0, 8.0]
        at.session_state["w_ex_support"] = [2.0, 3.0, 5.0, 10.0]
        at.session_state["w_ex_conditions"] = [1, 2]
        at.session_state[state.W_STEPS] = 200_000  # long enough to be caught running on a fast machine
        at.run()
        at.button(key="explore_run_button").click().run()
        job = at.session_state[explore_jobs.JOB]
        assert wait_for(lambda: job.waiting, timeout=30)  # no free processor: it waits, no worker of its own
        assert "waiting for a free processor" in job.progress()[1]
        assert job.version == 0 and not job.done

        other.button(key="stop_validation").click().run()
        assert jobs.wait(validation, 30) and validation.stopped
        assert wait_for(lambda: not job.waiting, timeout=60)  # it got the cores
        explore_workers = wait_for(lambda: heavy_workers(), timeout=60)
        time.sleep(2.0)  # the exploration runs on its workers for a while
        assert not job.done

        at.button(key="explore_stop_button").click().run()
        pressed = time.monotonic()
        assert jobs.wait(job, 30)
        assert wait_for(lambda: alive(explore_workers) == [] and heavy_workers() == [], timeout=10)
        print(f"Explore page's Stop: workers gone after {time.monotonic() - pressed:.1f} s")
    finally:
        counter.stop()
        # a failure above must not leave jobs holding the process's slots for the tests that follow
        for running in (at.session_state[explore_jobs.JOB] if explore_jobs.JOB in at.session_state else None,
                        locals().get("validation")):
            if running is not None and not running.done:
                running.stop("the test ended")
                jobs.wait(running, 30)
    assert 0 < counter.most <= WORKER_SLOTS.capacity, counter.most
    assert WORKER_SLOTS.free == WORKER_SLOTS.capacity  # every slot given back
    at.run()
    assert not at.exception
    run = at.session_state[explore_jobs.RESULT]
    assert run.result.stopped and len(run.result.table) < 32
    finished = len(run.result.table)
    said = " ".join(w.value for w in at.warning)
    # never "0 of 18 cells had finished; they are shown below" over an empty page
    assert (f"Stopped: {finished} of " in said) if finished else ("Stopped before any of the" in said), said


def test_the_grid_waits_for_the_sessions_other_heavy_job(at):
    """One heavy job per session: while this session's fit runs, Run the grid is disabled and says why."""
    at.switch_page("views/fit.py").run()
    at.session_state[state.W_STEPS] = 100_000  # long enough to be caught running
    at.session_state[state.W_POSTERIOR] = False
    at.run()
    at.button(key="fit_button").click().run()
    fit_job = at.session_state[state.JOBS]["fit"]
    try:
        at.switch_page("views/explore.py").run()
        assert not at.exception
        assert at.button(key="explore_run_button").disabled
        assert any("still running in this session" in c.value for c in at.caption)
    finally:
        fit_job.stop()
        assert jobs.wait(fit_job, 30)
    at.run()
    assert not at.button(key="explore_run_button").disabled
