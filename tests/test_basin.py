"""Basin hopping after the polish (frl_engine.basin) and the default search it belongs to."""

import functools
import itertools

import numpy as np
import pytest

from frl_engine.anneal import anneal, polish
from frl_engine.basin import PolishCache, hop, kick, polish_order, regrow_tails
from frl_engine.model import Hyperparameters, PackedProblem, fit_list
from frl_engine.search_report import SearchReport
from frl_engine.simulate import simulate_rule_list_data


def _problem(seed, n_rows, n_rules, weights=None, lam=8.0, probabilities=(0.85, 0.7, 0.55, 0.4, 0.25, 0.1)):
    data = simulate_rule_list_data(np.random.default_rng(seed), n_rows, n_rules=n_rules, probabilities=probabilities)
    return data, PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters(lam=lam), weights)


def test_hop_is_never_worse_than_its_polished_start_and_its_value_is_exact():
    data, problem = _problem(5, 1200, 60)
    rng = np.random.default_rng(0)
    for start in ([], list(range(10)), list(rng.choice(60, 4, replace=False))):
        polished = polish(problem, start)[1]
        result = hop(problem, start, np.random.default_rng(1), patience=3)
        assert result.start_value == pytest.approx(polished, abs=1e-9)
        assert result.value >= polished - 1e-9
        assert result.value == pytest.approx(fit_list(problem, result.order).log_posterior, abs=1e-9)


def test_regrow_tails_ends_where_no_tail_cut_improves():
    data, problem = _problem(6, 1500, 80)
    start, value = polish_order(problem, [3, 7, 11, 19, 23, 31, 40, 52])
    order, final, n_polishes, _ = regrow_tails(problem, start, value)
    assert final >= value - 1e-9 and n_polishes >= len(start) - len(start) // 2
    assert final == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)
    for cut in range(len(order) - 1, len(order) // 2 - 1, -1):
        # each cut, polished again independently of the engine's cache, is no better
        again = fit_list(problem, polish(problem, list(order[:cut]))[0]).log_posterior
        assert again <= final + 1e-9, cut


def test_kicks_are_seeded_sublists():
    order = np.arange(10, 22)
    for seed in range(20):
        one = kick(np.random.default_rng(seed), order)
        assert np.array_equal(one, kick(np.random.default_rng(seed), order))
        assert 2 <= len(order) - len(one) <= 4
        assert list(one) == [r for r in order if r in set(one.tolist())]   # order kept
    assert len(kick(np.random.default_rng(0), [4, 5])) == 0


def test_the_cache_returns_what_a_fresh_polish_returns():
    data, problem = _problem(7, 800, 40)
    cache = PolishCache()
    first = cache.polish(problem, [1, 2, 3])
    second = cache.polish(problem, (1, 2, 3))
    fresh = polish(problem, [1, 2, 3])
    assert cache.n_hits == 1 and cache.n_polishes == 1 and cache.n_passes >= 1
    assert tuple(first[0]) == tuple(second[0]) == fresh[0] and first[1] == second[1] == fresh[1]


def test_polish_with_unequal_rule_weights_ends_at_a_local_maximum():
    """The table scan's prior terms with unequal weights: no REPLACE/ADD/SWAP/REMOVE neighbour is better."""
    from test_anneal import _neighbours

    weights = np.random.default_rng(3).uniform(0.2, 4.0, 12)
    data, problem = _problem(21, 600, 12, weights=weights, lam=3.0, probabilities=(0.8, 0.6, 0.4, 0.1))
    for start in ([], [5, 3], list(range(8))):
        order, value = polish(problem, start)
        assert value == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)
        best_neighbour = max(fit_list(problem, n).log_posterior for n in _neighbours(order, 12))
        assert best_neighbour <= value + 1e-9, (start, order)


def test_the_default_search_finds_the_exact_map_of_an_enumerable_problem():
    """7 candidate rules: all 13,700 lists enumerated; every seed of the default search ends at the best one."""
    data, problem = _problem(11, 700, 7, lam=3.0, probabilities=(0.8, 0.55, 0.3, 0.1))
    values = {}
    for length in range(8):
        for order in itertools.permutations(range(7), length):
            values[order] = fit_list(problem, order).log_posterior
    exact = max(values.values())
    for seed in range(4):
        result = anneal(problem, n_chains=4, n_steps=300, random_state=seed)
        assert result.best.log_posterior == pytest.approx(exact, abs=1e-9), seed
        assert result.report.converged


