"""Jumps between known good lists (frl_engine.jumps): a symmetric move of several rules at once.

The claims: a jump and its inverse undo each other, so the list proposal is symmetric (checked by
enumerating every list of a small problem); the sampler with jumps still draws the paper's posterior
exactly (against quadrature); and jumps carry a chain across a valley that single moves cross rarely.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frl_engine.jumps import (NO_ANCHOR, TOP, apply_jump, count_applicable, encode_jumps, list_jumps, list_segments,
                              jump_index, mark_positions)
from frl_engine.model import PackedProblem
from frl_engine.sampler import sample_posterior
from test_sampler import SETTINGS, assert_frequencies_match, exact_posterior, small_data, total_variation


def _positions(order, n_rules):
    position = np.full(n_rules, -1, dtype=np.int64)
    mark_positions(position, np.asarray(order, dtype=np.int64), len(order))
    return position


def _apply(jump, current, n_rules=10):
    data, starts = encode_jumps([jump])
    order = np.asarray(current, dtype=np.int64)
    proposal = np.zeros(32, dtype=np.int64)
    where = np.zeros(len(data) + 2, dtype=np.int64)
    n = apply_jump(data, starts, 0, order, len(order), _positions(order, n_rules), proposal, where)
    return None if n < 0 else (tuple(int(r) for r in proposal[:n]), int(where[0]))


def test_segments_are_the_runs_between_the_rules_two_lists_share():
    # common rules 1 and 3: 2 is replaced by 5 (anywhere), 4 is deleted after 3
    assert list_segments([1, 2, 3, 4], [1, 5, 3]) == [(NO_ANCHOR, (2,), (5,)), (3, (4,), ())]
    # a rule inserted at the top, and a run of two replaced by one
    assert list_segments([1, 2, 3], [7, 1, 6]) == [(TOP, (), (7,)), (NO_ANCHOR, (2, 3), (6,))]
    assert list_segments([1, 2], [1, 2]) == []


def test_a_jump_rewrites_every_run_at_once_wherever_the_runs_are():
    jump = tuple(list_segments([1, 2, 3, 4], [1, 5, 3]))   # replace 2 by 5, drop the 4 that follows 3
    assert _apply(jump, (1, 2, 3, 4)) == ((1, 5, 3), 1)
    # on another list holding the same runs (2 anywhere; 4 right after 3)
    assert _apply(jump, (8, 2, 0, 3, 4, 9)) == ((8, 5, 0, 3, 9), 1)
    # not when 4 does not follow 3 (the deletion's anchor), nor when 5 is in the list already
    assert _apply(jump, (2, 3, 0, 4)) is None
    assert _apply(jump, (2, 5, 3, 4)) is None
    # its inverse puts them back: 5 becomes 2, 4 goes right after 3
    inverse = tuple((anchor, b, a) for anchor, a, b in jump)
    assert _apply(inverse, (8, 5, 0, 3, 9)) == ((8, 2, 0, 3, 4, 9), 1)


def test_an_insertion_goes_right_after_its_anchor_or_at_the_top():
    jump = tuple(list_segments([1, 2], [7, 1, 6, 2]))
    assert jump == ((TOP, (), (7,)), (1, (), (6,)))
    assert _apply(jump, (1, 2)) == ((7, 1, 6, 2), 0)
    assert _apply(jump, (3, 1, 4)) == ((7, 3, 1, 6, 4), 0)
    inverse = tuple((anchor, b, a) for anchor, a, b in jump)
    assert _apply(inverse, (7, 3, 1, 6, 4)) == ((3, 1, 4), 0)


def test_the_jumps_of_two_lists_are_every_part_of_their_difference_in_every_form_with_inverses():
    # one gap, a deletion of 2 after 1: after its anchor, or as (1, 2) -> (1,), or as (2, 3) -> (3,)
    data, starts = list_jumps([(1, 2, 3), (1, 3)])
    jumps = {tuple(data[starts[t]:starts[t + 1]]) for t in range(len(starts) - 1)}
    expected = encode_jumps([((1, (2,), ()),), ((1, (), (2,)),), ((NO_ANCHOR, (1, 2), (1,)),),
                             ((NO_ANCHOR, (1,), (1, 2)),), ((NO_ANCHOR, (2, 3), (3,)),), ((NO_ANCHOR, (3,), (2, 3)),)])
    assert jumps == {tuple(expected[0][expected[1][t]:expected[1][t + 1]]) for t in range(6)}
    # the form that takes in the rule before applies whatever comes before it
    assert _apply(((NO_ANCHOR, (1, 2), (1,)),), (9, 1, 2, 3)) == ((9, 1, 3), 1)
    # two gaps give the jump of both and each alone
    data, starts = list_jumps([(1, 2, 3, 4), (1, 5, 3)])
    sizes = [int(data[starts[t]]) for t in range(len(starts) - 1)]
    assert sizes.count(2) >= 2 and sizes.count(1) >= 2 and sizes == sorted(sizes, reverse=True)


def _all_lists(n_rules, max_length):
    for length in range(max_length + 1):
        yield from itertools.permutations(range(n_rules), length)


@pytest.mark.parametrize("known", [[(0, 1, 2, 3), (0, 4, 2), (4, 3), (1, 0)],
                                   [(0, 1, 2), (3, 2, 1, 0)], [(2,), (0, 1, 2, 3, 4)]])
def test_the_list_proposal_is_symmetric_on_every_list_of_a_small_problem(known):
    """As many jumps take c to c' as take c' back to c, for every list c of the 5 rules."""
    data, starts = list_jumps(known)
    n_jumps = len(starts) - 1
    assert n_jumps >= 2
    keys = jump_index(data, starts, 5)
    proposal = np.zeros(16, dtype=np.int64)
    where = np.zeros(len(data) + 2, dtype=np.int64)
    moves = {}
    n_applied = 0
    for current in _all_lists(5, 5):
        order = np.asarray(current, dtype=np.int64)
        position = _positions(order, 5)
        assert count_applicable(data, starts, *keys, order, len(order), position, where) == sum(
            apply_jump(data, starts, t, order, len(order), position, proposal, where) >= 0 for t in range(n_jumps))
        for t in range(n_jumps):
            n = apply_jump(data, starts, t, order, len(order), position, proposal, where)
            if n >= 0:
                new = tuple(int(r) for r in proposal[:n])
                assert len(set(new)) == n and new != current
                moves[(current, new)] = moves.get((current, new), 0) + 1
                n_applied += 1
    assert n_applied > 50
    for (current, new), count in moves.items():
        assert moves.get((new, current), 0) == count, (current, new)


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_sampler_with_jumps_draws_the_papers_posterior(setting):
    """Every move with fresh risks a jump (jump_share=1): the list posterior and the risks stay exact."""
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {o: v["prob"] for o, v in exact.items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    known = [(0, 1, 2), (2,), (1, 0), (0, 2), (2, 0, 1)]
    result = sample_posterior(problem, n_samples=30_000, n_chains=2, burn_in=1000, thin=2, start=[0],
                              random_state=7, n_jobs=1, refresh=5, jumps=known, jump_share=1.0)
    assert result.refresh_acceptance["jumps_proposed"] > 10_000
    assert result.refresh_acceptance["jumps"] > 0.05
    assert total_variation(probabilities, result.orders) <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, f"jumps, {setting}")


def test_a_sample_with_jumps_is_the_same_whatever_n_jobs():
    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    known = [(0, 1, 2), (2,), (1, 0)]
    runs = [sample_posterior(problem, n_samples=300, n_chains=3, burn_in=50, starts=known, random_state=4,
                             n_jobs=n_jobs, refresh=5, jumps=known, jump_share=0.5) for n_jobs in (1, 2)]
    assert runs[0].lists == runs[1].lists
    np.testing.assert_array_equal(runs[0].log_posterior_trace, runs[1].log_posterior_trace)
    assert runs[0].refresh_acceptance == runs[1].refresh_acceptance
    assert "jumps between known lists" in runs[0].summary()


def test_jumps_off_or_without_two_lists_leave_the_sampler_as_it_was():
    """jump_share=0, or a single known list, draws exactly what the sampler drew before jumps existed."""
    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    kwargs = dict(n_samples=200, n_chains=2, burn_in=20, start=[0], random_state=2, n_jobs=1, refresh=5)
    plain = sample_posterior(problem, **kwargs)
    for extra in ({"jumps": [(0, 1), (2,)], "jump_share": 0.0}, {"jumps": [(0, 1), (0, 1)]}):
        again = sample_posterior(problem, **kwargs, **extra)
        assert again.lists == plain.lists and "jumps" not in again.refresh_acceptance
    with_jumps = sample_posterior(problem, **kwargs, jumps=[(0, 1), (2,)])
    assert with_jumps.refresh_acceptance["jumps_proposed"] > 0


@pytest.mark.parametrize("kwargs", [{"jump_share": 1.5}, {"jump_share": -0.1}, {"jump_share": True},
                                    {"jumps": [[0, 7]]}])
def test_bad_jumps_are_refused(kwargs):
    from frl_engine.errors import FRLError

    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    with pytest.raises(FRLError, match="jump"):
        sample_posterior(problem, n_samples=10, n_chains=1, start=[0], random_state=0, **kwargs)


def test_the_estimator_jumps_between_the_lists_its_search_ended_at():
    """The default posterior sample jumps between the MAP list and the first round's lists when they differ."""
    from dataclasses import replace

    import pandas as pd

    from frl_engine import FallingRuleListClassifier
    from frl_engine.simulate import simulate_rule_list_data

    data = simulate_rule_list_data(np.random.default_rng(4), 800, n_rules=30, probabilities=(0.8, 0.5, 0.3, 0.1))
    frame = pd.DataFrame(data.coverage, columns=[f"r{j}" for j in range(30)])
    model = FallingRuleListClassifier(mine_rules=False, n_chains=2, random_state=0).fit(frame, data.y)
    search = model.anneal_result_
    # the search's first round ended at the MAP list and at a list that differs from it in two rules
    unused = [r for r in range(30) if r not in model.map_fit_.order][:2]
    other = tuple(model.map_fit_.order[:2]) + tuple(unused) + tuple(model.map_fit_.order[2:])
    model.anneal_result_ = replace(search, chain_orders=(tuple(model.map_fit_.order), other))
    sample = model.sample_posterior(n_samples=150, n_chains=2, random_state=5, n_jobs=1, extend=False)
    assert sample.refresh_acceptance["jumps_proposed"] > 0
    # one list only: nothing to jump between
    model.anneal_result_ = replace(search, chain_orders=(tuple(model.map_fit_.order),) * 2)
    sample = model.sample_posterior(n_samples=150, n_chains=2, random_state=5, n_jobs=1, extend=False)
    assert "jumps" not in sample.refresh_acceptance


def test_lists_far_apart_give_their_whole_difference_and_each_gap_alone_quickly():
    """Every part in every form would be 4 ** 12 jumps for two lists 12 deletions apart."""
    import time

    a = list(range(24))
    b = list(range(0, 24, 2))
    started = time.perf_counter()
    data, starts = list_jumps([a, b])
    assert time.perf_counter() - started < 5
    sizes = [int(data[starts[t]]) for t in range(len(starts) - 1)]
    assert sizes.count(12) == 2 and sizes.count(1) == len(sizes) - 2   # the whole jump and its inverse
