r"""The falling rule list model of Wang & Rudin (2015), section 2, and its exact MAP.

Parameters ``theta = {L, c_0..c_{L-1}, gamma_0..gamma_{L-1}, K}`` (eq. params):

* ``L ~ Poisson(lam)``, truncated to ``L <= |B|`` (a list cannot hold more
  rules than were mined);
* rules drawn without replacement from the candidates ``B``, rule ``j`` with
  probability ``w_j / sum of the weights of the rules not yet drawn`` (eq. pc);
* ``gamma_l ~ Gamma_1(alpha, beta)``: Gamma with shape ``alpha`` and *rate*
  ``beta`` truncated to ``[1, inf)``;
* ``K ~ Gamma(alpha_K, beta_K)`` (rate ``beta_K``);
* ``v_l = K prod_{i >= l} gamma_i``, ``v_L = K``, risk ``p_l = v_l / (1 + v_l)``
  and ``y_n ~ Bernoulli(p_{z_n})`` where ``z_n`` is the first rule that
  applies to row ``n`` (``L`` for the default rule).

Because every ``gamma_l >= 1`` the risks fall down the list by construction.

The objective of a rule list (paper eq. alt_max_eqn) is

.. math::

    \log\text{post}(c) = \log \text{Poisson}_{\le |B|}(L;\lambda)
        + \log p(c_0..c_{L-1} \mid L)
        + \max_{K>0,\ \gamma\ge 1} \Big[\sum_l \log \text{Gamma}_1(\gamma_l)
        + \log \text{Gamma}(K) + \sum_{l=0}^{L} s_l r_l - n_l \log(1+e^{r_l})\Big]

with ``r_l = log v_l``, ``n_l`` the rows position ``l`` captures and ``s_l``
the positives among them; every density carries its full normalising
constant.  In the coordinates ``a = log K`` and ``g_l = log gamma_l >= 0`` the
bracket is concave for ``alpha, alpha_K >= 1`` (the log likelihood is concave
in ``r``, which is linear in ``(a, g)``; ``(alpha-1) g - beta e^g`` is concave)
and strictly so since ``beta, beta_K > 0``, so it has one maximiser, which we
find *exactly* (to machine precision) by projected Newton on the bound
constraints ``g >= 0`` -- not by the original code's greedy running maximum.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy import special, stats

from .errors import FRLError

# Layout of the constants vector handed to the compiled kernels.
LAM, ALPHA, BETA, ALPHA_K, BETA_K, LOG_GAMMA1_NORM, LOG_K_NORM, LOG_L_TRUNC, SCREENED_WEIGHT, PRIOR_POWER = range(10)


@dataclass(frozen=True)
class Hyperparameters:
    """The prior's hyperparameters (paper section 2.3, "Prior specifics").

    Attributes
    ----------
    lam : float
        Prior mean list length (Poisson).  Paper default 8.
    alpha, beta : float
        Shape and *rate* of each ``gamma_l ~ Gamma_1(alpha, beta)``.  Paper: 1, 0.1.
    alpha_K, beta_K : float
        Shape and rate of ``K ~ Gamma(alpha_K, beta_K)``.  Paper: 1, 0.1.
    """

    lam: float = 8.0
    alpha: float = 1.0
    beta: float = 0.1
    alpha_K: float = 1.0
    beta_K: float = 0.1

    def __post_init__(self) -> None:
        for name in ("lam", "alpha", "beta", "alpha_K", "beta_K"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
                raise FRLError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise FRLError(f"{name} must be a positive number, got {value!r}")
        if self.alpha < 1 or self.alpha_K < 1:
            raise FRLError(
                f"alpha and alpha_K must be at least 1 (got {self.alpha}, {self.alpha_K}): "
                "below 1 the MAP problem is not concave and the exact MAP is not defined"
            )

    def constants(self, n_rules: int, screened_weight: float = 0.0) -> np.ndarray:
        """Constants for the compiled kernels, including the normalising constants.

        ``LOG_GAMMA1_NORM = alpha log beta - lgamma(alpha) - log Q(alpha, beta)`` where
        ``Q(alpha, beta) = P(Gamma(alpha, beta) >= 1)`` is the truncation mass;
        ``LOG_K_NORM = alpha_K log beta_K - lgamma(alpha_K)``;
        ``LOG_L_TRUNC = log P(Poisson(lam) <= |B|)``;
        ``SCREENED_WEIGHT``: the prior weight of the mined rules the search does not keep (see
        :meth:`PackedProblem.from_packed`), added to the rule prior's normaliser (eq. pc);
        ``PRIOR_POWER = 1``: the power of the list prior in the sampler's ratios (:mod:`frl_engine.refresh`'s
        targets and Step 3), ``beta`` in a tempered replica that tempers the prior too
        (:func:`frl_engine.sampler.run_ladder`).
        """
        consts = np.zeros(10)
        consts[LAM] = self.lam
        consts[ALPHA] = self.alpha
        consts[BETA] = self.beta
        consts[ALPHA_K] = self.alpha_K
        consts[BETA_K] = self.beta_K
        consts[LOG_GAMMA1_NORM] = (
            self.alpha * math.log(self.beta) - special.gammaln(self.alpha) - math.log(special.gammaincc(self.alpha, self.beta))
        )
        consts[LOG_K_NORM] = self.alpha_K * math.log(self.beta_K) - special.gammaln(self.alpha_K)
        consts[LOG_L_TRUNC] = log_poisson_cdf(n_rules, self.lam)
        consts[SCREENED_WEIGHT] = float(screened_weight)
        consts[PRIOR_POWER] = 1.0   # the list prior's power in the sampler's ratios: beta in a replica that tempers it
        return consts


def log_poisson_cdf(n: int, lam: float) -> float:
    """``log P(Poisson(lam) <= n)``: ``special.pdtr`` (microseconds), ``stats.poisson.logcdf`` where it underflows."""
    cdf = special.pdtr(n, lam)
    return math.log(cdf) if cdf > 1e-300 else float(stats.poisson.logcdf(n, lam))


# ----------------------------------------------------------------------------------------
# Compiled pieces.  x = (a, g_0, ..., g_{L-1}) with a = log K, g_l = log gamma_l.


@numba.njit(inline="always")
def _softplus(r):
    if r > 0:
        return r + math.log1p(math.exp(-r))
    return math.log1p(math.exp(r))


@numba.njit(inline="always")
def _sigmoid(r):
    if r >= 0:
        return 1.0 / (1.0 + math.exp(-r))
    e = math.exp(r)
    return e / (1.0 + e)


@numba.njit(nogil=True, cache=True)
def continuous_objective(x, length, n_cap, n_pos, consts):
    """The bracket of the objective, without normalising constants, at ``x``."""
    alpha = consts[ALPHA]
    beta = consts[BETA]
    a = x[0]
    r = a
    value = n_pos[length] * r - n_cap[length] * _softplus(r)
    for pos in range(length - 1, -1, -1):
        g = x[1 + pos]
        r += g
        value += n_pos[pos] * r - n_cap[pos] * _softplus(r)
        value += (alpha - 1.0) * g - beta * math.exp(g)
    value += (consts[ALPHA_K] - 1.0) * a - consts[BETA_K] * math.exp(a)
    return value


@numba.njit(nogil=True, cache=True)
def _gradient_hessian(x, length, n_cap, n_pos, consts, grad, hess, cum_d, cum_h):
    alpha = consts[ALPHA]
    beta = consts[BETA]
    # r_l from the bottom up; d_l, h_l first and second derivatives of the likelihood in r_l.
    r = x[0]
    p = _sigmoid(r)
    d_default = n_pos[length] - n_cap[length] * p
    h_default = -n_cap[length] * p * (1.0 - p)
    # cum_d[i] = sum_{l <= i} d_l: compute r_l top-down needs the suffix sums of g.
    total_g = 0.0
    for pos in range(length):
        total_g += x[1 + pos]
    r_top = x[0] + total_g
    running_d = 0.0
    running_h = 0.0
    r = r_top
    for pos in range(length):
        p = _sigmoid(r)
        running_d += n_pos[pos] - n_cap[pos] * p
        running_h += -n_cap[pos] * p * (1.0 - p)
        cum_d[pos] = running_d
        cum_h[pos] = running_h
        r -= x[1 + pos]
    exp_a = math.exp(x[0])
    grad[0] = running_d + d_default + (consts[ALPHA_K] - 1.0) - consts[BETA_K] * exp_a
    hess[0, 0] = running_h + h_default - consts[BETA_K] * exp_a
    for i in range(length):
        exp_g = math.exp(x[1 + i])
        grad[1 + i] = cum_d[i] + (alpha - 1.0) - beta * exp_g
        hess[0, 1 + i] = cum_h[i]
        hess[1 + i, 0] = cum_h[i]
        for j in range(i, length):
            hess[1 + i, 1 + j] = cum_h[i]
            hess[1 + j, 1 + i] = cum_h[i]
        hess[1 + i, 1 + i] -= beta * exp_g


@numba.njit(nogil=True, cache=True)
def _initial_point(length, n_cap, n_pos, x):
    """A feasible start: smoothed empirical log-odds made to fall down the list."""
    r_below = math.log((n_pos[length] + 0.5) / (n_cap[length] - n_pos[length] + 0.5))
    x[0] = r_below
    for pos in range(length - 1, -1, -1):
        r = math.log((n_pos[pos] + 0.5) / (n_cap[pos] - n_pos[pos] + 0.5))
        if r > r_below:
            x[1 + pos] = r - r_below
            r_below = r
        else:
            x[1 + pos] = 0.0


def workspace(max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch memory for :func:`solve_continuous_into` for lists of up to ``max_length`` rules."""
    dim = max_length + 1
    return np.empty((2 * dim + 5, dim)), np.empty(dim, dtype=np.int64)


