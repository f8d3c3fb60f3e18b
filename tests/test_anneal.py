"""Simulated annealing finds the MAP list (paper sections 3.1 and 4)."""

from pathlib import Path

import numpy as np
import pytest

from frl_engine.anneal import (DEFAULT_ROUNDS, MAX_ROUNDS, SEARCH_CELL_BUDGET, anneal, default_chain_budget,
                                temperature_schedule)
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


# ----------------------------------------------------------------------------------------
# The MAP search: greedy start, polish to a local maximum, restarts until two chains agree.


def _neighbours(order, n_rules):
    """Every list one move away (swap, replace, add, remove), enumerated independently of the engine."""
    order = list(order)
    out = []
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            swapped = order.copy()
            swapped[i], swapped[j] = swapped[j], swapped[i]
            out.append(swapped)
        out.append(order[:i] + order[i + 1:])
    unused = [r for r in range(n_rules) if r not in order]
    for r in unused:
        for i in range(len(order)):
            out.append(order[:i] + [r] + order[i + 1:])
        for i in range(len(order) + 1):
            out.append(order[:i] + [r] + order[i:])
    return out


def test_polish_ends_at_a_local_maximum_of_the_exact_objective():
    from frl_engine.anneal import polish

    data = simulate_rule_list_data(np.random.default_rng(21), 600, n_rules=12, probabilities=(0.8, 0.6, 0.4, 0.1))
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters(lam=3.0))
    for start in ([], [5, 3], list(range(8))):
        order, value = polish(problem, start)
        assert value == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)
        assert value >= fit_list(problem, start).log_posterior - 1e-9
        best_neighbour = max(fit_list(problem, n).log_posterior for n in _neighbours(order, 12))
        assert best_neighbour <= value + 1e-9, (start, order)


def test_the_binomial_maximum_looked_up_is_the_closed_form():
    from frl_engine.polish import _binomial_max_at, x_log_x_table

    table = x_log_x_table(100_000)
    for n in list(range(0, 60)) + [4_601, 99_999, 100_000]:
        for events in sorted({0, min(1, n), n // 3, n // 2, max(n - 1, 0), n}):
            rate = events / n if n else 0.0
            expected = 0.0 if events in (0, n) else events * np.log(rate) + (n - events) * np.log1p(-rate)
            assert _binomial_max_at(table, float(n), float(events)) == pytest.approx(expected, rel=1e-12, abs=1e-9)


def _nested_problem(seed, screened_rules=0):
    """Six random columns and every pair of them ANDed: a rule above its AND with another column leaves that
    AND reaching no row, so the polish's moves that drop such rules (REPLACE or ADD, then removal) arise."""
    rng = np.random.default_rng(seed)
    columns = rng.random((700, 6)) < 0.4
    pairs = [columns[:, i] & columns[:, j] for i in range(6) for j in range(i + 1, 6)]
    coverage = np.column_stack([columns] + pairs)
    logit = -1.5 + 1.2 * columns[:, 0] + 0.8 * (columns[:, 1] & columns[:, 2]) + 0.6 * columns[:, 3]
    y = rng.random(700) < 1 / (1 + np.exp(-logit))
    return PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=4.0), screened_rules=screened_rules)


def _without_unreached_after(problem, start, order, first):
    """``order`` (a REPLACE or ADD of ``start`` at ``first``) without its later rules reaching no row, when the
    move left one of them reaching no row that reached some in ``start``; else None (no such compound move)."""
    before = dict(zip(start, fit_list(problem, start).supports))
    supports = fit_list(problem, order).supports
    if not any(supports[pos] == 0 and before[rule] > 0 for pos, rule in enumerate(order) if pos > first):
        return None
    return [rule for pos, rule in enumerate(order) if pos <= first or supports[pos] > 0]


