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

from .model import ALPHA, ALPHA_K, BETA, BETA_K, LOG_GAMMA1_NORM, LOG_K_NORM, log_list_prior

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


@numba.njit(nogil=True, cache=True)
def log_target_r(order, length, n_cap, n_pos, r, cum_weights, log_weights, consts, power):
    """``log pi(c, r)`` of the module docstring, the likelihood raised to ``power`` (1: the posterior;
    ``beta < 1``: a tempered replica of :func:`frl_engine.sampler.run_tempered`); ``-inf`` when the
    risks do not fall."""
    value = log_list_prior(order, length, cum_weights, log_weights, consts)
    alpha = consts[ALPHA]
    beta = consts[BETA]
    for pos in range(length + 1):
        value += power * (n_pos[pos] * r[pos] - n_cap[pos] * _softplus(r[pos]))
    for pos in range(length):
        g = r[pos] - r[pos + 1]
        if g < 0.0:
            return -np.inf
        value += consts[LOG_GAMMA1_NORM] + (alpha - 1.0) * g - beta * math.exp(g) + g
    a = r[length]
    value += consts[LOG_K_NORM] + (consts[ALPHA_K] - 1.0) * a - consts[BETA_K] * math.exp(a) + a
    return value


@numba.njit(nogil=True, cache=True)
def isotonic_centres(length, n_cap, n_pos, mu, sd, block_value, block_weight, block_size, power):
    """Fill ``mu[0..L]`` and ``sd[0..L]`` without an optimiser: weighted isotonic log odds.

    Each position's smoothed log odds ``logit((s_l + 1/2) / (n_l + 1))`` with weight the
    binomial information ``(n_l + 1) p (1 - p) + TAU``, made non-increasing down the list by
    pooling adjacent violators (the weighted least-squares projection onto falling
    sequences, which the MAP approaches as the data grow).  ``O(L)``; the ``block_*``
    arrays are scratch of length ``L + 1``.  ``power``: the likelihood's power in a tempered
    replica (1 for the posterior); the information is multiplied by it, so the scales widen
    as ``1 / sqrt(power)``.
    """
    n_blocks = 0
    for pos in range(length + 1):
        p = (n_pos[pos] + 0.5) / (n_cap[pos] + 1.0)
        value = math.log(p / (1.0 - p))
        weight = power * ((n_cap[pos] + 1.0) * p * (1.0 - p)) + TAU
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
    for pos in range(length + 1):
        e = math.exp(-abs(mu[pos]))
        p_q = e / ((1.0 + e) * (1.0 + e))
        sd[pos] = KAPPA / math.sqrt(power * (n_cap[pos] * p_q) + TAU)


@numba.njit(inline="always")
def log_normal(value, mean, scale):
    z = (value - mean) / scale
    return -0.5 * z * z - math.log(scale) - _LOG_SQRT_2PI