@numba.njit(nogil=True, cache=True)
def solve_continuous(length, n_cap, n_pos, consts, x):
    """Maximise the bracket over ``a`` and ``g >= 0`` exactly; returns the maximum (see solve_continuous_into)."""
    dim = length + 1
    work = np.empty((2 * dim + 5, dim))
    free = np.empty(dim, dtype=np.int64)
    return solve_continuous_into(length, n_cap, n_pos, consts, x, work, free)


@numba.njit(nogil=True, cache=True)
def solve_continuous_into(length, n_cap, n_pos, consts, x, work, free):
    """Maximise the bracket over ``a`` and ``g >= 0`` exactly; returns the maximum.

    Projected Newton (Bertsekas 1982): variables at their bound whose gradient
    points outwards are held; a Newton step (Cholesky of the negated Hessian,
    which is positive definite) on the others; a projected backtracking line
    search.  Stops when the projected gradient vanishes to ~1e-11 relative to
    the data size, when a full Newton step promises less than 1e-12, or when no
    step improves the value in floating point.  ``work`` (from :func:`workspace`)
    and ``free`` are scratch memory, so the hot loop allocates nothing.
    """
    dim = length + 1
    n_max = work.shape[1]
    hess = work[0:dim, 0:dim]
    chol = work[n_max:n_max + dim, 0:dim]
    grad = work[2 * n_max, 0:dim]
    step = work[2 * n_max + 1, 0:dim]
    trial = work[2 * n_max + 2, 0:dim]
    cum_d = work[2 * n_max + 3, 0:dim]
    cum_h = work[2 * n_max + 4, 0:dim]
    _initial_point(length, n_cap, n_pos, x)
    value = continuous_objective(x, length, n_cap, n_pos, consts)
    total = 1.0
    for pos in range(dim):
        total += n_cap[pos]
    tol = 1e-11 * total
    for _ in range(200):
        _gradient_hessian(x, length, n_cap, n_pos, consts, grad, hess, cum_d, cum_h)
        n_free = 0
        worst = 0.0
        for i in range(dim):
            if i > 0 and x[i] <= 0.0 and grad[i] <= 0.0:
                continue
            free[n_free] = i
            n_free += 1
            if abs(grad[i]) > worst:
                worst = abs(grad[i])
        if worst < tol:
            break
        # Cholesky of M = -H restricted to the free variables.
        for a in range(n_free):
            for b in range(a + 1):
                s = -hess[free[a], free[b]]
                for c in range(b):
                    s -= chol[a, c] * chol[b, c]
                if a == b:
                    chol[a, a] = math.sqrt(s if s > 1e-300 else 1e-300)
                else:
                    chol[a, b] = s / chol[b, b]
        # Solve M d = grad (forward then backward substitution).
        for a in range(n_free):
            s = grad[free[a]]
            for c in range(a):
                s -= chol[a, c] * step[c]
            step[a] = s / chol[a, a]
        for a in range(n_free - 1, -1, -1):
            s = step[a]
            for c in range(a + 1, n_free):
                s -= chol[c, a] * step[c]
            step[a] = s / chol[a, a]
        # Newton decrement: the improvement a full step promises.  Below 1e-12 we are done.
        decrement = 0.0
        for a in range(n_free):
            decrement += grad[free[a]] * step[a]
        if decrement < 2e-12:
            break
        t = 1.0
        improved = False
        for _ls in range(40):
            gain = 0.0
            for i in range(dim):
                trial[i] = x[i]
            for a in range(n_free):
                i = free[a]
                v = x[i] + t * step[a]
                if i > 0 and v < 0.0:
                    v = 0.0
                trial[i] = v
                gain += grad[i] * (v - x[i])
            new_value = continuous_objective(trial, length, n_cap, n_pos, consts)
            if math.isfinite(new_value) and new_value >= value + 1e-4 * gain:
                improved = new_value > value
                for i in range(dim):
                    x[i] = trial[i]
                value = new_value
                break
            t *= 0.5
        if not improved:
            break
    return value