def test_hopping_is_reproducible_whatever_the_number_of_workers():
    """With kicks (patience 2) and restarts, 1 or 2 threads give the same chains, report and cost."""
    data, problem = _problem(2, 1500, 120)
    runs = [anneal(problem, n_steps=200, n_chains=3, max_chains=6, hop_patience=2, random_state=4, n_jobs=jobs)
            for jobs in (1, 2)]
    assert runs[0].chain_orders == runs[1].chain_orders
    assert runs[0].chain_values == runs[1].chain_values
    assert runs[0].chain_polished_values == runs[1].chain_polished_values
    assert runs[0].report == runs[1].report
    assert all(v >= p - 1e-9 for v, p in zip(runs[0].chain_values, runs[0].chain_polished_values))


def test_the_report_counts_the_chains_hopping_improved():
    data, problem = _problem(9, 3000, 300)
    result = anneal(problem, n_chains=4, random_state=0)
    gains = np.asarray(result.chain_values) - np.asarray(result.chain_polished_values)
    report = result.report
    assert report.n_hopped == int((gains > 1e-6).sum())
    assert report.hop_gain_nats == pytest.approx(max(gains.max(), 0.0))
    assert SearchReport.from_dict(report.to_dict()) == report
    # without basin hopping the report says nothing about it, and old files load
    plain = anneal(problem, n_chains=2, n_steps=500, hop_patience=None, random_state=0).report
    assert plain.n_hopped is None and "n_hopped" not in plain.to_dict()
    assert SearchReport.from_dict(plain.to_dict()) == plain


# A REPLACE or an ADD can leave a later rule reaching no row; the polish also tries each such move followed by the
# removal of those rules (paper section 3.1's search space is unchanged: these are lists two or more moves away).


def _split_rule_problem(seed=1, n_rows=3000, n_noise=60):
    """Rule 0 is a strong rule A; rules 1 and 2 are A AND x, A AND z, which together hold nearly all of A's rows."""
    rng = np.random.default_rng(seed)
    a = rng.random(n_rows) < 0.2
    x = rng.random(n_rows) < 0.7
    z = ~x | (rng.random(n_rows) < 0.2)
    y = rng.random(n_rows) < np.where(a & x, 0.5, np.where(a, 0.38, 0.08))
    noise = [rng.random(n_rows) < rng.uniform(0.05, 0.4) for _ in range(n_noise)]
    coverage = np.stack([a, a & x, a & z, *noise], axis=1)
    return coverage, PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=3.0))


def _after_dropping_unreached(order, changed, coverage):
    """``order`` without its rules after position ``changed`` that capture no row (plain numpy)."""
    left = np.ones(coverage.shape[0], dtype=bool)
    kept = []
    for pos, rule in enumerate(order):
        caught = left & coverage[:, rule]
        left &= ~caught
        if pos <= changed or caught.any():
            kept.append(rule)
    return kept


def _neighbours_dropping_unreached(order, coverage):
    """Every REPLACE and ADD neighbour of ``order`` with the later rules it leaves unreached removed."""
    order = list(order)
    out = []
    for rule in (r for r in range(coverage.shape[1]) if r not in order):
        for i in range(len(order)):
            out.append(_after_dropping_unreached(order[:i] + [rule] + order[i + 1:], i, coverage))
        for i in range(len(order) + 1):
            out.append(_after_dropping_unreached(order[:i] + [rule] + order[i:], i, coverage))
    return out


def test_a_strong_rule_split_in_two_is_merged_again_by_the_polish():
    """The trap of real exports (`number_inpatient >= 2 AND glimepiride = No`, then `... AND rosiglitazone = No`):
    no single move improves the split list, yet the list with the strong rule alone is 4.9 nats better."""
    from test_anneal import _neighbours

    coverage, problem = _split_rule_problem()
    split = fit_list(problem, [1, 2]).log_posterior
    merged = fit_list(problem, [0]).log_posterior
    assert merged > split + 4
    assert max(fit_list(problem, n).log_posterior for n in _neighbours([1, 2], coverage.shape[1])) <= split + 1e-9
    order, value = polish(problem, [1, 2])
    assert value >= merged - 1e-9 and 0 in order
    assert value == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)


