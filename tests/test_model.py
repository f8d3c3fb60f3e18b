"""The objective of a rule list equals the paper's formula, maximised exactly (sections 2 and 3.1)."""

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from frl_engine.bits import capture_counts, pack_columns, pack_vector, row_mask
from frl_engine.errors import FRLError
from frl_engine.model import Hyperparameters, PackedProblem, fit_list, probabilities_from


def reference_log_posterior(coverage, y, order, hyper, weights=None, screened_rules=0):
    """The objective written straight from the paper with scipy densities and a generic optimiser.

    Independent of the engine: rows are assigned to rules by a plain loop, the
    densities come from scipy.stats, and K, gamma are found by L-BFGS-B from
    several starts in (log K, log gamma) with log gamma >= 0.
    """
    n_rows, n_rules = coverage.shape
    length = len(order)
    z = np.full(n_rows, length)
    for position in range(length - 1, -1, -1):
        z[coverage[:, order[position]]] = position
    w = np.ones(n_rules) if weights is None else np.asarray(weights, float)
    log_rules = 0.0
    remaining = w.sum() + screened_rules * w.mean()  # eq. pc over every mined rule, screened ones included
    for rule in order:
        log_rules += math.log(w[rule] / remaining)
        remaining -= w[rule]
    log_length = stats.poisson.logpmf(length, hyper.lam) - stats.poisson.logcdf(n_rules, hyper.lam)
    gamma_prior = stats.gamma(hyper.alpha, scale=1 / hyper.beta)
    k_prior = stats.gamma(hyper.alpha_K, scale=1 / hyper.beta_K)

    def negative(x):
        K, gammas = math.exp(x[0]), np.exp(x[1:])
        v = K * np.concatenate([np.cumprod(gammas[::-1])[::-1], [1.0]])
        p = v / (1 + v)
        loglik = np.sum(np.where(y, np.log(p[z]), np.log1p(-p[z])))
        log_gamma = np.sum(gamma_prior.logpdf(gammas) - gamma_prior.logsf(1.0))
        return -(loglik + log_gamma + k_prior.logpdf(K))

    rng = np.random.default_rng(0)
    best = None
    for _ in range(6):
        x0 = np.concatenate([[rng.normal(-1, 1)], rng.random(length) * 2])
        res = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=[(None, None)] + [(0, None)] * length,
                                options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxfun": 100000})
        if best is None or res.fun < best.fun:
            best = res
    return log_length + log_rules - best.fun


def random_problem(seed, n_rows=200, n_rules=15, density=0.3):
    rng = np.random.default_rng(seed)
    coverage = rng.random((n_rows, n_rules)) < density
    risk = 0.1 + 0.6 * coverage[:, 0] + 0.2 * coverage[:, 1]
    y = rng.random(n_rows) < np.clip(risk, 0, 0.95)
    return coverage, y, rng


@pytest.mark.parametrize("seed", range(8))
def test_log_posterior_matches_an_independent_optimiser(seed):
    coverage, y, rng = random_problem(seed)
    hyper = Hyperparameters(lam=float(rng.uniform(1, 10)), alpha=float(rng.uniform(1, 3)), beta=float(rng.uniform(0.05, 2)),
                            alpha_K=float(rng.uniform(1, 3)), beta_K=float(rng.uniform(0.05, 2)))
    problem = PackedProblem.from_arrays(coverage, y, hyper)
    for length in (0, 1, 3, 6):
        order = [int(i) for i in rng.choice(coverage.shape[1], size=length, replace=False)]
        engine = fit_list(problem, order).log_posterior
        reference = reference_log_posterior(coverage, y, order, hyper)
        # The engine solves the inner problem exactly: it can only be better, and by no more than the optimiser's slack.
        assert engine == pytest.approx(reference, abs=1e-6), (order, engine - reference)


def test_unequal_rule_weights_enter_the_prior_as_in_equation_pc():
    coverage, y, rng = random_problem(11)
    weights = rng.uniform(0.2, 3.0, size=coverage.shape[1])
    hyper = Hyperparameters()
    problem = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    order = [4, 0, 9]
    assert fit_list(problem, order).log_posterior == pytest.approx(
        reference_log_posterior(coverage, y, order, hyper, weights), abs=1e-6)
    # Order matters under unequal weights: swapping two rules changes the prior.
    swapped = fit_list(problem, [0, 4, 9]).log_posterior - fit_list(problem, order).log_posterior
    assert swapped != pytest.approx(0.0)


@pytest.mark.parametrize("weighted", [False, True])
def test_rules_screened_out_still_count_in_the_rule_prior_of_equation_pc(weighted):
    """Mining found 500 more rules than the search keeps: each rule of a list is one of all of them a priori."""
    coverage, y, rng = random_problem(12)
    weights = rng.uniform(0.2, 3.0, size=coverage.shape[1]) if weighted else None
    hyper = Hyperparameters()
    kept = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)
    mined = PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights, screened_rules=500)
    order = [4, 0, 9]
    assert fit_list(mined, order).log_posterior == pytest.approx(
        reference_log_posterior(coverage, y, order, hyper, weights, screened_rules=500), abs=1e-6)
    # at equal weights, by hand: each of the 3 rules costs log((|B| - l) / (|S| - l)) more, |B| = |S| + 500
    if not weighted:
        n = coverage.shape[1]
        extra = sum(math.log((n + 500 - l) / (n - l)) for l in range(3))
        assert fit_list(kept, order).log_posterior - fit_list(mined, order).log_posterior == pytest.approx(extra, abs=1e-9)
    assert fit_list(mined, []).log_posterior == pytest.approx(fit_list(kept, []).log_posterior, abs=1e-12)
    with pytest.raises(ValueError):
        PackedProblem.from_arrays(coverage, y, hyper, screened_rules=-1)