@numba.njit(nogil=True, cache=True)
def log_length_prior(length, consts):
    """``log Poisson_{<=|B|}(L; lam)``: the prior of the list length, truncated at the number of rules."""
    lam = consts[LAM]
    return length * math.log(lam) - lam - math.lgamma(length + 1.0) - consts[LOG_L_TRUNC]


@numba.njit(nogil=True, cache=True)
def parameter_prior_bound(length, consts):
    """The largest log prior density of ``K`` and ``L`` gammas, with their normalising constants.

    Each ``gamma_l ~ Gamma_1(alpha, beta)`` at its mode on ``[1, inf)`` and ``K ~ Gamma(alpha_K,
    beta_K)`` at its mode (its supremum when ``alpha_K = 1``): the part of
    :func:`log_posterior_upper_bound` beyond the list prior and the likelihoods.
    """
    alpha = consts[ALPHA]
    beta = consts[BETA]
    if alpha - 1.0 > beta:
        g = math.log((alpha - 1.0) / beta)
        best_g = (alpha - 1.0) * g - (alpha - 1.0)
    else:
        best_g = -beta
    value = length * (best_g + consts[LOG_GAMMA1_NORM])
    if consts[ALPHA_K] > 1.0:
        a = math.log((consts[ALPHA_K] - 1.0) / consts[BETA_K])
        value += (consts[ALPHA_K] - 1.0) * a - (consts[ALPHA_K] - 1.0)
    return value + consts[LOG_K_NORM]


