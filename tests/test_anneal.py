"""Simulated annealing finds the MAP list (paper sections 3.1 and 4)."""

import numpy as np
import pytest

from frl_engine.anneal import anneal, temperature_schedule
from frl_engine.errors import FRLError
from frl_engine.model import Hyperparameters, PackedProblem, fit_list
from frl_engine.simulate import edit_distance, simulate_rule_list_data


def test_the_paper_simulation_study_recovers_the_true_list():
    """Section 4: 100 rules of density 0.25, a true list of 5 rules with risks .84 .70 .54 .40 .25 (.14).

    For each N the found list's objective is at least the true list's in at
    least 19 of 20 replicates, and the mean edit distance to the truth shrinks with N.
    """
    master = np.random.default_rng(2015)
    mean_distance = {}
    for n_rows in (500, 2000, 10000):
        at_least_as_good, distances = 0, []
        for replicate_rng in master.spawn(20):
            data = simulate_rule_list_data(replicate_rng, n_rows)
            problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
            found = anneal(problem, n_steps=5000, n_chains=2, random_state=replicate_rng).best
            truth = fit_list(problem, data.true_order)
            at_least_as_good += found.log_posterior >= truth.log_posterior - 1e-9
            distances.append(edit_distance(found.order, data.true_order))
        assert at_least_as_good >= 19, (n_rows, at_least_as_good)
        mean_distance[n_rows] = float(np.mean(distances))
    assert mean_distance[500] > mean_distance[2000] >= mean_distance[10000], mean_distance
    assert mean_distance[10000] <= 0.5, mean_distance


def test_same_seed_same_list_whatever_the_number_of_workers():
    data = simulate_rule_list_data(np.random.default_rng(1), 1500, n_rules=60)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    one = anneal(problem, n_steps=2000, n_chains=4, random_state=7, n_jobs=1)
    two = anneal(problem, n_steps=2000, n_chains=4, random_state=7, n_jobs=2)
    assert one.chain_orders == two.chain_orders
    assert one.chain_values == two.chain_values
    assert one.best.order == two.best.order
    assert one.acceptance_rates == two.acceptance_rates
    # A different seed walks a different path (every chain may still end at the same optimum).
    other = anneal(problem, n_steps=2000, n_chains=4, random_state=8, n_jobs=1)
    assert other.acceptance_rates != one.acceptance_rates


def test_the_result_is_the_best_list_visited_and_its_objective_is_exact():
    data = simulate_rule_list_data(np.random.default_rng(3), 800, n_rules=40)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    result = anneal(problem, n_steps=3000, n_chains=3, random_state=0)
    assert result.best.log_posterior == pytest.approx(max(result.chain_values), abs=1e-9)
    assert fit_list(problem, result.best.order).log_posterior == pytest.approx(result.best.log_posterior, abs=1e-9)
    assert np.all(np.diff(result.best.probabilities) <= 1e-12)


def test_geometric_cooling_runs_from_the_temperature_down():
    schedule = temperature_schedule(100, 2.0, "geometric")
    assert schedule[0] == pytest.approx(2.0) and schedule[-1] == pytest.approx(2e-3)
    assert np.all(np.diff(schedule) < 0)
    data = simulate_rule_list_data(np.random.default_rng(4), 1000, n_rules=30)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    cooled = anneal(problem, n_steps=3000, cooling="geometric", random_state=1).best
    assert edit_distance(cooled.order, data.true_order) <= 2


def test_unknown_cooling_and_bad_temperature_are_refused():
    with pytest.raises(FRLError, match="cooling"):
        temperature_schedule(10, 1.0, "fast")
    with pytest.raises(FRLError, match="temperature"):
        temperature_schedule(10, 0.0)


def test_edit_distance():
    assert edit_distance([1, 2, 3], [1, 2, 3]) == 0
    assert edit_distance([1, 2, 3], [2, 1, 3]) == 2
    assert edit_distance([], [4, 5]) == 2
    assert edit_distance([1, 2, 3], [1, 3]) == 1
