"""The posterior sampler samples the right distribution.

The reference is exact: with 3 candidate rules there are 16 ordered lists, and
the posterior probability of each (and posterior means given a list) is a
(L+1)-dimensional integral over log K and log gamma computed by tensor-product
Gauss-Legendre quadrature, written here independently of the engine (scipy for
the densities and normalising constants, numpy for the capture counts).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest
from scipy import special, stats

from frl_engine.diagnostics import effective_sample_size
from frl_engine.errors import FRLError
from frl_engine.model import Hyperparameters, PackedProblem
from frl_engine.sampler import PosteriorSample, sample_list_parameters, sample_posterior, truncated_gamma

# ----------------------------------------------------------------------------------------
# The exact posterior by quadrature.


def _counts(coverage, y, order):
    """Support n_l and positives s_l per position (default last), from the boolean matrix."""
    z = np.full(len(y), len(order))
    for pos in range(len(order) - 1, -1, -1):
        z[coverage[:, order[pos]]] = pos
    n = np.bincount(z, minlength=len(order) + 1).astype(float)
    s = np.bincount(z, weights=y.astype(float), minlength=len(order) + 1)
    return n, s


def _log_list_prior(order, lam, weights, screened_weight=0.0):
    """log Poisson(L; lam) truncated to L <= |B|, times the ordered draw without replacement (eq. pc).

    ``screened_weight``: the weight of rules of ``B`` that no list here holds (mined, then screened out); they
    are drawn by nobody but are in every draw's normaliser, as eq. pc over all of ``B`` says."""
    value = stats.poisson.logpmf(len(order), lam) - stats.poisson.logcdf(len(weights), lam)
    remaining = float(np.sum(weights)) + screened_weight
    for j in order:
        value += math.log(weights[j] / remaining)
        remaining -= weights[j]
    return value


def exact_posterior(coverage, y, hyper, weights, n_a=64, n_g=32, a_range=(-25.0, 8.0), g_max=8.0, power=1.0,
                    screened_weight=0.0, prior_power=1.0):
    """Posterior probability of every list, and E[p_l | list] for each of its positions.

    Integrates over ``a = log K`` in ``a_range`` and ``g_l = log gamma_l`` in ``[0, g_max]``
    (the Jacobians ``K`` and ``gamma_l`` of the log transform included).  ``power``: the
    likelihood raised to it (the tempered posterior ``prior x likelihood^power``); ``prior_power``: the
    list prior ``p(c)`` (length and rules) raised to it (a replica that tempers the prior too).
    """
    alpha, beta, alpha_k, beta_k, lam = hyper.alpha, hyper.beta, hyper.alpha_K, hyper.beta_K, hyper.lam
    log_norm_gamma1 = alpha * math.log(beta) - special.gammaln(alpha) - stats.gamma.logsf(1.0, alpha, scale=1 / beta)
    log_norm_k = alpha_k * math.log(beta_k) - special.gammaln(alpha_k)
    xa, wa = np.polynomial.legendre.leggauss(n_a)
    half = 0.5 * (a_range[1] - a_range[0])
    a = half * xa + 0.5 * (a_range[1] + a_range[0])
    log_wa = np.log(wa * half) + log_norm_k + (alpha_k - 1) * a - beta_k * np.exp(a) + a
    xg, wg = np.polynomial.legendre.leggauss(n_g)
    g = 0.5 * g_max * (xg + 1)
    log_wg = np.log(wg * 0.5 * g_max) + log_norm_gamma1 + (alpha - 1) * g - beta * np.exp(g) + g
    n_rules = coverage.shape[1]
    result = {}
    for length in range(n_rules + 1):
        for order in itertools.permutations(range(n_rules), length):
            n, s = _counts(coverage, y, order)
            shape = (n_a,) + (1,) * length
            r = a.reshape(shape)
            log_f = log_wa.reshape(shape) + power * (s[length] * r - n[length] * np.logaddexp(0.0, r))
            rs = {length: r}
            for depth, pos in enumerate(range(length - 1, -1, -1)):  # axis depth+1 holds g_pos
                axis_shape = [1] * (length + 1)
                axis_shape[depth + 1] = n_g
                r = r + g.reshape(axis_shape)
                rs[pos] = r
                log_f = log_f + log_wg.reshape(axis_shape) + power * (s[pos] * r - n[pos] * np.logaddexp(0.0, r))
            log_f = log_f + prior_power * _log_list_prior(order, lam, weights, screened_weight)
            peak = log_f.max()
            w = np.exp(log_f - peak)
            mass = w.sum()
            means = [float((w * special.expit(np.broadcast_to(rs[pos], w.shape))).sum() / mass)
                     for pos in range(length + 1)]
            mean_k = float((w * np.exp(np.broadcast_to(rs[length], w.shape))).sum() / mass)
            result[order] = {"log_mass": math.log(mass) + peak, "mean_risk": means, "mean_K": mean_k}
    log_masses = np.array([v["log_mass"] for v in result.values()])
    probabilities = np.exp(log_masses - special.logsumexp(log_masses))
    for value, p in zip(result.values(), probabilities):
        value["prob"] = float(p)
    return result


def exact_prior(n_rules, lam, weights):
    """Prior probability of every ordered list."""
    return {order: math.exp(_log_list_prior(order, lam, weights))
            for length in range(n_rules + 1) for order in itertools.permutations(range(n_rules), length)}


def total_variation(reference: dict, sampled_orders) -> float:
    counts = Counter(sampled_orders)
    total = len(sampled_orders)
    keys = set(reference) | set(counts)
    return 0.5 * sum(abs(reference.get(k, 0.0) - counts.get(k, 0) / total) for k in keys)


def assert_frequencies_match(reference: dict, sampled_orders, n_chains: int, label: str, tolerance: float = 1e-3):
    """Each list's sampled frequency is within 4.5 Monte Carlo standard errors of its probability.

    The standard error of a frequency is ``sqrt(p (1-p) / ESS)`` with the ESS of the list's
    indicator chain; ``tolerance`` covers the quadrature error.  Much sharper than a TV bound.
    """
    orders = list(sampled_orders)
    worst = 0.0
    for order, p in reference.items():
        if p < 0.002:
            continue
        indicator = np.fromiter((o == order for o in orders), dtype=float, count=len(orders))
        ess = effective_sample_size(indicator.reshape(n_chains, -1), rank_normalize=False)
        se = math.sqrt(p * (1 - p) / ess)
        error = abs(indicator.mean() - p)
        worst = max(worst, error / se)
        assert (error - tolerance) / se < 4.5, \
            f"{label}: list {order} sampled {indicator.mean():.4f}, exact {p:.4f} (se {se:.4f})"
    print(f"{label}: largest |frequency - probability| = {worst:.2f} standard errors")


def length_marginal(probabilities: dict) -> dict:
    out = Counter()
    for order, p in probabilities.items():
        out[len(order)] += p
    return dict(out)


# ----------------------------------------------------------------------------------------
# Test data: 25 rows, 3 overlapping rules with some signal, so that every length has mass.


def small_data():
    n_rows = 25
    coverage = np.zeros((n_rows, 3), dtype=bool)
    coverage[0:8, 0] = True
    coverage[5:15, 1] = True
    coverage[[2, 16], 1] = True
    coverage[12:21, 2] = True
    y = np.zeros(n_rows, dtype=bool)
    y[[0, 1, 2, 3, 4, 6, 8, 10, 11, 13, 15, 19, 23]] = True
    return coverage, y


SETTINGS = {
    # the paper's gamma and K priors, equal rule weights
    "paper-priors-equal-weights": (Hyperparameters(lam=2.0), np.ones(3)),
    # priors under which the truncation of gamma to [1, inf) matters (44% of Gamma(2, 1.5) is below 1),
    # and unequal rule weights (the REPLACE/ADD/REMOVE draw probabilities differ between directions)
    "tight-priors-unequal-weights": (Hyperparameters(lam=1.5, alpha=2.0, beta=1.5, alpha_K=2.0, beta_K=1.0),
                                     np.array([1.0, 4.0, 0.4])),
}


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_list_posterior_matches_quadrature(setting):
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {order: v["prob"] for order, v in exact.items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    # 10 list moves with fresh risks per sweep (the default is more; exactness does not depend on it)
    result = sample_posterior(problem, n_samples=60_000, n_chains=2, burn_in=1000, thin=3, start=[0],
                              random_state=20261122, n_jobs=1, refresh=10)
    tv = total_variation(probabilities, result.orders)
    tv_length = total_variation(length_marginal(probabilities), [len(o) for o in result.orders])
    print(f"{setting}: TV(lists) = {tv:.4f}, TV(L) = {tv_length:.4f}, acceptance {result.acceptance['all']:.3f}")
    assert tv <= 0.03
    assert tv_length <= 0.02
    assert_frequencies_match(probabilities, result.orders, 2, setting)
    # every list is visited, with frequency close to its probability
    assert set(result.orders) == set(probabilities)
    # E[K | list] and E[p_default | list] for the most probable list, from the samples on that list
    top = max(probabilities, key=probabilities.get)
    on_top = np.array([o == top for o in result.orders])
    p_default = special.expit(np.log(result.K[on_top]))
    assert abs(p_default.mean() - exact[top]["mean_risk"][-1]) < 0.01
    assert abs(result.K[on_top].mean() / exact[top]["mean_K"] - 1) < 0.03


@pytest.mark.parametrize("setting, screened_rules", [("paper-priors-equal-weights", 4),
                                                     ("tight-priors-unequal-weights", 2)])
def test_with_rules_screened_out_the_sampler_draws_the_papers_posterior_over_every_mined_rule(setting, screened_rules):
    """Screening keeps some of the mined rules ``B``; the prior still draws each rule from all of ``B`` (eq. pc).

    The lists of the kept rules then have the paper's posterior over ``B``, conditioned on holding kept rules
    only: every rule's prior term is ``w / (W_B - used)``, ``W_B`` the kept rules' weight plus the screened
    ones' (each the mean kept weight).  The quadrature adds that weight to its normaliser and nothing else."""
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    screened_weight = screened_rules * float(np.mean(weights))
    exact = exact_posterior(coverage, y, hyper, weights, screened_weight=screened_weight)
    probabilities = {order: v["prob"] for order, v in exact.items()}
    plain = {order: v["prob"] for order, v in exact_posterior(coverage, y, hyper, weights).items()}
    # the screened rules shift the posterior towards shorter lists (each rule now one of more)
    assert sum(p * len(o) for o, p in probabilities.items()) < sum(p * len(o) for o, p in plain.items()) - 0.05
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights, screened_rules=screened_rules)
    result = sample_posterior(problem, n_samples=60_000, n_chains=2, burn_in=1000, thin=3, start=[0],
                              random_state=20261126, n_jobs=1, refresh=10)
    tv = total_variation(probabilities, result.orders)
    print(f"{setting}, {screened_rules} screened: TV(lists) = {tv:.4f}, TV to the posterior without them "
          f"{total_variation(plain, result.orders):.4f}")
    assert tv <= 0.03
    assert total_variation(plain, result.orders) > 2 * tv  # it is the screened posterior that is sampled
    assert_frequencies_match(probabilities, result.orders, 2, f"{setting}, {screened_rules} screened")


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_fixed_list_gibbs_matches_quadrature(setting):
    """Steps 1, 2, 4 alone sample (K, gamma) | list exactly: posterior mean risks of a 2-rule list."""
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    order = (0, 1)
    exact = exact_posterior(coverage, y, hyper, weights)[order]
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    draws = sample_list_parameters(problem, order, n_samples=200_000, burn_in=1000, random_state=7)
    for pos in range(len(order) + 1):
        risk = draws.risks[:, pos]
        se = risk.std() / math.sqrt(effective_sample_size(risk.reshape(4, -1)))
        print(f"{setting}: E[p_{pos}] sampler {risk.mean():.5f} exact {exact['mean_risk'][pos]:.5f} (se {se:.5f})")
        assert abs(risk.mean() - exact["mean_risk"][pos]) < 5 * se + 2e-4
    assert np.all(draws.gammas >= 1.0)