@numba.njit(nogil=True, cache=True)
def prior_total_weight(cum_weights, consts):
    """The normaliser of the rule prior's first draw (eq. pc): the weight of every mined rule.

    The search and the sampler use the kept candidate rules ``S`` (at most ``max_rules``); the paper's
    ``B`` is every rule mining found.  Screening keeps the rules with the strongest outcome signal, so the
    lists of ``S`` are where the posterior over ``B``'s lists has its mass, and each of their rules is one of
    ``|B|`` a priori, not one of ``|S|``: ``p(c | L) = prod_l w_{c_l} / (W_B - sum_{j<l} w_{c_j})`` with
    ``W_B = W_S + consts[SCREENED_WEIGHT]``.  The posterior sampled is then the paper's posterior over ``B``
    restricted to lists of ``S`` (exactly: the conditional given that every rule is in ``S``).
    """
    return cum_weights[cum_weights.shape[0] - 1] + consts[SCREENED_WEIGHT]


@numba.njit(nogil=True, cache=True)
def log_list_prior(order, length, cum_weights, log_weights, consts):
    """``log Poisson_{<=|B|}(L; lam) + log p(c_0..c_{L-1} | L)`` (eq. pc), with all constants.

    The draw without replacement is from every mined rule: the normaliser starts at the kept rules' weight
    plus ``consts[SCREENED_WEIGHT]``, the weight of the rules screening left out (:func:`prior_total_weight`).
    """
    value, _ = add_rule_prior(log_length_prior(length, consts), order, 0, length,
                              prior_total_weight(cum_weights, consts), log_weights)
    return value


