r"""The list move with fresh risks: a reversible-jump Metropolis-Hastings step of the sampler.

Why.  The paper's list move (Step 3 of :mod:`frl_engine.sampler`) keeps ``K`` and
the gammas attached to *positions* and draws the gamma of an added rule from its
prior.  With thousands of rows a new rule captures rows whose risk rarely
matches the old position's gamma, and a prior gamma is almost never right, so
the move is accepted well under 1% of the time and chains stay where they
start.  This move changes the list *and* proposes the risks of the positions it
touches afresh, from a normal approximation to their posterior given the new
list, so that a list that fits the data about as well as the current one is
accepted.

The move.  In the coordinates ``r_l = log v_l`` (the log odds of position
``l``; ``r_L = log K`` for the default rule, ``r_l = r_{l+1} + log gamma_l``),
the posterior density of ``(c, r)`` is (the Jacobian ``K prod gamma_l`` of the
change from ``(K, gamma)`` included)

.. math::

    \log \pi(c, r) = \log p(L, c) + \sum_{l \le L} [s_l r_l - n_l \log(1 + e^{r_l})]
        + \sum_{l<L} [\log \text{Gamma}_1(e^{g_l}) + g_l] + \log \text{Gamma}(e^{a}) + a

with ``g_l = r_l - r_{l+1} \ge 0`` (``-inf`` when the risks do not fall) and ``a = r_L``.
From ``(c, r)``:

1. propose a list ``c'`` with one of the four moves of :mod:`frl_engine.moves`;
   let ``f`` be the first position whose captured rows change (the same for the
   move and its reverse);
2. keep ``r'_l = r_l`` for ``l < f``; draw ``r'_l ~ N(mu'_l, sd'_l^2)`` independently
   for ``l = f..L'``, where ``mu'`` are the isotonic (falling) smoothed log odds of the
   positions of list ``c'`` (:func:`isotonic_centres`, ``O(L)``; the MAP approaches them as
   the data grow) and ``sd'_l = KAPPA / sqrt(n'_l p'_l (1 - p'_l) + TAU)`` the inverse
   square root of the binomial information there, widened;
3. accept with probability ``min(1, R)``,

.. math::

    \log R = \log \pi(c', r') - \log \pi(c, r) + \log q(c \mid c') - \log q(c' \mid c)
        + \sum_{l=f}^{L} \log N(r_l; \mu_l, sd_l^2) - \sum_{l=f}^{L'} \log N(r'_l; \mu'_l, sd'_l^2)

where ``mu, sd`` are the same quantities for the current list.  This is
reversible jump with independent proposals for the dimensions that change
(the map ``(r_{f..L}, u') -> (r'_{f..L'} = u', u = r_{f..L})`` is a permutation,
Jacobian 1), so the move leaves the posterior exactly invariant; the list
part of the ratio is that of the paper's move
(:func:`frl_engine.sampler._mh_log_proposal_ratio`).

Local proposals (``local_share`` of :func:`frl_engine.sampler.sample_posterior`).  Step 2 may
instead draw fresh values only in a window: positions ``f..e`` of the longer of ``c`` and ``c'``,
where ``e = f + w`` (``e = j + w`` for a SWAP of ``f`` and ``j``), ``w`` uniform on
``0..LOCAL_WINDOW`` and ``e`` at most that list's ``L``; the shorter list's window ends at ``e - 1``.
Positions above the window keep their ``r``, positions below it keep theirs shifted by ``L' - L``,
and the centres are clipped to ``[r_{e+1}, r_{f-1}]``, the kept neighbours (equal in both
directions).  The window, and whether the proposal is local, are drawn independently of the
state, so the reverse move uses the same window, the two sides differ by the dimension of the
jump, and the ratio above holds with the sums over the windows.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .model import (ALPHA, ALPHA_K, BETA, BETA_K, LOG_GAMMA1_NORM, LOG_K_NORM, PRIOR_POWER, add_rule_prior,
                    log_length_prior, prior_total_weight)

# Widening of the proposal's standard deviation, and the prior precision added to the
# binomial information (so that a position capturing no rows gets a wide, finite proposal).
KAPPA = 1.25
TAU = 0.25
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@numba.njit(inline="always")
def _softplus(r):
    if r > 0:
        return r + math.log1p(math.exp(-r))
    return math.log1p(math.exp(r))


@numba.njit(inline="always")
def gamma_term(g, consts):
    """The log prior density of ``gamma_l = e^{g}`` in the coordinates ``g`` (Jacobian included)."""
    return consts[LOG_GAMMA1_NORM] + (consts[ALPHA] - 1.0) * g - consts[BETA] * math.exp(g) + g


@numba.njit(inline="always")
def k_term(a, consts):
    """The log prior density of ``K = e^{a}`` in the coordinates ``a = r_L`` (Jacobian included)."""
    return consts[LOG_K_NORM] + (consts[ALPHA_K] - 1.0) * a - consts[BETA_K] * math.exp(a) + a


@numba.njit(inline="always")
def likelihood_term(n_cap, n_pos, r, power):
    """A position's log likelihood ``s r - n log(1 + e^r)`` at log odds ``r``, raised to ``power``."""
    return power * (n_pos * r - n_cap * _softplus(r))