def test_prior_is_recovered_without_data():
    """No rows: L ~ Poisson(lam) truncated at |B|, lists by eq. pc, gammas Gamma_1, K Gamma."""
    hyper = Hyperparameters(lam=2.5, alpha=2.0, beta=1.5, alpha_K=2.0, beta_K=1.0)
    weights = np.array([1.0, 6.0, 0.3, 2.0])
    problem = PackedProblem.from_arrays(np.zeros((0, 4), dtype=bool), np.zeros(0, dtype=bool), hyper,
                                        rule_weights=weights)
    result = sample_posterior(problem, n_samples=50_000, n_chains=2, burn_in=500, thin=2, start=[1, 0],
                              random_state=5, n_jobs=1, refresh=10)
    prior = exact_prior(4, hyper.lam, weights)
    tv = total_variation(prior, result.orders)
    lengths = np.array([len(o) for o in result.orders])
    truncated_poisson = stats.poisson.pmf(np.arange(5), hyper.lam) / stats.poisson.cdf(4, hyper.lam)
    tv_length = 0.5 * np.abs(np.bincount(lengths, minlength=5) / len(lengths) - truncated_poisson).sum()
    print(f"prior: TV(lists) = {tv:.4f} over {len(prior)} lists, TV(L) = {tv_length:.4f}")
    assert tv <= 0.03
    assert tv_length <= 0.01
    assert_frequencies_match(prior, result.orders, 2, "prior", tolerance=0.0)
    # gammas: Gamma(2, rate 1.5) truncated to [1, inf); K: Gamma(2, rate 1)
    gamma_dist = stats.gamma(hyper.alpha, scale=1 / hyper.beta)
    low = gamma_dist.cdf(1.0)
    all_gammas = np.concatenate(result.gammas)
    truncated_cdf = lambda x: np.clip((gamma_dist.cdf(x) - low) / (1 - low), 0, 1)  # noqa: E731
    assert all_gammas.min() >= 1.0
    assert stats.kstest(all_gammas[::3], truncated_cdf).pvalue > 1e-3
    assert stats.kstest(result.K[::3], stats.gamma(hyper.alpha_K, scale=1 / hyper.beta_K).cdf).pvalue > 1e-3


@pytest.mark.parametrize("shape,rate", [(1.0, 0.1), (2.0, 1.5), (1.0, 30.0), (50.0, 80.0), (400.0, 401.0),
                                        (3000.0, 2000.0), (0.5, 2.0)])
def test_truncated_gamma_draws(shape, rate):
    """The truncated-gamma sampler of Step 1 in every regime (mode above 1, near 1, far below 1)."""
    rng = np.random.default_rng(11)
    draws = np.array([truncated_gamma(rng, shape, rate) for _ in range(4000)])
    dist = stats.gamma(shape, scale=1 / rate)
    log_sf1 = dist.logsf(1.0)
    cdf = lambda x: -np.expm1(dist.logsf(np.maximum(x, 1.0)) - log_sf1)  # noqa: E731
    assert draws.min() >= 1.0
    assert stats.kstest(draws, cdf).pvalue > 1e-3


# ----------------------------------------------------------------------------------------
# Determinism, convergence on a clear signal, summaries.


def planted_problem():
    from frl_engine.simulate import simulate_rule_list_data

    data = simulate_rule_list_data(np.random.default_rng(5), 2000, n_rules=30, probabilities=(0.8, 0.5, 0.3, 0.08))
    return PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters(lam=3.0)), data.true_order


def test_same_seed_same_result_whatever_n_jobs():
    hyper, weights = SETTINGS["tight-priors-unequal-weights"]
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    runs = [sample_posterior(problem, n_samples=300, n_chains=2, start=[0, 1], random_state=42, n_jobs=n_jobs,
                             refresh=10) for n_jobs in (1, 2, 1)]
    for other in runs[1:]:
        assert other.lists == runs[0].lists
        np.testing.assert_array_equal(other.log_posterior_trace, runs[0].log_posterior_trace)
        np.testing.assert_array_equal(other.length_trace, runs[0].length_trace)
        np.testing.assert_array_equal(other.K, runs[0].K)
        np.testing.assert_array_equal(other.map_risk["median"], runs[0].map_risk["median"])
    different = sample_posterior(problem, n_samples=300, n_chains=2, start=[0, 1], random_state=43, n_jobs=1,
                                 refresh=10)
    assert not np.array_equal(different.log_posterior_trace, runs[0].log_posterior_trace)


def test_rhat_near_one_on_clear_signal():
    from frl_engine.anneal import anneal

    problem, true_order = planted_problem()
    map_order = anneal(problem, n_steps=5000, n_chains=2, random_state=0).best.order
    assert map_order == true_order
    result = sample_posterior(problem, n_samples=6000, n_chains=4, burn_in=2000, thin=2, start=map_order,
                              random_state=1, n_jobs=2, refresh=10)
    print(f"planted list: R-hat {result.rhat}, ESS {result.ess}, MAP list frequency {result.map_list_frequency:.3f}")
    assert result.rhat["log_posterior"] < 1.1
    assert result.rhat["length"] < 1.1
    assert result.map_list_frequency > 0.5
    assert all(result.inclusion[str(rule)] > 0.9 for rule in true_order)
    lower, upper = result.map_risk["lower"], result.map_risk["upper"]
    for truth, lo, hi in zip((0.8, 0.5, 0.3, 0.08), lower, upper):
        assert lo - 0.03 < truth < hi + 0.03
    assert np.all(np.diff(result.map_risk["median"]) <= 0)  # falling


def _row_groups_by_hand(coverage, order):
    """The rows each position catches first, as frozensets, positions catching none left out (plain Python)."""
    caught, groups = set(), []
    for rule in order:
        rows = frozenset(int(i) for i in np.flatnonzero(coverage[:, rule])) - caught
        if rows:
            groups.append(rows)
            caught |= rows
    return groups


def test_lists_that_group_the_patients_alike_are_counted_as_the_map_list():
    """Two lists with the same groups of rows, top to bottom, have the same likelihood for any risks: a rule
    written differently that catches the same rows, or a rule that catches no row, leaves the list the same."""
    from frl_engine.sampler import same_groups_frequency

    rows = {0: {0, 1}, 1: {0, 2, 3}, 2: {2, 3}, 3: {1}, 4: {4}}
    coverage = np.zeros((8, 5), dtype=bool)
    for rule, caught in rows.items():
        coverage[sorted(caught), rule] = True
    problem = PackedProblem.from_arrays(coverage, np.arange(8) % 2 == 0, Hyperparameters())
    same = [(0, 1), (0, 2), (0, 3, 1), (0, 1, 3), (0, 3, 2, 3)]
    different = [(1, 0), (0,), (0, 1, 4), (0, 2, 4), (3, 0, 1), (4, 0, 1), ()]
    for order in same + different:  # the definition, by hand
        assert (_row_groups_by_hand(coverage, order) == _row_groups_by_hand(coverage, (0, 1))) == (order in same)
    for order in same:
        assert same_groups_frequency(problem, (0, 1), [order]) == 1.0
    for order in different:
        assert same_groups_frequency(problem, (0, 1), [order]) == 0.0
    assert same_groups_frequency(problem, (0, 1), same + different + same) == pytest.approx(10 / 17)
    assert same_groups_frequency(problem, (), [(), (3,), (0,)]) == pytest.approx(1 / 3)  # only the default rule


def test_the_sample_reports_how_often_it_groups_the_patients_as_the_map_list():
    coverage, y = small_data()
    coverage = np.column_stack([coverage, coverage[:, 0]])  # a fourth rule catching exactly the first one's rows
    hyper, _ = SETTINGS["paper-priors-equal-weights"]
    problem = PackedProblem.from_arrays(coverage, y, hyper)
    result = sample_posterior(problem, n_samples=1500, n_chains=2, start=(0, 1), random_state=4, n_jobs=1)
    reference = _row_groups_by_hand(coverage, result.map_order)
    by_hand = np.mean([_row_groups_by_hand(coverage, order) == reference for order in result.orders])
    assert result.map_groups_frequency == pytest.approx(by_hand)
    assert result.map_groups_frequency > result.map_list_frequency  # (0, 1) and (3, 1) at least are the same
    assert result.map_risk_summary()["groups_frequency"] == result.map_groups_frequency
    assert "group the training patients as it does" in result.summary()


