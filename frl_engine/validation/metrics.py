"""How well predicted risks hold up on patients: pure functions, arrays in, numbers out.

Notation: ``y`` is the 0/1 outcome of ``n`` patients (``m`` events, ``k = n - m``
non-events), ``p`` the risk a model gave each of them.

Discrimination
    :func:`delong_auroc` -- the AUROC (the probability that a random event had a
    higher risk than a random non-event, ties counting one half) with DeLong,
    DeLong & Clarke-Pearson's (1988) variance from the structural components
    ``V10_i = mean_j psi(p_i, p_j)`` (event ``i`` against every non-event ``j``)
    and ``V01_j`` (non-event ``j`` against every event):
    ``var = s2(V10) / m + s2(V01) / k`` with ``s2`` the sample variance.  The
    components come from midranks (Sun & Xu 2014), so the cost is a sort, not
    ``m x k`` comparisons.  The 95% interval is ``AUROC +- 1.96 sqrt(var)``
    clipped to [0, 1] (as pROC's default).

Overall accuracy
    :func:`brier_score` -- ``mean((p - y)^2)``; 0 is perfect; a model that gives
    everyone the prevalence ``r`` scores ``r (1 - r)``.

Calibration (Cox 1958; Steyerberg, *Clinical Prediction Models*, ch. 15)
    :func:`calibration_intercept` -- calibration-in-the-large: ``a`` in
    ``logit P(y = 1) = a + logit(p)`` (``logit(p)`` an offset).  0 when the
    average risk is right; below 0 when the model over-predicts.
    :func:`calibration_slope` -- ``b`` in ``logit P(y = 1) = a + b logit(p)``.
    1 when the spread of risks is right; below 1 when predictions are too
    extreme (over-fitting), above 1 when too modest.  Both are maximum
    likelihood fits (Newton's method on the patients grouped by distinct risk,
    which is exact), with Wald 95% intervals.

Observed rates
    :func:`wilson_interval`, :func:`exact_interval` -- 95% intervals for an
    event rate ``x / n`` (Wilson score; Clopper-Pearson).

Clinical usefulness (Vickers & Elkin 2006)
    :func:`net_benefit` -- treating patients whose risk is at least the
    threshold ``t``: ``NB(t) = TP/n - FP/n * t / (1 - t)``; :func:`net_benefit_treat_all`
    -- treating everyone: ``r - (1 - r) t / (1 - t)``; treating no one scores 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import expit, logit

__all__ = [
    "Z95", "RISK_CLIP", "AurocEstimate", "LogisticFit", "delong_auroc", "delong_components", "brier_score",
    "calibration_intercept", "calibration_slope", "wilson_interval", "exact_interval", "net_benefit",
    "net_benefit_treat_all", "DEFAULT_THRESHOLDS",
]

Z95 = float(stats.norm.ppf(0.975))
RISK_CLIP = 1e-12  # risks of exactly 0 or 1 are moved this far inside (0, 1) before taking logits
DEFAULT_THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.01, 1.0, 0.01))


def _outcome_and_risk(y, p) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y)
    p = np.asarray(p, dtype=float)
    if y.ndim != 1 or p.ndim != 1 or len(y) != len(p):
        raise ValueError(f"outcome and risk must be 1-D arrays of one length, got shapes {y.shape} and {p.shape}")
    if y.dtype != bool:
        if not np.isin(y, (0, 1)).all():
            raise ValueError("the outcome must be 0/1 or True/False")
        y = y.astype(bool)
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("risks must be numbers between 0 and 1")
    return y, p


def _both_classes(y: np.ndarray, what: str) -> None:
    if y.all() or not y.any():
        raise ValueError(f"{what} needs patients with and without the event")


# ---------------------------------------------------------------------------------------------- discrimination
@dataclass(frozen=True)
class AurocEstimate:
    """An AUROC with its DeLong standard error and 95% interval."""

    auroc: float
    se: float
    lower: float
    upper: float


def delong_components(y, score) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's structural components, by midranks.

    Returns
    -------
    v10 : ndarray, shape (m,)
        For each event, the fraction of non-events it outranks (ties 1/2).
    v01 : ndarray, shape (k,)
        For each non-event, the fraction of events that outrank it (ties 1/2).
    """
    y, score = np.asarray(y, dtype=bool), np.asarray(score, dtype=float)
    pos, neg = score[y], score[~y]
    m, k = len(pos), len(neg)
    ranks = stats.rankdata(score)  # midranks among all patients
    v10 = (ranks[y] - stats.rankdata(pos)) / k
    v01 = 1.0 - (ranks[~y] - stats.rankdata(neg)) / m
    return v10, v01