@numba.njit(nogil=True, cache=True)
def log_target_tail(order, length, n_cap, n_pos, r, start, remaining, log_weights, consts, power):
    """The terms of :func:`log_target_r` that can differ between two lists agreeing above ``start``.

    Two lists that share their rules, captures and log odds at the positions ``l < start`` (a proposal
    of the list move and the current list, ``start`` = ``f``) share every term of ``log pi(c, r)`` there
    except the gamma prior of ``g_{f-1} = r_{f-1} - r_f``.  This returns the length prior, the rule
    prior terms of positions ``l >= start`` (``remaining``: the prior weight of the rules not among
    ``c_0 .. c_{start-1}``, subtracted in list order as :func:`frl_engine.model.log_list_prior` does),
    the likelihood terms of positions ``l >= start`` (the length and rule prior terms times ``consts[PRIOR_POWER]``,
    1 except in a replica that tempers the list prior), the gamma priors of ``g_l`` for
    ``l >= start - 1`` and the prior of ``K``, so that ``log pi(c', r') - log pi(c, r)`` is the
    difference of the two tails, in ``O(L - f)`` instead of ``O(L)``.  ``-inf`` when those risks do not
    fall.  (:func:`log_target_tail_reusing` with nothing to reuse.)
    """
    return log_target_tail_reusing(order, length, n_cap, n_pos, r, start, remaining, log_weights, consts, power,
                                   length + 1, 0, r, r, 0.0)


@numba.njit(nogil=True, cache=True)
def log_target_tail_reusing(order, length, n_cap, n_pos, r, start, remaining, log_weights, consts, power, cut, shift,
                            softplus_r, gamma_terms, k_value):
    """:func:`log_target_tail`, the same number to the last bit, for a proposal whose log odds from ``cut`` down
    are the current state's moved by ``shift`` places (``r[l] = r_current[l - shift]`` for ``l >= cut``).

    There its softplus terms, its gamma priors and the prior of ``K`` are the current state's
    (:func:`target_suffixes` fills ``softplus_r`` and ``gamma_terms`` and returns ``k_value``); they are read,
    not computed, so the move with fresh risks computes them only for the positions of its window.  The counts
    there differ, so each likelihood term is still formed from the proposal's own.  ``cut > length``: nothing
    is read (:func:`log_target_tail`).
    """
    value, _ = add_rule_prior(log_length_prior(length, consts), order, start, length, remaining, log_weights)
    value *= consts[PRIOR_POWER]
    for pos in range(start, length + 1):
        if pos >= cut:
            value += power * (n_pos[pos] * r[pos] - n_cap[pos] * softplus_r[pos - shift])
        else:
            value += likelihood_term(n_cap[pos], n_pos[pos], r[pos], power)
    for pos in range(max(start - 1, 0), length):
        if pos >= cut:
            value += gamma_terms[pos - shift]   # a falling state's: g >= 0 there
            continue
        g = r[pos] - r[pos + 1]
        if g < 0.0:
            return -np.inf
        value += gamma_term(g, consts)
    return value + (k_value if length >= cut else k_term(r[length], consts))


@numba.njit(nogil=True, cache=True)
def log_target_r(order, length, n_cap, n_pos, r, cum_weights, log_weights, consts, power):
    """``log pi(c, r)`` of the module docstring, the likelihood raised to ``power`` (1: the posterior;
    ``beta < 1``: a tempered replica of :func:`frl_engine.sampler.run_tempered`); ``-inf`` when the
    risks do not fall.  Every term is in the tail from the top (:func:`log_target_tail` at ``f = 0``)."""
    return log_target_tail(order, length, n_cap, n_pos, r, 0, prior_total_weight(cum_weights, consts), log_weights,
                           consts, power)