@pytest.mark.parametrize("screened_rules", [0, 2_000])
def test_one_polish_move_is_the_best_of_the_whole_neighbourhood_with_rules_left_unreached_dropped(screened_rules):
    """Every swap, replace, add and remove, and every replace or add followed by the removal of the later rules
    it leaves reaching no row, enumerated here and scored by fit_list: the polish's one move reaches the best.
    Also when mining found 2,000 rules more than were kept (the rule prior's normaliser, eq. pc)."""
    from frl_engine.polish import polish_list

    n_compound = n_compound_best = 0
    for seed in range(3):
        problem = _nested_problem(seed, screened_rules)
        n_rules = problem.n_rules
        rng = np.random.default_rng(100 + seed)
        for _ in range(6):
            start = [int(r) for r in rng.choice(n_rules, size=int(rng.integers(0, 7)), replace=False)]
            start_value = fit_list(problem, start).log_posterior
            candidates = _neighbours(start, n_rules)
            unused = [r for r in range(n_rules) if r not in start]
            for r in unused:
                for i in range(len(start)):
                    candidates.append(_without_unreached_after(problem, start, start[:i] + [r] + start[i + 1:], i))
                for i in range(len(start) + 1):
                    candidates.append(_without_unreached_after(problem, start, start[:i] + [r] + start[i:], i))
            n_compound += sum(c is not None for c in candidates[len(_neighbours(start, n_rules)):])
            candidates = [c for c in candidates if c is not None]
            best = max(fit_list(problem, c).log_posterior for c in candidates)
            order, value, moves = polish_list(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                              problem.cum_weights, problem.log_weights, problem.consts,
                                              np.asarray(start, dtype=np.int64), 1)
            simple = max(fit_list(problem, c).log_posterior for c in _neighbours(start, n_rules))
            n_compound_best += best > simple + 1e-9
            if best > start_value + 1e-9:
                assert moves == 1 and value == pytest.approx(best, abs=1e-9), (seed, start)
                assert value == pytest.approx(fit_list(problem, order).log_posterior, abs=1e-9)
            else:
                assert moves == 0 and list(order) == start
    assert n_compound > 100 and n_compound_best >= 1   # the compound moves were there, and some were the best


def test_planted_list_is_found_by_every_seed():
    """A 6-rule falling list among 200 candidates: every seed of the default search reaches its objective."""
    data = simulate_rule_list_data(np.random.default_rng(8), 3000, n_rules=200,
                                   probabilities=(0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.15))
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    truth = fit_list(problem, data.true_order).log_posterior
    for seed in range(5):
        result = anneal(problem, n_chains=4, random_state=seed)
        assert result.best.log_posterior >= truth - 1e-6, seed
        assert result.report.converged and result.report.n_reached_best >= 2
        assert result.chain_starts[0] == "greedy" and set(result.chain_starts[1:]) == {"prior"}
    # The paper's plain annealing (no polish, no greedy start) runs exactly the chains asked for.
    plain = anneal(problem, n_chains=3, n_steps=500, polish=False, random_state=0)
    assert len(plain.chain_values) == 3 and set(plain.chain_starts) == {"prior"}


def test_an_unconverged_search_is_reported_as_such():
    """Ten annealing steps from the prior and no polish cannot agree on a 6-rule list among 200 rules."""
    data = simulate_rule_list_data(np.random.default_rng(8), 3000, n_rules=200,
                                   probabilities=(0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.15))
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    result = anneal(problem, n_steps=10, n_chains=3, polish=False, random_state=0)
    report = result.report
    assert not report.converged and report.n_reached_best == 1 and report.n_chains == 3
    assert report.spread_nats == pytest.approx(max(result.chain_values) - min(result.chain_values))
    assert report.runner_up_gap_nats > 0
    assert "not converged" in report.message() and "--chains" in report.message()
    # the report survives the model file's JSON round trip
    from frl_engine.anneal import SearchReport

    assert SearchReport.from_dict(report.to_dict()) == report


def _posterior_unseen_share(n_starts, n_found, k_max=200_000):
    """E[relative size of the basins not found | n starts ended at w different local maxima], by summation.

    Written from the model, independently of the engine: k local maxima with k uniform on 1, 2, ...
    (improper), basin sizes ~ Dirichlet(1, ..., 1).  Given k, P(the starts' ends | k) is proportional to
    k! / (k - w)! * Gamma(k) / Gamma(n + k) and the unseen mass has expectation (k - w) / (n + k).
    """
    from math import exp, lgamma

    weight = total = 0.0
    for k in range(n_found, k_max):
        p = exp(lgamma(k + 1) - lgamma(k - n_found + 1) + lgamma(k) - lgamma(n_starts + k))
        weight += p
        total += p * (k - n_found) / (n_starts + k)
    return total / weight