@pytest.mark.parametrize("seed", [1, 3])
def test_no_move_that_drops_the_rules_it_leaves_unreached_improves_a_polished_list(seed):
    from test_anneal import _neighbours

    coverage, problem = _split_rule_problem(seed, n_rows=1500, n_noise=12)
    rng = np.random.default_rng(seed)
    for start in ([], [1, 2], [1, 2, 5], list(rng.choice(15, 6, replace=False))):
        order, value = polish(problem, start)
        assert value == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)
        neighbours = _neighbours(order, 15) + _neighbours_dropping_unreached(order, coverage)
        assert max(fit_list(problem, n).log_posterior for n in neighbours) <= value + 1e-9, (start, order)


def _brute_force_neighbours(problem, order):
    """Every list one polish move away, scored by the exact objective, written without the engine's cells:
    each SWAP, REMOVE, REPLACE and ADD, and each REPLACE or ADD followed by the removal of the later rules it
    leaves reaching no row."""
    from frl_engine.bits import capture_counts

    order = list(order)
    length = len(order)
    unused = [r for r in range(problem.n_rules) if r not in order]
    lists = []
    for i, j in itertools.combinations(range(length), 2):
        swapped = order.copy()
        swapped[i], swapped[j] = swapped[j], swapped[i]
        lists.append(swapped)
    lists += [order[:i] + order[i + 1:] for i in range(length)]
    for r in unused:
        for i in range(length):
            lists.append(order[:i] + [r] + order[i + 1:])
        for i in range(length + 1):
            lists.append(order[:i] + [r] + order[i:])
    scored = []
    for candidate in lists:
        scored.append(fit_list(problem, candidate).log_posterior)
        changed = next(k for k in range(len(candidate) + 1)
                       if k == len(candidate) or k >= len(order) or candidate[k] != order[k])
        n_cap, _ = capture_counts(problem.rules, problem.y, problem.all_rows, candidate)
        kept = [rule for k, rule in enumerate(candidate) if k <= changed or n_cap[k] > 0]
        if len(kept) < len(candidate):
            scored.append(fit_list(problem, kept).log_posterior)
    return scored


@pytest.mark.parametrize("seed", [0, 1])
def test_one_polish_move_goes_to_the_best_neighbour(seed):
    """One pass of the polish (its rules' rows counted per cell in one sweep over all rules at once) moves to the
    best of every neighbour, each scored by the exact objective on its own; on 700 rows (11 words) and lists of
    6 to 9 rules, so that the list's cells are many and spread over the words."""
    from frl_engine.polish import polish_list

    _, problem = _problem(20 + seed, 700, 30)
    assert problem.rules_by_word.shape == (problem.rules.shape[1], problem.n_rules)
    assert np.array_equal(problem.rules_by_word.T, problem.rules)
    rng = np.random.default_rng(seed)
    for length in (6, 9):
        start = [int(r) for r in rng.choice(problem.n_rules, length, replace=False)]
        start_value = fit_list(problem, start).log_posterior
        moved, value, n_moves = polish_list(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                            problem.cum_weights, problem.log_weights, problem.consts,
                                            np.array(start, dtype=np.int64), 1)
        best = max(_brute_force_neighbours(problem, start))
        if best > start_value + 1e-9:
            assert n_moves == 1 and value == pytest.approx(best, abs=1e-8)
            assert fit_list(problem, moved.tolist()).log_posterior == pytest.approx(value, abs=1e-8)
        else:
            assert n_moves == 0 and list(moved) == start


def _smooth_risk_model(variant: str = "null", n_rows: int = 3000, seed: int = 0):
    """The default fit (seed 0) of the smooth-risk ward table (sample_data/make_smooth_risk_table.py)."""
    return _smooth_risk_fit(variant, n_rows, seed, 0)


def _smooth_risk_fit(variant: str, n_rows: int, table_seed: int, fit_seed: int):
    """The default fit of seed ``fit_seed`` of the smooth-risk ward table made with ``table_seed``."""
    from frl_engine import FallingRuleListClassifier

    X, y = _smooth_risk_table(variant, n_rows, table_seed)
    return FallingRuleListClassifier(random_state=fit_seed).fit(X, y)


@functools.lru_cache(maxsize=4)
def _smooth_risk_table(variant: str, n_rows: int, seed: int):
    import sys
    from pathlib import Path

    from frl_engine.io import read_table, split_target

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sample_data"))
    from make_smooth_risk_table import TARGET, make_smooth_risk_table

    X, y, _ = split_target(read_table(make_smooth_risk_table(variant, n_rows, seed), "table.csv"), TARGET, None)
    return X, y


