"""Validation metrics against independent computations: scikit-learn, brute force, scipy, and hand sums."""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, roc_auc_score

from frl_engine.validation import metrics


def tied_risks(n=400, seed=0, levels=(0.62, 0.39, 0.3, 0.19, 0.05)):
    """Risks as a falling rule list gives them (few distinct values, many ties) and outcomes drawn near them."""
    rng = np.random.default_rng(seed)
    p = rng.choice(np.asarray(levels), size=n)
    y = rng.random(n) < np.clip(p * 1.2 - 0.02, 0.01, 0.99)
    return y, p


def brute_force_delong(y, s):
    """DeLong's variance straight from its definition: every event-nonevent pair compared."""
    pos, neg = s[y], s[~y]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = psi.mean()
    var = np.var(v10, ddof=1) / len(pos) + np.var(v01, ddof=1) / len(neg)
    return auc, var


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auroc_equals_sklearn_and_delong_variance_equals_the_pairwise_definition(seed):
    y, p = tied_risks(seed=seed)
    estimate = metrics.delong_auroc(y, p)
    assert estimate.auroc == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    auc, var = brute_force_delong(y, p)
    assert estimate.auroc == pytest.approx(auc, abs=1e-12)
    assert estimate.se == pytest.approx(math.sqrt(var), rel=1e-10)
    assert estimate.lower == pytest.approx(auc - 1.959963984540054 * math.sqrt(var), rel=1e-10)
    assert estimate.upper == pytest.approx(auc + 1.959963984540054 * math.sqrt(var), rel=1e-10)


def test_delong_on_continuous_scores_too():
    rng = np.random.default_rng(5)
    y = rng.random(300) < 0.3
    s = rng.normal(size=300) + y
    estimate = metrics.delong_auroc(y, s)
    auc, var = brute_force_delong(y, s)
    assert estimate.auroc == pytest.approx(roc_auc_score(y, s)) and estimate.se == pytest.approx(math.sqrt(var))


def test_delong_by_hand_on_a_tiny_table():
    # events score 0.8, 0.4; non-events 0.4, 0.2, 0.1.
    # psi rows (events) vs (0.4, 0.2, 0.1): [1, 1, 1] and [0.5, 1, 1] -> V10 = 1, 5/6; V01 = 0.75, 1, 1
    y = np.array([1, 1, 0, 0, 0], dtype=bool)
    s = np.array([0.8, 0.4, 0.4, 0.2, 0.1])
    estimate = metrics.delong_auroc(y, s)
    assert estimate.auroc == pytest.approx(5.5 / 6)
    s10 = np.var([1, 5 / 6], ddof=1)  # = 1/72
    s01 = np.var([0.75, 1, 1], ddof=1)  # = 1/48
    assert s10 == pytest.approx(1 / 72) and s01 == pytest.approx(1 / 48)
    assert estimate.se == pytest.approx(math.sqrt(1 / 144 + 1 / 144))
    assert estimate.upper == 1.0  # clipped


def test_delong_interval_covers_the_truth_about_95_percent_of_the_time():
    # Binormal scores: true AUROC = Phi(d / sqrt 2).
    rng = np.random.default_rng(11)
    d, truth, covered = 1.0, stats.norm.cdf(1.0 / math.sqrt(2)), 0
    for _ in range(400):
        y = np.r_[np.ones(60, bool), np.zeros(140, bool)]
        s = rng.normal(size=200) + d * y
        e = metrics.delong_auroc(y, s)
        covered += e.lower <= truth <= e.upper
    assert 0.91 <= covered / 400 <= 0.98


def test_brier_equals_sklearn():
    y, p = tied_risks(seed=3)
    assert metrics.brier_score(y, p) == pytest.approx(brier_score_loss(y, p), abs=1e-15)


def test_calibration_slope_and_intercept_equal_a_sklearn_unpenalised_refit():
    y, p = tied_risks(n=3000, seed=4)
    x = logit(p)
    refit = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x.reshape(-1, 1), y)
    slope = metrics.calibration_slope(y, p)
    assert slope.converged
    assert slope.estimate == pytest.approx(refit.coef_[0, 0], abs=1e-6)
    assert slope.intercept == pytest.approx(refit.intercept_[0], abs=1e-6)
    # Wald interval from the observed information at the optimum, computed directly
    mu = expit(refit.intercept_[0] + refit.coef_[0, 0] * x)
    design = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(design.T @ (design * (mu * (1 - mu))[:, None]))
    assert slope.se == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-5)
    assert slope.lower == pytest.approx(slope.estimate - 1.959963984540054 * slope.se)