def test_the_unseen_share_is_the_posterior_expectation_of_boender_and_rinnooy_kan():
    from frl_engine.search_report import count_distinct, unseen_share

    for n, w in [(4, 1), (4, 2), (8, 2), (8, 3), (12, 5), (16, 9)]:
        # (the sum's tail falls as k ** (w - n), so the truncation leaves up to 2e-5 when n = w + 2)
        assert unseen_share(n, w) == pytest.approx(_posterior_unseen_share(n, w), abs=1e-4), (n, w)
    assert unseen_share(1, 1) == 1.0 and unseen_share(4, 4) == 1.0   # nothing known; capped
    assert count_distinct([-1.0, -1.0 + 1e-8, -2.0, -2.5]) == 3


def test_two_agreeing_chains_are_not_enough_when_the_chains_end_everywhere():
    """Eight chains, two at the best list and six at six other lists: 7 * 8 / 56 = all further chains
    would find a new list, so the search is not called converged, and the message says why."""
    from frl_engine.search_report import UNSEEN_SHARE_MAX, SearchReport, search_report

    scattered = search_report([-10.0, -10.0, -11, -12, -13, -14, -15, -16], 16)
    assert scattered.n_reached_best == 2 and scattered.n_distinct == 7 and scattered.unseen_share == 1.0
    assert not scattered.converged and scattered.unexplored
    line = scattered.message()
    assert "7 different lists" in line and "100% of further chains" in line and "--chains" in line
    assert "Chains on the Fit page" in scattered.message("dashboard")
    # the same agreement with the other chains' ends repeated: two lists, 2 * 3 / 56 = 0.107, just above the bar
    repeated = search_report([-10.0, -10.0, -11, -11, -11, -11, -11, -11], 16)
    assert not repeated.converged and repeated.unseen_share == pytest.approx(6 / 56)
    assert repeated.unseen_share > UNSEEN_SHARE_MAX
    assert "2 different lists" in repeated.message() and "11% of further chains" in repeated.message()
    # a third round of four at those two lists: 2 * 3 / 132 = 0.045
    third = search_report([-10.0, -10.0] + [-11] * 10, 16)
    assert third.converged and third.unseen_share == pytest.approx(6 / 132)
    # converged: the chains that did not reach the best list are said as the others, at a lower list (read beside
    # "converged", "the chains ended at 2 different lists" sounded like a contradiction)
    assert "Search converged: 2 of 12" in third.message() and "the other 10 ended at a lower list" in third.message()
    assert "different lists" not in third.message() and "5% of further chains" in third.message()
    # a model file round trip keeps the new figures; a file written before them still loads
    assert SearchReport.from_dict(scattered.to_dict()) == scattered
    old = {k: v for k, v in scattered.to_dict().items() if k not in ("n_distinct", "unseen_share")}
    assert SearchReport.from_dict(old).unseen_share is None and "not converged" in SearchReport.from_dict(old).message()


def test_two_chains_at_one_list_say_they_are_too_few_not_that_they_ended_at_different_lists():
    """Two chains at the same list: 1 * 2 / 2 = nothing known about other lists (``--chains 1``'s two rounds)."""
    from frl_engine.search_report import search_report

    pair = search_report([-10.0, -10.0], 2)
    assert pair.unseen_share == 1.0 and not pair.converged and pair.unexplored
    line = pair.message()
    assert "2 of 2 chains reached the same best list" in line and "2 chains are too few" in line
    assert "different lists" not in line and "100% of further chains" in line


UCI = Path(__file__).resolve().parents[2] / "shared" / "uci"


@pytest.mark.skipif(not UCI.is_dir(), reason=f"UCI files not found at {UCI}")
def test_the_search_restarts_while_its_chains_end_at_too_many_different_lists():
    """UCI breast cancer (683 rows, 1,441 rules), seed 1: after two rounds of 4 chains two chains agree on the
    best list, but the eight ended at three different lists (unseen share 3/14 > 0.2): a third round runs."""
    from frl_engine import FallingRuleListClassifier
    from frl_engine.datasets import load_dataset
    from frl_engine.search_report import UNSEEN_SHARE_MAX, search_report

    data = load_dataset("breast", UCI)
    model = FallingRuleListClassifier(random_state=1).fit(data.X, data.y)
    values = model.anneal_result_.chain_values
    report = model.search_report_
    # the stopping rule: every round before the last had not converged; the last converged or spent the budget
    assert all(not search_report(values[:k]).converged for k in range(4, len(values), 4))
    assert report.converged or report.n_chains == report.max_chains
    eight = search_report(values[:8])
    assert eight.n_reached_best >= 2 and eight.unseen_share > UNSEEN_SHARE_MAX   # "two agree" alone stopped here
    assert len(values) > 8 and report.max_chains == default_chain_budget(683, 1441, 4)