@numba.njit(nogil=True, cache=True)
def add_rule_prior(value, order, start, stop, remaining, log_weights):
    """``value`` plus the rule prior's terms of positions ``start .. stop - 1`` (eq. pc), and the weight left.

    Each position adds ``log w_{c_l} - log(W - sum_{j<l} w_{c_j})``; ``remaining`` is the weight not drawn
    before ``start``.  Returns ``(value + those terms, the weight not drawn before stop)``.  The terms are
    added one by one to ``value`` in list order, so every caller's sum is the same number to the last bit.
    """
    for pos in range(start, stop):
        rule = order[pos]
        value += log_weights[rule] - math.log(remaining)
        remaining -= math.exp(log_weights[rule])
    return value, remaining


@numba.njit(nogil=True, cache=True)
def log_posterior_from_counts(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x):
    """The full objective of a list whose capture counts are known; ``x`` gets the maximiser."""
    dim = length + 1
    work = np.empty((2 * dim + 5, dim))
    free = np.empty(dim, dtype=np.int64)
    return log_posterior_into(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x, work, free)


@numba.njit(nogil=True, cache=True)
def log_posterior_into(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x, work, free):
    """:func:`log_posterior_from_counts` with caller-provided scratch memory (see :func:`workspace`)."""
    value = log_list_prior(order, length, cum_weights, log_weights, consts)
    value += solve_continuous_into(length, n_cap, n_pos, consts, x, work, free)
    return value + length * consts[LOG_GAMMA1_NORM] + consts[LOG_K_NORM]


@numba.njit(nogil=True, cache=True)
def log_posterior_upper_bound(order, length, n_cap, n_pos, cum_weights, log_weights, consts):
    """A cheap upper bound on :func:`log_posterior_from_counts` (no optimisation).

    The maximum of a sum is at most the sum of the maxima: each position's
    binomial log likelihood at its own rate ``s_l / n_l``, each ``gamma``'s
    log prior at its mode on ``[1, inf)`` and ``K``'s at its mode (its
    supremum when ``alpha_K = 1``).  The search uses it to reject a proposal
    that cannot be accepted without solving for ``K`` and the gammas.
    """
    value = log_list_prior(order, length, cum_weights, log_weights, consts)
    for pos in range(length + 1):
        n = n_cap[pos]
        s = n_pos[pos]
        if s > 0.0 and s < n:
            value += s * math.log(s / n) + (n - s) * math.log1p(-s / n)
    return value + parameter_prior_bound(length, consts)


# ----------------------------------------------------------------------------------------
# Python-facing results.