@numba.njit(nogil=True, cache=True)
def target_suffixes(order, length, n_cap, n_pos, r, cum_weights, log_weights, consts, power, suffix, remaining,
                    softplus_r, gamma_terms):
    """Every tail of one falling state at once, for the current list of the move.

    Fills ``remaining[f]`` (the prior weight of the rules not among ``c_0 .. c_{f-1}``) and
    ``suffix[f]`` for ``f = 0 .. L`` so that :func:`log_target_tail` of this state at ``f`` is
    ``suffix[f]`` plus the gamma prior of ``g_{f-1}`` (:func:`gamma_term`) when ``f > 0``: ``O(L)`` once,
    then ``O(1)`` for each proposal until one is accepted.  On the way it keeps the terms that depend on the
    log odds alone, ``softplus_r[l] = log(1 + e^{r_l})`` (``l <= L``) and ``gamma_terms[l]`` (``l < L``), and
    returns :func:`k_term` of ``r_L``: what :func:`log_target_tail_reusing` reads below a move's window.
    """
    left = prior_total_weight(cum_weights, consts)
    for pos in range(length):
        remaining[pos] = left
        left -= math.exp(log_weights[order[pos]])
    remaining[length] = left
    softplus_r[length] = _softplus(r[length])
    k_value = k_term(r[length], consts)
    value = (consts[PRIOR_POWER] * log_length_prior(length, consts)
             + power * (n_pos[length] * r[length] - n_cap[length] * softplus_r[length]) + k_value)
    suffix[length] = value
    for pos in range(length - 1, -1, -1):
        softplus_r[pos] = _softplus(r[pos])
        gamma_terms[pos] = gamma_term(r[pos] - r[pos + 1], consts)
        value += (consts[PRIOR_POWER] * (log_weights[order[pos]] - math.log(remaining[pos]))
                  + power * (n_pos[pos] * r[pos] - n_cap[pos] * softplus_r[pos]) + gamma_terms[pos])
        suffix[pos] = value
    return k_value


@numba.njit(nogil=True, cache=True)
def raw_log_odds(n_cap, n_pos, first, last, value, weight, power):
    """Positions ``first .. last``: the smoothed log odds ``logit((s_l + 1/2) / (n_l + 1))`` and their
    weight, the binomial information ``(n_l + 1) p (1 - p)`` (times ``power``) plus ``TAU``; what
    :func:`isotonic_centres` pools.  A position's values depend on its counts alone, so a proposal
    reuses the current list's above the first position it changes."""
    for pos in range(first, last + 1):
        p = (n_pos[pos] + 0.5) / (n_cap[pos] + 1.0)
        value[pos] = math.log(p / (1.0 - p))
        weight[pos] = power * ((n_cap[pos] + 1.0) * p * (1.0 - p)) + TAU


@numba.njit(nogil=True, cache=True)
def pool_falling(length, raw_value, raw_weight, mu, block_value, block_weight, block_size):
    """``mu[0..L]``: the weighted least-squares projection of ``raw_value`` onto falling sequences, by
    pooling adjacent violators (``O(L)``; the ``block_*`` arrays are scratch of length ``L + 1``)."""
    n_blocks = 0
    for pos in range(length + 1):
        value = raw_value[pos]
        weight = raw_weight[pos]
        size = 1
        # pool while the previous block is below this one (risks must fall down the list)
        while n_blocks > 0 and block_value[n_blocks - 1] < value:
            n_blocks -= 1
            total = block_weight[n_blocks] + weight
            value = (block_value[n_blocks] * block_weight[n_blocks] + value * weight) / total
            weight = total
            size += block_size[n_blocks]
        block_value[n_blocks] = value
        block_weight[n_blocks] = weight
        block_size[n_blocks] = size
        n_blocks += 1
    pos = 0
    for b in range(n_blocks):
        for _ in range(block_size[b]):
            mu[pos] = block_value[b]
            pos += 1


@numba.njit(nogil=True, cache=True)
def centre_scales(n_cap, mu, sd, first, last, power):
    """Positions ``first .. last``: the proposal scale ``KAPPA / sqrt(n_l p_l (1 - p_l) power + TAU)`` at
    the pooled centre ``p_l = logistic(mu_l)``.  A proposal needs them only where it draws fresh risks."""
    for pos in range(first, last + 1):
        e = math.exp(-abs(mu[pos]))
        p_q = e / ((1.0 + e) * (1.0 + e))
        sd[pos] = KAPPA / math.sqrt(power * (n_cap[pos] * p_q) + TAU)


