"""The Explore page's background run: :func:`frl_engine.explore.explore` on a :class:`dashboard.jobs.Job`.

Kept apart from :mod:`dashboard.services` and :mod:`dashboard.state`: the run and its result live
under their own session keys (:data:`JOB`, :data:`RESULT`), so the fit and validation jobs are not
affected.  A Stop button sets the job's ``stop`` event; the engine polls it every 0.1 s, kills the
workers and keeps the finished cells.  Locally the run's workers come from the server-wide cap
(:data:`frl_engine.stopping.WORKER_SLOTS`, through :func:`frl_engine.stopping.run_tasks`, like a
validation's): while another session's job holds every core the progress says it waits for a
free processor.  No Streamlit import here.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

JOB = "explore_job"  # jobs.Job of the running (or last) exploration
RESULT = "explore_result"  # ExploreRun: the last exploration that finished or was stopped
SCHEDULER_ENV = "FRL_DASK_SCHEDULER"  # a dask.distributed scheduler address: the page runs there

LAM_CHOICES = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)
SUPPORT_CHOICES = (1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0)  # percent
CONDITION_CHOICES = (1, 2, 3)
THRESHOLD_CHOICES = (1, 3, 5, 9)  # quantile thresholds per numeric column


def scheduler_address() -> str | None:
    """The configured Dask scheduler (environment variable ``FRL_DASK_SCHEDULER``), or None."""
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    return address or None


@dataclass(frozen=True)
class ExploreSpec:
    """What a run explores: the grid, the folds and the other settings of the Fit page."""

    lam: tuple[float, ...]
    min_support: tuple[float, ...]  # fractions
    max_conditions: tuple[int, ...]
    n_folds: int
    seed: int
    params: dict
    n_thresholds: tuple[int, ...] = (3,)


@dataclass(frozen=True)
class ExploreRun:
    """A finished (or stopped) run: the engine's result and where it came from."""

    result: object  # frl_engine.explore.ExploreResult
    spec: ExploreSpec
    data_key: str
    target: str
    event: object


def new_job(spec: ExploreSpec):
    from dashboard import jobs

    n = len(spec.lam) * len(spec.min_support) * len(spec.max_conditions) * len(spec.n_thresholds)
    job = jobs.Job("explore", "Exploring", ["Cross-validating the grid"], meta={"cells": n})
    job.meta["stop"] = threading.Event()
    return job


def explore_work(spec: ExploreSpec, features, y, data_key: str, target: str, event, scheduler: str | None = None):
    """The body of the job: run the grid, report each task, publish the :class:`ExploreRun`."""
    from frl_engine.explore import explore

    def work(job) -> ExploreRun:
        cells = [0]
        total = job.meta["cells"]

        def progress(done, n_tasks, rows):
            cells[0] += len(rows)
            job.advance(done / n_tasks, f"{cells[0]} of {total} cells")

        job.stage(0, f"0 of {total} cells" + (f" on the cluster at {scheduler}" if scheduler else ""))
        result = explore(features, y, lam=spec.lam, min_support=spec.min_support, max_conditions=spec.max_conditions,
                         n_thresholds=spec.n_thresholds, n_folds=spec.n_folds, random_state=spec.seed, params=spec.params, n_jobs=-1,
                         scheduler=scheduler, progress=progress, should_stop=job.meta["stop"].is_set,
                         on_wait=job.wait_for_worker)
        return ExploreRun(result, spec, data_key, target, event)

    return work
