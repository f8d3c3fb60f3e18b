"""A slow fit says what it is doing: each round of search chains and each walk of the posterior."""

import io

import numpy as np
import pandas as pd

from frl_engine import FallingRuleListClassifier
from frl_engine.anneal import anneal
from frl_engine.cli import SlowFitProgress
from frl_engine.model import Hyperparameters, PackedProblem


def _problem(seed=0, n=400, n_rules=60):
    rng = np.random.default_rng(seed)
    rules = rng.random((n_rules, n)) < 0.3
    y = rng.random(n) < 0.2 + 0.5 * rules[0]
    return PackedProblem.from_arrays(rules.T, y, Hyperparameters(lam=3))


def test_the_search_tells_each_round_and_the_result_does_not_depend_on_listening():
    problem = _problem()
    told = []
    heard = anneal(problem, n_chains=2, max_chains=6, random_state=3, n_jobs=1, progress=told.append)
    silent = anneal(problem, n_chains=2, max_chains=6, random_state=3, n_jobs=1)
    assert heard.best.order == silent.best.order and heard.chain_values == silent.chain_values
    rounds = len(heard.chain_values) // 2
    assert told[0] == "searching 60 candidate rules: chains 1 to 2"
    assert len([t for t in told if t.startswith("searching 60 candidate rules")]) == rounds
    # two chains cannot show agreement on their own, nor can four at one list (unseen share 1/6): three rounds
    assert rounds == 3
    assert told[1] == "searching 60 candidate rules: chains 3 to 4 of at most 6 (the chains so far ended at different lists)"
    assert told[2] == "searching 60 candidate rules: chains 5 to 6 of at most 6 (the chains so far ended at different lists)"
    assert len([t for t in told if "walk" in t]) == len(heard.walks)


def test_the_estimator_tells_its_stages():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"Age": rng.integers(20, 90, 300), "Ward": rng.choice(["A", "B"], 300)})
    y = rng.random(300) < 0.2 + 0.4 * (X["Age"] >= 70)
    told = []
    FallingRuleListClassifier(random_state=0).fit(X, y, progress=told.append)
    assert told[0] == "reading 2 columns of 300 rows and mining candidate rules"
    assert told[1].startswith("searching ") and "candidate rules: chains 1 to 4" in told[1]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_command_line_prints_stages_only_on_a_terminal_and_only_when_slow():
    terminal, pipe = _Terminal(), io.StringIO()
    SlowFitProgress(after=0.0, stream=terminal)("searching 5,000 candidate rules: chains 5 to 8")
    SlowFitProgress(after=0.0, stream=pipe)("searching")
    SlowFitProgress(after=60.0, stream=terminal)("never said: the fit is not slow yet")
    assert terminal.getvalue() == "frl: 0 s: searching 5,000 candidate rules: chains 5 to 8 ...\n"
    assert pipe.getvalue() == ""
    SlowFitProgress(after=0.0, stream=pipe, always=True)("walk 1")
    assert pipe.getvalue() == "frl: 0 s: walk 1 ...\n"


def test_the_posterior_tells_each_attempt_and_the_sample_does_not_depend_on_listening():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"Age": rng.integers(20, 90, 300), "Ward": rng.choice(["A", "B", "C"], 300)})
    y = rng.random(300) < 0.2 + 0.4 * (X["Age"] >= 70)
    model = FallingRuleListClassifier(random_state=0).fit(X, y)
    told = []
    heard = model.sample_posterior(20, n_chains=2, random_state=1, n_jobs=1, progress=told.append)
    silent = model.sample_posterior(20, n_chains=2, random_state=1, n_jobs=1)
    assert np.array_equal(heard.log_posterior_trace, silent.log_posterior_trace)
    assert told[0] == "sampling: 20 draws a chain"
    # 2 x 20 draws cannot show an ESS of 400: every attempt of the schedule runs, and each says why it runs
    assert len(told) == len(heard.attempts) > 1
    for text, before in zip(told[1:], heard.attempts):
        # the reason the attempt before gave: its R-hat, or, with R-hat within 1.01, its effective sample size
        why = (f"effective sample size {before['smallest_ess']:.0f}, under 400" if before["worst_rhat"] <= 1.01
               else f"worst R-hat {before['worst_rhat']:.3f}")
        assert text.startswith(f"sampling: not converged yet ({why}), so the chains run on")
    assert told[1].endswith("2 times as long (attempt 2)")
    tempered = [a["replicas"] > 1 for a in heard.attempts]
    assert [", with 4 tempered replicas each" in t for t in told] == tempered


def test_a_fit_in_a_worker_process_tells_its_stages_through_a_relay(tmp_path):
    from frl_engine import workers
    from frl_engine.stopping import run_tasks

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"Age": rng.integers(20, 90, 300), "Ward": rng.choice(["A", "B"], 300)})
    y = np.asarray(rng.random(300) < 0.2 + 0.4 * (X["Age"] >= 70))
    told = []
    FallingRuleListClassifier(random_state=0).fit(X, y, progress=told.append)
    relay = workers.ProgressRelay(tmp_path / "progress.txt")
    assert relay.read() == ""
    [fitted] = run_tasks(workers.fit, [(FallingRuleListClassifier(random_state=0), relay)], shared=(X, y),
                         processes=True)
    assert fitted.rules_ and relay.read() == told[-1]   # the worker's last line, whole
    relay.clear()
    assert relay.read() == ""
    relay.remove()
    assert not (tmp_path / "progress.txt").exists() and relay.read() == ""
    relay("a relay whose file is gone writes it again")   # and never raises
    assert relay.read() == "a relay whose file is gone writes it again"


def test_the_dashboard_job_shows_the_engines_words_for_the_current_stage_only():
    from pathlib import Path

    from dashboard.jobs import Job, start, wait

    job = Job("fit", "Fitting the list", ("finding the best list", "sampling the posterior"))
    job.stage(0, "4 chains × 5,000 steps")
    assert job.progress()[1].startswith("Fitting the list · step 1 of 2: finding the best list (4 chains × 5,000 steps)")
    relay = job.relay()
    assert job.relay() is relay
    relay("searching 5,000 candidate rules: chains 5 to 8")
    assert "finding the best list · searching 5,000 candidate rules: chains 5 to 8 · " in job.progress()[1]
    job.stage(1, "4 chains × 1,000 samples")   # the search's words end with its stage
    assert "sampling the posterior (4 chains × 1,000 samples)" in job.progress()[1]
    relay("sampling: 1,000 draws a chain")
    assert "sampling the posterior · sampling: 1,000 draws a chain · " in job.progress()[1]

    start(job, lambda j: None)
    assert wait(job, 10)
    assert not Path(relay.path).exists()   # the file goes with the job
    assert job.progress()[1].startswith("Fitting the list: done after")


def test_an_attempt_for_too_few_effective_draws_says_so_not_an_r_hat_within_the_target():
    from frl_engine.sampler import attempt_text

    assert attempt_text(2, 2, 1, 1000, 1.009, True, 336.2) == (
        "sampling: not converged yet (effective sample size 336, under 400), so the chains run on 2 times as long "
        "(attempt 2)")
    assert "(worst R-hat 1.058)" in attempt_text(2, 2, 1, 1000, 1.058, True, 120.0)