def test_prior_start_and_summaries():
    coverage, y = small_data()
    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    names = ["A", "B", "C"]
    result = sample_posterior(problem, n_samples=2000, n_chains=3, start=None, random_state=3, n_jobs=1,
                              rule_names=names)
    assert isinstance(result, PosteriorSample)
    assert len(result.lists) == 3 * 2000 == len(result.chain_ids) == len(result.lengths) == len(result.K)
    assert result.log_posterior_trace.shape == result.length_trace.shape == (3, 2000)
    assert all(set(lst) <= set(names) for lst in result.lists)
    assert result.map_list_source == "most frequent sampled list"
    most_frequent = result.list_frequencies(1)[0]
    assert result.map_list == most_frequent[0] and result.map_list_frequency == pytest.approx(most_frequent[1])
    assert len(result.map_risk["median"]) == len(result.map_list) + 1
    assert all(lo <= med <= hi for lo, med, hi in zip(result.map_risk["lower"], result.map_risk["median"],
                                                       result.map_risk["upper"]))
    assert set(result.inclusion) == set(names)
    lengths = np.array([len(lst) for lst in result.lists])
    for name in names:
        assert result.inclusion[name] == pytest.approx(np.mean([name in lst for lst in result.lists]))
    assert np.array_equal(result.lengths, lengths)
    assert all(len(g) == n for g, n in zip(result.gammas, lengths))
    assert set(result.acceptance) == {"swap", "replace", "add", "remove", "all"}
    assert len(result.acceptance_per_chain) == 3
    text = result.summary()
    for piece in ("List length L", "inclusion", "acceptance", "R-hat", "(default)"):
        assert piece in text
    data = result.to_dict()
    json.dumps(data, allow_nan=False)
    assert data["map_list"]["rules"] == list(result.map_list)
    summary = result.map_risk_summary()
    json.dumps(summary, allow_nan=False)
    assert {"n_samples", "risk_median", "risk_lower", "risk_upper"} <= set(summary)


# ----------------------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize("kwargs", [
    {"n_samples": 0}, {"n_samples": 2.5}, {"n_samples": "10"}, {"n_samples": True}, {"burn_in": -1},
    {"thin": 0}, {"n_chains": 0}, {"n_chains": 1.0}, {"start": [0, 0]}, {"start": [7]}, {"start": ["x"]},
    {"rule_names": ["a"]}, {"n_jobs": 0}, {"random_state": -3}, {"random_state": "seed"},
    {"risk_scans": -1}, {"risk_scans": 1.5},
])
def test_bad_input_raises_frlerror(kwargs):
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    with pytest.raises(FRLError) as info:
        sample_posterior(problem, **{"n_samples": 10, **kwargs})
    assert "\n" not in str(info.value)


def test_non_finite_chain_raises_naming_chain_and_step():
    # every row positive and nearly flat priors on K and the gammas: the risks run off to 1 and overflow
    coverage = np.random.default_rng(0).random((50, 3)) < 0.5
    problem = PackedProblem.from_arrays(coverage, np.ones(50, dtype=bool),
                                        Hyperparameters(lam=1.0, beta=1e-300, beta_K=1e-300))
    with pytest.raises(FRLError, match=r"chain 0 .*non-finite.*Step \d") as info:
        sample_posterior(problem, n_samples=20_000, n_chains=1, random_state=0)
    assert "sweep" in str(info.value) and "\n" not in str(info.value)


# ----------------------------------------------------------------------------------------
# The `frl sample` command.


def _patients_csv(path, n=400, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"Age": rng.integers(20, 95, size=n),
                          "BedSores": np.where(rng.random(n) < 0.25, "yes", "no"),
                          "Ward": rng.choice(["medical", "surgical"], size=n)})
    risk = np.where((frame.Age >= 70) & (frame.BedSores == "yes"), 0.75, 0.1)
    frame["Readmitted"] = np.where(rng.random(n) < risk, "yes", "no")
    frame.to_csv(path, index=False)
    return path