def delong_auroc(y, score) -> AurocEstimate:
    """AUROC of ``score`` for outcome ``y`` with DeLong's standard error and 95% interval.

    Parameters
    ----------
    y : array of bool or 0/1, shape (n,)
    score : array of float, shape (n,)
        Any score that ranks patients (a risk, a log-odds).

    Returns
    -------
    AurocEstimate
        ``se`` is 0 and the interval a point when one class has a single patient
        (the sample variance of one value is undefined; it is then NaN).
    """
    y = np.asarray(y).astype(bool)
    _both_classes(y, "AUROC")
    v10, v01 = delong_components(y, score)
    auroc = float(v10.mean())
    var = (v10.var(ddof=1) / len(v10) if len(v10) > 1 else np.nan) + (v01.var(ddof=1) / len(v01) if len(v01) > 1 else np.nan)
    se = float(math.sqrt(var)) if np.isfinite(var) else float("nan")
    lower = max(0.0, auroc - Z95 * se) if np.isfinite(se) else float("nan")
    upper = min(1.0, auroc + Z95 * se) if np.isfinite(se) else float("nan")
    return AurocEstimate(auroc, se, lower, upper)


# ---------------------------------------------------------------------------------------------- accuracy
def brier_score(y, p) -> float:
    """Mean squared difference between risk and outcome (0 is perfect)."""
    y, p = _outcome_and_risk(y, p)
    return float(np.mean((p - y) ** 2))


# ---------------------------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class LogisticFit:
    """A maximum-likelihood logistic recalibration: estimate, Wald 95% interval, and whether it converged.

    ``estimate`` is NaN when it does not exist (one distinct risk for a slope;
    a risk that separates events from non-events perfectly).
    """

    estimate: float
    se: float
    lower: float
    upper: float
    intercept: float  # the fitted intercept (the slope fit's a; for the intercept fit the estimate itself)
    converged: bool