def test_a_rule_capturing_nobody_and_an_all_positive_rule_stay_finite():
    coverage = np.zeros((50, 3), dtype=bool)
    coverage[:10, 0] = True      # rule 0: rows 0-9, all positive
    coverage[:5, 1] = True       # rule 1: inside rule 0, so captures nobody after it
    y = np.zeros(50, dtype=bool)
    y[:10] = True
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    fit = fit_list(problem, [0, 1])
    assert np.isfinite(fit.log_posterior)
    assert list(fit.supports) == [10, 0, 40]
    assert fit.log_posterior == pytest.approx(reference_log_posterior(coverage, y, [0, 1], Hyperparameters()), abs=1e-6)


def test_risks_fall_down_the_list_and_match_the_reparameterisation():
    coverage, y, rng = random_problem(3)
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    for _ in range(20):
        order = rng.choice(coverage.shape[1], size=int(rng.integers(0, 8)), replace=False)
        fit = fit_list(problem, order)
        assert np.all(np.diff(fit.probabilities) <= 1e-12)
        assert np.all(fit.gammas >= 1.0)
        v = fit.K * np.concatenate([np.cumprod(fit.gammas[::-1])[::-1], [1.0]])
        np.testing.assert_allclose(fit.probabilities, v / (1 + v))
        assert fit.supports.sum() == coverage.shape[0]
        assert fit.positives.sum() == y.sum()


def test_capture_counts_match_a_plain_loop():
    rng = np.random.default_rng(5)
    coverage = rng.random((333, 12)) < 0.3   # 333 rows: the last word is partly padding
    y = rng.random(333) < 0.4
    order = [7, 2, 11, 0]
    n_cap, n_pos = capture_counts(pack_columns(coverage), pack_vector(y), row_mask(333), order)
    taken = np.zeros(333, dtype=bool)
    for position, rule in enumerate(order):
        captured = coverage[:, rule] & ~taken
        assert n_cap[position] == captured.sum() and n_pos[position] == (captured & y).sum()
        taken |= captured
    assert n_cap[-1] == (~taken).sum() and n_pos[-1] == (~taken & y).sum()


def test_probabilities_from_parameters():
    p = probabilities_from(0.25, np.array([2.0, 3.0]))
    np.testing.assert_allclose(p, special.expit(np.log([0.25 * 6, 0.25 * 3, 0.25])))


@pytest.mark.parametrize("bad", [dict(lam=0), dict(beta=-1), dict(alpha=0.5), dict(alpha_K=float("nan")), dict(lam="8")])
def test_bad_hyperparameters_are_refused_with_a_message(bad):
    with pytest.raises(FRLError):
        Hyperparameters(**bad)


def test_a_list_must_hold_distinct_candidate_rules():
    coverage, y, _ = random_problem(1)
    problem = PackedProblem.from_arrays(coverage, y, Hyperparameters())
    with pytest.raises(FRLError):
        fit_list(problem, [1, 1])
    with pytest.raises(FRLError):
        fit_list(problem, [99])


def test_the_cheap_upper_bound_never_falls_below_the_exact_objective():
    """The search rejects proposals by this bound; a bound below the objective would lose lists."""
    from frl_engine.bits import capture_counts
    from frl_engine.model import log_posterior_upper_bound

    for seed in range(5):
        coverage, y, rng = random_problem(seed)
        hyper = Hyperparameters(alpha=float(rng.choice([1.0, 2.5])), alpha_K=float(rng.choice([1.0, 3.0])),
                                beta=float(rng.uniform(0.05, 1)), beta_K=float(rng.uniform(0.05, 1)))
        problem = PackedProblem.from_arrays(coverage, y, hyper)
        for length in range(0, 8):
            order = np.asarray(rng.choice(coverage.shape[1], size=length, replace=False), dtype=np.int64)
            n_cap, n_pos = capture_counts(problem.rules, problem.y, problem.all_rows, order)
            bound = log_posterior_upper_bound(order, length, n_cap, n_pos, problem.cum_weights, problem.log_weights,
                                              problem.consts)
            assert bound >= fit_list(problem, order).log_posterior - 1e-9


@pytest.mark.parametrize("n, lam", [(0, 0.5), (3, 8.0), (17, 8.0), (550, 3.0), (5000, 8.0), (2, 400.0), (0, 800.0)])
def test_the_list_lengths_truncation_constant_is_the_poisson_log_cdf(n, lam):
    from scipy import stats

    from frl_engine.model import log_poisson_cdf

    assert log_poisson_cdf(n, lam) == pytest.approx(float(stats.poisson.logcdf(n, lam)), rel=1e-10, abs=1e-12)