def test_cli_sample_prints_summary_and_writes_json(tmp_path, capsys):
    from frl_engine.cli import main

    data = _patients_csv(tmp_path / "patients.csv")
    out = tmp_path / "posterior.json"
    status = main(["sample", str(data), "--target", "Readmitted", "--steps", "1000", "--chains", "2",
                   "--samples", "300", "--burn-in", "200", "--thin", "2", "--seed", "4", "--jobs", "1",
                   "--out", str(out)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    assert printed.splitlines()[1].startswith("IF ")  # the fitted list first
    for piece in ("List length L", "acceptance", "R-hat", "(default)", "95% interval"):
        assert piece in printed
    data = json.loads(out.read_text())
    assert data["format"] == "frl-posterior" and data["target"] == "Readmitted"
    assert data["settings"] == {"n_chains": 2, "n_samples": 300, "burn_in": 200, "thin": 2}
    assert len(data["samples"]["list"]) == 600
    risk = data["map_list"]
    assert len(risk["risk_median"]) == len(risk["rules"]) + 1
    assert all(lo <= med <= hi for lo, med, hi in zip(risk["risk_lower"], risk["risk_median"], risk["risk_upper"]))


@pytest.mark.parametrize("option", [["--samples", "0"], ["--thin", "0"], ["--burn-in", "-5"]])
def test_cli_sample_bad_numbers_one_line_error(tmp_path, capsys, option):
    from frl_engine.cli import main

    data = _patients_csv(tmp_path / "patients.csv")
    status = main(["sample", str(data), "--target", "Readmitted", *option])
    _, err = capsys.readouterr()
    assert status == 2
    assert err.startswith("frl: error:") and err.count("\n") == 1


def test_rhat_near_one_on_the_sample_data():
    """Issue: R-hat near 1 on the bundled sample data (4 chains from the MAP list, 10,000 kept sweeps each)."""
    from pathlib import Path

    import pandas as pd

    from frl_engine import FallingRuleListClassifier

    frame = pd.read_csv(Path(__file__).resolve().parents[1] / "sample_data" / "readmission.csv")
    y = frame.pop("Readmitted30d")
    model = FallingRuleListClassifier(random_state=0, exclude=["PatientID"]).fit(frame, y)
    result = model.sample_posterior(10_000, n_chains=4, random_state=1, n_jobs=2)
    assert result.rhat["log_posterior"] < 1.05 and result.rhat["length"] < 1.05, result.rhat
    assert result.ess["log_posterior"] > 100
    # The MAP list's risks fall, and its credible intervals hold the fitted risks.
    summary = model.posterior_summary_
    for low, risk, high in zip(summary["risk_lower"], model.probabilities_, summary["risk_upper"]):
        assert low <= risk <= high


# ----------------------------------------------------------------------------------------
# The list move with fresh risks, dispersed starts, focus proposals and the verdict (issue: search).


def test_paper_sampler_alone_still_matches_quadrature():
    """refresh=0 is the paper's sampler exactly (Steps 1-4 only); it still samples the exact posterior."""
    hyper, weights = SETTINGS["tight-priors-unequal-weights"]
    coverage, y = small_data()
    probabilities = {o: v["prob"] for o, v in exact_posterior(coverage, y, hyper, weights).items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    result = sample_posterior(problem, n_samples=40_000, n_chains=2, burn_in=1000, thin=3, start=[0],
                              random_state=11, n_jobs=1, refresh=0)
    assert all(np.isnan(v) for k, v in result.refresh_acceptance.items())  # the added moves never ran
    assert total_variation(probabilities, result.orders) <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, "paper sampler")


def test_focused_moves_from_dispersed_starts_match_quadrature():
    """Focus weights change only the proposal (its Hastings ratio uses them): the target stays exact."""
    from frl_engine.sampler import dispersed_starts, focus_weights

    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    coverage, y = small_data()
    probabilities = {o: v["prob"] for o, v in exact_posterior(coverage, y, hyper, weights).items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    starts = dispersed_starts([0, 1], [(2,), (0, 1), (1, 2, 0)], n_chains=4)
    assert starts == [(0, 1), (2,), (1, 2, 0), (0, 1)]
    cum, log_rho = focus_weights(problem, [2], share=0.8)
    assert cum[-1] == pytest.approx(1.0) and np.exp(log_rho[2]) == pytest.approx(0.2 / 3 + 0.8)
    result = sample_posterior(problem, n_samples=15_000, n_chains=4, burn_in=500, starts=starts, focus=[2],
                              focus_share=0.8, random_state=3, n_jobs=1, refresh=10)
    assert result.n_starts == 3 and result.map_list_source == "start" and result.map_order == (0, 1)
    assert result.refresh_acceptance["all"] > 0.05
    assert total_variation(probabilities, result.orders) <= 0.03
    assert_frequencies_match(probabilities, result.orders, 4, "focused")


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("power", [1.0, 0.4])
def test_one_risk_at_a_time_alone_matches_quadrature(setting, power):
    """Step 3d alone (no Gibbs steps, no list moves) samples the risks of a fixed list exactly, for the
    posterior and for a tempered replica's target (likelihood to the power 0.4)."""
    from frl_engine.refresh import site_risk_updates

    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    order = (0, 1)
    exact = exact_posterior(coverage, y, hyper, weights, power=power)[order]
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    n, s = _counts(coverage, y, order)
    rng = np.random.default_rng(20261124)
    r = np.array([1.0, 0.0, -1.0])  # any falling start
    draws = np.empty((100_000, 3))
    accepted = 0
    for i in range(len(draws)):
        accepted += site_risk_updates(rng, len(order), n, s, r, problem.consts, power, 1)
        draws[i] = r
    assert np.all(np.diff(draws, axis=1) <= 0)  # the risks fall in every draw
    assert accepted / draws.size > 0.5
    risks = special.expit(draws)
    for pos in range(len(order) + 1):
        se = risks[:, pos].std() / math.sqrt(effective_sample_size(risks[:, pos].reshape(4, -1)))
        error = risks[:, pos].mean() - exact["mean_risk"][pos]
        print(f"{setting}, power {power}: E[p_{pos}] off by {error / se:+.2f} standard errors")
        assert abs(error) < 4.5 * se + 2e-4


def test_one_risk_at_a_time_makes_the_risks_of_a_big_list_mix():
    """With 20,000 rows the paper's Gibbs steps alone barely move the risks of a fixed list (the
    augmented sums pin them); Step 3d makes the draws nearly independent.  The card's intervals
    come from this fixed-list run."""
    rng = np.random.default_rng(0)
    n_rows = 20_000
    coverage = rng.random((n_rows, 4)) < 0.2
    risk = np.full(n_rows, 0.1)
    for pos, p in reversed(list(enumerate([0.8, 0.6, 0.4, 0.25]))):
        risk[coverage[:, pos]] = p
    y = rng.random(n_rows) < risk
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    ess = {}
    for scans in (0, 2):
        draws = sample_list_parameters(problem, (0, 1, 2, 3), n_samples=2000, burn_in=200, random_state=1,
                                       risk_scans=scans)
        ess[scans] = min(effective_sample_size(draws.risks[:, pos].reshape(1, -1)) for pos in range(5))
    print(f"smallest ESS of a risk in 2,000 draws: Gibbs alone {ess[0]:.0f}, with Step 3d {ess[2]:.0f}")
    assert ess[2] >= 1000
    assert ess[2] >= 10 * ess[0]


def test_the_move_with_fresh_risks_scores_only_the_positions_below_its_change():
    """A proposal agrees with the current state above its first changed position f, so the sampler scores
    log pi(c', r') - log pi(c, r) from the two tails below f (refresh.log_target_tail, and the current
    state's target_suffixes): the same number as the difference of the whole targets, for every f, both
    directions of the length change, unequal rule weights, a tempered power, and -inf when the proposed
    risks do not fall."""
    from frl_engine.refresh import gamma_term, log_target_tail, target_suffixes

    rng = np.random.default_rng(5)
    n_rules = 9
    coverage = rng.random((80, n_rules)) < 0.3
    y = rng.random(80) < 0.4
    hyper = Hyperparameters()
    weights = rng.uniform(0.3, 3.0, n_rules)
    problem = PackedProblem.from_arrays(coverage, y, hyper, weights)

    def log_target_r(order, length, n_cap, n_pos, r, cum_weights, log_weights, consts, power):
        """log pi(c, r) of refresh.py's docstring, written here from scipy's densities (not the engine's)."""
        if np.any(np.diff(r) > 0):
            return -np.inf
        g = -np.diff(r)
        gamma1 = stats.gamma(hyper.alpha, scale=1 / hyper.beta)
        return (_log_list_prior(list(order), hyper.lam, weights)
                + power * np.sum(n_pos * r - n_cap * np.logaddexp(0.0, r))
                + np.sum(gamma1.logpdf(np.exp(g)) - gamma1.logsf(1.0) + g)
                + stats.gamma(hyper.alpha_K, scale=1 / hyper.beta_K).logpdf(np.exp(r[-1])) + r[-1])

    def state(order, r_top):
        n_cap, n_pos = _counts(coverage, y, order)
        length = len(order)
        r = np.empty(length + 1)
        r[:len(r_top)] = r_top
        for pos in range(len(r_top), length + 1):   # falling below the kept values
            r[pos] = (r[pos - 1] if pos else 2.0) - rng.exponential(0.7)
        return np.array(order, dtype=np.int64), length, n_cap, n_pos, r

    n_checked = n_falls = 0
    for _ in range(400):
        power = (1.0, 0.37)[n_checked % 2]
        current = list(rng.permutation(n_rules)[:rng.integers(1, 7)])
        order, length, n_cap, n_pos, r = state(current, [])
        suffix, rest = np.empty(length + 1), np.empty(length + 1)
        target_suffixes(order, length, n_cap, n_pos, r, problem.cum_weights, problem.log_weights, problem.consts,
                        power, suffix, rest, np.empty(length + 1), np.empty(length + 1))
        first = int(rng.integers(0, length + 1))
        unused = [rule for rule in rng.permutation(n_rules) if rule not in current[:first]]
        proposed = current[:first] + unused[:rng.integers(0, len(unused) + 1)]
        new = state(proposed, r[:first])
        if rng.random() < 0.3 and new[1] > first:   # a proposal whose risks rise somewhere below f
            new[4][int(rng.integers(first, new[1])) + 1] += 5.0
        whole = (log_target_r(*new, problem.cum_weights, problem.log_weights, problem.consts, power)
                 - log_target_r(order, length, n_cap, n_pos, r, problem.cum_weights, problem.log_weights,
                                problem.consts, power))
        current_tail = suffix[first] + (gamma_term(r[first - 1] - r[first], problem.consts) if first else 0.0)
        tails = (log_target_tail(*new, first, rest[first], problem.log_weights, problem.consts, power)
                 - current_tail)
        if np.isinf(whole):
            assert tails == whole == -np.inf
        else:
            n_falls += 1
            assert tails == pytest.approx(whole, abs=1e-9)
        n_checked += 1
    assert 100 < n_falls < n_checked


def test_the_tail_below_a_moves_window_is_read_from_the_current_state_to_the_last_bit():
    """Below the window of a move with fresh risks the proposal's log odds are the current state's, shifted by
    the change of length, so the sampler reads their softplus and gamma terms (kept by refresh.target_suffixes)
    instead of computing them again (refresh.log_target_tail_reusing).  The result must be log_target_tail's number
    exactly (==, so the chains' draws do not change), for every cut, both directions of the length change,
    unequal rule weights, a tempered power, and -inf when the drawn risks above the cut do not fall."""
    from frl_engine.refresh import log_target_tail, log_target_tail_reusing, target_suffixes

    rng = np.random.default_rng(11)
    n_rules = 10
    coverage = rng.random((90, n_rules)) < 0.3
    y = rng.random(90) < 0.4
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters(), rng.uniform(0.3, 3.0, n_rules))
    weights = np.exp(problem.log_weights)
    n_checked = n_reused = n_rising = 0
    for case in range(600):
        power = (1.0, 0.37)[case % 2]
        length = int(rng.integers(1, 8))
        r_cur = np.cumsum(rng.exponential(0.6, length + 1))[::-1] - 2.0   # falling log odds, default last
        softplus_r, gamma_terms = np.empty(length + 1), np.empty(length + 1)
        current = rng.permutation(n_rules)[:length].astype(np.int64)
        cur_cap, cur_pos = _counts(coverage, y, list(current))
        k_value = target_suffixes(current, length, cur_cap, cur_pos, r_cur, problem.cum_weights, problem.log_weights,
                                  problem.consts, power, np.empty(length + 1), np.empty(length + 1), softplus_r,
                                  gamma_terms)
        new_length = int(min(max(length + rng.integers(-1, 2), 0), n_rules))
        shift = new_length - length
        start = int(rng.integers(0, min(length, new_length) + 1))
        cut = int(rng.integers(start, new_length + 2))              # new_length + 1: nothing reused
        cut = max(cut, shift)                                        # positions read must exist in r_cur
        r_new = np.empty(new_length + 1)
        for pos in range(new_length, -1, -1):
            if pos >= cut:
                r_new[pos] = r_cur[pos - shift]
            else:                                                    # drawn risks, falling onto the kept ones
                r_new[pos] = (r_new[pos + 1] if pos < new_length else r_cur[length]) + rng.exponential(0.5)
        if cut > start and rng.random() < 0.25:                      # a draw that rises above the cut
            r_new[int(rng.integers(start, cut))] -= 20.0
            n_rising += 1
        order = rng.permutation(n_rules)[:max(new_length, 1)].astype(np.int64)
        n_cap, n_pos = _counts(coverage, y, list(order[:new_length]))
        remaining = float(problem.cum_weights[-1]) - float(weights[order[:start]].sum())
        plain = log_target_tail(order, new_length, n_cap, n_pos, r_new, start, remaining, problem.log_weights,
                                problem.consts, power)
        reused = log_target_tail_reusing(order, new_length, n_cap, n_pos, r_new, start, remaining,
                                         problem.log_weights, problem.consts, power, cut, shift,
                                         softplus_r, gamma_terms, k_value)
        assert reused == plain, (case, reused, plain)
        n_checked += 1
        n_reused += cut <= new_length
    assert n_reused > 300 and n_rising > 50


@pytest.mark.parametrize("setting,local_share,n_samples", [("paper-priors-equal-weights", 1.0, 30_000),
                                                           ("tight-priors-unequal-weights", 1.0, 200_000),
                                                           ("tight-priors-unequal-weights", 0.0, 30_000)])
def test_local_fresh_risks_match_quadrature(setting, local_share, n_samples):
    """Fresh risks drawn only next to the change, the others kept (``local_share=1``), or for every
    position from the change down (``local_share=0``): either move alone leaves the posterior exact.

    The local move's 200,000 draws are enough to see a subtle error: with the reverse proposal's
    centre left unclipped (the forward one clipped), the empty list is sampled 8 standard errors off."""
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {o: v["prob"] for o, v in exact.items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    result = sample_posterior(problem, n_samples=n_samples, n_chains=2, burn_in=1000, thin=2, start=[0],
                              random_state=5, n_jobs=1, refresh=10, local_share=local_share)
    assert result.refresh_acceptance["all"] > 0.05
    assert total_variation(probabilities, result.orders) <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, f"local share {local_share}")
    # the risks too: E[K | list] and the mean risk of each position of the two most probable lists
    for order in sorted(probabilities, key=probabilities.get)[-2:]:
        on_list = np.array([o == order for o in result.orders])
        assert abs(result.K[on_list].mean() / exact[order]["mean_K"] - 1) < 0.03
        gammas = np.array([g for g, here in zip(result.gammas, on_list) if here]).reshape(on_list.sum(), -1)
        log_odds = np.log(result.K[on_list])[:, None] + np.cumsum(np.log(gammas[:, ::-1]), axis=1)[:, ::-1]
        risks = special.expit(np.column_stack([log_odds, np.log(result.K[on_list])]))
        np.testing.assert_allclose(risks.mean(axis=0), exact[order]["mean_risk"], atol=0.01)


def test_an_unconverged_posterior_is_reported_as_such():
    """Chains started at different lists and stopped after a few sweeps disagree: the verdict says so."""
    problem, true_order = planted_problem()
    result = sample_posterior(problem, n_samples=12, n_chains=4, burn_in=0, starts=[true_order, [3], [7, 9], []],
                              random_state=0, n_jobs=1, refresh=0)
    verdict = result.verdict
    assert not verdict.converged and verdict.worst_rhat > 1.01
    assert "not converged" in verdict.message and "--samples" in verdict.message
    assert result.map_risk_summary()["converged"] is False
    assert "not converged" in result.summary()
    # each R-hat line above the verdict's bar of 1.01 is marked, and only those
    for key, label in (("log_posterior", "log posterior"), ("length", "length L")):
        line = next(x for x in result.summary().splitlines() if x.strip().startswith(f"{label} ") and "R-hat" in x)
        assert line.endswith("<- above 1.01: not converged") == (result.rhat[key] > 1.01), line
    # and names the rules the chains hold in different shares: the true list's, which three chains lack
    disputed = result.chain_disagreement()
    assert disputed and {d.rule for d in disputed} <= set(range(problem.n_rules))
    assert any(d.rule in true_order for d in disputed)
    assert "Where the chains disagree most" in result.summary()
    assert [d["rule"] for d in result.to_dict()["chain_disagreement"]] == [d.rule for d in disputed]
    # the same problem sampled properly converges
    good = sample_posterior(problem, n_samples=1000, n_chains=4, start=true_order, random_state=0, n_jobs=2)
    assert good.verdict.converged, good.verdict.message
    assert good.map_risk_summary()["converged"] is True
    assert good.chain_disagreement() == () and "Where the chains disagree" not in good.summary()


def test_dispersed_starts_and_focus_are_reproducible_whatever_n_jobs():
    problem, true_order = planted_problem()
    kwargs = dict(n_samples=200, n_chains=3, starts=[true_order, [3, 5]], focus=[3, 5, *true_order], random_state=9)
    one, two = (sample_posterior(problem, n_jobs=jobs, **kwargs) for jobs in (1, 2))
    assert one.lists == two.lists
    np.testing.assert_array_equal(one.log_posterior_trace, two.log_posterior_trace)
    assert one.refresh_acceptance == two.refresh_acceptance


def test_the_posterior_starts_and_focus_come_from_the_searchs_first_round_only():
    """Restart rounds (up to 16 chains on UCI Spambase) do not change the sample: its starts and its focus set
    use the lists of the first n_chains search chains, so a search that ran more rounds samples the same."""
    from dataclasses import replace

    import pandas as pd

    from frl_engine import FallingRuleListClassifier
    from frl_engine.simulate import simulate_rule_list_data

    data = simulate_rule_list_data(np.random.default_rng(4), 800, n_rules=30, probabilities=(0.8, 0.5, 0.3, 0.1))
    frame = pd.DataFrame(data.coverage, columns=[f"r{j}" for j in range(30)])
    model = FallingRuleListClassifier(mine_rules=False, n_chains=2, random_state=0).fit(frame, data.y)
    kwargs = dict(n_samples=150, n_chains=3, random_state=5, n_jobs=1, extend=False)
    first = model.sample_posterior(**kwargs)
    result = model.anneal_result_
    more_rounds = ((7, 9, 11), (12, 2), (20, 21, 22, 23))   # lists a later round might have ended in
    model.anneal_result_ = replace(result, chain_orders=result.chain_orders[:2] + more_rounds)
    model.set_params(n_chains=5)   # the search's own round size counts, not a setting changed after the fit
    again = model.sample_posterior(**kwargs)
    assert again.lists == first.lists
    np.testing.assert_array_equal(again.log_posterior_trace, first.log_posterior_trace)
    # while the first round's own lists do reach the sample (a different second list changes the draws)
    model.anneal_result_ = replace(result, chain_orders=((7, 9, 11), (12, 2)) + result.chain_orders[2:])
    assert model.sample_posterior(**kwargs).lists != first.lists


@pytest.mark.parametrize("kwargs", [{"refresh": -1}, {"refresh": 1.5}, {"focus_share": 1.0}, {"focus": [99]},
                                    {"local_share": 1.5}, {"local_share": -0.1}, {"local_share": True},
                                    {"starts": []}, {"starts": [[0]], "start": [1]}])
def test_bad_refresh_focus_and_starts_are_refused(kwargs):
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    with pytest.raises(FRLError):
        sample_posterior(problem, **{"n_samples": 10, **kwargs})


def test_cli_sample_warns_in_one_line_when_the_posterior_did_not_converge(tmp_path, capsys):
    from frl_engine.cli import main

    data = _patients_csv(tmp_path / "patients.csv")
    status = main(["sample", str(data), "--target", "Readmitted", "--steps", "500", "--chains", "2",
                   "--samples", "3", "--burn-in", "0", "--seed", "1", "--jobs", "1"])
    printed = capsys.readouterr().out
    assert status == 0
    warnings = [line for line in printed.splitlines() if line.startswith("Warning: Posterior not")]
    assert len(warnings) == 1 and "--samples" in warnings[0]


def test_an_unconverged_sample_is_drawn_again_longer():
    """sample_posterior_until_converged: 4x then 16x the burn-in and thinning, same kept samples, reproducible."""
    from frl_engine.sampler import sample_posterior_until_converged

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=60, n_chains=4, starts=[true_order, [3], [7, 9], []], random_state=0, n_jobs=1,
                  refresh=0)
    short = sample_posterior(problem, burn_in=0, **kwargs)
    assert not short.verdict.converged
    longer = sample_posterior_until_converged(problem, burn_in=0, factors=(1, 4), **kwargs)
    assert longer.thin == 4 and longer.n_samples == 60 and len(longer.lists) == 4 * 60
    again = sample_posterior_until_converged(problem, burn_in=0, factors=(1, 4), **kwargs)
    np.testing.assert_array_equal(again.log_posterior_trace, longer.log_posterior_trace)
    # a sample that converges at once is returned as drawn
    quick = sample_posterior_until_converged(problem, n_samples=1000, n_chains=4, start=true_order, random_state=0,
                                             n_jobs=2)
    assert quick.verdict.converged and quick.thin == 1


# ----------------------------------------------------------------------------------------
# Parallel tempering (issue 13): replicas at inverse temperatures beta < 1 exchange states with the
# beta = 1 replica; each replica must sample prior x likelihood^beta exactly.


def test_tempered_beta_one_replica_matches_quadrature():
    """The kept (beta = 1) replica of a tempered run samples exactly the posterior."""
    hyper, weights = SETTINGS["tight-priors-unequal-weights"]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {order: v["prob"] for order, v in exact.items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    result = sample_posterior(problem, n_samples=40_000, n_chains=2, burn_in=1000, thin=2, start=[0],
                              random_state=20261123, n_jobs=1, refresh=5, temperatures=[1.0, 0.6, 0.3])
    tv = total_variation(probabilities, result.orders)
    print(f"tempered, beta = 1: TV(lists) = {tv:.4f}, swaps {result.swap_acceptance}")
    assert result.temperatures == (1.0, 0.6, 0.3) and len(result.swap_acceptance) == 2
    assert all(0.05 < rate < 1 for rate in result.swap_acceptance)  # the replicas do exchange
    assert tv <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, "tempered beta=1")
    top = max(probabilities, key=probabilities.get)
    on_top = np.array([o == top for o in result.orders])
    assert abs(result.K[on_top].mean() / exact[top]["mean_K"] - 1) < 0.03


@pytest.mark.parametrize("setting,level,refresh", [("paper-priors-equal-weights", 1, 5),
                                                   ("tight-priors-unequal-weights", 2, 5),
                                                   ("tight-priors-unequal-weights", 1, 0)])
def test_tempered_replica_matches_tempered_quadrature(setting, level, refresh):
    """The replica at beta < 1 samples prior x likelihood^beta (quadrature with the likelihood to that power).

    With ``refresh=0`` only the tempered Gibbs steps (1, 2 and the tempered Step 4) and the paper's
    list move run in the replicas, so this checks the tempered augmentation on its own.
    """
    from frl_engine.sampler import run_tempered

    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    betas = np.array([1.0, 0.5, 0.25])
    exact = exact_posterior(coverage, y, hyper, weights, power=betas[level])
    probabilities = {order: v["prob"] for order, v in exact.items()}
    untempered = {order: v["prob"] for order, v in exact_posterior(coverage, y, hyper, weights).items()}
    # the tempered posterior is far enough from the posterior for the test to tell them apart
    assert 0.5 * sum(abs(probabilities[o] - untempered[o]) for o in probabilities) > 0.06
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    orders, ks = [], []
    for seed in (1, 2):
        out = run_tempered(np.random.default_rng(seed), problem.rules, problem.y, problem.all_rows,
                           problem.cum_weights, problem.log_weights, problem.consts, np.array([0], dtype=np.int64),
                           0.5, np.array([2.0]), 1000, 40_000, 2, False, refresh, problem.cum_weights,
                           problem.log_weights, betas, level, problem.n_rules + 1)
        assert out[8] == -1
        ends = np.cumsum(out[2])
        flat = out[0].tolist()
        orders.extend(tuple(flat[a:b]) for a, b in zip(np.concatenate([[0], ends[:-1]]), ends))
        ks.append(out[3])
    tv = total_variation(probabilities, orders)
    print(f"{setting}: replica at beta = {betas[level]} (refresh {refresh}): TV(lists) = {tv:.4f}")
    assert tv <= 0.03
    assert_frequencies_match(probabilities, orders, 2, f"tempered beta={betas[level]}")
    # E[K | list] of the most probable list under the tempered posterior
    top = max(probabilities, key=probabilities.get)
    k_top = np.concatenate(ks)[np.array([o == top for o in orders])]
    assert abs(k_top.mean() / exact[top]["mean_K"] - 1) < 0.04


@pytest.mark.parametrize("setting,level", [("paper-priors-equal-weights", 1), ("tight-priors-unequal-weights", 2)])
def test_a_replica_that_tempers_the_list_prior_samples_its_own_target(setting, level):
    """With ``temper_prior`` the replica at beta targets ``p(c)^beta p(r | c) L^beta``: quadrature with the list
    prior and the likelihood both raised to beta, for every move with fresh risks, exchanges included."""
    from frl_engine.sampler import _run_one

    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    betas = (1.0, 0.5, 0.25)
    beta = betas[level]
    exact = exact_posterior(coverage, y, hyper, weights, power=beta, prior_power=beta)
    probabilities = {order: v["prob"] for order, v in exact.items()}
    likelihood_only = {order: v["prob"] for order, v in exact_posterior(coverage, y, hyper, weights,
                                                                          power=beta).items()}
    # tempering the prior too is a different target, and the test can tell the two apart
    assert 0.5 * sum(abs(probabilities[o] - likelihood_only[o]) for o in probabilities) > 0.05
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    orders = []
    for seed in (1, 2):
        out = _run_one(np.random.default_rng(seed), problem, None, 1000, 40_000, 2, False, refresh=5, betas=betas,
                       keep_level=level, temper_prior=True)
        assert out.error_step == -1
        assert np.all(out.n_swap_accepted > 0.05 * out.n_swap_proposed)   # the replicas do exchange
        flat = out.orders_flat.tolist()
        ends = np.cumsum(out.lengths)
        orders.extend(tuple(flat[a:b]) for a, b in zip(np.concatenate([[0], ends[:-1]]), ends))
    tv = total_variation(probabilities, orders)
    print(f"{setting}: replica at beta = {beta}, list prior tempered too: TV(lists) = {tv:.4f}")
    assert tv <= 0.03
    assert_frequencies_match(probabilities, orders, 2, f"prior tempered beta={beta}")


def test_the_kept_replica_of_a_run_that_tempers_the_list_prior_samples_the_posterior():
    """The beta = 1 replica is the paper's posterior whatever the replicas above it target."""
    hyper, weights = SETTINGS["tight-priors-unequal-weights"]
    coverage, y = small_data()
    probabilities = {order: v["prob"] for order, v in exact_posterior(coverage, y, hyper, weights).items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    result = sample_posterior(problem, n_samples=40_000, n_chains=2, burn_in=1000, thin=2, start=[0],
                              random_state=20261127, n_jobs=1, refresh=5, temperatures=[1.0, 0.6, 0.3],
                              temper_prior=True)
    assert result.prior_tempered and result.to_dict()["prior_tempered"] is True
    assert "(likelihood and list prior tempered)" in result.summary()
    assert all(0.05 < rate < 1 for rate in result.swap_acceptance)
    tv = total_variation(probabilities, result.orders)
    print(f"list prior tempered too, beta = 1: TV(lists) = {tv:.4f}, swaps {result.swap_acceptance}")
    assert tv <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, "prior tempered, beta=1")


def test_the_estimator_tempers_the_list_prior_only_for_the_replicas_asked_for():
    from frl_engine import FallingRuleListClassifier

    coverage, y = small_data()
    model = FallingRuleListClassifier(n_steps=300, n_chains=1, random_state=0).fit(coverage, y)
    sample = model.sample_posterior(60, n_chains=2, random_state=1, n_jobs=1, extend=False, temperatures=3,
                                    temper_prior=True)
    assert sample.prior_tempered and len(sample.temperatures) == 3
    assert not model.sample_posterior(60, n_chains=2, random_state=1, n_jobs=1, extend=False,
                                      temperatures=3).prior_tempered
    with pytest.raises(FRLError, match="give temperatures too"):
        model.sample_posterior(60, n_chains=2, random_state=1, n_jobs=1, temper_prior=True)
    with pytest.raises(FRLError, match="temper_prior must be True or False"):
        model.sample_posterior(60, n_chains=2, random_state=1, n_jobs=1, temperatures=3, temper_prior="yes")


def test_temper_prior_must_be_true_or_false():
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=2.0))
    with pytest.raises(FRLError, match="temper_prior must be True or False"):
        sample_posterior(problem, n_samples=10, temperatures=2, temper_prior="yes")