@numba.njit(nogil=True, cache=True)
def isotonic_centres(length, n_cap, n_pos, mu, sd, raw_value, raw_weight, block_value, block_weight, block_size,
                     power):
    """Fill ``mu[0..L]`` and ``sd[0..L]`` without an optimiser: weighted isotonic log odds.

    Each position's smoothed log odds ``logit((s_l + 1/2) / (n_l + 1))`` with weight the
    binomial information ``(n_l + 1) p (1 - p) + TAU`` (:func:`raw_log_odds`, into ``raw_value``
    and ``raw_weight``), made non-increasing down the list by pooling adjacent violators
    (:func:`pool_falling`: the weighted least-squares projection onto falling sequences, which the
    MAP approaches as the data grow), and the scales of :func:`centre_scales`.  ``O(L)``; the
    ``block_*`` arrays are scratch of length ``L + 1``.  ``power``: the likelihood's power in a
    tempered replica (1 for the posterior); the information is multiplied by it, so the scales widen
    as ``1 / sqrt(power)``.
    """
    raw_log_odds(n_cap, n_pos, 0, length, raw_value, raw_weight, power)
    pool_falling(length, raw_value, raw_weight, mu, block_value, block_weight, block_size)
    centre_scales(n_cap, mu, sd, 0, length, power)


@numba.njit(inline="always")
def log_normal(value, mean, scale):
    z = (value - mean) / scale
    return -0.5 * z * z - math.log(scale) - _LOG_SQRT_2PI


# ------------------------------------------------------------------------------------------------
# Step 3d: one position's risk at a time (Metropolis within Gibbs on r_l given everything else).

# Damped Newton steps towards the mode of a position's conditional (any deterministic function of the
# other coordinates is a valid centre; these make it close to the mode), and the largest step.
NEWTON_STEPS = 4
NEWTON_MAX_STEP = 2.0
# Normal draws tried for the truncated-normal proposal before the update is skipped for this position.
TRUNCATED_TRIES = 16


@numba.njit(inline="always")
def _site_log_density(x, s, n, lo, hi, has_below, has_above, is_default, alpha, beta, alpha_k, beta_k, power):
    """``log pi(r_l = x | rest)`` up to a constant: the terms of :func:`log_target_r` that hold ``r_l``."""
    value = power * (s * x - n * _softplus(x))
    if has_below:  # g_l = x - r_{l+1}
        g = x - lo
        value += alpha * g - beta * math.exp(g)
    if has_above:  # g_{l-1} = r_{l-1} - x
        g = hi - x
        value += alpha * g - beta * math.exp(g)
    if is_default:  # a = r_L = log K
        value += alpha_k * x - beta_k * math.exp(x)
    return value


@numba.njit(inline="always")
def _site_slopes(x, s, n, lo, hi, has_below, has_above, is_default, alpha, beta, alpha_k, beta_k, power):
    """First and second derivatives of :func:`_site_log_density` in ``x`` (the second is negative:
    every term is concave)."""
    e = math.exp(-abs(x))
    p = 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)
    d1 = power * (s - n * p)
    d2 = -power * n * p * (1.0 - p)
    if has_below:
        eg = math.exp(x - lo)
        d1 += alpha - beta * eg
        d2 -= beta * eg
    if has_above:
        eg = math.exp(hi - x)
        d1 -= alpha - beta * eg
        d2 -= beta * eg
    if is_default:
        ex = math.exp(x)
        d1 += alpha_k - beta_k * ex
        d2 -= beta_k * ex
    return d1, min(d2, -1e-12)


@numba.njit(nogil=True, cache=True)
def conditional_proposal(s, n, lo, hi, has_above, has_below, is_default, consts, power):
    """Centre and scale of the proposal for one position's log odds on ``[lo, hi]``, and whether it is uniform.

    The centre is the mode of :func:`_site_log_density` (the position's rows ``s`` of ``n``, the gamma
    priors towards ``hi`` and ``lo`` when ``has_above`` / ``has_below``, the K prior when ``is_default``),
    reached by ``NEWTON_STEPS`` damped Newton steps from the smoothed log odds clipped to the interval;
    the scale is ``KAPPA / sqrt(curvature)`` there.  The proposal is uniform on the interval when it is
    bounded and narrower than two scales.  A deterministic function of its arguments."""
    alpha = consts[ALPHA]
    beta = consts[BETA]
    alpha_k = consts[ALPHA_K]
    beta_k = consts[BETA_K]
    p = (s + 0.5) / (n + 1.0)
    centre = min(max(math.log(p / (1.0 - p)), lo), hi)
    for _ in range(NEWTON_STEPS):
        d1, d2 = _site_slopes(centre, s, n, lo, hi, has_below, has_above, is_default, alpha, beta, alpha_k, beta_k,
                              power)
        step = min(max(-d1 / d2, -NEWTON_MAX_STEP), NEWTON_MAX_STEP)
        centre = min(max(centre + step, lo), hi)
    d1, d2 = _site_slopes(centre, s, n, lo, hi, has_below, has_above, is_default, alpha, beta, alpha_k, beta_k,
                          power)
    scale = KAPPA / math.sqrt(-d2)
    uniform = math.isfinite(lo) and math.isfinite(hi) and hi - lo < 2.0 * scale
    return centre, scale, uniform


