"""One wording for the MAP list (frl_engine.wording): every list that groups the patients alike prints the same."""

import itertools

import numpy as np
import pytest

from frl_engine.bits import row_groups
from frl_engine.model import Hyperparameters, PackedProblem, fit_list
from frl_engine.wording import same_catch, simplest_wording


def _conjunctions(seed, n_rows=24, n_conditions=5):
    """Every rule of one or two of ``n_conditions`` random conditions on a few rows, so that many rules catch
    the same rows at some place of some list; their condition counts; the problem."""
    rng = np.random.default_rng(seed)
    conditions = rng.random((n_rows, n_conditions)) < 0.5
    rules, sizes = [], []
    for size in (1, 2):
        for combo in itertools.combinations(range(n_conditions), size):
            rules.append(conditions[:, list(combo)].all(axis=1))
            sizes.append(size)
    y = rng.random(n_rows) < np.where(conditions[:, 0], 0.7, 0.25)
    problem = PackedProblem.from_arrays(np.column_stack(rules), y, Hyperparameters(lam=2.0))
    return problem, np.array(sizes)


def _every_place_catches(problem, order) -> bool:
    return bool(np.all(fit_list(problem, order).supports[:-1] > 0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_list_that_groups_the_rows_alike_gets_one_wording_with_the_same_objective(seed):
    """Enumerate every list of up to 3 rules whose every place catches a row; group them by the rows each place
    catches (the same likelihood for any risks, and under equal rule weights the same posterior).  Within a
    group the wording is one list, with the group's objective, risks and supports, and at every place no more
    conditions than the rule it replaced."""
    problem, sizes = _conjunctions(seed)
    by_groups: dict[bytes, list[tuple[int, ...]]] = {}
    for length in (1, 2, 3):
        for order in itertools.permutations(range(problem.n_rules), length):
            if _every_place_catches(problem, order):
                key = row_groups(problem.rules, problem.all_rows, order).tobytes()
                by_groups.setdefault(key, []).append(order)
    several = [orders for orders in by_groups.values() if len(orders) > 1]
    assert len(several) > 20                                # the test has many groups to reconcile
    for orders in several:
        worded = {simplest_wording(problem, fit_list(problem, order), sizes).order for order in orders}
        assert len(worded) == 1
        (canonical,) = worded
        canonical_fit = fit_list(problem, canonical)
        for order in orders:
            fit = fit_list(problem, order)
            assert canonical_fit.log_posterior == pytest.approx(fit.log_posterior, abs=1e-9)
            np.testing.assert_array_equal(canonical_fit.supports, fit.supports)
            np.testing.assert_allclose(canonical_fit.probabilities, fit.probabilities, atol=1e-9)
            assert all(sizes[new] <= sizes[old] for new, old in zip(canonical, order))
        assert canonical in orders                          # a member of the group, not a new list


def test_a_rule_that_another_rule_above_already_trims_is_written_without_the_trimmed_condition():
    """Below 'a AND b', the rules 'a' and 'a AND not b' catch the same rows: the list prints 'a'."""
    rng = np.random.default_rng(7)
    a, b = rng.random(400) < 0.5, rng.random(400) < 0.5
    y = rng.random(400) < np.where(a & b, 0.8, np.where(a, 0.5, 0.1))
    coverage = np.column_stack([a & b, a & ~b, a, b])          # rules 0, 1, 2, 3
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=2.0))
    sizes = [2, 2, 1, 1]
    worded = simplest_wording(problem, fit_list(problem, [0, 1]), sizes)
    assert worded.order == (0, 2)
    assert worded.log_posterior == pytest.approx(fit_list(problem, [0, 1]).log_posterior, abs=1e-12)
    assert list(same_catch(problem, problem.all_rows & ~problem.rules[0], 1)) == [1, 2]
    # already the simplest: the same object comes back
    simplest = fit_list(problem, [0, 2])
    assert simplest_wording(problem, simplest, sizes) is simplest