@dataclass(frozen=True)
class ListFit:
    """The MAP parameters of one rule list, and the counts behind them.

    Attributes
    ----------
    order : tuple of int
        Indices of the list's rules among the candidates, top first.
    log_posterior : float
        The objective (module docstring) at its maximiser.
    K : float
        ``K*``; the default rule's odds.
    gammas : ndarray, shape (L,)
        ``gamma*_l >= 1``.
    probabilities : ndarray, shape (L+1,)
        ``p_l = v_l / (1 + v_l)``, default last; non-increasing.
    supports, positives : ndarray of int, shape (L+1,)
        ``n_l`` and ``s_l``.
    """

    order: tuple[int, ...]
    log_posterior: float
    K: float
    gammas: np.ndarray = field(repr=False)
    probabilities: np.ndarray = field(repr=False)
    supports: np.ndarray = field(repr=False)
    positives: np.ndarray = field(repr=False)


def probabilities_from(K: float, gammas: np.ndarray) -> np.ndarray:
    """Risks ``p_l = v_l / (1+v_l)`` with ``v_l = K prod_{i>=l} gamma_i``, default last."""
    log_v = np.log(K) + np.concatenate([np.cumsum(np.log(gammas)[::-1])[::-1], [0.0]])
    return special.expit(log_v)


def weight_tables(weights: np.ndarray | None, n_rules: int) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative weights and log weights of the rule prior (equal weights when None)."""
    if weights is None:
        w = np.ones(n_rules)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (n_rules,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise FRLError(f"rule_weights must be {n_rules} positive numbers, one per candidate rule")
    return np.cumsum(w), np.log(w)


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array`` as a C-contiguous read-only view (the array itself when it is one already)."""
    array = np.ascontiguousarray(array)
    if not array.flags.writeable:
        return array
    view = array.view()
    view.setflags(write=False)
    return view


@dataclass(frozen=True)
class PackedProblem:
    """Everything the compiled search and sampler need, packed once per fit.

    Attributes
    ----------
    rules : ndarray of uint64, shape (|B|, W)
        Packed truth tables of the candidate rules (see :mod:`frl_engine.bits`).
    y : ndarray of uint64, shape (W,)
        Packed outcome (1 = event).
    all_rows : ndarray of uint64, shape (W,)
        The packed set of all N rows.
    n_rows : int
    hyper : Hyperparameters
    consts : ndarray
        ``hyper.constants(|B|)``.
    cum_weights, log_weights : ndarray, shape (|B|,)
        The rule prior's weights (eq. pc).
    """

    rules: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    all_rows: np.ndarray = field(repr=False)
    n_rows: int
    hyper: Hyperparameters
    consts: np.ndarray = field(repr=False)
    cum_weights: np.ndarray = field(repr=False)
    log_weights: np.ndarray = field(repr=False)

    def __post_init__(self):
        # The rules' bit vectors are always handed to the compiled kernels read-only.  numba compiles (and
        # caches) one version of a kernel per argument type, and a read-only array is another type than a
        # writable one: the candidate rules arrive read-only (CandidateRules.packed) but the rows re-ordered
        # for the search (frl_engine.row_order), a pickled copy or a caller's array are writable, so every
        # kernel was compiled twice, the second time (tens of seconds) in the middle of a user's first fit
        # of more than row_order.MIN_ROWS rows.  A read-only view leaves the caller's array as it was.
        object.__setattr__(self, "rules", _read_only(self.rules))

    def __setstate__(self, state):   # unpickled arrays are writable again
        self.__dict__.update(state)
        object.__setattr__(self, "rules", _read_only(self.rules))

    @property
    def n_rules(self) -> int:
        return self.rules.shape[0]

    @functools.cached_property
    def rules_by_word(self) -> np.ndarray:
        """``rules`` transposed to ``(W, |B|)``, contiguous: every rule's bits of one word side by side (the
        polish's counting sweep, :func:`frl_engine.polish._scan_replace_add`).  Made on first use; always a
        writable copy (a transposed view of one word per rule would be read-only: another kernel type)."""
        return np.array(self.rules.T, order="C")

    @classmethod
    def from_arrays(cls, coverage: np.ndarray, y: np.ndarray, hyper: Hyperparameters,
                    rule_weights: np.ndarray | None = None, screened_rules: int = 0) -> "PackedProblem":
        """Pack a boolean coverage matrix ``(N, |B|)`` and a 0/1 outcome of length N."""
        from .bits import pack_columns

        coverage = np.asarray(coverage, dtype=bool)
        return cls.from_packed(pack_columns(coverage), coverage.shape[0], y, hyper, rule_weights, screened_rules)

    @classmethod
    def from_packed(cls, rules: np.ndarray, n_rows: int, y: np.ndarray, hyper: Hyperparameters,
                    rule_weights: np.ndarray | None = None, screened_rules: int = 0) -> "PackedProblem":
        """The problem from rules already packed as bit vectors ``(|B|, ceil(N / 64))`` and a 0/1 outcome.

        ``screened_rules``: how many mined rules screening left out (``CandidateRules.n_mined`` minus the
        rules kept).  Each weighs the mean weight of the kept rules (1 at equal weights) in the rule prior's
        normaliser (:func:`prior_total_weight`); the search never proposes them.
        """
        from .bits import pack_vector, row_mask

        y = np.asarray(y).astype(bool)
        if len(y) != n_rows:
            raise ValueError(f"the outcome has {len(y)} rows but the rules cover {n_rows}")
        n_rules = rules.shape[0]
        cum_weights, log_weights = weight_tables(rule_weights, n_rules)
        if int(screened_rules) < 0:
            raise ValueError(f"screened_rules must be 0 or more (got {screened_rules})")
        screened_weight = int(screened_rules) * (cum_weights[-1] / n_rules if n_rules else 1.0)
        return cls(
            rules=np.ascontiguousarray(rules, dtype=np.uint64), y=pack_vector(y), all_rows=row_mask(n_rows),
            n_rows=n_rows, hyper=hyper, consts=hyper.constants(n_rules, screened_weight), cum_weights=cum_weights,
            log_weights=log_weights,
        )