def test_calibration_intercept_solves_the_offset_score_equation():
    y, p = tied_risks(n=3000, seed=6)
    x = logit(p)
    # independent: the intercept-only logistic model with offset logit(p) has score sum(y - expit(a + x)) = 0
    a = optimize.brentq(lambda a: np.sum(y - expit(a + x)), -10, 10, xtol=1e-14)
    fit = metrics.calibration_intercept(y, p)
    assert fit.converged and fit.estimate == pytest.approx(a, abs=1e-8)
    assert fit.se == pytest.approx(1 / math.sqrt(np.sum(expit(a + x) * (1 - expit(a + x)))), rel=1e-6)
    # outcomes drawn at 1.2 x the risk: the model under-predicts, so the intercept is positive
    assert fit.estimate > 0


def test_a_perfectly_calibrated_model_has_slope_one_and_intercept_zero_within_their_intervals():
    rng = np.random.default_rng(8)
    p = rng.choice([0.5, 0.3, 0.1, 0.04], size=20_000)
    y = rng.random(p.size) < p
    slope, intercept = metrics.calibration_slope(y, p), metrics.calibration_intercept(y, p)
    assert slope.lower <= 1 <= slope.upper and intercept.lower <= 0 <= intercept.upper


def test_one_distinct_risk_has_no_slope_and_separation_has_no_estimate():
    y = np.array([1, 0, 0, 1, 0], dtype=bool)
    assert math.isnan(metrics.calibration_slope(y, np.full(5, 0.3)).estimate)
    assert metrics.calibration_intercept(y, np.full(5, 0.3)).estimate == pytest.approx(logit(0.4) - logit(0.3))
    separated = metrics.calibration_slope(y, np.where(y, 0.6, 0.2))
    assert not separated.converged and math.isnan(separated.estimate)


def test_wilson_and_exact_intervals_against_formulas_and_scipy():
    lo, hi = metrics.wilson_interval(15, 50)
    ci = stats.binomtest(15, 50).proportion_ci(confidence_level=0.95, method="wilson")
    assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)
    exact = stats.binomtest(15, 50).proportion_ci(confidence_level=0.95, method="exact")
    assert metrics.exact_interval(15, 50) == pytest.approx((exact.low, exact.high), abs=1e-12)
    assert metrics.exact_interval(0, 20)[0] == 0.0 and metrics.exact_interval(20, 20)[1] == 1.0
    assert all(math.isnan(v) for v in metrics.wilson_interval(0, 0))


def test_net_benefit_by_hand_on_a_small_table():
    # 10 patients: risks and outcomes
    p = np.array([0.9, 0.6, 0.6, 0.3, 0.3, 0.3, 0.1, 0.1, 0.1, 0.1])
    y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 0, 0], dtype=bool)
    nb = metrics.net_benefit(y, p, thresholds=[0.1, 0.25, 0.6, 0.95])
    # t = 0.1: everyone treated: TP 4, FP 6 -> 0.4 - 0.6 * (0.1/0.9)
    # t = 0.25: risks >= 0.25: 6 patients, TP 3, FP 3 -> 0.3 - 0.3 * (1/3)
    # t = 0.6: risks >= 0.6: 3 patients, TP 2, FP 1 -> 0.2 - 0.1 * 1.5
    # t = 0.95: nobody -> 0
    assert nb == pytest.approx([0.4 - 0.6 / 9, 0.3 - 0.1, 0.2 - 0.15, 0.0])
    all_ = metrics.net_benefit_treat_all(y, thresholds=[0.1, 0.25, 0.6, 0.95])
    assert all_ == pytest.approx([0.4 - 0.6 / 9, 0.4 - 0.2, 0.4 - 0.9, 0.4 - 0.6 * 19])
    assert nb[0] == pytest.approx(all_[0])  # at the lowest risk the model treats everyone


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="with and without the event"):
        metrics.delong_auroc(np.ones(4, bool), np.arange(4.0))
    with pytest.raises(ValueError, match="between 0 and 1"):
        metrics.brier_score([0, 1], [0.2, 1.2])
    with pytest.raises(ValueError, match="strictly between"):
        metrics.net_benefit([0, 1], [0.2, 0.5], thresholds=[0, 0.5])