def test_restarts_are_reproducible_whatever_the_number_of_workers():
    """A search that needs restarts (budget of 6 chains, rounds of 2) gives the same chains on 1 or 2 threads."""
    data = simulate_rule_list_data(np.random.default_rng(2), 1500, n_rules=80)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    runs = [anneal(problem, n_steps=30, n_chains=2, polish=False, max_chains=6, random_state=3, n_jobs=jobs)
            for jobs in (1, 2)]
    assert len(runs[0].chain_values) > 2  # restarts happened
    assert runs[0].chain_orders == runs[1].chain_orders
    assert runs[0].chain_values == runs[1].chain_values
    assert runs[0].report == runs[1].report


def test_the_search_report_reaches_the_model_file_and_the_cli(tmp_path, capsys):
    """The estimator keeps the report, writes it to the model file and reads it back; the CLI warns when unconverged."""
    import json

    import pandas as pd

    from frl_engine import FallingRuleListClassifier
    from frl_engine.cli import main, search_warning
    from frl_engine.search_report import SearchReport

    data = simulate_rule_list_data(np.random.default_rng(8), 1500, n_rules=40, probabilities=(0.8, 0.5, 0.3, 0.1))
    frame = pd.DataFrame(data.coverage, columns=[f"r{j}" for j in range(40)])
    model = FallingRuleListClassifier(mine_rules=False, random_state=0).fit(frame, data.y)
    report = model.search_report_
    assert report.converged and report == model.anneal_result_.report
    assert search_warning(model) is None
    saved = json.loads(json.dumps(model.to_dict()))
    assert saved["search"]["converged"] is True and saved["search"]["n_reached_best"] >= 2
    assert FallingRuleListClassifier.from_dict(saved).search_report_ == report
    # a file written before the search block existed still loads
    del saved["search"]
    assert FallingRuleListClassifier.from_dict(saved).search_report_ is None
    # an unconverged search gives the one-line warning
    model.search_report_ = SearchReport(n_chains=4, n_reached_best=1, spread_nats=5.5, runner_up_gap_nats=0.4,
                                        converged=False, max_chains=16)
    line = search_warning(model)
    assert line.startswith("Warning: Search not converged") and "\n" not in line and "--steps" in line
    # two chains agreed, but the chains ended at too many different lists: the line says so, and asks for chains
    model.search_report_ = SearchReport(n_chains=16, n_reached_best=8, spread_nats=10.3, runner_up_gap_nats=2.7,
                                        converged=False, max_chains=16, n_distinct=8, unseen_share=0.3)
    line = search_warning(model)
    assert line.startswith("Warning: Search not converged: 8 of 16 chains reached the same best list")
    assert "8 different lists" in line and "30% of further chains" in line and "--chains" in line
    assert "\n" not in line
    # `frl fit` prints no warning when the chains agreed
    csv = tmp_path / "d.csv"
    frame.assign(outcome=np.where(data.y, "yes", "no")).to_csv(csv, index=False)
    assert main(["fit", str(csv), "--target", "outcome", "--steps", "500"]) == 0
    assert "Search not converged" not in capsys.readouterr().out