def test_under_unequal_rule_weights_the_wording_with_the_higher_prior_wins_over_fewer_conditions():
    """With rule weights the rules of one group differ in prior: the wording keeps the best objective first."""
    rng = np.random.default_rng(8)
    a, b = rng.random(400) < 0.5, rng.random(400) < 0.5
    y = rng.random(400) < np.where(a & b, 0.8, np.where(a, 0.5, 0.1))
    coverage = np.column_stack([a & b, a & ~b, a, b])
    sizes = [2, 2, 1, 1]
    for weights, expected in (([1.0, 5.0, 1.0, 1.0], (0, 1)), ([1.0, 1.0, 5.0, 1.0], (0, 2)),
                              ([1.0, 1.0, 1.0, 1.0], (0, 2))):
        problem = PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=2.0), rule_weights=np.array(weights))
        worded = simplest_wording(problem, fit_list(problem, [0, 1]), sizes)
        assert worded.order == expected
        assert worded.log_posterior >= fit_list(problem, [0, 1]).log_posterior - 1e-12
    with pytest.raises(ValueError, match="one count per candidate rule"):
        simplest_wording(problem, fit_list(problem, [0, 1]), [1, 2])


def test_seeds_that_reach_the_map_print_one_card_on_a_table_whose_risk_is_smooth():
    """20,000 patients of the smooth-risk table (null markers; seed 1): seeds 1 to 5 of the default fit end at
    one objective, but their searches wrote the rule below 'Age >= 76 AND Heart rate >= ...' as 'Age >= 76',
    'Age >= 76 AND Heart rate < 100' or '... < 120' (session 51).  Every seed now prints one card, every rule
    of it the fewest-condition rule that catches the same patients at its place."""
    from test_basin import _smooth_risk_fit

    models = [_smooth_risk_fit("null", 20_000, 1, seed) for seed in (1, 3, 4)]
    assert len({round(m.log_posterior_, 6) for m in models}) == 1
    assert len({tuple(m.rules_) for m in models}) == 1
    model = models[0]
    problem, order = model.problem_, model.map_fit_.order
    sizes = np.array([len(rule.conditions) for rule in model.rule_objects_])
    remaining = problem.all_rows.copy()
    for place, rule in enumerate(order):
        equals = same_catch(problem, remaining, rule)
        assert sizes[place] == min(len(model.candidate_conditions_[i]) for i in equals)
        remaining &= ~problem.rules[rule]
    for m in models:                                        # the printed list is what the model predicts with
        assert [m.candidate_names_[i] for i in m.map_fit_.order] == m.rules_


def test_a_search_chain_that_ended_at_the_map_list_in_other_words_takes_no_dispersed_start_of_its_own():
    """The posterior's chains start from the MAP list and the other lists the search's first round ended at.
    Seed 4 of the 20,000-row smooth table: two chains ended at the MAP list written another way; read as printed,
    it is the MAP list, so the chains start from as many different lists as the round's ends group the rows."""
    from frl_engine.bits import same_row_groups
    from test_basin import _smooth_risk_fit

    model = _smooth_risk_fit("null", 20_000, 1, 4)
    problem, printed_map = model.problem_, model.map_fit_.order
    search = model.anneal_result_
    ends = search.chain_orders[:search.round_size]
    groups = row_groups(problem.rules, problem.all_rows, printed_map)
    reworded = [order for order in ends if order != printed_map
                and same_row_groups(problem.rules, problem.all_rows, np.asarray(order, dtype=np.int64), groups)]
    assert reworded                                           # the MAP list in other words, as the search wrote it
    assert printed_map in model._as_printed(ends)
    different = {row_groups(problem.rules, problem.all_rows, order).tobytes() for order in (printed_map, *ends)}
    sample = model.sample_posterior(20, n_chains=4, burn_in=0, random_state=0, extend=False)
    assert sample.n_starts == min(4, len(different))