def test_tempered_run_is_reproducible_whatever_n_jobs():
    problem, true_order = planted_problem()
    kwargs = dict(n_samples=150, n_chains=3, starts=[true_order, [3, 5]], focus=[3, 5, *true_order], random_state=4,
                  temperatures=3, refresh=5)
    one, two, again = (sample_posterior(problem, n_jobs=jobs, **kwargs) for jobs in (1, 2, 1))
    for other in (two, again):
        assert other.lists == one.lists
        np.testing.assert_array_equal(other.log_posterior_trace, one.log_posterior_trace)
        assert other.swap_acceptance == one.swap_acceptance
    other_seed = sample_posterior(problem, n_jobs=1, **{**kwargs, "random_state": 5})
    assert not np.array_equal(other_seed.log_posterior_trace, one.log_posterior_trace)
    data = one.to_dict()
    assert data["temperatures"] == list(one.temperatures) and len(data["swap_acceptance"]) == 2
    assert "parallel tempering, 3 replicas" in one.summary()


def test_one_temperature_is_the_sampler_without_replicas():
    """temperatures=1 through sample_posterior is run_chain_refresh draw for draw (one replica, the same stream)."""
    from frl_engine.sampler import run_chain_refresh

    problem, true_order = planted_problem()
    result = sample_posterior(problem, n_samples=200, n_chains=1, start=true_order, random_state=8, refresh=5,
                              temperatures=1)
    assert result.temperatures == (1.0,) and result.swap_acceptance == ()
    from frl_engine.model import fit_list

    fit = fit_list(problem, true_order)
    rng = np.random.default_rng(8).spawn(1)[0]
    out = run_chain_refresh(rng, problem.rules, problem.y, problem.all_rows, problem.cum_weights, problem.log_weights,
                            problem.consts, np.asarray(true_order, dtype=np.int64), fit.K,
                            np.asarray(fit.gammas, dtype=float), 200, 200, 1, False, 5, problem.cum_weights,
                            problem.log_weights)
    np.testing.assert_array_equal(out[4], result.log_posterior_trace[0])