def test_near_neighbour_rules_match_a_brute_force_scan():
    """The rules the sampler proposes more often: those entering a REPLACE/ADD neighbour within the margin.

    Scored by the polish's sweep and bounds; checked against every neighbour's exact objective (fit_list), on
    a small planted problem and on a 60-rule one with unequal rule weights and a list that is not a local
    maximum (so that neighbours above the list's own objective are marked too)."""
    from frl_engine.polish import near_neighbour_rules

    def best_gaps(problem, order):   # each unused rule: its best REPLACE/ADD neighbour's objective, minus the list's
        base = fit_list(problem, order).log_posterior
        gaps = {}
        for r in set(range(problem.n_rules)) - set(order):
            neighbours = [order[:i] + [r] + order[i + 1:] for i in range(len(order))]
            neighbours += [order[:i] + [r] + order[i:] for i in range(len(order) + 1)]
            gaps[r] = max(fit_list(problem, lst).log_posterior for lst in neighbours) - base
        return gaps

    small = simulate_rule_list_data(np.random.default_rng(21), 600, n_rules=12, probabilities=(0.8, 0.6, 0.4, 0.1))
    rng = np.random.default_rng(5)
    large = simulate_rule_list_data(rng, 1500, n_rules=60, probabilities=(0.85, 0.7, 0.5, 0.35, 0.2, 0.1))
    true_large = [int(r) for r in large.true_order]
    cases = [(PackedProblem.from_arrays(small.coverage, small.y, Hyperparameters(lam=3.0)),
              [int(r) for r in small.true_order]),
             (PackedProblem.from_arrays(large.coverage, large.y, Hyperparameters(lam=4.0),
                                        rule_weights=rng.uniform(0.5, 2.0, 60)), true_large[:4] + true_large[5:])]
    for problem, order in cases:
        gaps = best_gaps(problem, order)
        cuts = np.unique(np.round(sorted(gaps.values()), 6))
        margins = [0.5, 3.0, 20.0] + [-(a + b) / 2 for a, b in zip(cuts[:-1], cuts[1:])][::3]
        sizes = set()
        for margin in margins:
            marked = near_neighbour_rules(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                          problem.cum_weights, problem.log_weights, problem.consts,
                                          np.asarray(order, dtype=np.int64), margin)
            expected = {r for r, gap in gaps.items() if gap >= -margin}
            assert set(np.flatnonzero(marked).tolist()) == expected, margin
            sizes.add(len(expected))
        assert len(sizes) >= 4   # margins that mark none, some and all of the rules


def test_a_long_start_list_stays_inside_the_kernels_memory(tmp_path):
    """At a large lam a prior draw is longer than the kernels' first scratch size (64 positions).

    Run with numba's bounds checking on (a fresh cache, so the kernels are compiled with it): an
    out-of-bounds write raises IndexError there, where the cached kernels would corrupt memory silently
    (this is how `malloc(): invalid size` was found on a lambda x support grid at lam 64).  The posterior walks
    are off: compiling the sampler's kernels too with bounds checking doubled the test's time.
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import numpy as np\n"
        "from frl_engine.anneal import anneal\n"
        "from frl_engine.model import Hyperparameters, PackedProblem, fit_list\n"
        "rng = np.random.default_rng(0)\n"
        "problem = PackedProblem.from_arrays(rng.random((400, 300)) < 0.3, rng.random(400) < 0.3,\n"
        "                                    Hyperparameters(lam=120.0))\n"
        "for polish in (False, True):\n"
        "    result = anneal(problem, n_steps=200, n_chains=2, random_state=0, polish=polish, greedy_start=polish,\n"
        "                    walks=0)\n"
        "    assert abs(result.best.log_posterior - fit_list(problem, result.best.order).log_posterior) < 1e-9\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_chain_budget_grows_only_where_chains_are_cheap():
    """The default budget is 4 rounds of chains, and up to 16 where a round's chains x rows x candidate rules
    fit SEARCH_CELL_BUDGET: a table of 3,000 rows and a few hundred rules may run 64 chains, UCI Spambase
    (4,601 x 5,000) and larger exports keep 16.  It depends on the problem's size only (one seed, one answer on
    any machine), and never falls below 4 chains."""
    assert default_chain_budget(3_000, 462, 4) == 4 * MAX_ROUNDS == 64
    assert default_chain_budget(4_601, 5_000, 4) == 4 * DEFAULT_ROUNDS == 16
    assert default_chain_budget(100_000, 5_000, 4) == 16
    assert default_chain_budget(3_000, 1_000, 4) == 4 * (SEARCH_CELL_BUDGET // 3_000_000 // 4) == 40
    assert default_chain_budget(3_000, 462, 1) == 16 and default_chain_budget(10 ** 6, 10 ** 4, 1) == 4
    assert default_chain_budget(3_000, 462, 16) == 16 * (SEARCH_CELL_BUDGET // (3_000 * 462) // 16)
    # the search uses it (tests/test_walk.py: a cheap search that runs 28 chains)
    data = simulate_rule_list_data(np.random.default_rng(2), 1500, n_rules=80)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    result = anneal(problem, n_steps=20, n_chains=2, hop_patience=None, walks=0, random_state=3)
    assert result.report.max_chains == default_chain_budget(1500, 80, 2) == 32