def test_a_middle_rule_that_a_better_one_should_replace_lower_down_is_dropped_and_regrown(monkeypatch):
    """On a table whose risk is smooth, 'Creatinine >= 1.3' third is a local maximum: no single move and no
    tail cut improves it, but the list polished again without it ends 0.36 nats better, with 'Creatinine >=
    0.98' at the bottom.  The sweep's drops find it; with the drops off (as above DROP_CELLS_MAX) it stays."""
    import frl_engine.basin as basin

    model = _smooth_risk_model()
    problem = model.problem_
    index = {name: i for i, name in enumerate(model.candidate_names_)}
    trapped = [index[name] for name in ("Age (years) >= 76 AND Heart rate >= 75",
                                        "Age (years) >= 38 AND Heart rate >= 120",
                                        "Age (years) >= 38 AND Creatinine >= 1.3",
                                        "Age (years) >= 57 AND Sex = M")]
    order, value = polish_order(problem, trapped)
    assert list(order) == trapped                                     # a local maximum of the single moves
    assert problem.n_rows * problem.n_rules <= basin.DROP_CELLS_MAX
    better, better_value, _, improved = regrow_tails(problem, order, value)
    assert [model.candidate_names_[i] for i in better] == [
        "Age (years) >= 76 AND Heart rate >= 75", "Age (years) >= 38 AND Heart rate >= 120",
        "Age (years) >= 57 AND Sex = M", "Age (years) >= 38 AND Creatinine >= 0.98"]
    assert improved >= 1 and better_value - value == pytest.approx(0.36, abs=0.01)
    assert better_value == pytest.approx(fit_list(problem, better).log_posterior, abs=1e-9)
    monkeypatch.setattr(basin, "DROP_CELLS_MAX", 0)
    cuts_only, cuts_value, n_polishes, _ = regrow_tails(problem, order, value, beam=False)
    assert list(cuts_only) == trapped and cuts_value == value and n_polishes == len(trapped) - len(trapped) // 2
    # the beam over the last cuts (frl_engine.tails) reaches the same list without the drops
    by_beam, beam_value, _, _ = regrow_tails(problem, order, value)
    assert list(by_beam) == list(better) and beam_value == pytest.approx(better_value, abs=1e-9)


def test_every_seed_of_the_default_search_agrees_on_a_smooth_risk_table(monkeypatch):
    """The same table: with 16 chains and tail cuts only, seeds ended 0.36 nats apart and most said 'not
    converged'; the default search (drops, the tail beam, and up to 64 chains on a problem this small)
    converges on one list on every seed of 0 to 5."""
    model = _smooth_risk_model()
    results = [anneal(model.problem_, n_chains=4, random_state=seed) for seed in range(6)]
    values = [result.best.log_posterior for result in results]
    assert max(values) - min(values) < 1e-6
    assert all(result.report.converged for result in results)
    assert model.log_posterior_ == pytest.approx(max(values), abs=1e-6)
    # as before: tail cuts only (no drops, no beam), 16 chains
    import frl_engine.basin as basin

    monkeypatch.setattr(basin, "DROP_CELLS_MAX", 0)
    monkeypatch.setattr(basin, "TAIL_CUTS", 0)
    before = [anneal(model.problem_, n_chains=4, max_chains=16, random_state=seed) for seed in range(6)]
    assert max(values) - min(result.best.log_posterior for result in before) > 0.3
    assert sum(result.report.converged for result in before) <= 3


def test_four_agreeing_chains_are_too_few_where_the_best_list_is_long():
    """50,000 patients of the smooth-risk table (SpO2 as '95%', charges as '$'; seed 1): the risk wants a long
    staircase of age, heart rate and creatinine cuts.  On search seed 2 the four chains of the first round all
    end at one 12-rule list; with the old bar (unseen share 1/6 <= 0.2) the search stopped there, 7.9 nats below
    the 15-rule list that more chains reach.  At 0.1 a second round runs and every seed of 0 to 2 prints it."""
    from frl_engine.search_report import UNSEEN_SHARE_MAX, search_report

    problem = _smooth_risk_model("percent", 50_000, 1).problem_
    results = [anneal(problem, n_chains=4, random_state=seed) for seed in range(3)]
    values = [result.best.log_posterior for result in results]
    assert max(values) - min(values) < 1e-6 and all(len(result.best.order) == 15 for result in results)
    first_round = results[2].chain_values[:4]
    assert max(first_round) - min(first_round) < 1e-6 and max(first_round) < values[2] - 7.0
    assert search_report(first_round).unseen_share == pytest.approx(1 / 6)
    assert 1 / 6 > UNSEEN_SHARE_MAX