def _grouped(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct logits of the risks with the number of patients and of events at each (exact for the likelihood)."""
    x = logit(np.clip(p, RISK_CLIP, 1 - RISK_CLIP))
    values, inverse = np.unique(x, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(values)).astype(float)
    events = np.bincount(inverse, weights=y.astype(float), minlength=len(values))
    return values, counts, events


def _loglik(eta, counts, events) -> float:
    return float(np.sum(events * eta - counts * np.logaddexp(0.0, eta)))


def _newton(design: np.ndarray, offset: np.ndarray, counts: np.ndarray, events: np.ndarray,
            max_iter: int = 100, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, bool]:
    """Maximise the binomial log-likelihood of ``logit = offset + design @ beta`` by damped Newton steps."""
    beta = np.zeros(design.shape[1])
    eta = offset + design @ beta
    current = _loglik(eta, counts, events)
    converged = False
    for _ in range(max_iter):
        mu = expit(eta)
        gradient = design.T @ (events - counts * mu)
        weight = counts * mu * (1 - mu)
        information = design.T @ (design * weight[:, None])
        try:
            step = np.linalg.solve(information, gradient)
        except np.linalg.LinAlgError:
            break
        scale, improved = 1.0, False
        while scale > 1e-8:
            trial = beta + scale * step
            trial_eta = offset + design @ trial
            value = _loglik(trial_eta, counts, events)
            if value >= current - 1e-12:
                improved = True
                break
            scale /= 2
        if not improved:  # no step uphill: at the maximum up to rounding
            converged = bool(np.all(np.abs(beta) < 1e3))
            break
        beta, eta, previous, current = trial, trial_eta, current, value
        if np.max(np.abs(scale * step)) < tol or abs(current - previous) < tol * (1 + abs(current)):
            converged = bool(np.all(np.abs(beta) < 1e3))
            break
    mu = expit(eta)
    information = design.T @ (design * (counts * mu * (1 - mu))[:, None])
    try:
        covariance = np.linalg.inv(information)
    except np.linalg.LinAlgError:
        covariance = np.full(information.shape, np.nan)
    return beta, covariance, converged


def _fit(estimate: float, variance: float, intercept: float, converged: bool) -> LogisticFit:
    if not converged or not np.isfinite(estimate):
        return LogisticFit(float("nan"), float("nan"), float("nan"), float("nan"), float("nan"), False)
    se = math.sqrt(variance) if variance >= 0 and np.isfinite(variance) else float("nan")
    return LogisticFit(float(estimate), se, float(estimate - Z95 * se), float(estimate + Z95 * se), float(intercept), True)


def calibration_intercept(y, p) -> LogisticFit:
    """Calibration-in-the-large: ``a`` in ``logit P(y=1) = a + logit(p)``, logit(p) an offset.

    0 when the average predicted risk matches the observed rate; negative when
    the model over-predicts, positive when it under-predicts.
    """
    y, p = _outcome_and_risk(y, p)
    _both_classes(y, "The calibration intercept")
    x, counts, events = _grouped(y, p)
    beta, cov, ok = _newton(np.ones((len(x), 1)), x, counts, events)
    return _fit(beta[0], cov[0, 0], beta[0], ok)


def calibration_slope(y, p) -> LogisticFit:
    """Calibration slope: ``b`` in ``logit P(y=1) = a + b logit(p)`` (``intercept`` holds ``a``).

    1 when the spread of the risks is right; below 1 when they are too extreme.
    NaN when every patient has the same risk (no slope to fit), or when the
    risks separate events from non-events (the maximum likelihood slope is infinite).
    """
    y, p = _outcome_and_risk(y, p)
    _both_classes(y, "The calibration slope")
    x, counts, events = _grouped(y, p)
    if len(x) < 2:
        return LogisticFit(float("nan"), float("nan"), float("nan"), float("nan"), float("nan"), False)
    has_event, has_other = events > 0, events < counts
    if not (x[has_event].min() < x[has_other].max() and x[has_other].min() < x[has_event].max()):
        # the risks separate events from non-events: the likelihood grows without bound, no finite slope
        return LogisticFit(float("nan"), float("nan"), float("nan"), float("nan"), float("nan"), False)
    design = np.column_stack([np.ones(len(x)), x])
    beta, cov, ok = _newton(design, np.zeros(len(x)), counts, events)
    return _fit(beta[1], cov[1, 1], beta[0], ok)


# ---------------------------------------------------------------------------------------------- observed rates
def wilson_interval(events: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for the rate ``events / n``; (NaN, NaN) when ``n`` is 0."""
    if n <= 0:
        return float("nan"), float("nan")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    rate = events / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def exact_interval(events: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) interval for ``events / n``; (NaN, NaN) when ``n`` is 0."""
    if n <= 0:
        return float("nan"), float("nan")
    alpha = 1 - confidence
    lower = 0.0 if events == 0 else float(stats.beta.ppf(alpha / 2, events, n - events + 1))
    upper = 1.0 if events == n else float(stats.beta.ppf(1 - alpha / 2, events + 1, n - events))
    return lower, upper


# ---------------------------------------------------------------------------------------------- decision curve
def _thresholds(thresholds) -> np.ndarray:
    t = np.asarray(DEFAULT_THRESHOLDS if thresholds is None else thresholds, dtype=float)
    if t.ndim != 1 or not ((t > 0) & (t < 1)).all():
        raise ValueError("decision thresholds must lie strictly between 0 and 1")
    return t


def net_benefit(y, p, thresholds=None) -> np.ndarray:
    """Net benefit of treating the patients whose risk is at least each threshold ``t``.

    ``NB(t) = TP(t)/n - FP(t)/n * t/(1 - t)``: true positives gained, minus
    false positives weighted by the odds at the threshold (the harm of an
    unnecessary treatment relative to the benefit of a needed one).
    """
    y, p = _outcome_and_risk(y, p)
    t = _thresholds(thresholds)
    n = len(y)
    # Patients sorted by risk: TP(t) and FP(t) are counts of events / non-events with p >= t.
    order = np.argsort(p)
    sorted_p, sorted_y = p[order], y[order]
    events_above = np.concatenate([np.cumsum(sorted_y[::-1])[::-1], [0]])
    first = np.searchsorted(sorted_p, t, side="left")
    tp = events_above[first]
    fp = (n - first) - tp
    return tp / n - fp / n * t / (1 - t)


def net_benefit_treat_all(y, thresholds=None) -> np.ndarray:
    """Net benefit of treating everyone: ``r - (1 - r) t / (1 - t)`` with ``r`` the event rate."""
    y = np.asarray(y).astype(bool)
    t = _thresholds(thresholds)
    rate = float(y.mean())
    return rate - (1 - rate) * t / (1 - t)