@pytest.mark.parametrize("temperatures", [0, -2, 1.5, [0.5, 0.2], [1.0, 1.0], [1.0, 0.5, 0.7], [1.0, 0.0], "hot", []])
def test_bad_temperatures_are_refused(temperatures):
    coverage, y = small_data()
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    with pytest.raises(FRLError) as info:
        sample_posterior(problem, n_samples=10, temperatures=temperatures)
    assert "\n" not in str(info.value)


def test_temperature_ladder_is_geometric():
    from frl_engine.sampler import temperature_ladder

    np.testing.assert_allclose(temperature_ladder(3, 0.25), [1.0, 0.5, 0.25])
    np.testing.assert_array_equal(temperature_ladder(1), [1.0])


def test_cli_sample_temperatures(tmp_path, capsys):
    from frl_engine.cli import main

    data = _patients_csv(tmp_path / "patients.csv")
    out = tmp_path / "posterior.json"
    common = ["sample", str(data), "--target", "Readmitted", "--steps", "500", "--chains", "2", "--samples", "200",
              "--burn-in", "100", "--seed", "2", "--jobs", "1"]
    assert main([*common, "--temperatures", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "parallel tempering, 3 replicas per chain at beta 1, 0.316, 0.1" in printed
    data = json.loads(out.read_text())
    assert data["temperatures"] == pytest.approx([1.0, 0.1 ** 0.5, 0.1]) and len(data["swap_acceptance"]) == 2
    assert main([*common, "--temperatures", "1", "--out", str(out)]) == 0
    assert "parallel tempering" not in capsys.readouterr().out
    assert json.loads(out.read_text())["temperatures"] == [1.0]
    assert main([*common, "--temperatures", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frl: error: --temperatures must be at least 1") and err.count("\n") == 1


def test_default_sample_tempers_when_the_plain_sampler_did_not_converge():
    """sample_posterior_tempered_until_converged without continuing: plain 1x, tempered 1x, then 4x on that or a
    closer ladder by the swap rate, each afresh from the seed."""
    from frl_engine.sampler import sample_posterior_tempered_until_converged

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, burn_in=0, starts=[true_order, [3], [7, 9], []], random_state=0,
                  n_jobs=1, refresh=2)
    plain = sample_posterior(problem, temperatures=1, **kwargs)
    tempered = sample_posterior(problem, temperatures=4, **kwargs)
    kwargs_afresh = {**kwargs, "continue_chains": False}
    assert not plain.verdict.converged and not tempered.verdict.converged
    keeps_tempering = sample_posterior_tempered_until_converged(problem, min_top_swap=0.0, **kwargs_afresh)
    assert keeps_tempering.thin == 4 and len(keeps_tempering.temperatures) == 4
    np.testing.assert_array_equal(
        keeps_tempering.log_posterior_trace,
        sample_posterior(problem, **{**kwargs, "thin": 4}, temperatures=4).log_posterior_trace)
    assert [(a["factor"], a["replicas"]) for a in keeps_tempering.attempts] == [(1, 1), (1, 4), (4, 4)]
    assert not any(a["continued"] for a in keeps_tempering.attempts)
    assert keeps_tempering.attempts[1]["top_swap"] == tempered.swap_acceptance[0]
    assert keeps_tempering.attempts[0]["worst_rhat"] == plain.verdict.worst_rhat
    assert "runs drawn: plain 1x" in keeps_tempering.summary()
    json.dumps(keeps_tempering.to_dict(), allow_nan=False)
    closer = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01, **kwargs_afresh)
    assert closer.thin == 4 and closer.temperatures == pytest.approx(0.5 ** (np.arange(6) / 5))
    assert [(a["factor"], a["replicas"]) for a in closer.attempts] == [(1, 1), (1, 4), (4, 6)]
    plain_last = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01, close_temperatures=1,
                                                           **kwargs_afresh)
    assert plain_last.thin == 4 and plain_last.temperatures == (1.0,)
    # data on which the plain sampler converges pay nothing for tempering
    quick = sample_posterior_tempered_until_converged(problem, n_samples=1000, n_chains=4, start=true_order,
                                                      random_state=0, n_jobs=2)
    assert quick.verdict.converged and quick.thin == 1 and quick.temperatures == (1.0,)
    assert len(quick.attempts) == 1 and quick.attempts[0]["converged"]


def test_the_default_sample_continues_its_chains():
    """The default escalation continues the chains: it equals the same attempts drawn with resume=, one after the
    other, whatever n_jobs; the last attempt's burn-in counts every earlier sweep."""
    from frl_engine.sampler import sample_posterior_tempered_until_converged, temperature_ladder

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, starts=[true_order, [3], [7, 9], []], random_state=0, refresh=2)
    results = [sample_posterior_tempered_until_converged(problem, burn_in=5, min_top_swap=1.01, n_jobs=jobs,
                                                         long_within=1.05, **kwargs) for jobs in (1, 2)]
    # with a finite long_within, chains still far apart after 4x are not run on for the long attempt
    assert results[0].attempts[-1]["worst_rhat"] > 1.05
    assert [(a["factor"], a["replicas"], a["continued"]) for a in results[0].attempts] == [
        (1, 1, False), (1, 4, True), (2, 6, True), (4, 6, True)]
    assert [a["sweeps"] for a in results[0].attempts] == [17, 17, 24, 48]
    by_hand = sample_posterior(problem, burn_in=5, temperatures=1, n_jobs=1, **kwargs)
    by_hand = sample_posterior(problem, burn_in=5, temperatures=4, resume=by_hand, n_jobs=1, **kwargs)
    for factor in (2, 4):
        by_hand = sample_posterior(problem, burn_in=0, thin=factor, temperatures=temperature_ladder(6, 0.5),
                                   resume=by_hand, n_jobs=1, **kwargs)
    for result in results:
        np.testing.assert_array_equal(result.log_posterior_trace, by_hand.log_posterior_trace)
        assert result.lists == by_hand.lists
        assert result.thin == 4 and result.burn_in == 17 + 17 + 24
    assert "continued, tempered (6 replicas" in results[0].summary()
    # by default (any R-hat is within reach), one more attempt at 8x continues the same chains
    longer = sample_posterior_tempered_until_converged(problem, burn_in=5, min_top_swap=1.01, n_jobs=1, **kwargs)
    assert [(a["factor"], a["replicas"], a["continued"]) for a in longer.attempts][-2:] == [(4, 6, True),
                                                                                         (8, 6, True)]
    by_hand = sample_posterior(problem, burn_in=0, thin=8, temperatures=temperature_ladder(6, 0.5), resume=by_hand,
                               n_jobs=1, **kwargs)
    np.testing.assert_array_equal(longer.log_posterior_trace, by_hand.log_posterior_trace)
    assert longer.thin == 8 and longer.burn_in == 17 + 17 + 24 + 48
    never = sample_posterior_tempered_until_converged(problem, burn_in=5, min_top_swap=1.01, n_jobs=1,
                                                      long_within=math.inf, long_factor=None, **kwargs)
    assert len(never.attempts) == 4
    with pytest.raises(FRLError, match="long_factor"):  # refused before any sampling, not when reached
        sample_posterior_tempered_until_converged(problem, long_factor=0, **kwargs)


