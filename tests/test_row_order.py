"""Rows sorted by a list's groups: the same objective for every list, counted over fewer words."""

import numpy as np
import pytest

from frl_engine import row_order
from frl_engine.anneal import anneal
from frl_engine.bits import capture_counts_from
from frl_engine.model import Hyperparameters, PackedProblem, fit_list
from frl_engine.polish import _cells
from frl_engine.simulate import simulate_rule_list_data


def _problem(seed, n_rows, n_rules=80):
    data = simulate_rule_list_data(np.random.default_rng(seed), n_rows, n_rules=n_rules,
                                   probabilities=(0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.15))
    return data, PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())


def test_taking_rows_moves_every_rules_bits_and_the_outcome_with_them():
    data, problem = _problem(0, 1000, n_rules=30)
    source = np.random.default_rng(1).permutation(1000)[:700]
    taken = row_order.take_rows(problem, source)
    expected = PackedProblem.from_arrays(data.coverage[source], data.y[source], Hyperparameters())
    assert taken.n_rows == 700
    np.testing.assert_array_equal(taken.rules, expected.rules)
    np.testing.assert_array_equal(taken.y, expected.y)
    np.testing.assert_array_equal(taken.all_rows, expected.all_rows)


def test_any_order_of_the_rows_gives_every_list_the_same_counts_and_objective():
    data, problem = _problem(2, 1500)
    shuffled = row_order.take_rows(problem, np.random.default_rng(3).permutation(1500))
    rng = np.random.default_rng(4)
    for _ in range(20):
        order = rng.choice(problem.n_rules, size=int(rng.integers(0, 9)), replace=False)
        a, b = fit_list(problem, order), fit_list(shuffled, order)
        np.testing.assert_array_equal(a.supports, b.supports)
        np.testing.assert_array_equal(a.positives, b.positives)
        assert a.log_posterior == b.log_posterior


def test_the_cell_order_puts_each_cell_of_the_reference_list_in_one_run_of_rows():
    data, problem = _problem(5, 2000)
    reference = list(data.true_order)
    perm = row_order.cell_order(problem, reference)
    assert sorted(perm.tolist()) == list(range(2000))
    # each row's cell written out by hand: first rule it satisfies, then the first later one, then its outcome
    length = len(reference)
    keys = []
    for row in perm:
        hits = [pos for pos, rule in enumerate(reference) if data.coverage[row, rule]] + [length, length]
        later = [pos for pos in hits[1:] if pos > hits[0]]
        keys.append((hits[0], later[0] if hits[0] < length else length, bool(data.y[row])))
    assert keys == sorted(keys)


def test_sorted_rows_put_a_lists_cells_in_far_fewer_words():
    data, problem = _problem(6, 40_000)
    order = np.asarray(data.true_order, dtype=np.int64)

    def word_cells(p):
        length, n_words = len(order), p.rules.shape[1]
        remaining = np.empty((length + 1, n_words), dtype=np.uint64)
        remaining[0] = p.all_rows
        n_cap, n_pos = np.zeros(length + 1), np.zeros(length + 1)
        capture_counts_from(p.rules, p.y, order, length, 0, remaining, n_cap, n_pos)
        return len(_cells(p.rules, order, length, remaining)[0])

    grouped = row_order.grouped_by(problem, order)
    # file order: every cell of the 6-rule list is spread over nearly all 625 words
    assert word_cells(problem) > 10 * word_cells(grouped)
    assert word_cells(grouped) <= problem.rules.shape[1] + 2 * (len(order) + 1) ** 2


@pytest.mark.parametrize("n_steps", [2000, 100])
def test_the_search_on_sorted_rows_ends_exactly_where_it_ends_on_the_rows_in_file_order(monkeypatch, n_steps):
    """Chains, polish, basin hopping and the posterior walks (with 2,000 steps a chain the short check of the
    agreed list; with 100, which rarely propose a given rule, full stages): every step the same on the sorted
    rows."""
    data, problem = _problem(7, 12_000, n_rules=120)
    assert problem.n_rows >= row_order.MIN_ROWS
    sorted_search = anneal(problem, n_chains=2, n_steps=n_steps, random_state=11)
    assert sorted_search.walks
    monkeypatch.setattr(row_order, "MIN_ROWS", 10 ** 9)   # the rows as they came
    file_order = anneal(problem, n_chains=2, n_steps=n_steps, random_state=11)
    assert [s.ends for s in sorted_search.walks] == [s.ends for s in file_order.walks]
    assert sorted_search.chain_orders == file_order.chain_orders
    assert sorted_search.chain_values == file_order.chain_values
    assert sorted_search.acceptance_rates == file_order.acceptance_rates
    assert sorted_search.best.order == file_order.best.order
    assert sorted_search.best.log_posterior == pytest.approx(fit_list(problem, file_order.best.order).log_posterior,
                                                             abs=0)