def fit_list(problem: PackedProblem, order) -> ListFit:
    """The exact MAP ``K*``, ``gamma*`` and the objective of one given rule list."""
    from .bits import capture_counts

    order = np.asarray(order, dtype=np.int64)
    length = len(order)
    if len(set(order.tolist())) != length or np.any(order < 0) or np.any(order >= problem.n_rules):
        raise FRLError("a rule list must hold distinct indices of candidate rules")
    n_cap, n_pos = capture_counts(problem.rules, problem.y, problem.all_rows, order)
    x = np.zeros(length + 1)
    value = log_posterior_from_counts(order, length, n_cap, n_pos, problem.cum_weights, problem.log_weights,
                                      problem.consts, x)
    K = float(np.exp(x[0]))
    gammas = np.exp(x[1:])
    return ListFit(
        order=tuple(int(i) for i in order), log_posterior=float(value), K=K, gammas=gammas,
        probabilities=probabilities_from(K, gammas), supports=n_cap.astype(np.int64), positives=n_pos.astype(np.int64),
    )


def drop_unreached_rules(problem: PackedProblem, fit: ListFit) -> tuple[ListFit, tuple[int, ...]]:
    """The list without its rules that no training row reaches, refitted; and the rules dropped.

    A rule whose capture count ``n_l`` is 0 (every row it covers is caught higher up, or it
    covers no row) leaves the likelihood unchanged: the MAP can still keep it, because the
    prior of the risks (``gamma_l ~ Gamma_1(alpha, beta)``, paper section 2) may prefer two
    smaller steps down to one large one.  Such a rule changes no prediction on these patients,
    yet would print on a card with support 0 and a risk set by the prior alone, and catch
    future patients at that risk.  Removing it does not change which rule any training row
    falls into, so one pass removes them all; ``K`` and the gammas are then re-maximised
    (:func:`fit_list`), so the risks still fall and ``log_posterior`` is the shorter list's
    (at most the MAP's).  Returns ``(fit, ())`` unchanged when every rule is reached.
    """
    supports = np.asarray(fit.supports)[:-1]
    dropped = tuple(int(rule) for rule, n in zip(fit.order, supports) if n == 0)
    if not dropped:
        return fit, ()
    return fit_list(problem, [rule for rule, n in zip(fit.order, supports) if n > 0]), dropped