def test_the_default_sample_stops_before_an_attempt_over_its_work_budget():
    """On large data the default schedule does not start an attempt that would take its chains past the work
    budget (replica-sweeps x (rows + SWEEP_OVERHEAD_ROWS), about a minute on 2 cores): the sample is the last
    attempt drawn, draw for draw, and its summary says that no longer one was run."""
    from frl_engine.sampler import SWEEP_OVERHEAD_ROWS, sample_posterior_tempered_until_converged

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, burn_in=5, starts=[true_order, [3], [7, 9], []], random_state=0,
                  refresh=2, n_jobs=1)
    per_sweep = problem.n_rows + SWEEP_OVERHEAD_ROWS
    # plain: 17 sweeps of 1 replica; tempered: 17 sweeps of 4; then 24 sweeps of 6 (the close ladder)
    def budget(replica_sweeps):   # per 1,000 samples, as the default's is
        return replica_sweeps * per_sweep * 1000 / 12

    two = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01, work_budget=budget(17 + 68 + 0.5),
                                                    **kwargs)
    assert [(a["factor"], a["replicas"]) for a in two.attempts] == [(1, 1), (1, 4)]
    assert two.attempts[-1]["over_budget"] and not two.verdict.converged
    assert "no longer attempt: it would pass the default's work budget" in two.summary()
    json.dumps(two.to_dict(), allow_nan=False)
    by_hand = sample_posterior(problem, temperatures=1, **kwargs)
    by_hand = sample_posterior(problem, temperatures=4, resume=by_hand, **kwargs)
    np.testing.assert_array_equal(two.log_posterior_trace, by_hand.log_posterior_trace)
    one = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01, work_budget=budget(17 + 67),
                                                    **kwargs)
    assert [(a["factor"], a["replicas"]) for a in one.attempts] == [(1, 1)] and one.attempts[0]["over_budget"]
    three = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01,
                                                      work_budget=budget(17 + 68 + 144 + 0.5), **kwargs)
    assert [(a["factor"], a["replicas"]) for a in three.attempts] == [(1, 1), (1, 4), (2, 6)]
    unbounded = sample_posterior_tempered_until_converged(problem, min_top_swap=1.01, work_budget=None, **kwargs)
    assert len(unbounded.attempts) == 5 and not any(a.get("over_budget") for a in unbounded.attempts)
    for bad in (0, -1.0, "a minute", True):   # refused before any sampling
        with pytest.raises(FRLError, match="work_budget must be a positive number"):
            sample_posterior_tempered_until_converged(problem, work_budget=bad, **kwargs)
    # the default budget holds the whole schedule up to about 25,000 rows, and not at 100,000
    from frl_engine.sampler import WORK_BUDGET
    schedule = 2000 + 4 * 2000 + 6 * (2000 + 4000 + 8000)
    assert schedule * (25_000 + SWEEP_OVERHEAD_ROWS) <= WORK_BUDGET < schedule * (100_000 + SWEEP_OVERHEAD_ROWS)


def test_the_default_sample_continues_its_plain_chains_longer_until_they_converge():
    """The estimator's default: the plain sampler, then the same chains continued at 2x, 4x, ... while not
    converged; equal, draw for draw, to the attempts drawn by hand with resume=, whatever n_jobs, and the
    last attempt's burn-in counts every earlier sweep.  Data on which the plain run converges pay nothing."""
    from frl_engine.sampler import PLAIN_FACTORS, sample_posterior_continued_until_converged

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, starts=[true_order, [3], [7, 9], []], random_state=0, refresh=2)
    results = [sample_posterior_continued_until_converged(problem, burn_in=5, factors=(2, 4, 8), n_jobs=jobs,
                                                          plain_until=None, **kwargs) for jobs in (1, 2)]
    assert not results[0].verdict.converged   # 48 draws never reach an ESS of 400
    assert [(a["factor"], a["replicas"], a["continued"]) for a in results[0].attempts] == [
        (1, 1, False), (2, 1, True), (4, 1, True), (8, 1, True)]
    assert [a["sweeps"] for a in results[0].attempts] == [17, 24, 48, 96]
    by_hand = sample_posterior(problem, burn_in=5, n_jobs=1, **kwargs)
    for factor in (2, 4, 8):
        by_hand = sample_posterior(problem, burn_in=0, thin=factor, resume=by_hand, n_jobs=1, **kwargs)
    for result in results:
        np.testing.assert_array_equal(result.log_posterior_trace, by_hand.log_posterior_trace)
        assert result.lists == by_hand.lists and result.temperatures == (1.0,)
        assert result.thin == 8 and result.burn_in == 17 + 24 + 48
        # the MAP list's risk run is drawn once, for the attempt returned, and is that attempt's own
        np.testing.assert_array_equal(result.map_draws.risks, by_hand.map_draws.risks)
        assert result.map_risk["n_draws"] == 48 and result.map_risk_pending is None
    # a continued chain is the one long chain: the last attempt's draws are its last 12 x 8 sweeps, thinned
    whole = sample_posterior(problem, burn_in=17 + 24 + 48, thin=8, n_jobs=1, **kwargs)
    np.testing.assert_array_equal(results[0].log_posterior_trace, whole.log_posterior_trace)
    assert "runs drawn: plain 1x, R-hat" in results[0].summary() and "continued, plain 8x" in results[0].summary()
    json.dumps(results[0].to_dict(), allow_nan=False)
    # each run says why it has not converged when its R-hat is fine: its ESS, under 400
    last = results[0].attempts[-1]
    assert last["smallest_ess"] == results[0].verdict.smallest_ess < 400
    from frl_engine.sampler import _describe_attempt

    said = _describe_attempt(last)
    if last["worst_rhat"] <= 1.01:
        assert said.endswith(f"(not converged: ESS {last['smallest_ess']:.0f}, under 400)"), said
    else:
        assert said.endswith("(not converged)"), said
    assert _describe_attempt({**last, "worst_rhat": 0.999}).endswith("under 400)")
    assert _describe_attempt({**last, "worst_rhat": 1.2}).endswith("R-hat 1.200 (not converged)")
    # the default factors double up to 64x (within the work budget: the next test)
    assert PLAIN_FACTORS == (2, 4, 8, 16, 32, 64)
    quick = sample_posterior_continued_until_converged(problem, n_samples=1000, n_chains=4, start=true_order,
                                                       random_state=0, n_jobs=2)
    assert quick.verdict.converged and quick.thin == 1 and len(quick.attempts) == 1
    with pytest.raises(FRLError, match="plain sampler"):
        sample_posterior_continued_until_converged(problem, temperatures=3, **kwargs)
    with pytest.raises(FRLError, match="factors"):
        sample_posterior_continued_until_converged(problem, factors=(2, 0), **kwargs)


def test_the_default_sample_continues_stuck_plain_chains_with_replicas_that_temper_the_list_prior():
    """After the plain attempts up to ``plain_until``, the default continues the same chains with parallel tempering
    of the list prior and the likelihood on ``PRIOR_LADDER`` (the beta = 1 state keeps its place), equal, draw for
    draw, to the attempts drawn by hand with resume=, whatever n_jobs; the attempts and the summary say so."""
    from frl_engine.sampler import (PLAIN_UNTIL, PRIOR_LADDER, TEMPERED_FACTORS,
                                    sample_posterior_continued_until_converged)

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, starts=[true_order, [3], [7, 9], []], random_state=0, refresh=2)
    results = [sample_posterior_continued_until_converged(problem, burn_in=5, factors=(2, 4), plain_until=2,
                                                          tempered_factors=(2, 4), n_jobs=jobs, **kwargs)
               for jobs in (1, 2)]
    assert not results[0].verdict.converged   # 48 draws never reach an ESS of 400
    assert [(a["factor"], a["replicas"], a["prior_tempered"]) for a in results[0].attempts] == [
        (1, 1, False), (2, 1, False), (2, 4, True), (4, 4, True)]
    by_hand = sample_posterior(problem, burn_in=5, n_jobs=1, **kwargs)
    by_hand = sample_posterior(problem, burn_in=0, thin=2, resume=by_hand, n_jobs=1, **kwargs)
    for factor in (2, 4):
        by_hand = sample_posterior(problem, burn_in=0, thin=factor, resume=by_hand, n_jobs=1,
                                   temperatures=PRIOR_LADDER, temper_prior=True, **kwargs)
    for result in results:
        np.testing.assert_array_equal(result.log_posterior_trace, by_hand.log_posterior_trace)
        assert result.lists == by_hand.lists and result.prior_tempered
        assert result.temperatures == tuple(PRIOR_LADDER) and result.swap_acceptance == by_hand.swap_acceptance
    # tempering the list prior is a different chain from tempering the likelihood alone
    likelihood_only = sample_posterior(problem, burn_in=0, thin=4, resume=by_hand, n_jobs=1,
                                       temperatures=PRIOR_LADDER, **kwargs)
    again = sample_posterior(problem, burn_in=0, thin=4, resume=by_hand, n_jobs=1, temperatures=PRIOR_LADDER,
                             temper_prior=True, **kwargs)
    assert not np.array_equal(likelihood_only.log_posterior_trace, again.log_posterior_trace)
    assert "continued, tempered (4 replicas, list prior too" in results[0].summary()
    assert "(likelihood and list prior tempered)" in results[0].summary()
    assert results[0].to_dict()["attempts"][-1]["prior_tempered"] is True
    # the defaults: plain up to 8x, then four replicas from beta = 1 down to 0.8
    assert PLAIN_UNTIL == 8 and TEMPERED_FACTORS[0] == 2 and len(PRIOR_LADDER) == 4
    assert PRIOR_LADDER[0] == 1.0 and PRIOR_LADDER[-1] == pytest.approx(0.8)
    with pytest.raises(FRLError, match="plain_until"):
        sample_posterior_continued_until_converged(problem, plain_until=0, **kwargs)
    with pytest.raises(FRLError, match="inverse temperatures"):
        sample_posterior_continued_until_converged(problem, prior_ladder=(0.9, 0.8), **kwargs)