@numba.njit(nogil=True, cache=True)
def draw_in_interval(rng, centre, scale, lo, hi, uniform):
    """A draw of the proposal of :func:`conditional_proposal` on ``[lo, hi]``: uniform, or the first of up to
    ``TRUNCATED_TRIES`` normal draws that lands inside (``nan`` when none does)."""
    if uniform:
        return lo + (hi - lo) * rng.random()
    for _ in range(TRUNCATED_TRIES):
        draw = centre + scale * rng.standard_normal()
        if lo <= draw <= hi:
            return draw
    return np.nan


@numba.njit(nogil=True, cache=True)
def site_risk_updates(rng, length, n_cap, n_pos, r, consts, power, n_scans):
    r"""Step 3d: ``n_scans`` scans over the positions, each drawing one log odds ``r_l`` given the rest.

    Why.  The paper's Gibbs Steps 1 and 2 move the risks through the augmented sums, and with
    thousands of rows the augmentation pins them: on UCI Spambase the log odds of a fixed list
    keep an autocorrelation above 0.7 at a lag of 100 sweeps.  Given the list and the other
    coordinates, ``r_l`` has a one-dimensional, log-concave conditional on ``[r_{l+1}, r_{l-1}]``
    (the risks fall; no bound above the first position nor below the default rule):

    .. math::

        \log \pi(r_l \mid \cdot) = \beta_t [s_l r_l - n_l \log(1 + e^{r_l})]
            + [\alpha g_l - \beta e^{g_l}]_{l<L} + [\alpha g_{l-1} - \beta e^{g_{l-1}}]_{l>0}
            + [\alpha_K r_L - \beta_K e^{r_L}]_{l=L} + \text{const}

    (the terms of :func:`log_target_r` that hold ``r_l``, ``g_l = r_l - r_{l+1}``; ``beta_t`` is
    the replica's power of the likelihood).  Each update is an independence Metropolis-Hastings
    step within Gibbs with the proposal of :func:`conditional_proposal` (a normal at the
    conditional's mode, truncated to the interval by :func:`draw_in_interval`, or uniform on a
    narrow interval), a function of the *other* coordinates only.  When no draw lands inside, the
    update is skipped, which depends on the other coordinates only too.  The truncation's factor is
    the same in both directions, so the acceptance ratio is
    ``pi(x') N(x; m, s) / (pi(x) N(x'; m, s))``, and each update leaves the posterior exactly
    invariant.  Each costs ``O(1)``, so a scan costs about as much as one list move.  Returns the
    number of accepted updates; ``r`` is updated in place.
    """
    alpha = consts[ALPHA]
    beta = consts[BETA]
    alpha_k = consts[ALPHA_K]
    beta_k = consts[BETA_K]
    n_accepted = 0
    for _ in range(n_scans):
        for pos in range(length + 1):
            has_above = pos > 0
            has_below = pos < length
            is_default = pos == length
            hi = r[pos - 1] if has_above else np.inf
            lo = r[pos + 1] if has_below else -np.inf
            s = n_pos[pos]
            n = n_cap[pos]
            centre, scale, uniform = conditional_proposal(s, n, lo, hi, has_above, has_below, is_default, consts,
                                                          power)
            proposed = draw_in_interval(rng, centre, scale, lo, hi, uniform)
            if not math.isfinite(proposed):
                continue
            current = r[pos]
            log_q = 0.0
            if not uniform:
                log_q = log_normal(current, centre, scale) - log_normal(proposed, centre, scale)
            log_ratio = (_site_log_density(proposed, s, n, lo, hi, has_below, has_above, is_default, alpha, beta,
                                           alpha_k, beta_k, power)
                         - _site_log_density(current, s, n, lo, hi, has_below, has_above, is_default, alpha, beta,
                                             alpha_k, beta_k, power)
                         + log_q)
            if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
                r[pos] = proposed
                n_accepted += 1
    return n_accepted