def test_the_default_plain_schedule_stops_before_an_attempt_over_its_work_budget():
    """The plain schedule counts an attempt's work as sweeps x L x (rows + LIST_SWEEP_OVERHEAD_ROWS), L the mean
    length of the lists it drew (of the last attempt's, for the next one), and draws the next attempt only within
    the budget: the sample is then the last attempt drawn.  The default budget is the minute measured: breast
    cancer's 9-rule posterior lists run the whole schedule, Spambase's 17 rules and the logistic export's stop at
    32x, that export at 100,000 rows at 8x."""
    from frl_engine.sampler import (LIST_SWEEP_OVERHEAD_ROWS, LIST_WORK_BUDGET, PLAIN_FACTORS, PLAIN_UNTIL,
                                    PRIOR_LADDER, TEMPERED_FACTORS, sample_posterior_continued_until_converged)

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=12, n_chains=4, burn_in=5, starts=[true_order, [3], [7, 9], []], random_state=0,
                  refresh=2, n_jobs=1)
    per_sweep = problem.n_rows + LIST_SWEEP_OVERHEAD_ROWS
    by_hand = [sample_posterior(problem, **kwargs)]
    for factor in (2, 4, 8):
        by_hand.append(sample_posterior(problem, **{**kwargs, "burn_in": 0}, thin=factor, resume=by_hand[-1]))
    sweeps = [17, 24, 48, 96]
    works = [n * np.mean(sample.lengths) * per_sweep for n, sample in zip(sweeps, by_hand)]
    assert len({round(np.mean(sample.lengths), 6) for sample in by_hand}) > 1   # the lengths do differ
    # room for 1x, 2x and 4x; 8x counted at the 4x attempt's mean length would pass it
    next_work = sweeps[3] * np.mean(by_hand[2].lengths) * per_sweep
    budget = (sum(works[:3]) + 0.5 * next_work) * 1000 / 12
    stopped = sample_posterior_continued_until_converged(problem, work_budget=budget, **kwargs)
    assert [a["factor"] for a in stopped.attempts] == [1, 2, 4] and stopped.attempts[-1]["over_budget"]
    np.testing.assert_allclose([a["work"] for a in stopped.attempts], works[:3])
    assert "no longer attempt: it would pass the default's work budget" in stopped.summary()
    np.testing.assert_array_equal(stopped.log_posterior_trace, by_hand[2].log_posterior_trace)
    np.testing.assert_array_equal(stopped.map_draws.risks, by_hand[2].map_draws.risks)
    # with room for the estimate of the 8x attempt, it is drawn
    more = sample_posterior_continued_until_converged(
        problem, work_budget=(sum(works[:3]) + 1.01 * next_work) * 1000 / 12, factors=(2, 4, 8), plain_until=None,
        **kwargs)
    assert [a["factor"] for a in more.attempts] == [1, 2, 4, 8] and not more.attempts[-1].get("over_budget")
    for bad in (0, -1.0, "a minute", True):   # refused before any sampling
        with pytest.raises(FRLError, match="work_budget must be a positive number"):
            sample_posterior_continued_until_converged(problem, work_budget=bad, **kwargs)

    def last_attempt(rows, length):   # the schedule's last (factor, replicas) at the defaults, lists of a length
        done, last = 2000 * length * (rows + LIST_SWEEP_OVERHEAD_ROWS), (1, 1)
        schedule = [(f, 1) for f in PLAIN_FACTORS if f <= PLAIN_UNTIL]
        schedule += [(f, len(PRIOR_LADDER)) for f in TEMPERED_FACTORS]
        for f, replicas in schedule:
            work = replicas * 1000 * f * length * (rows + LIST_SWEEP_OVERHEAD_ROWS)
            if done + work > LIST_WORK_BUDGET:
                break
            done, last = done + work, (f, replicas)
        return last

    assert last_attempt(683, 9) == (16, 4)           # UCI breast cancer
    assert last_attempt(4_601, 15) == (8, 4)         # UCI Spambase (its lists of 14 to 16 rules)
    assert last_attempt(20_000, 12.5) == (4, 4)      # the logistic export
    assert last_attempt(100_000, 21) == (8, 1)       # the logistic export at 100,000 rows: no replicas
    assert last_attempt(20_000, 4) == (16, 4)        # the raw export's 4-rule lists, were they not to converge


def test_a_list_outgrowing_the_replica_arrays_is_run_again_with_the_same_draws(monkeypatch):
    """Replicas hold INITIAL_CAPACITY rules at first; a chain that outgrows them is rerun, so nothing changes."""
    import frl_engine.sampler as sampler

    problem, true_order = planted_problem()
    kwargs = dict(n_samples=300, n_chains=2, start=None, random_state=6, n_jobs=1, refresh=5, temperatures=3)
    roomy = sample_posterior(problem, **kwargs)
    assert roomy.lengths.max() > 3  # lists longer than the small room below
    monkeypatch.setattr(sampler, "INITIAL_CAPACITY", 1)
    cramped = sample_posterior(problem, **kwargs)
    assert cramped.lists == roomy.lists
    np.testing.assert_array_equal(cramped.log_posterior_trace, roomy.log_posterior_trace)


@pytest.mark.parametrize("temperatures,refresh", [(1, 0), (3, 5)])
def test_a_resumed_sample_is_the_longer_chain_draw_for_draw(temperatures, refresh):
    """resume: n sweeps, then m more from where the chains stopped, are n + m sweeps of one chain."""
    problem, true_order = planted_problem()
    kwargs = dict(n_chains=2, starts=[true_order, [3, 5]], focus=[3, 5, *true_order], random_state=11, n_jobs=1,
                  temperatures=temperatures, refresh=refresh)
    whole = sample_posterior(problem, n_samples=120, burn_in=81, **kwargs)
    first = sample_posterior(problem, n_samples=21, burn_in=60, **kwargs)  # 81 sweeps: an odd number
    for jobs in (1, 2):
        rest = sample_posterior(problem, n_samples=120, burn_in=0, resume=first, **{**kwargs, "n_jobs": jobs})
        np.testing.assert_array_equal(rest.log_posterior_trace, whole.log_posterior_trace)
        assert rest.lists == whole.lists
        np.testing.assert_array_equal(rest.K, whole.K)
        assert rest.burn_in == 81 and rest.thin == 1
    assert first.chain_states[0].sweeps == 81 and rest.chain_states[0].sweeps == 201
    # the earlier sample is not changed by being continued (its generators are copied)
    again = sample_posterior(problem, n_samples=120, burn_in=0, resume=first, **kwargs)
    np.testing.assert_array_equal(again.log_posterior_trace, whole.log_posterior_trace)


def test_a_chain_continued_on_another_ladder_still_samples_the_exact_posterior():
    """Plain sweeps, then tempered ones from the plain chain's state (the default escalation): exact posterior."""
    hyper, weights = SETTINGS["paper-priors-equal-weights"]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {order: v["prob"] for order, v in exact.items()}
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    plain = sample_posterior(problem, n_samples=50, n_chains=2, burn_in=0, start=[0], random_state=5, n_jobs=1,
                             refresh=5, temperatures=1)
    result = sample_posterior(problem, n_samples=30_000, n_chains=2, burn_in=200, thin=2, start=[0],
                              random_state=5, n_jobs=1, refresh=5, temperatures=[1.0, 0.6, 0.3], resume=plain)
    tv = total_variation(probabilities, result.orders)
    print(f"continued on a ladder: TV(lists) = {tv:.4f}, swaps {result.swap_acceptance}")
    assert tv <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, "continued tempered")
    with pytest.raises(FRLError, match="resume must be a posterior sample of 3 chains"):
        sample_posterior(problem, n_samples=10, n_chains=3, start=[0], resume=plain)


@pytest.mark.parametrize("seed", [3, "generator"])
def test_the_map_lists_risk_run_drawn_later_is_the_same_run(seed):
    """``map_risk=False`` leaves the fixed-list run for later (the schedules draw it only for the attempt they
    return); :func:`with_map_risk` then draws exactly what ``map_risk=True`` would have, even from a Generator."""
    from frl_engine.sampler import with_map_risk

    problem, true_order = planted_problem()

    def state():
        return np.random.default_rng(11) if seed == "generator" else seed

    kwargs = dict(n_samples=30, n_chains=2, burn_in=10, thin=2, start=true_order, refresh=2, n_jobs=1)
    now = sample_posterior(problem, random_state=state(), **kwargs)
    later = sample_posterior(problem, random_state=state(), map_risk=False, **kwargs)
    assert later.map_risk is None and later.map_draws is None and later.map_risk_pending is not None
    assert "Risks of the list: not drawn (map_risk=False" in later.summary()   # the rest of the summary stands
    for method in (later.map_risk_summary, later.to_dict):   # no half-filled model file: it says what to call
        with pytest.raises(FRLError, match="with_map_risk"):
            method()
    np.testing.assert_array_equal(later.log_posterior_trace, now.log_posterior_trace)
    done = with_map_risk(problem, later)
    np.testing.assert_array_equal(done.map_draws.risks, now.map_draws.risks)
    for key in ("median", "lower", "upper", "mean"):
        np.testing.assert_array_equal(done.map_risk[key], now.map_risk[key])
    assert with_map_risk(problem, now) is now
    again = with_map_risk(problem, later)   # asked twice: the same draws, not the generator's next ones
    np.testing.assert_array_equal(again.map_draws.risks, now.map_draws.risks)
