r"""Posterior sampling for falling rule lists (Wang & Rudin 2015, section 3.2).

The target is the posterior of the original model (see :mod:`frl_engine.model`)

.. math::

    \pi(L, c, \gamma, K) \propto \text{Poisson}_{\le |B|}(L; \lambda)\, p(c \mid L)
        \prod_{l<L} \text{Gamma}_1(\gamma_l; \alpha, \beta)\, \text{Gamma}(K; \alpha_K, \beta_K)
        \prod_{l \le L} p_l^{s_l} (1 - p_l)^{n_l - s_l}

with ``p_l = v_l / (1 + v_l)``, ``v_l = K prod_{i >= l} gamma_i``.  Following the
paper the model is augmented with ``zeta_n ~ Exp(1)`` and
``U_n ~ Poisson(zeta_n v_{z_n})``, ``y_n = 1[U_n > 0]``, and every sweep runs, in
this order:

Step 1 -- Gibbs for each ``gamma_l``, ``l = 0..L-1`` (top first):
    ``gamma_l ~ Gamma(alpha + sum_{k<=l} U_k, beta + sum_{k<=l} Z_k v_k / gamma_l)``
    *truncated to* ``[1, inf)`` (the prior's truncation survives in the full
    conditional), where ``Z_k`` and ``U_k`` are the sums of ``zeta_n`` and ``U_n``
    over the rows captured by position ``k``.
Step 2 -- Gibbs for ``K``:
    ``K ~ Gamma(alpha_K + sum_k U_k, beta_K + sum_k Z_k v_k / K)``.
Step 3 -- collapsed Metropolis-Hastings over the list (``zeta``, ``U`` integrated
    out, ``K`` held fixed, the ``gamma``'s attached to *positions*) with the four
    moves of :mod:`frl_engine.moves`; see :func:`_mh_step` for the Hastings ratios.
Step 4 -- the *joint* Gibbs draw of ``(zeta_n, U_n)`` given the (new) list:
    ``U_n = 0, zeta_n ~ Exp(1 + v)`` if ``y_n = 0``; otherwise
    ``U_n ~ 1 + Geometric(1 / (1 + v))``, ``zeta_n ~ Gamma(1 + U_n, 1 + v)``.

Sufficient statistics.  Steps 1 and 2 use the augmented variables only through
the per-position sums ``Z_k = sum_{z_n=k} zeta_n`` and ``U_k = sum_{z_n=k} U_n``,
and Step 4 draws ``(zeta, U)`` afresh from a conditional that does not depend on
their previous values; Step 3 does not use them at all.  So the chain never needs
the per-row values: Step 4 draws the per-position sums directly from their exact
joint conditional, which is what summing the per-row draws gives in distribution:

* ``U_k - s_k`` is a sum of ``s_k`` independent ``Geometric(1/(1+v_k))`` failure
  counts, i.e. ``NegativeBinomial(s_k, 1/(1+v_k))``, drawn as
  ``Poisson(Gamma(s_k, scale=v_k))``;
* given the ``U_n``, the ``zeta_n`` are independent ``Gamma(1 + U_n, 1 + v_k)``
  (positives) and ``Gamma(1, 1 + v_k)`` (negatives), so
  ``Z_k ~ Gamma(n_k + U_k, 1 + v_k)``.

A sweep therefore costs O(L) random draws plus the bit-parallel re-walk of the
list from the first changed position in Step 3 (:mod:`frl_engine.bits`); nothing
loops over patients in Python.  The chain is the paper's chain exactly (the same
Markov kernel on ``(L, c, gamma, K)`` and the augmented sums), not an
approximation of it.

Starting point.  With ``start`` (the estimator passes the MAP list) every chain
starts from that list with ``K`` and the ``gamma``'s at their exact MAP values
(:func:`frl_engine.model.fit_list`); with ``start=None`` each chain starts from its
own draw of the prior (list, ``gamma``'s and ``K``).  The augmented sums are then
initialised by a Step 4 draw.

Risks of the MAP list.  The posterior of the risks ``p_l`` of the list printed on
the card is computed by a separate *fixed-list* Gibbs run (Steps 1, 2 and 4 with
the list held at the MAP list), which samples ``(K, gamma) | list, data``
exactly; the fraction of the main samples whose list equals the MAP list is
reported next to it (it may be small when the posterior over lists is spread,
which is why the risks are not computed from those samples).  Without ``start``
the list used is the most frequent list of the sample.

Added kernels.  With ``refresh > 0`` (the default) every sweep also runs, after Step 3, the
list move with fresh risks (Step 3b, :mod:`frl_engine.refresh`), an independence step for all
the risks (Step 3c) and one-risk-at-a-time updates (Step 3d,
:func:`frl_engine.refresh.site_risk_updates`); each leaves the posterior exactly invariant.
``refresh=0`` is the paper's chain alone.

Parallel tempering.  With ``temperatures`` above 1 each chain is a ladder of replicas at
inverse temperatures ``1 = beta_0 > beta_1 > ...``, replica ``k`` targeting
``prior x likelihood^beta_k``; neighbours exchange states with the exact probability
``min(1, exp((beta_k - beta_{k+1}) (loglik_{k+1} - loglik_k)))`` and only the ``beta = 1``
replica is kept (:func:`run_tempered`; the tempered Gibbs steps use the augmentation of
:func:`_draw_augmented_tempered`).  The estimator's default does not temper: it continues the plain
chains longer while they have not converged (:func:`sample_posterior_continued_until_converged`);
:func:`sample_posterior_tempered_until_converged` is the tempered escalation it replaced.

Reproducibility.  Each chain (with all its replicas) gets its own generator spawned from ``random_state``
(``frl_engine.seeds.generator(random_state).spawn(n_chains)``), and the fixed-list run
one more spawned after them, so the result is identical whatever ``n_jobs``.
Chains run on threads (the compiled chain releases the GIL; each thread has its
own generator), so no worker process has to start and load the kernels; the
kernels are cached on disk (``cache=True``).
"""

from __future__ import annotations

import copy
import math
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from numbers import Integral, Real
from typing import Hashable, Sequence

import numba
import numpy as np
from joblib import Parallel, delayed

from .bits import adopt_counts, capture_counts_from, recount_from, row_groups, same_row_groups
from .diagnostics import (ESS_TARGET, RHAT_TARGET, ConvergenceVerdict, convergence_verdict, effective_sample_size,
                          rules_chains_disagree_on, split_rhat)
from .errors import FRLError
from .io import to_jsonable
from .model import (ALPHA, ALPHA_K, BETA, BETA_K, LOG_GAMMA1_NORM, LOG_K_NORM, PRIOR_POWER, PackedProblem, fit_list,
                    log_list_prior)
from .terminal import display_width, pad_right
from .seeds import fixed_seed, generator
from .siblings import sibling_tables
from .refresh import (centre_scales, gamma_term, isotonic_centres, log_normal, log_target_r,
                      log_target_tail_reusing, pool_falling, raw_log_odds, site_risk_updates, target_suffixes)
from .jumps import (apply_jump, clear_positions, count_applicable, jump_growth, jump_index, list_jumps,
                    mark_positions, nth_applicable)
from .moves import ADD, FIRST_CHANGED, I, J, MOVE, MOVE_NAMES, NEW_RULE, OLD_RULE, REMOVE, REPLACE, SWAP, \
    n_possible_moves, propose

STEP_NAMES = ("initialisation", "Step 1 (Gibbs update of the gammas)", "Step 2 (Gibbs update of K)",
              "Step 3 (Metropolis-Hastings update of the list)", "Step 4 (Gibbs update of zeta and U)")

# Above this mean a Poisson draw uses the normal approximation (numba's Poisson overflows near 1e19;
# at 1e15 the relative error of the approximation is far below double precision noise of its use).
_POISSON_NORMAL_ABOVE = 1e15
# Rules entering a neighbour of the MAP list within this many nats of it are in the focus set.
FOCUS_MARGIN = 3.0
# Default number of list moves with fresh risks per sweep (frl_engine.refresh).
DEFAULT_REFRESH = 100
# Parallel tempering: the tempered escalation's number of replicas per chain, and the smallest inverse
# temperature of its ladder (temperature_ladder); chosen by benchmarks/bench_tempering.py.
DEFAULT_TEMPERATURES = 4
DEFAULT_BETA_MIN = 0.1
# Room for this many rules per replica's list at first (doubled, and the chain run again, when outgrown).
INITIAL_CAPACITY = 32
# Naive rejection attempts before the exponential-proposal sampler of the truncated gamma.
_NAIVE_TRIES = 8
# The list move with fresh risks: the default share of its proposals that draw fresh risks only for the
# positions next to the change (the rest keep theirs; frl_engine.refresh), and how far below the change
# such a local proposal reaches (0 or LOCAL_WINDOW more positions, uniformly).  Compared with local_share=0 by
# benchmarks/bench_tempering.py --ladders default,global (UCI breast cancer: L's ESS 2 to 4 times that of
# refreshing every position from the change down).
DEFAULT_LOCAL_SHARE = 0.5
LOCAL_WINDOW = 1
# Step 3d: scans per sweep of the one-position-at-a-time risk update (frl_engine.refresh.site_risk_updates),
# in the sampler with fresh risks and in the fixed-list run behind the card's intervals.
DEFAULT_RISK_SCANS = 2
# Share of the moves with fresh risks that try a jump between known lists (frl_engine.jumps), when there are any.
DEFAULT_JUMP_SHARE = 0.05
# Share of the moves with fresh risks that replace a rule by a sibling (a rule sharing a condition with it,
# frl_engine.siblings), when the rules' conditions are given.  docs/search.md section 2.
DEFAULT_SIBLING_SHARE = 0.2


# ----------------------------------------------------------------------------------------
# Compiled pieces.


@numba.njit(inline="always")
def _softplus(r):
    if r > 0:
        return r + math.log1p(math.exp(-r))
    return math.log1p(math.exp(r))


@numba.njit(nogil=True, cache=True)
def truncated_gamma(rng, shape, rate):
    """A draw of ``Gamma(shape, rate)`` conditioned on being at least 1.

    Exact for every ``shape > 0`` and ``rate > 0`` (the caller checks both are finite):

    * mode at or above 1 (``shape - 1 >= rate``): rejection from the untruncated
      gamma, which accepts with probability ``P(X >= mode) > 1/2``;
    * otherwise up to ``_NAIVE_TRIES`` such attempts, then rejection from the
      shifted exponential ``1 + Exp(rate - (shape - 1))`` (for ``shape >= 1``; the
      density's tangent in log space at 1, so the acceptance probability is
      ``exp((shape-1) (log(1+t) - t)) <= 1``) or ``1 + Exp(rate)`` (for
      ``shape < 1``, acceptance ``(1+t)^(shape-1)``).

    Mixing exact samplers this way is exact: an attempt that is accepted is
    distributed as the target whatever happened before it.
    """
    if shape >= 1.0 and shape - 1.0 >= rate:
        while True:
            x = rng.standard_gamma(shape) / rate
            if x >= 1.0:
                return x
    for _ in range(_NAIVE_TRIES):
        x = rng.standard_gamma(shape) / rate
        if x >= 1.0:
            return x
    if shape >= 1.0:
        slope = rate - (shape - 1.0)
        while True:
            t = rng.standard_exponential() / slope
            if math.log(rng.random()) <= (shape - 1.0) * (math.log1p(t) - t):
                return 1.0 + t
    while True:
        t = rng.standard_exponential() / rate
        if math.log(rng.random()) <= (shape - 1.0) * math.log1p(t):
            return 1.0 + t


@numba.njit(inline="always")
def _poisson(rng, mean):
    if mean <= 0.0:
        return 0.0
    if mean > _POISSON_NORMAL_ABOVE:
        return math.floor(mean + math.sqrt(mean) * rng.standard_normal() + 0.5)
    return float(rng.poisson(mean))


@numba.njit(nogil=True, cache=True)
def _log_likelihood(length, n_cap, n_pos, log_k, g):
    """``sum_l s_l log p_l + (n_l - s_l) log(1 - p_l)`` with ``r_l = log v_l``."""
    r = log_k
    value = n_pos[length] * r - n_cap[length] * _softplus(r)
    for pos in range(length - 1, -1, -1):
        r += g[pos]
        value += n_pos[pos] * r - n_cap[pos] * _softplus(r)
    return value


@numba.njit(nogil=True, cache=True)
def _draw_augmented(rng, length, n_cap, n_pos, log_k, g, z_sum, u_sum):
    """Step 4: the per-position sums ``Z_k``, ``U_k`` from their joint full conditional.

    Returns False when a value is not finite.
    """
    r = log_k
    for pos in range(length, -1, -1):
        if pos < length:
            r += g[pos]
        v = math.exp(r)
        s = n_pos[pos]
        u = 0.0
        if s > 0.0:
            u = s + _poisson(rng, rng.standard_gamma(s) * v)
        shape = n_cap[pos] + u
        z = 0.0
        if shape > 0.0:
            z = rng.standard_gamma(shape) / (1.0 + v)
        if not (math.isfinite(z) and math.isfinite(u)):
            return False
        z_sum[pos] = z
        u_sum[pos] = u
    return True


@numba.njit(nogil=True, cache=True)
def _draw_augmented_tempered(rng, length, n_cap, n_pos, log_k, g, z_sum, u_sum, power):
    """Step 4 of a tempered replica (likelihood to the ``power``): the per-position sums of its augmentation.

    Each row's tempered likelihood ``p^{power y} (1 - p)^{power (1 - y)} = v^{power y} (1 + v)^{-power}``
    is ``v^{power y} E[exp(-zeta v)]`` with ``zeta ~ Gamma(power, 1)``; given the list and the risks
    the ``zeta`` of position ``k`` are independent ``Gamma(power, 1 + v_k)``, so
    ``Z_k ~ Gamma(power n_k, 1 + v_k)``.  The full conditionals of the gammas and ``K`` are then those
    of Steps 1 and 2 with ``U_k = power s_k`` (:func:`_gibbs_gammas`, :func:`_gibbs_k`), so the same
    code runs them.  Returns False when a value is not finite.
    """
    r = log_k
    for pos in range(length, -1, -1):
        if pos < length:
            r += g[pos]
        v = math.exp(r)
        shape = power * n_cap[pos]
        z = 0.0
        if shape > 0.0:
            z = rng.standard_gamma(shape) / (1.0 + v)
        if not math.isfinite(z):
            return False
        z_sum[pos] = z
        u_sum[pos] = power * n_pos[pos]
    return True


@numba.njit(nogil=True, cache=True)
def _gibbs_gammas(rng, length, log_k, gammas, g, z_sum, u_sum, alpha, beta):
    """Step 1: each ``gamma_l`` from its truncated-gamma full conditional, top first.

    With ``B_l = sum_{k<=l} Z_k prod_{i=k}^{l-1} gamma_i`` (new values above ``l``)
    and ``T_l = K prod_{i>l} gamma_i`` (old values below ``l``, not yet updated),
    ``sum_n zeta_n sigma^{(l)}_{z_n} = B_l T_l``.  Returns False on a non-finite value.
    """
    tail = log_k
    for pos in range(length):
        tail += g[pos]
    b_sum = 0.0
    u_cum = 0.0
    for pos in range(length):
        tail -= g[pos]  # now log K + sum_{i > pos} g_i
        if pos > 0:
            b_sum *= gammas[pos - 1]
        b_sum += z_sum[pos]
        u_cum += u_sum[pos]
        shape = alpha + u_cum
        rate = beta + b_sum * math.exp(tail)
        if not (math.isfinite(shape) and math.isfinite(rate)):
            return False
        value = truncated_gamma(rng, shape, rate)
        if not math.isfinite(value):
            return False
        gammas[pos] = value
        g[pos] = math.log(value)
    return True


@numba.njit(nogil=True, cache=True)
def _gibbs_k(rng, length, g, z_sum, u_sum, alpha_k, beta_k):
    """Step 2: ``K`` from its gamma full conditional; returns ``K`` (maybe non-finite)."""
    shape = alpha_k + u_sum[length]
    rate = beta_k + z_sum[length]
    log_o = 0.0
    for pos in range(length - 1, -1, -1):
        log_o += g[pos]
        shape += u_sum[pos]
        rate += z_sum[pos] * math.exp(log_o)
    if not (math.isfinite(shape) and math.isfinite(rate)):
        return math.nan
    return rng.standard_gamma(shape) / rate


@numba.njit(nogil=True, cache=True)
def _unused_weight(order, length, total, weights):
    """Total weight of the candidate rules not in ``order[:length]``: the normaliser of a proposal's draw.

    ``total`` is the last cumulative weight of the proposal's table and ``weights`` its rules' weights
    (``exp`` of its log weights, :func:`_exp_each`, once per run), subtracted in list order.  Proposals draw
    from the kept rules only; the prior's normaliser also holds the screened-out ones
    (:func:`frl_engine.model.prior_total_weight`), so the two differ when screening left rules out."""
    value = total
    for pos in range(length):
        value -= weights[order[pos]]
    return value


@numba.njit(nogil=True, cache=True)
def _exp_each(log_values):
    """``exp`` of each value, one at a time with ``math.exp`` (the very numbers the kernels computed before)."""
    out = np.empty(log_values.shape[0])
    for i in range(log_values.shape[0]):
        out[i] = math.exp(log_values[i])
    return out


@numba.njit(nogil=True, cache=True)
def _mh_log_proposal_ratio(move, length, new_length, n_rules, new_rule, old_rule, log_weights,
                           unused_now, unused_new):
    r"""``log q(new -> now) - log q(now -> new)`` for the list part of a move.

    ``M(L)`` is the number of move types possible at length ``L`` (``propose``
    picks one uniformly), ``W(c)`` the weight of the rules not in list ``c``:

    * SWAP: ``1/M(L) * 2/(L(L-1))`` both ways -> 0;
    * REPLACE rule ``a`` by ``r`` at ``i``: forward ``1/M(L) * 1/L * w_r/W(c)``,
      reverse ``1/M(L) * 1/L * w_a/W(c')``;
    * ADD ``r`` at insertion point ``i`` of ``L+1``: forward
      ``1/M(L) * 1/(L+1) * w_r/W(c) * Gamma_1(gamma_new)``, reverse (REMOVE position
      ``i``) ``1/M(L+1) * 1/(L+1)``; the gamma density cancels against the new
      gamma's prior factor in the target, so it is left out of both;
    * REMOVE position ``i`` (rule ``r``, its gamma dropped): the inverse of ADD.
    """
    if move == SWAP:
        return 0.0
    if move == REPLACE:
        return (log_weights[old_rule] - math.log(unused_new)) - (log_weights[new_rule] - math.log(unused_now))
    if move == ADD:
        return (math.log(n_possible_moves(length, n_rules)) - math.log(n_possible_moves(new_length, n_rules))
                - log_weights[new_rule] + math.log(unused_now))
    return (math.log(n_possible_moves(length, n_rules)) - math.log(n_possible_moves(new_length, n_rules))
            + log_weights[old_rule] - math.log(unused_new))


@numba.njit(nogil=True, cache=True)
def _log_gamma_priors(length, gammas, g, consts):
    value = length * consts[LOG_GAMMA1_NORM]
    for pos in range(length):
        value += (consts[ALPHA] - 1.0) * g[pos] - consts[BETA] * gammas[pos]
    return value


@numba.njit(nogil=True, cache=True)
def run_chain(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, start_k, start_gammas,
              n_burn, n_keep, thin, fixed_list):
    """The paper's sampler exactly (:func:`run_chain_refresh` without the move with fresh risks)."""
    return run_chain_refresh(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, start_k,
                             start_gammas, n_burn, n_keep, thin, fixed_list, 0, cum_weights, log_weights)


@numba.njit(nogil=True, cache=True)
def run_chain_refresh(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, start_k, start_gammas,
                      n_burn, n_keep, thin, fixed_list, refresh, focus_cum, focus_log):
    """Run one chain of the sampler; the whole loop is compiled and releases the GIL.

    Parameters
    ----------
    rng : numpy.random.Generator
    rules, y, all_rows, cum_weights, log_weights, consts
        The fields of :class:`~frl_engine.model.PackedProblem`.
    start_order, start_k, start_gammas
        The initial list, ``K`` and ``gamma``'s.
    n_burn, n_keep, thin : int
        Sweeps discarded, samples kept, sweeps per kept sample.
    fixed_list : bool
        Skip Step 3 (the list is held at ``start_order``).
    refresh : int
        List moves with fresh risks (:mod:`frl_engine.refresh`) after Step 3 in each
        sweep (0: the paper's sampler exactly).
    focus_cum, focus_log : (|B|,) float arrays
        Cumulative and log proposal weights ``rho`` of the rules that move draws for REPLACE and
        ADD (:func:`focus_weights`); its Hastings ratio uses them in place of the prior weights.

    Returns
    -------
    orders_flat, gammas_flat : 1-D arrays
        The kept lists and gammas, concatenated (sample ``t`` has ``lengths[t]`` entries).
    lengths, ks, log_posts : arrays of shape (n_keep,)
    n_proposed, n_accepted : int64 arrays of shape (4,)
        Step 3 proposals and acceptances per move type.
    error_sweep, error_step : int
        ``-1, -1`` on success; otherwise the sweep and step (see ``STEP_NAMES``) at which
        a value became non-finite, and the arrays hold the samples kept before it.
    n_refresh_proposed, n_refresh_accepted : int64 arrays of shape (4,)
        The same for the move with fresh risks.
    n_params_proposed, n_params_accepted : int
        The same for the independence step of K and the gammas (one per sweep when ``refresh > 0``).
    """
    out = run_tempered(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, start_k,
                       start_gammas, n_burn, n_keep, thin, fixed_list, refresh, focus_cum, focus_log,
                       np.ones(1), 0, rules.shape[0] + 1)
    return out[:13]


# No jumps between known lists: (data, starts, key_starts, key_jumps) of frl_engine.jumps, empty.
_NO_JUMPS = (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64),
             np.zeros(0, dtype=np.int64))
# Per-replica scalars of the tempered kernel (one row of ``st`` per replica).
_LENGTH, _LOG_K, _BIG_K, _LOG_LIK, _LIST_PRIOR, _UNUSED, _CENTRES = range(7)
# Error step when a list outgrows the kernel's capacity (the caller runs it again with more room).
CAPACITY_STEP = 5
# No moves between sibling rules: (data, starts) of an empty neighbour table (sibling_tables).
_NO_SIBLINGS = (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64))


@numba.njit(nogil=True, cache=True)
def _accept_list(order, in_list, proposal, length, new_length):
    for pos in range(length):
        in_list[order[pos]] = False
    for pos in range(new_length):
        order[pos] = proposal[pos]
        in_list[proposal[pos]] = True


@numba.njit(nogil=True, cache=True)
def _risk_scans(rng, length, n_cap, n_pos, gammas, g, r, log_k, consts, power, n_scans):
    """Step 3d on one state: ``r`` (scratch, length ``L + 1``) is filled with the log odds from ``log_k``
    and ``g``, updated by :func:`frl_engine.refresh.site_risk_updates`, and written back to ``g`` and
    ``gammas``; ``r[L]`` is then ``log K``.  Returns the number of accepted updates."""
    r[length] = log_k
    for pos in range(length - 1, -1, -1):
        r[pos] = r[pos + 1] + g[pos]
    n_accepted = site_risk_updates(rng, length, n_cap, n_pos, r, consts, power, n_scans)
    for pos in range(length):
        g[pos] = r[pos] - r[pos + 1]
        gammas[pos] = math.exp(g[pos])
    return n_accepted


@numba.njit(nogil=True, cache=True)
def _list_moves(rng, rules, y, cum_weights, log_weights, consts, beta_t, refresh, local_share, independence, focus_cum,
                focus_log, weights, focus_weights, st, order, in_list, remaining, n_cap, n_pos, gammas, g, mu, sd,
                proposal, remaining_new, n_cap_new, n_pos_new, gammas_new, g_new, mu_new, sd_new, r_cur, r_new,
                block_value, block_weight, block_size, work, info, n_proposed, n_accepted, n_refresh_proposed,
                n_refresh_accepted, n_params, jump_data, jump_starts, jump_keys, jump_keyed, jump_share, jump_where, jump_here,
                jump_there, sib_data, sib_starts, sib_share):
    """Steps 3, 3b and 3c of one sweep for one replica, at inverse temperature ``beta_t``.

    The replica's target is ``prior x likelihood^beta_t`` (its list prior ``p(c)`` raised to
    ``consts[PRIOR_POWER]``, 1 unless the run tempers the prior too, :func:`run_ladder`): every log-likelihood
    difference in the Metropolis-Hastings ratios is multiplied by ``beta_t``, and the risks are proposed with
    the tempered information (``beta_t`` times the binomial information).  ``st`` holds the
    replica's scalars (``_LENGTH`` ...); ``independence`` runs Step 3c.  Each move of Step 3b is, with
    probability ``sib_share`` when there are sibling tables (``sib_starts`` longer than 1), a rule replaced
    by one of its siblings (:mod:`frl_engine.siblings`), counted in ``n_params[6]`` (proposed) and
    ``n_params[7]`` (accepted); otherwise, with probability ``jump_share`` when there are jumps
    (``jump_starts`` longer than 1), a jump between known lists (:mod:`frl_engine.jumps`: one of those that
    apply; its risks drawn as for the other moves, from the first change down or, locally, down to just
    below its last rewritten run), counted in ``n_params[4]`` and ``n_params[5]``.  Both shares are fixed,
    whatever the list, so each kind of move is its own reversible pair.  Returns 0, or
    ``CAPACITY_STEP`` when a proposal would not fit in the arrays.  ``weights`` and ``focus_weights`` are
    ``exp(log_weights)`` and ``exp(focus_log)``, computed once per run.
    """
    n_rules = in_list.shape[0]
    capacity = order.shape[0]
    alpha = consts[ALPHA]
    beta = consts[BETA]
    length = int(st[_LENGTH])
    log_k = st[_LOG_K]
    log_lik = st[_LOG_LIK]
    list_prior = st[_LIST_PRIOR]
    unused = st[_UNUSED]
    centres_valid = st[_CENTRES] != 0.0
    big_k = st[_BIG_K]
    kept_total = cum_weights[cum_weights.shape[0] - 1]   # the weight of every kept rule (_unused_weight)
    # Step 3
    if length + 2 > capacity and length < n_rules:
        return CAPACITY_STEP
    new_length = propose(rng, order, length, cum_weights, in_list, proposal, info)
    move = info[MOVE]
    start = info[FIRST_CHANGED]
    where = info[I]
    # The gammas stay attached to positions; ADD inserts one from the prior, REMOVE drops one.
    if move == ADD:
        for pos in range(where):
            gammas_new[pos] = gammas[pos]
            g_new[pos] = g[pos]
        fresh = truncated_gamma(rng, alpha, beta)
        gammas_new[where] = fresh
        g_new[where] = math.log(fresh)
        for pos in range(where, length):
            gammas_new[pos + 1] = gammas[pos]
            g_new[pos + 1] = g[pos]
    elif move == REMOVE:
        for pos in range(where):
            gammas_new[pos] = gammas[pos]
            g_new[pos] = g[pos]
        for pos in range(where + 1, length):
            gammas_new[pos - 1] = gammas[pos]
            g_new[pos - 1] = g[pos]
    else:
        for pos in range(length):
            gammas_new[pos] = gammas[pos]
            g_new[pos] = g[pos]
    recount_from(rules, y, proposal, new_length, start, remaining, n_cap, n_pos, remaining_new, n_cap_new,
                 n_pos_new)
    new_log_lik = _log_likelihood(new_length, n_cap_new, n_pos_new, log_k, g_new)
    new_list_prior = log_list_prior(proposal, new_length, cum_weights, log_weights, consts)
    new_unused = _unused_weight(proposal, new_length, kept_total, weights)
    log_ratio = (beta_t * (new_log_lik - log_lik) + consts[PRIOR_POWER] * (new_list_prior - list_prior)
                 + _mh_log_proposal_ratio(move, length, new_length, n_rules, info[NEW_RULE], info[OLD_RULE],
                                          log_weights, unused, new_unused))
    n_proposed[move] += 1
    if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
        n_accepted[move] += 1
        _accept_list(order, in_list, proposal, length, new_length)
        for pos in range(new_length):
            gammas[pos] = gammas_new[pos]
            g[pos] = g_new[pos]
        adopt_counts(start, new_length, remaining, n_cap, n_pos, remaining_new, n_cap_new, n_pos_new)
        length = new_length
        log_lik = new_log_lik
        list_prior = new_list_prior
        unused = new_unused
        centres_valid = False
    # Step 3b: the list move with fresh risks (frl_engine.refresh).  A proposal agrees with the current state
    # above its first changed position f, so it reuses the current state's log odds r, the tails of its target
    # (target_suffixes) and its raw smoothed log odds above f, and computes the rest from f down; these caches
    # are made before the first proposal and again after an accepted one (rare: about 1% on real exports).
    raw_value = work[0]
    raw_weight = work[1]
    raw_value_new = work[2]
    raw_weight_new = work[3]
    suffix = work[4]
    rest_weight = work[5]
    # the current state's terms that depend on its log odds alone (refresh.target_suffixes): below a move's window
    # the proposal's log odds are these, shifted, and log_target_tail_reusing reads them
    softplus_cur = work[6]
    gamma_terms_cur = work[7]
    k_value_cur = 0.0
    focus_total = focus_cum[focus_cum.shape[0] - 1]
    prepared = False
    focus_unused = 0.0
    n_jumps = jump_starts.shape[0] - 1
    n_sib = sib_starts.shape[0] - 1
    n_here = -1   # jumps that apply to the current list (counted when first needed)
    for _ in range(refresh):
        if length + 2 > capacity and length < n_rules:
            return CAPACITY_STEP
        if not prepared:
            if centres_valid:
                raw_log_odds(n_cap, n_pos, 0, length, raw_value, raw_weight, beta_t)
            else:
                isotonic_centres(length, n_cap, n_pos, mu, sd, raw_value, raw_weight, block_value, block_weight,
                                 block_size, beta_t)
                centres_valid = True
            r_cur[length] = log_k
            for pos in range(length - 1, -1, -1):
                r_cur[pos] = r_cur[pos + 1] + g[pos]
            k_value_cur = target_suffixes(order, length, n_cap, n_pos, r_cur, cum_weights, log_weights, consts, beta_t,
                                          suffix, rest_weight, softplus_cur, gamma_terms_cur)
            focus_unused = _unused_weight(order, length, focus_total, focus_weights)
            prepared = True
        sibling = n_sib > 0 and sib_share > 0.0 and rng.random() < sib_share   # a fixed share, whatever the list
        jumping = (not sibling) and n_jumps > 0 and jump_share > 0.0 and rng.random() < jump_share
        jump_log_q = 0.0
        if sibling:
            # a rule replaced by one of its siblings (rules sharing a condition with it, sibling_tables), drawn
            # uniformly; the reverse draws among the new rule's siblings, so the list ratio is their numbers'
            if length == 0:
                continue   # no rule to start from: the chain stays
            where = rng.integers(0, length)
            old_rule = order[where]
            n_old = sib_starts[old_rule + 1] - sib_starts[old_rule]
            if n_old == 0:
                continue
            new_rule = sib_data[sib_starts[old_rule] + rng.integers(0, n_old)]
            if in_list[new_rule]:
                continue   # already in the list: no such list, the chain stays
            for pos in range(length):
                proposal[pos] = order[pos]
            proposal[where] = new_rule
            new_length = length
            move = REPLACE
            start = where
            jump_log_q = math.log(n_old) - math.log(sib_starts[new_rule + 1] - sib_starts[new_rule])
        elif jumping:
            # a jump drawn uniformly among those that apply here (frl_engine.jumps); the reverse draws among
            # those that apply to the proposal, so the list part of the ratio is n_here / n_there
            if n_here < 0:
                mark_positions(jump_here, order, length)   # kept until the list changes
                n_here = count_applicable(jump_data, jump_starts, jump_keys, jump_keyed, order, length, jump_here,
                                          jump_where)
            if n_here == 0:
                continue   # no jump applies here: the chain stays
            t = nth_applicable(jump_data, jump_starts, jump_keys, jump_keyed, order, length, jump_here, jump_where,
                               rng.integers(0, n_here))
            if length + jump_growth(jump_data, jump_starts, t) + 1 > capacity:
                clear_positions(jump_here, order, length)
                return CAPACITY_STEP
            new_length = apply_jump(jump_data, jump_starts, t, order, length, jump_here, proposal, jump_where)
            start = jump_where[0]
            jump_last = jump_where[jump_where.shape[0] - 1]
            mark_positions(jump_there, proposal, new_length)
            n_there = count_applicable(jump_data, jump_starts, jump_keys, jump_keyed, proposal, new_length,
                                       jump_there, jump_where)
            clear_positions(jump_there, proposal, new_length)
            jump_log_q = math.log(n_here) - math.log(n_there)
        else:
            new_length = propose(rng, order, length, focus_cum, in_list, proposal, info)
            move = info[MOVE]
            start = info[FIRST_CHANGED]
        recount_from(rules, y, proposal, new_length, start, remaining, n_cap, n_pos, remaining_new, n_cap_new,
                     n_pos_new)
        for pos in range(start):
            raw_value_new[pos] = raw_value[pos]
            raw_weight_new[pos] = raw_weight[pos]
            r_new[pos] = r_cur[pos]
        raw_log_odds(n_cap_new, n_pos_new, start, new_length, raw_value_new, raw_weight_new, beta_t)
        pool_falling(new_length, raw_value_new, raw_weight_new, mu_new, block_value, block_weight, block_size)
        windowed = local_share >= 1.0 or (local_share > 0.0 and rng.random() < local_share)
        if jumping:
            # the lengths may differ by more than 1; below the window the tail is the same, shifted, and the
            # window ends just below the last rewritten run, the same place seen from either list
            end_new = min(jump_last + rng.integers(0, LOCAL_WINDOW + 1), new_length) if windowed else new_length
            end_cur = end_new - (new_length - length)
        else:
            longer = max(length, new_length)
            end = longer
            if windowed:
                anchor = start
                if move == SWAP:
                    anchor = max(info[I], info[J])
                end = min(anchor + rng.integers(0, LOCAL_WINDOW + 1), longer)
            end_new = end - 1 if new_length < longer else end
            end_cur = end - 1 if length < longer else end
        centre_scales(n_cap_new, mu_new, sd_new, start, end_new, beta_t)   # only where risks are drawn
        upper = np.inf
        lower = -np.inf
        if windowed:
            if start > 0:
                upper = r_cur[start - 1]
            if end_cur < length:
                lower = r_cur[end_cur + 1]
        shift = new_length - length
        log_q = 0.0
        for pos in range(start, end_new + 1):
            centre = min(max(mu_new[pos], lower), upper)
            r_new[pos] = centre + sd_new[pos] * rng.standard_normal()
            log_q -= log_normal(r_new[pos], centre, sd_new[pos])
        for pos in range(end_new + 1, new_length + 1):
            r_new[pos] = r_cur[pos - shift]
        for pos in range(start, end_cur + 1):
            log_q += log_normal(r_cur[pos], min(max(mu[pos], lower), upper), sd[pos])
        # log pi(c', r') - log pi(c, r): only the terms from f down differ (refresh.log_target_tail; its
        # _reusing form reads the current state's terms below the window, the same number to the last bit)
        current_tail = suffix[start]
        if start > 0:
            current_tail += gamma_term(r_cur[start - 1] - r_cur[start], consts)
        log_ratio = (log_target_tail_reusing(proposal, new_length, n_cap_new, n_pos_new, r_new, start,
                                             rest_weight[start], log_weights, consts, beta_t, end_new + 1, shift,
                                             softplus_cur, gamma_terms_cur, k_value_cur)
                     - current_tail + log_q)
        if sibling or jumping:
            log_ratio += jump_log_q   # the list part of the ratio, from the proposal's own counts
            n_params[6 if sibling else 4] += 1
        else:
            focus_unused_new = _unused_weight(proposal, new_length, focus_total, focus_weights)
            log_ratio += _mh_log_proposal_ratio(move, length, new_length, n_rules, info[NEW_RULE], info[OLD_RULE],
                                                focus_log, focus_unused, focus_unused_new)
            n_refresh_proposed[move] += 1
        if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
            if sibling or jumping:
                n_params[7 if sibling else 5] += 1
            else:
                n_refresh_accepted[move] += 1
            if n_here >= 0:
                clear_positions(jump_here, order, length)
            _accept_list(order, in_list, proposal, length, new_length)
            for pos in range(new_length):
                g[pos] = r_new[pos] - r_new[pos + 1]
                gammas[pos] = math.exp(g[pos])
            for pos in range(new_length + 1):
                mu[pos] = mu_new[pos]
            adopt_counts(start, new_length, remaining, n_cap, n_pos, remaining_new, n_cap_new, n_pos_new)
            length = new_length
            centre_scales(n_cap, mu, sd, 0, length, beta_t)
            log_k = r_new[new_length]
            big_k = math.exp(log_k)
            log_lik = _log_likelihood(length, n_cap, n_pos, log_k, g)
            list_prior = log_list_prior(order, length, cum_weights, log_weights, consts)
            unused = _unused_weight(order, length, kept_total, weights)
            prepared = False
            n_here = -1
    if n_here >= 0:
        clear_positions(jump_here, order, length)
    # Step 3c: the same list, every risk proposed afresh (an independence MH step for K and the
    # gammas; at thousands of rows the normal proposal is close to their posterior).
    if independence:
        if not centres_valid:
            isotonic_centres(length, n_cap, n_pos, mu, sd, work[0], work[1], block_value, block_weight, block_size,
                             beta_t)
            centres_valid = True
        r_cur[length] = log_k
        for pos in range(length - 1, -1, -1):
            r_cur[pos] = r_cur[pos + 1] + g[pos]
        log_q = 0.0
        for pos in range(length + 1):
            r_new[pos] = mu[pos] + sd[pos] * rng.standard_normal()
            log_q += log_normal(r_cur[pos], mu[pos], sd[pos]) - log_normal(r_new[pos], mu[pos], sd[pos])
        log_ratio = (log_target_r(order, length, n_cap, n_pos, r_new, cum_weights, log_weights, consts, beta_t)
                     - log_target_r(order, length, n_cap, n_pos, r_cur, cum_weights, log_weights, consts, beta_t)
                     + log_q)
        n_params[0] += 1
        if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
            n_params[1] += 1
            for pos in range(length):
                g[pos] = r_new[pos] - r_new[pos + 1]
                gammas[pos] = math.exp(g[pos])
            log_k = r_new[length]
            big_k = math.exp(log_k)
            log_lik = _log_likelihood(length, n_cap, n_pos, log_k, g)
    st[_LENGTH] = length
    st[_LOG_K] = log_k
    st[_BIG_K] = big_k
    st[_LOG_LIK] = log_lik
    st[_LIST_PRIOR] = list_prior
    st[_UNUSED] = unused
    st[_CENTRES] = 1.0 if centres_valid else 0.0
    return 0


@numba.njit(nogil=True, cache=True)
def run_tempered(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, start_k, start_gammas,
                 n_burn, n_keep, thin, fixed_list, refresh, focus_cum, focus_log, betas, keep_level, capacity):
    """One chain of the sampler with parallel tempering (replica exchange) over ``len(betas)`` replicas.

    Replica ``k`` targets ``prior x likelihood^betas[k]`` (``betas[0] = 1``: the posterior).  Each
    sweep: the replica at ``beta = 1`` runs the full sweep of :func:`run_chain_refresh` up to
    Step 3d (Steps 1 and 2 use the augmented sums, which Step 4 draws for it); every other replica
    first draws its own augmentation afresh (:func:`_draw_augmented_tempered`, the Gibbs draw for
    ``likelihood^beta``), then runs Steps 1 and 2 on it and the Metropolis-Hastings kernels Step 3,
    3b, 3c and 3d with every log-likelihood difference multiplied by its ``beta`` (and the risks'
    proposal scales widened by ``1 / sqrt(beta)``); then adjacent replicas ``(k, k+1)`` propose to
    exchange their states, accepted with probability
    ``min(1, exp((betas[k] - betas[k+1]) (loglik_{k+1} - loglik_k)))``, for the even pairs on even
    sweeps and the odd pairs on odd sweeps; then Step 4 draws the augmented sums for the state now
    at ``beta = 1``, and the state at level ``keep_level`` (0: the posterior) is recorded.  Every
    kernel leaves the product of the tempered targets invariant, so the ``beta = 1`` replica
    samples exactly the paper's posterior.  All replicas start from the same state.  With one
    replica this is :func:`run_chain_refresh` exactly (the same draws in the same order).

    ``capacity`` is the room for ``L + 1`` positions per replica; a list that would outgrow it
    stops the run with ``error_step = CAPACITY_STEP`` (run again with more; the draws do not depend
    on it).  Returns the 13 values of :func:`run_chain_refresh` (the counts for the ``beta = 1``
    level) followed by ``n_swap_proposed, n_swap_accepted`` (int64, shape ``(R - 1,)``, per pair).
    """
    n_levels = betas.shape[0]
    width = max(start_order.shape[0], 1)
    init_orders = np.zeros((n_levels, width), dtype=np.int64)
    init_gammas = np.ones((n_levels, width))
    init_gs = np.zeros((n_levels, width))
    init_scalars = np.zeros((n_levels, 3))
    init_lengths = np.zeros(n_levels, dtype=np.int64)
    for s in range(n_levels):
        init_lengths[s] = start_order.shape[0]
        for pos in range(start_order.shape[0]):
            init_orders[s, pos] = start_order[pos]
            init_gammas[s, pos] = start_gammas[pos]
            init_gs[s, pos] = math.log(start_gammas[pos])
        init_scalars[s, 0] = math.log(start_k)
        init_scalars[s, 1] = start_k
    risk_scans = DEFAULT_RISK_SCANS if refresh > 0 else 0
    no_jumps = np.zeros(1, dtype=np.int64)   # _NO_JUMPS, made here (a compiled function's own arrays)
    no_keys = np.zeros(2, dtype=np.int64)
    no_keyed = np.zeros(0, dtype=np.int64)
    out = run_ladder(rng, rules, y, all_rows, cum_weights, log_weights, consts, init_orders, init_lengths,
                     init_gammas, init_gs, init_scalars, init_gs, init_gammas, np.zeros(0), np.zeros(0), 0, n_burn,
                     n_keep, thin, fixed_list, refresh, focus_cum, focus_log, betas, keep_level, capacity,
                     DEFAULT_LOCAL_SHARE, risk_scans, no_jumps, no_jumps, no_keys, no_keyed, 0.0, no_keyed, no_jumps, 0.0,
                     np.ones(n_levels))
    return out[:15]


# Fields of the final state run_ladder returns (after its first 15 values).
_FINAL_ORDERS, _FINAL_LENGTHS, _FINAL_GAMMAS, _FINAL_GS, _FINAL_SCALARS, _FINAL_MUS, _FINAL_SDS, _FINAL_Z, \
    _FINAL_U = range(15, 24)


@numba.njit(nogil=True, cache=True)
def run_ladder(rng, rules, y, all_rows, cum_weights, log_weights, consts, init_orders, init_lengths, init_gammas,
               init_gs, init_scalars, init_mus, init_sds, init_z, init_u, sweep0, n_burn, n_keep, thin, fixed_list,
               refresh, focus_cum, focus_log, betas, keep_level, capacity, local_share, risk_scans, jump_data,
               jump_starts, jump_keys, jump_keyed, jump_share, sib_data, sib_starts, sib_share, prior_betas):
    """:func:`run_tempered` from a given state of every replica, returning the final state too.

    Replica (level) ``k`` starts from list ``init_orders[k, :init_lengths[k]]`` with gammas
    ``init_gammas[k]`` (their logs ``init_gs[k]``) and ``init_scalars[k] = (log K, K, centres
    valid)``; when the third is 1, ``init_mus[k]``, ``init_sds[k]`` are the cached proposal centres
    of the move with fresh risks at ``betas[k]`` (otherwise they are recomputed when needed).  The
    augmented sums of the ``beta = 1`` state are ``init_z``, ``init_u`` (length ``L_0 + 1``), or
    drawn by Step 4 when these are empty.  ``sweep0`` is the number of sweeps already run (the
    parity of the exchanges).  Given the final state of a run (values 16 to 24) and the generator
    as the run left it, a second run continues the chain draw for draw: ``n`` then ``m`` sweeps
    are ``n + m`` sweeps.  Any starting state is a valid start of the chain, so the state of a
    chain run on another ladder may be given too (with the centres marked invalid).

    ``jump_data``, ``jump_starts`` are the jumps between known lists (:func:`frl_engine.jumps.list_jumps`;
    empty: none), ``jump_keys``, ``jump_keyed`` their index (:func:`frl_engine.jumps.jump_index`), tried by a
    share ``jump_share`` of the moves with fresh risks.

    ``prior_betas[k]`` is the power of level ``k``'s list prior: ``betas`` to temper the prior with the
    likelihood (:func:`sample_posterior`'s ``temper_prior``; level ``k`` then targets
    ``p(c)^beta_k p(r | c) L^beta_k``), ones to temper the likelihood alone.  It is written into that level's
    copy of ``consts`` (``PRIOR_POWER``), which the list moves' ratios read; the replicas keep the untempered
    ``log p(c)`` (``_LIST_PRIOR``), and an exchange of levels ``k`` and ``k + 1`` is accepted with
    ``exp((beta_k - beta_{k+1}) (loglik_{k+1} - loglik_k) + (prior_k - prior_{k+1}) (log p(c_{k+1}) - log p(c_k)))``.

    Returns the 15 values of :func:`run_tempered`, then the final state in level order:
    ``orders (R, cap), lengths (R,), gammas (R, cap), gs (R, cap), scalars (R, 3), mus (R, cap),
    sds (R, cap), z_sum (cap,), u_sum (cap,)``, then Step 3d's accepted and proposed counts and the
    jumps' proposed and accepted counts (level 0).
    """
    n_rules, n_words = rules.shape
    n_levels = betas.shape[0]
    alpha = consts[ALPHA]
    beta = consts[BETA]
    alpha_k = consts[ALPHA_K]
    beta_k = consts[BETA_K]
    cap = min(capacity, n_rules + 1)
    # Each level's constants: its list prior's power (prior_betas[level]; 1 when only the likelihood is tempered).
    level_consts = np.empty((n_levels, consts.shape[0]))
    for level in range(n_levels):
        level_consts[level] = consts
        level_consts[level, PRIOR_POWER] = prior_betas[level]

    # Replica states (row s is state s; state_of[k] is the state at level k).
    orders = np.zeros((n_levels, cap), dtype=np.int64)
    in_lists = np.zeros((n_levels, n_rules), dtype=np.bool_)
    remainings = np.empty((n_levels, cap, n_words), dtype=np.uint64)
    n_caps = np.zeros((n_levels, cap))
    n_poss = np.zeros((n_levels, cap))
    gammass = np.ones((n_levels, cap))
    gs = np.zeros((n_levels, cap))
    mus = np.zeros((n_levels, cap))
    sds = np.ones((n_levels, cap))
    st = np.zeros((n_levels, 7))
    state_of = np.arange(n_levels)
    # Scratch shared by the replicas.
    proposal = np.zeros(cap, dtype=np.int64)
    remaining_new = np.empty((cap, n_words), dtype=np.uint64)
    n_cap_new = np.zeros(cap)
    n_pos_new = np.zeros(cap)
    gammas_new = np.ones(cap)
    g_new = np.zeros(cap)
    mu_new = np.zeros(cap)
    sd_new = np.ones(cap)
    r_cur = np.zeros(cap)
    r_new = np.zeros(cap)
    block_value = np.zeros(cap)
    block_weight = np.zeros(cap)
    block_size = np.zeros(cap, dtype=np.int64)
    work = np.zeros((8, cap))   # the move with fresh risks' caches (_list_moves)
    weights = _exp_each(log_weights)
    focus_weights = _exp_each(focus_log)
    z_sum = np.zeros(cap)
    u_sum = np.zeros(cap)
    z_hot = np.zeros(cap)
    u_hot = np.zeros(cap)
    info = np.zeros(6, dtype=np.int64)
    jump_where = np.zeros(jump_data.shape[0] + 2, dtype=np.int64)
    jump_here = np.full(n_rules, -1, dtype=np.int64)    # positions of the rules of a list (frl_engine.jumps)
    jump_there = np.full(n_rules, -1, dtype=np.int64)
    # Counts per level (row 0 is returned as the sampler's acceptance).
    n_proposed = np.zeros((n_levels, 4), dtype=np.int64)
    n_accepted = np.zeros((n_levels, 4), dtype=np.int64)
    n_refresh_proposed = np.zeros((n_levels, 4), dtype=np.int64)
    n_refresh_accepted = np.zeros((n_levels, 4), dtype=np.int64)
    n_params = np.zeros((n_levels, 8), dtype=np.int64)
    n_swap_proposed = np.zeros(max(n_levels - 1, 0), dtype=np.int64)
    n_swap_accepted = np.zeros(max(n_levels - 1, 0), dtype=np.int64)

    lengths = np.zeros(n_keep, dtype=np.int64)
    ks = np.zeros(n_keep)
    log_posts = np.zeros(n_keep)
    flat_capacity = max(16, n_keep * max(init_orders.shape[1], 1))
    orders_flat = np.empty(flat_capacity, dtype=np.int64)
    gammas_flat = np.empty(flat_capacity)
    n_flat = 0
    n_kept = 0
    error_sweep = -1
    error_step = -1
    n_sweeps = n_burn + n_keep * thin

    length = 0
    for s in range(n_levels):
        length = max(length, init_lengths[s])
    if length + 1 > cap:
        error_step = CAPACITY_STEP
        n_sweeps = 0
    for s in range(n_levels):
        length = init_lengths[s] if error_step < 0 else 0
        for pos in range(length):
            orders[s, pos] = init_orders[s, pos]
            in_lists[s, init_orders[s, pos]] = True
            gammass[s, pos] = init_gammas[s, pos]
            gs[s, pos] = init_gs[s, pos]
        remainings[s, 0] = all_rows
        capture_counts_from(rules, y, orders[s], length, 0, remainings[s], n_caps[s], n_poss[s])
        st[s, _LENGTH] = length
        st[s, _LOG_K] = init_scalars[s, 0]
        st[s, _BIG_K] = init_scalars[s, 1]
        st[s, _LOG_LIK] = _log_likelihood(length, n_caps[s], n_poss[s], st[s, _LOG_K], gs[s])
        st[s, _LIST_PRIOR] = log_list_prior(orders[s], length, cum_weights, log_weights, consts)
        st[s, _UNUSED] = _unused_weight(orders[s], length, cum_weights[cum_weights.shape[0] - 1], weights)
        if error_step < 0 and init_scalars[s, 2] != 0.0:
            st[s, _CENTRES] = 1.0
            for pos in range(length + 1):
                mus[s, pos] = init_mus[s, pos]
                sds[s, pos] = init_sds[s, pos]
    length = int(st[0, _LENGTH])
    if error_step < 0 and init_z.shape[0] > 0:
        for pos in range(length + 1):
            z_sum[pos] = init_z[pos]
            u_sum[pos] = init_u[pos]
    elif error_step < 0 and not _draw_augmented(rng, length, n_caps[0], n_poss[0], st[0, _LOG_K], gs[0], z_sum,
                                                u_sum):
        error_step = 0
        n_sweeps = 0
    for sweep in range(n_sweeps):
        for level in range(n_levels):
            s = state_of[level]
            length = int(st[s, _LENGTH])
            if level == 0:
                z_level, u_level = z_sum, u_sum  # drawn by Step 4 at the end of the previous sweep
            else:
                # Step 4 of the tempered replica, drawn afresh just before its Steps 1 and 2
                z_level, u_level = z_hot, u_hot
                if not _draw_augmented_tempered(rng, length, n_caps[s], n_poss[s], st[s, _LOG_K], gs[s], z_hot,
                                                u_hot, betas[level]):
                    error_sweep, error_step = sweep, 4
                    break
            # Steps 1 and 2
            if not _gibbs_gammas(rng, length, st[s, _LOG_K], gammass[s], gs[s], z_level, u_level, alpha, beta):
                error_sweep, error_step = sweep, 1
                break
            big_k = _gibbs_k(rng, length, gs[s], z_level, u_level, alpha_k, beta_k)
            if not (math.isfinite(big_k) and big_k > 0.0):
                error_sweep, error_step = sweep, 2
                break
            st[s, _BIG_K] = big_k
            st[s, _LOG_K] = math.log(big_k)
            st[s, _LOG_LIK] = _log_likelihood(length, n_caps[s], n_poss[s], st[s, _LOG_K], gs[s])
            if not fixed_list:
                independence = refresh > 0
                code = _list_moves(rng, rules, y, cum_weights, log_weights, level_consts[level], betas[level], refresh,
                                   local_share, independence, focus_cum, focus_log, weights, focus_weights, st[s],
                                   orders[s],
                                   in_lists[s], remainings[s], n_caps[s], n_poss[s], gammass[s], gs[s], mus[s], sds[s],
                                   proposal, remaining_new, n_cap_new, n_pos_new, gammas_new, g_new, mu_new, sd_new,
                                   r_cur, r_new, block_value, block_weight, block_size, work, info,
                                   n_proposed[level],
                                   n_accepted[level], n_refresh_proposed[level], n_refresh_accepted[level],
                                   n_params[level], jump_data, jump_starts, jump_keys, jump_keyed,
                                   jump_share, jump_where, jump_here, jump_there, sib_data, sib_starts, sib_share)
                if code != 0:
                    error_sweep, error_step = sweep, code
                    break
                length = int(st[s, _LENGTH])
            if risk_scans > 0:
                # Step 3d: one position's risk at a time (also on the fixed list behind the card's intervals)
                n_params[level, 2] += _risk_scans(rng, length, n_caps[s], n_poss[s], gammass[s], gs[s], r_cur,
                                                  st[s, _LOG_K], consts, betas[level], risk_scans)
                n_params[level, 3] += risk_scans * (length + 1)
                st[s, _LOG_K] = r_cur[length]
                st[s, _BIG_K] = math.exp(r_cur[length])
                st[s, _LOG_LIK] = _log_likelihood(length, n_caps[s], n_poss[s], st[s, _LOG_K], gs[s])
        if error_step >= 0:
            break
        # Replica exchange between adjacent levels (even pairs on even sweeps, odd pairs on odd sweeps).
        for level in range((sweep0 + sweep) % 2, n_levels - 1, 2):
            a = state_of[level]
            b = state_of[level + 1]
            log_ratio = ((betas[level] - betas[level + 1]) * (st[b, _LOG_LIK] - st[a, _LOG_LIK])
                         + (prior_betas[level] - prior_betas[level + 1]) * (st[b, _LIST_PRIOR] - st[a, _LIST_PRIOR]))
            n_swap_proposed[level] += 1
            if log_ratio >= 0.0 or rng.random() < math.exp(log_ratio):
                n_swap_accepted[level] += 1
                state_of[level] = b
                state_of[level + 1] = a
                # the risks' proposal scales depend on the temperature
                st[a, _CENTRES] = 0.0
                st[b, _CENTRES] = 0.0
        s = state_of[0]
        r = state_of[keep_level]
        length = int(st[r, _LENGTH])
        log_k = st[r, _LOG_K]
        big_k = st[r, _BIG_K]
        log_post = (st[r, _LIST_PRIOR] + _log_gamma_priors(length, gammass[r], gs[r], consts) + consts[LOG_K_NORM]
                    + (alpha_k - 1.0) * log_k - beta_k * big_k + st[r, _LOG_LIK])
        if not math.isfinite(log_post):
            error_sweep, error_step = sweep, 3
            break
        # Step 4, for the state at beta = 1
        if not _draw_augmented(rng, int(st[s, _LENGTH]), n_caps[s], n_poss[s], st[s, _LOG_K], gs[s], z_sum, u_sum):
            error_sweep, error_step = sweep, 4
            break
        if sweep >= n_burn and (sweep - n_burn + 1) % thin == 0:
            if n_flat + length > orders_flat.shape[0]:
                new_capacity = max(2 * orders_flat.shape[0], n_flat + length)
                grown_orders = np.empty(new_capacity, dtype=np.int64)
                grown_orders[:n_flat] = orders_flat[:n_flat]
                orders_flat = grown_orders
                grown_gammas = np.empty(new_capacity)
                grown_gammas[:n_flat] = gammas_flat[:n_flat]
                gammas_flat = grown_gammas
            for pos in range(length):
                orders_flat[n_flat + pos] = orders[r, pos]
                gammas_flat[n_flat + pos] = gammass[r, pos]
            n_flat += length
            lengths[n_kept] = length
            ks[n_kept] = big_k
            log_posts[n_kept] = log_post
            n_kept += 1
    final_orders = np.zeros((n_levels, cap), dtype=np.int64)
    final_lengths = np.zeros(n_levels, dtype=np.int64)
    final_gammas = np.ones((n_levels, cap))
    final_gs = np.zeros((n_levels, cap))
    final_scalars = np.zeros((n_levels, 3))
    final_mus = np.zeros((n_levels, cap))
    final_sds = np.ones((n_levels, cap))
    for level in range(n_levels):
        s = state_of[level]
        final_orders[level] = orders[s]
        final_lengths[level] = int(st[s, _LENGTH])
        final_gammas[level] = gammass[s]
        final_gs[level] = gs[s]
        final_scalars[level, 0] = st[s, _LOG_K]
        final_scalars[level, 1] = st[s, _BIG_K]
        final_scalars[level, 2] = st[s, _CENTRES]
        final_mus[level] = mus[s]
        final_sds[level] = sds[s]
    return (orders_flat[:n_flat], gammas_flat[:n_flat], lengths[:n_kept], ks[:n_kept], log_posts[:n_kept],
            n_proposed[0].copy(), n_accepted[0].copy(), error_sweep, error_step, n_refresh_proposed[0].copy(),
            n_refresh_accepted[0].copy(), n_params[0, 0], n_params[0, 1], n_swap_proposed, n_swap_accepted,
            final_orders, final_lengths, final_gammas, final_gs, final_scalars, final_mus, final_sds, z_sum.copy(),
            u_sum.copy(), n_params[0, 3], n_params[0, 2], n_params[0, 4], n_params[0, 5], n_params[0, 6],
            n_params[0, 7])


# ----------------------------------------------------------------------------------------
# Python side.


@dataclass(frozen=True)
class _ChainOutput:
    orders_flat: np.ndarray
    gammas_flat: np.ndarray
    lengths: np.ndarray
    ks: np.ndarray
    log_posts: np.ndarray
    n_proposed: np.ndarray
    n_accepted: np.ndarray
    error_sweep: int
    error_step: int
    n_refresh_proposed: np.ndarray
    n_refresh_accepted: np.ndarray
    n_params_proposed: int = 0
    n_params_accepted: int = 0
    n_swap_proposed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_swap_accepted: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    final: "ChainState | None" = None
    n_site_proposed: int = 0
    n_site_accepted: int = 0
    n_jumps_proposed: int = 0
    n_jumps_accepted: int = 0
    n_siblings_proposed: int = 0
    n_siblings_accepted: int = 0


def focus_weights(problem: PackedProblem, focus, share: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Proposal weights ``rho`` of the move with fresh risks: a mixture of the prior weights and the focus set.

    ``rho_r = (1 - share) w_r / sum(w) + share 1[r in focus] / |focus|``: rules that the search
    found in good lists are proposed far more often than the other candidates, and every rule
    keeps a positive probability (so the move can still reach every list).  Returns the
    cumulative and log weights in the layout of :meth:`PackedProblem`'s tables.
    """
    weights = np.exp(problem.log_weights)
    rho = (1.0 - share) * weights / weights.sum()
    focus = sorted({int(r) for r in focus})
    if focus and share > 0:
        rho[focus] += share / len(focus)
    rho /= rho.sum()
    return np.cumsum(rho), np.log(rho)


def focus_rules(problem: PackedProblem, lists=(), n_top: int = 32, margin: float = FOCUS_MARGIN) -> list[int]:
    """Rules worth proposing often.

    Those of ``lists`` (e.g. the MAP list first, then the search chains' final lists), the
    rules that enter a REPLACE or ADD neighbour of the first list within ``margin`` nats of
    its objective (:func:`frl_engine.polish.near_neighbour_rules`), and the ``n_top`` rules
    whose one-rule lists have the highest objective.
    """
    from .bits import capture_counts
    from .model import log_posterior_from_counts
    from .polish import near_neighbour_rules

    lists = [np.asarray(lst, dtype=np.int64) for lst in lists]
    chosen = {int(r) for lst in lists for r in lst}
    if lists:
        near = near_neighbour_rules(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                    problem.cum_weights, problem.log_weights, problem.consts, lists[0], float(margin))
        chosen.update(int(r) for r in np.flatnonzero(near))
    scores = np.empty(problem.n_rules)
    x = np.zeros(2)
    for rule in range(problem.n_rules):
        order = np.array([rule], dtype=np.int64)
        n_cap, n_pos = capture_counts(problem.rules, problem.y, problem.all_rows, order)
        scores[rule] = log_posterior_from_counts(order, 1, n_cap, n_pos, problem.cum_weights, problem.log_weights,
                                                 problem.consts, x)
    chosen.update(int(r) for r in np.argsort(-scores, kind="stable")[:n_top])
    return sorted(chosen)


def same_groups_frequency(problem: PackedProblem, order, orders) -> float:
    """Fraction of the sampled lists ``orders`` that group the training rows as ``order`` does.

    A list's groups are the rows each of its rules catches first, top to bottom, and the rows none
    catches (:func:`frl_engine.bits.row_groups`).  Lists with the same groups have the same likelihood
    for any risks (paper eq. 2 counts only ``n_l`` and ``s_l``); they differ in how their rules are
    written (``safety = med`` or ``safety is not low`` below ``safety = high``) and in rules that no
    training row reaches, which the prior may favour (two smaller steps down instead of one large one;
    :func:`frl_engine.model.drop_unreached_rules`).  The exact list's frequency then splits over many
    equivalent spellings, so this is the frequency to read when asking whether the sampler visits it.
    """
    if not orders:
        return math.nan
    groups = row_groups(problem.rules, problem.all_rows, order)
    counts = Counter(orders)
    same = sum(n for sampled, n in counts.items()
               if same_row_groups(problem.rules, problem.all_rows, np.asarray(sampled, dtype=np.int64), groups))
    return same / len(orders)


def dispersed_starts(map_order, other_orders=(), n_chains: int = 4) -> list[tuple[int, ...]]:
    """Starting lists for ``n_chains`` chains: the MAP list first, then the distinct other lists
    (e.g. the search chains' final lists), at most one per chain; the MAP list fills the rest."""
    first = tuple(int(i) for i in map_order)
    starts = [first]
    for order in other_orders:
        order = tuple(int(i) for i in order)
        if order not in starts and len(starts) < n_chains:
            starts.append(order)
    return starts + [first] * (n_chains - len(starts))


def _prior_start(rng: np.random.Generator, problem: PackedProblem):
    """A draw of the prior: list (truncated Poisson length, rules by eq. pc), gammas, K."""
    from .anneal import draw_prior_list

    order = draw_prior_list(rng, problem)
    hyper = problem.hyper
    gammas = np.array([truncated_gamma(rng, hyper.alpha, hyper.beta) for _ in range(len(order))])
    big_k = float(rng.gamma(hyper.alpha_K, 1.0 / hyper.beta_K))
    if big_k <= 0.0:  # underflow of a gamma draw with a tiny shape; K must be positive
        big_k = np.finfo(float).tiny
    return order, big_k, gammas


def _run_one(rng: np.random.Generator, problem: PackedProblem, start, n_burn: int, n_keep: int, thin: int,
             fixed_list: bool, refresh: int = 0, focus=None, betas=(1.0,), keep_level: int = 0,
             init: "ChainState | None" = None, local_share: float = DEFAULT_LOCAL_SHARE,
             risk_scans: int = DEFAULT_RISK_SCANS, jumps=None, jump_share: float = 0.0, siblings=None,
             sibling_share: float = 0.0, temper_prior: bool = False) -> _ChainOutput:
    """One chain (a ladder of ``len(betas)`` replicas, :func:`run_ladder`); the state at ``keep_level`` is kept.

    The chain starts from ``start`` (list, K, gammas; ``None``: a draw of the prior), or continues
    from ``init``, the final state of an earlier run of this chain (:class:`ChainState`, already
    laid out for ``betas``: :func:`_state_on_ladder`).  The replicas' arrays hold lists of up to
    ``INITIAL_CAPACITY`` rules (or twice the start's length) rather than ``|B|``; a chain whose list
    outgrows that is run again from the same generator state with twice the room, so the result
    does not depend on it.
    """
    saved = rng.bit_generator.state
    longest = (0 if start is None else len(start[0])) if init is None else int(np.max(init.lengths))
    capacity = min(problem.n_rules, max(INITIAL_CAPACITY, 2 * longest)) + 1
    betas = np.asarray(betas, dtype=float)
    prior_betas = betas.copy() if temper_prior else np.ones_like(betas)
    focus_cum, focus_log = (problem.cum_weights, problem.log_weights) if focus is None else focus
    jump_tables = _NO_JUMPS if jumps is None else jumps
    sib_tables = _NO_SIBLINGS if siblings is None else siblings
    while True:
        if init is not None:
            out = run_ladder(rng, problem.rules, problem.y, problem.all_rows, problem.cum_weights,
                             problem.log_weights, problem.consts, init.orders, init.lengths, init.gammas, init.gs,
                             init.scalars, init.mus, init.sds, init.z, init.u, int(init.sweeps), int(n_burn),
                             int(n_keep), int(thin), bool(fixed_list), int(refresh), focus_cum, focus_log, betas,
                             int(keep_level), int(capacity), float(local_share), int(risk_scans), *jump_tables,
                             float(jump_share), *sib_tables, float(sibling_share), prior_betas)
        else:
            if start is None:
                order, big_k, gammas = _prior_start(rng, problem)
            else:
                order, big_k, gammas = start
            order = np.asarray(order, dtype=np.int64)
            gammas = np.asarray(gammas, dtype=float)
            n_levels = len(betas)
            width = max(len(order), 1)
            init_orders = np.zeros((n_levels, width), dtype=np.int64)
            init_orders[:, :len(order)] = order
            init_gammas = np.ones((n_levels, width))
            init_gammas[:, :len(order)] = gammas
            init_gs = np.array([[math.log(v) for v in row] for row in init_gammas]).reshape(init_gammas.shape)
            scalars = np.tile([math.log(big_k), float(big_k), 0.0], (n_levels, 1))
            out = run_ladder(rng, problem.rules, problem.y, problem.all_rows, problem.cum_weights,
                             problem.log_weights, problem.consts, init_orders, np.full(n_levels, len(order)),
                             init_gammas, init_gs, scalars, init_gs, init_gammas, np.zeros(0), np.zeros(0), 0,
                             int(n_burn), int(n_keep), int(thin), bool(fixed_list), int(refresh), focus_cum,
                             focus_log, betas, int(keep_level), int(capacity), float(local_share),
                             int(risk_scans), *jump_tables, float(jump_share), *sib_tables,
                             float(sibling_share), prior_betas)
        if int(out[8]) != CAPACITY_STEP or capacity > problem.n_rules:
            break
        capacity = min(problem.n_rules, 2 * capacity) + 1
        rng.bit_generator.state = saved
    sweeps = (0 if init is None else init.sweeps) + int(n_burn) + int(n_keep) * int(thin)
    final = ChainState(rng_state=rng.bit_generator.state, betas=tuple(float(b) for b in betas),
                       orders=out[_FINAL_ORDERS], lengths=out[_FINAL_LENGTHS], gammas=out[_FINAL_GAMMAS],
                       gs=out[_FINAL_GS], scalars=out[_FINAL_SCALARS], mus=out[_FINAL_MUS], sds=out[_FINAL_SDS],
                       z=out[_FINAL_Z], u=out[_FINAL_U], sweeps=sweeps)
    return _ChainOutput(*out[:7], error_sweep=int(out[7]), error_step=int(out[8]), n_refresh_proposed=out[9],
                        n_refresh_accepted=out[10], n_params_proposed=int(out[11]),
                        n_params_accepted=int(out[12]), n_swap_proposed=out[13], n_swap_accepted=out[14],
                        final=final, n_site_proposed=int(out[24]), n_site_accepted=int(out[25]),
                        n_jumps_proposed=int(out[26]), n_jumps_accepted=int(out[27]),
                        n_siblings_proposed=int(out[28]), n_siblings_accepted=int(out[29]))


@dataclass(frozen=True, eq=False)
class ChainState:
    """Where one chain stopped: enough to continue it draw for draw (:func:`sample_posterior`'s ``resume``).

    ``rng_state`` is its generator's ``bit_generator.state``; ``betas`` its ladder; the arrays are
    the replicas' states in level order (see :func:`run_ladder`); ``sweeps`` the sweeps run so far.
    """

    rng_state: dict = field(repr=False)
    betas: tuple
    orders: np.ndarray = field(repr=False)
    lengths: np.ndarray
    gammas: np.ndarray = field(repr=False)
    gs: np.ndarray = field(repr=False)
    scalars: np.ndarray = field(repr=False)
    mus: np.ndarray = field(repr=False)
    sds: np.ndarray = field(repr=False)
    z: np.ndarray = field(repr=False)
    u: np.ndarray = field(repr=False)
    sweeps: int = 0

    def generator(self) -> np.random.Generator:
        """A generator in the state this chain's generator was left in."""
        bit_generator = getattr(np.random, self.rng_state["bit_generator"])()
        bit_generator.state = self.rng_state
        return np.random.Generator(bit_generator)


def _state_on_ladder(state: ChainState, betas) -> ChainState:
    """``state`` laid out for the ladder ``betas``: unchanged on the same ladder; otherwise each new
    level takes the replica whose inverse temperature is closest in ``log beta`` (the ``beta = 1``
    state stays at level 0, with its augmented sums) and the cached proposal centres are dropped
    (they depend on the temperature).  Any state is a valid starting point of the chain."""
    betas = tuple(float(b) for b in betas)
    if betas == tuple(state.betas):
        return state
    old = np.log(np.asarray(state.betas))
    pick = [int(np.argmin(np.abs(old - math.log(b)))) for b in betas]
    scalars = state.scalars[pick].copy()
    scalars[:, 2] = 0.0
    return replace(state, betas=betas, orders=state.orders[pick], lengths=state.lengths[pick],
                   gammas=state.gammas[pick], gs=state.gs[pick], scalars=scalars, mus=state.mus[pick],
                   sds=state.sds[pick])


def load_kernel(problem: PackedProblem) -> None:
    """Compile (or load) the chain kernel once, before threads would race to do it; a throwaway generator
    keeps the chains' streams untouched."""
    _run_one(np.random.default_rng(0), problem, (np.zeros(0, dtype=np.int64), 1.0, np.zeros(0)), 0, 1, 1, False)


def draw_slices(lengths) -> list[slice]:
    """Where each kept draw's list lies in a chain's flat ``orders_flat`` / ``gammas_flat`` (draw ``i`` has
    ``lengths[i]`` rules)."""
    ends = np.cumsum(lengths).tolist()
    return [slice(a, b) for a, b in zip([0, *ends[:-1]], ends)]


def _check_chain(chain: int | str, out: _ChainOutput) -> None:
    if out.error_step >= 0:
        where = "its initialisation" if out.error_step == 0 else f"{STEP_NAMES[out.error_step]} of sweep {out.error_sweep}"
        raise FRLError(
            f"Sampler chain {chain} produced a non-finite value (K, a gamma or the log posterior) in {where}; "
            "the data may be separable by the rules: try stronger priors (larger beta, beta_K)"
        )


def temperature_ladder(n_temperatures: int, beta_min: float = DEFAULT_BETA_MIN) -> np.ndarray:
    """Inverse temperatures ``1 = beta_0 > ... > beta_{n-1} = beta_min``, evenly spaced in ``log beta``.

    Geometric spacing keeps the swap acceptance of neighbours about even when the log-likelihood's
    spread grows like ``1 / beta`` (a posterior that is close to normal).
    """
    n_temperatures = _check_int("temperatures", n_temperatures, 1)
    if n_temperatures == 1:
        return np.ones(1)
    return np.asarray(beta_min, dtype=float) ** (np.arange(n_temperatures) / (n_temperatures - 1))


def _check_temperatures(temperatures) -> np.ndarray:
    if isinstance(temperatures, Integral) and not isinstance(temperatures, bool):
        return temperature_ladder(_check_int("temperatures", temperatures, 1))
    try:
        betas = np.asarray([float(b) for b in temperatures], dtype=float)
    except (TypeError, ValueError):
        raise FRLError("temperatures must be a whole number of replicas or a sequence of inverse temperatures, "
                       f"got {temperatures!r}") from None
    if len(betas) == 0 or betas[0] != 1.0 or not np.all(np.isfinite(betas)) or np.any(betas <= 0) \
            or np.any(np.diff(betas) >= 0):
        raise FRLError("inverse temperatures must start at 1 and fall strictly, staying above 0, "
                       f"got {list(betas)}")
    return betas


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise FRLError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise FRLError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def _fmt(value: float, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


@dataclass(frozen=True, eq=False)
class PosteriorSample:
    """Posterior samples of a falling rule list model and their summaries.

    Samples of all chains are concatenated chain by chain (``chain_ids`` says which).

    Attributes
    ----------
    lists : tuple of tuple
        Each kept sample's rule list, top first, as rule names (indices when no names were given).
    orders : tuple of tuple of int
        The same lists as candidate-rule indices.
    chain_ids, lengths : ndarray of int, shape (n_chains * n_samples,)
    gammas : tuple of ndarray
        Each sample's ``gamma_0..gamma_{L-1}``.
    K : ndarray, shape (n_chains * n_samples,)
    log_posterior_trace, length_trace : ndarray, shape (n_chains, n_samples)
        The (unnormalised, all prior constants included) log posterior density of
        ``(L, c, gamma, K)`` and ``L`` at each kept sample, per chain.
    acceptance : dict
        Step 3 acceptance rate per move type (``swap, replace, add, remove``) and ``all``,
        pooled over chains; ``nan`` for a move never proposed.
    acceptance_per_chain : tuple of dict
    proposals : dict
        Number of proposals per move type, pooled.
    rhat, ess : dict
        Rank-normalised split R-hat (Vehtari et al. 2021; the maximum of the bulk and
        folded versions) and bulk effective sample size of ``log_posterior`` and ``length``.
    inclusion : dict
        Rule name -> fraction of samples whose list contains it, most frequent first.
    map_list, map_order : tuple
        The list whose risks are summarised (``start``, or the most frequent sampled list).
    map_list_source : str
        ``"start"`` or ``"most frequent sampled list"``.
    map_list_frequency : float
        Fraction of samples whose list equals ``map_list``.
    map_groups_frequency : float
        Fraction of samples whose list puts every training row in the same group as ``map_list``
        does, top to bottom (:func:`same_groups_frequency`): the same list up to how its rules are
        written and up to rules that reach no training row.
    map_risk : dict or None
        ``median``, ``lower``, ``upper`` (95% central credible interval) and ``mean``
        of each position's risk ``p_l``, default last (arrays of length ``L+1``), from a
        fixed-list Gibbs run of ``n_chains * n_samples`` draws (``method``, ``n_draws``; ``ess``: the
        smallest effective sample size of a position's risk among them).  None when drawn with
        ``map_risk=False`` (:func:`with_map_risk` adds it).
    n_chains, n_samples, thin : int
    burn_in : int
        Sweeps per chain before the first kept one (with ``resume``: all the earlier sample's sweeps too).
    rule_names : tuple of str or None
    map_draws : ListParameterSample
        The fixed-list draws of ``K``, the gammas and the risks behind ``map_risk``.
    refresh_acceptance : dict or None
        Acceptance rates of the list move with fresh risks (:mod:`frl_engine.refresh`), per move type; with
        jumps between known lists (:mod:`frl_engine.jumps`), also ``"jumps"`` (their acceptance rate) and
        ``"jumps_proposed"`` (how many were proposed); with moves between sibling rules
        (:mod:`frl_engine.siblings`), ``"siblings"`` and ``"siblings_proposed"`` likewise.
    refresh : int
        Its number of proposals per sweep.
    n_starts : int
        Distinct starting lists of the chains.
    temperatures : tuple of float
        Inverse temperatures of each chain's replicas, ``1.0`` first (``(1.0,)``: no tempering).
    prior_tempered : bool
        Whether the replicas' list prior was tempered with their likelihood (``temper_prior``).
    swap_acceptance : tuple of float
        Acceptance rate of the exchanges between adjacent temperatures ``(k, k+1)``, pooled over chains.
    attempts : tuple of dict
        The runs drawn before this one by :func:`sample_posterior_tempered_until_converged`, and this
        one last: ``{"factor", "replicas", "worst_rhat", "smallest_ess", "converged", "top_swap", "sweeps", "continued", "work",
        "prior_tempered"}``
        (empty otherwise).
    chain_states : tuple of ChainState
        Where each chain stopped (``sample_posterior(..., resume=this)`` continues them).
    """

    lists: tuple = field(repr=False)
    orders: tuple = field(repr=False)
    chain_ids: np.ndarray = field(repr=False)
    lengths: np.ndarray = field(repr=False)
    gammas: tuple = field(repr=False)
    K: np.ndarray = field(repr=False)
    log_posterior_trace: np.ndarray = field(repr=False)
    length_trace: np.ndarray = field(repr=False)
    acceptance: dict
    acceptance_per_chain: tuple = field(repr=False)
    proposals: dict = field(repr=False)
    rhat: dict
    ess: dict
    inclusion: dict = field(repr=False)
    map_list: tuple
    map_order: tuple = field(repr=False)
    map_list_source: str
    map_list_frequency: float
    map_groups_frequency: float
    map_risk: dict | None = field(repr=False)
    n_chains: int
    n_samples: int
    burn_in: int
    thin: int
    rule_names: tuple | None = field(default=None, repr=False)
    map_draws: "ListParameterSample | None" = field(default=None, repr=False)
    refresh_acceptance: dict | None = field(default=None, repr=False)
    refresh: int = 0
    n_starts: int = 1
    temperatures: tuple = (1.0,)
    swap_acceptance: tuple = ()
    prior_tempered: bool = False
    attempts: tuple = ()
    chain_states: tuple = field(default=(), repr=False)
    # The fixed-list run still to draw when the sample was drawn with map_risk=False (with_map_risk).
    map_risk_pending: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def n_total(self) -> int:
        return len(self.lists)

    @property
    def verdict(self) -> ConvergenceVerdict:
        """Plain verdict from the R-hat and ESS of the log posterior and the list length."""
        return convergence_verdict(self.rhat, self.ess, n_chains=self.n_chains)

    def chain_disagreement(self, top: int = 5) -> tuple:
        """The rules the chains hold in the most different shares of their lists: what they have not agreed on.

        :class:`frl_engine.diagnostics.RuleDisagreement` items (``rule`` as in ``lists``, ``per_chain``
        shares, ``spread``), largest spread first, only spreads of at least
        :data:`frl_engine.diagnostics.DISAGREEMENT_SPREAD` (20 points); empty when the chains agree on every
        rule that well, or with one chain (:func:`frl_engine.diagnostics.rules_chains_disagree_on`).
        """
        return rules_chains_disagree_on(self.lists, self.chain_ids, self.n_chains, top=top)

    def length_histogram(self) -> dict[int, float]:
        """``L -> fraction of samples`` for every length sampled."""
        values, counts = np.unique(self.lengths, return_counts=True)
        return {int(v): float(c) / len(self.lengths) for v, c in zip(values, counts)}

    def list_frequencies(self, top: int | None = None) -> list[tuple[tuple, float]]:
        """The sampled lists with their frequencies, most frequent first."""
        counts = Counter(self.lists)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], len(item[0]), [str(x) for x in item[0]]))
        total = len(self.lists)
        return [(lst, count / total) for lst, count in ranked[:top]]

    def _drawn_risk(self) -> dict:
        """``map_risk``, or an FRLError saying how to draw it when the sample was drawn without it."""
        if self.map_risk is None:
            raise FRLError("this posterior sample was drawn with map_risk=False, so it has no risk intervals yet: "
                           "call frl_engine.sampler.with_map_risk(problem, sample) first")
        return self.map_risk

    def map_risk_summary(self) -> dict:
        """The MAP list's risk intervals in the model file's ``posterior`` layout (docs/model-format.md).

        ``{"n_samples", "risk_median", "risk_lower", "risk_upper"}`` (95% central interval,
        default last) plus the method, the list's frequency in the sample and the diagnostics.
        """
        self._drawn_risk()
        return to_jsonable({
            "n_samples": self.map_risk["n_draws"],
            "risk_median": self.map_risk["median"],
            "risk_lower": self.map_risk["lower"],
            "risk_upper": self.map_risk["upper"],
            "risk_mean": self.map_risk["mean"],
            "method": self.map_risk["method"],
            "risk_ess": self.map_risk.get("ess"),
            "list_frequency": self.map_list_frequency,
            "groups_frequency": self.map_groups_frequency,
            "n_chains": self.n_chains,
            "samples_per_chain": self.n_samples,
            "burn_in": self.burn_in,
            "thin": self.thin,
            "rhat": self.rhat,
            "ess": self.ess,
            "acceptance": self.acceptance,
            "converged": self.verdict.converged,
            "verdict": self.verdict.message,
        }, strict=True)

    def to_dict(self) -> dict:
        """A JSON-safe dictionary of the summaries and the samples."""
        self._drawn_risk()
        return to_jsonable({
            "format": "frl-posterior",
            "settings": {"n_chains": self.n_chains, "n_samples": self.n_samples, "burn_in": self.burn_in,
                         "thin": self.thin},
            "acceptance": self.acceptance,
            "acceptance_per_chain": list(self.acceptance_per_chain),
            "proposals": self.proposals,
            "rhat": self.rhat,
            "ess": self.ess,
            "diagnostics_method": "rank-normalised split R-hat (max of bulk and folded) and bulk ESS, "
                                  "Vehtari et al. (2021)",
            "converged": self.verdict.converged,
            "verdict": self.verdict.message,
            "refresh": self.refresh,
            "refresh_acceptance": self.refresh_acceptance,
            "temperatures": list(self.temperatures),
            "prior_tempered": self.prior_tempered,
            "swap_acceptance": to_jsonable(self.swap_acceptance, strict=True),
            "attempts": to_jsonable(self.attempts, strict=True),
            "n_starts": self.n_starts,
            "length_histogram": {str(k): v for k, v in self.length_histogram().items()},
            "inclusion": self.inclusion,
            "chain_disagreement": [{"rule": d.rule, "per_chain": list(d.per_chain), "spread": d.spread}
                                   for d in self.chain_disagreement()],
            "top_lists": [{"list": list(lst), "frequency": f} for lst, f in self.list_frequencies(20)],
            "map_list": {
                "rules": list(self.map_list), "indices": list(self.map_order), "source": self.map_list_source,
                "frequency_in_sample": self.map_list_frequency,
                "groups_frequency_in_sample": self.map_groups_frequency,
                "n_samples": self.map_risk["n_draws"], "method": self.map_risk["method"],
                "risk_median": self.map_risk["median"], "risk_lower": self.map_risk["lower"],
                "risk_upper": self.map_risk["upper"], "risk_mean": self.map_risk["mean"],
                "risk_ess": self.map_risk.get("ess"),
            },
            "traces": {"log_posterior": self.log_posterior_trace, "length": self.length_trace},
            "samples": {"chain": self.chain_ids, "list": [list(lst) for lst in self.lists],
                        "K": self.K, "gammas": [list(gs) for gs in self.gammas]},
        }, strict=True)   # a move never proposed in a chain (no SWAP on lists of one rule) has acceptance NaN

    def summary(self, top: int = 10) -> str:
        """A printable text summary."""
        lines = [f"Posterior sample: {self.n_chains} chain(s) x {self.n_samples} kept samples "
                 f"(burn-in {self.burn_in} sweeps, thin {self.thin})", ""]
        lines.append("List length L (fraction of samples):")
        for value, share in self.length_histogram().items():
            lines.append(f"  L={value:<3d} {share:6.3f}  {'#' * int(round(40 * share))}")
        lines.append("")
        lines.append(f"Rule inclusion frequencies (top {top}):")
        for name, share in list(self.inclusion.items())[:top]:
            if share <= 0:
                break
            lines.append(f"  {share:6.3f}  {name}")
        lines.append("")
        lines.append("Metropolis-Hastings acceptance rates (list moves):")
        for name in (*MOVE_NAMES, "all"):
            lines.append(f"  {name:<8s} {_fmt(self.acceptance[name])}  ({self.proposals[name]} proposals)")
        if self.refresh and self.refresh_acceptance:
            moves = ", ".join(f"{name} {_fmt(self.refresh_acceptance[name])}" for name in (*MOVE_NAMES, "all"))
            lines.append(f"  with fresh risks ({self.refresh} per sweep): {moves}; "
                         f"risks alone {_fmt(self.refresh_acceptance.get('risks', math.nan))}; "
                         f"one risk at a time {_fmt(self.refresh_acceptance.get('risk_sites', math.nan))}"
                         + (f"; jumps between known lists {_fmt(self.refresh_acceptance['jumps'])} "
                            f"({self.refresh_acceptance['jumps_proposed']:,} proposed)"
                            if "jumps" in self.refresh_acceptance else "")
                         + (f"; sibling rules {_fmt(self.refresh_acceptance['siblings'])} "
                            f"({self.refresh_acceptance['siblings_proposed']:,} proposed)"
                            if "siblings" in self.refresh_acceptance else ""))
        if len(self.temperatures) > 1:
            betas = ", ".join(f"{b:.3g}" for b in self.temperatures)
            swaps = ", ".join(_fmt(rate, 2) for rate in self.swap_acceptance)
            lines.append(f"  parallel tempering, {len(self.temperatures)} replicas per chain at beta {betas}"
                         + (" (likelihood and list prior tempered)" if self.prior_tempered else "")
                         + f"; swap acceptance between neighbours {swaps}")
        if self.attempts:
            lines.append("  runs drawn: " + "; ".join(_describe_attempt(a) for a in self.attempts))
        lines.append("")
        lines.append("Convergence (rank-normalised split R-hat, bulk ESS; Vehtari et al. 2021):")
        for key, label in (("log_posterior", "log posterior"), ("length", "length L")):
            rhat = self.rhat[key]
            note = ("  (constant in every chain)" if math.isnan(rhat)
                    else (f"  <- above {RHAT_TARGET}: not converged" if rhat > RHAT_TARGET else ""))
            lines.append(f"  {label:<14s} R-hat {_fmt(rhat)}   ESS {_fmt(self.ess[key], 0)}{note}")
        lines.append(f"  {self.verdict.message}")
        disagreement = () if self.verdict.converged else self.chain_disagreement()
        if disagreement:
            lines.append(f"  Where the chains disagree most (share of each chain's lists that hold the rule, chains 1 to "
                         f"{self.n_chains}):")
            for item in disagreement:
                shares = " ".join(f"{100 * v:4.0f}%" for v in item.per_chain)
                lines.append(f"    {shares}  {item.rule}")
        lines.append("")
        risk = self.map_risk
        if risk is None:
            lines.append("Risks of the list: not drawn (map_risk=False; frl_engine.sampler.with_map_risk draws them)")
            return "\n".join(lines)
        lines.append(f"Risks of the {'MAP' if self.map_list_source == 'start' else 'most frequent'} list "
                     f"(posterior median and 95% interval; {risk['method']}, {risk['n_draws']} draws"
                     f"{', ESS at least ' + format(risk['ess'], ',.0f') if 'ess' in risk else ''}; "
                     f"this list is {100 * self.map_list_frequency:.1f}% of the samples, and "
                     f"{100 * self.map_groups_frequency:.1f}% group the training patients as it does):")
        labels = [str(name) for name in self.map_list] + ["ELSE (default)"]
        width = min(max(display_width(label) for label in labels), 60)
        for pos, label in enumerate(labels):  # numbered from 1, as the list and the card number its rules
            lines.append(f"  {pos + 1:>2d}  {pad_right(label[:60], width)}  {risk['median'][pos]:.3f}  "
                         f"[{risk['lower'][pos]:.3f}, {risk['upper'][pos]:.3f}]")
        return "\n".join(lines)


def _describe_attempt(attempt: dict) -> str:
    kind = "plain" if attempt["replicas"] == 1 else f"tempered ({attempt['replicas']} replicas"
    if attempt["replicas"] > 1:
        kind += (", list prior too" if attempt.get("prior_tempered") else "") + \
            f", swap with beta = 1 {_fmt(attempt['top_swap'], 2)})"
    kind = ("continued, " if attempt.get("continued") else "") + kind
    text = f"{kind} {attempt['factor']}x, R-hat {_fmt(attempt['worst_rhat'])}"
    if not attempt["converged"]:
        ess, rhat = attempt.get("smallest_ess"), attempt.get("worst_rhat")
        short = (isinstance(ess, Real) and isinstance(rhat, Real) and math.isfinite(ess) and rhat <= RHAT_TARGET
                 and ess < ESS_TARGET)
        text += f" (not converged: ESS {ess:.0f}, under {ESS_TARGET:.0f})" if short else " (not converged)"
    if attempt.get("over_budget"):
        text += ("; no longer attempt: it would pass the default's work budget for these rows and lists "
                 "(about a minute)")
    return text


def _risks(ks: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """Risks ``p_l`` (default last) for draws of ``K`` (n,) and gammas (n, L)."""
    from scipy import special

    log_g = np.log(gammas)
    suffix = np.cumsum(log_g[:, ::-1], axis=1)[:, ::-1] if log_g.shape[1] else log_g
    log_v = np.log(ks)[:, None] + np.concatenate([suffix, np.zeros((len(ks), 1))], axis=1)
    return special.expit(log_v)


def _acceptance(proposed: np.ndarray, accepted: np.ndarray) -> dict:
    rates = {name: (float(accepted[m] / proposed[m]) if proposed[m] else math.nan)
             for m, name in enumerate(MOVE_NAMES)}
    total = int(proposed.sum())
    rates["all"] = float(accepted.sum()) / total if total else math.nan
    return rates


@dataclass(frozen=True, eq=False)
class ListParameterSample:
    """Posterior draws of ``K`` and the gammas for one fixed list (fixed-list Gibbs).

    Attributes
    ----------
    order : tuple of int
    K : ndarray, shape (n,)
    gammas : ndarray, shape (n, L)
    risks : ndarray, shape (n, L+1)
        ``p_l`` per draw, default last.
    """

    order: tuple
    K: np.ndarray = field(repr=False)
    gammas: np.ndarray = field(repr=False)
    risks: np.ndarray = field(repr=False)


def _fixed_list_draws(rng: np.random.Generator, problem: PackedProblem, start, n_draws: int, burn_in: int,
                      thin: int, risk_scans: int = DEFAULT_RISK_SCANS) -> ListParameterSample:
    out = _run_one(rng, problem, start, burn_in, n_draws, thin, True, risk_scans=risk_scans)
    _check_chain("'fixed-list'", out)
    length = len(start[0])
    gammas = out.gammas_flat.reshape(n_draws, length)
    return ListParameterSample(order=tuple(int(i) for i in start[0]), K=out.ks, gammas=gammas,
                               risks=_risks(out.ks, gammas))


def sample_list_parameters(problem: PackedProblem, order: Sequence[int], *, n_samples: int = 1000,
                           burn_in: int | None = None, thin: int = 1, random_state=None,
                           risk_scans: int = DEFAULT_RISK_SCANS) -> ListParameterSample:
    """Posterior draws of ``(K, gamma) | list, data`` for one fixed list.

    Steps 1, 2 and 4 of the sampler with Step 3 switched off, then ``risk_scans`` scans of
    Step 3d (one position's log odds at a time, :func:`frl_engine.refresh.site_risk_updates`;
    0: the paper's Gibbs steps alone, which barely move the risks when positions capture
    thousands of rows), started at the exact MAP ``K`` and gammas of the list; ``burn_in``
    defaults to ``n_samples`` sweeps.
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    thin = _check_int("thin", thin, 1)
    burn_in = n_samples if burn_in is None else _check_int("burn_in", burn_in, 0)
    risk_scans = _check_int("risk_scans", risk_scans, 0)
    start = _start_from_list(problem, order)
    return _fixed_list_draws(generator(random_state), problem, start, n_samples, burn_in, thin, risk_scans)


def _start_from_list(problem: PackedProblem, order):
    n_rules = problem.n_rules
    try:
        start_order = np.asarray([int(i) for i in order], dtype=np.int64)
    except (TypeError, ValueError):
        raise FRLError("start must be a sequence of candidate-rule indices") from None
    if len(set(start_order.tolist())) != len(start_order) or np.any(start_order < 0) \
            or np.any(start_order >= n_rules):
        raise FRLError(f"a rule list must hold distinct rule indices between 0 and {n_rules - 1}")
    fit = fit_list(problem, start_order)
    if not (np.isfinite(fit.K) and fit.K > 0 and np.all(np.isfinite(fit.gammas))):
        raise FRLError("The MAP parameters of the starting list are not finite; cannot start the sampler")
    return start_order, fit.K, np.asarray(fit.gammas, dtype=float)


def sample_posterior(problem: PackedProblem, *, n_samples: int = 1000, n_chains: int = 4, burn_in: int | None = None,
                     thin: int = 1, start: Sequence[int] | None = None, random_state=None, n_jobs: int | None = None,
                     rule_names: Sequence[str] | None = None, starts: Sequence[Sequence[int]] | None = None,
                     refresh: int = DEFAULT_REFRESH, focus: Sequence[int] | None = None,
                     focus_share: float = 0.8, temperatures=1, resume: "PosteriorSample | None" = None,
                     local_share: float = DEFAULT_LOCAL_SHARE,
                     risk_scans: int = DEFAULT_RISK_SCANS, jumps: Sequence[Sequence[int]] | None = None,
                     jump_share: float = DEFAULT_JUMP_SHARE, map_risk: bool = True,
                     siblings: Sequence[Sequence[Hashable]] | None = None,
                     sibling_share: float = DEFAULT_SIBLING_SHARE, temper_prior: bool = False) -> PosteriorSample:
    """Draw from the posterior over falling rule lists (paper section 3.2).

    Parameters
    ----------
    problem : PackedProblem
    n_samples : int
        Samples kept per chain, after burn-in and thinning.
    n_chains : int
        Independent chains (run in parallel threads).
    burn_in : int or None
        Sweeps discarded at the start of each chain (default: ``n_samples``).
    thin : int
        Keep every ``thin``-th sweep after burn-in; each chain runs ``burn_in + n_samples * thin`` sweeps.
    start : sequence of int or None
        Candidate-rule indices of the starting list (the MAP list); ``K`` and the gammas start at
        their MAP values for it.  ``None``: each chain starts from a draw of the prior.
    random_state : None, int, SeedSequence, Generator or RandomState
        Chain ``i`` uses the ``i``-th generator of ``frl_engine.seeds.generator(random_state).spawn(n_chains)``;
        the fixed-list run for the risks uses one more spawned after those.
    n_jobs : int or None
        Worker threads (default: one per chain, at most the CPU count).  The result does not depend on it.
    rule_names : sequence of str or None
        Names of the candidate rules, used in the returned lists and summaries.
    starts : sequence of lists or None
        Dispersed starting lists: chain ``i`` starts from ``starts[i % len(starts)]`` (with ``K`` and
        the gammas at their MAP values for it).  The estimator passes the MAP list first, then the
        other local optima its search chains ended in, so that R-hat can see chains that do not meet.
        The risks are still summarised for ``start`` (or ``starts[0]``).
    refresh : int, default DEFAULT_REFRESH
        List moves with fresh risks (:mod:`frl_engine.refresh`) per sweep, after the paper's
        Step 3; 0 gives the paper's sampler exactly.  Both leave the posterior invariant.
    focus : sequence of int or None
        Candidate rules the move with fresh risks proposes more often (:func:`focus_weights`,
        :func:`focus_rules`); ``None``: rules drawn by their prior weights, as in Step 3.
    focus_share : float, default 0.8
        Probability that a REPLACE or ADD of that move draws from the focus set.
    local_share : float, default DEFAULT_LOCAL_SHARE
        Probability that a move with fresh risks draws them only for the positions next to the
        change (the positions whose rows change, and 0 to ``LOCAL_WINDOW`` below them, their
        proposal centred within the kept neighbours' risks), the other positions keeping theirs; the
        rest draw fresh risks for every position from the change down (:mod:`frl_engine.refresh`).
        Both kinds leave the posterior invariant; long lists mix faster with the local kind.
    jumps : sequence of lists or None
        Known good lists (the estimator passes the MAP list and the search chains' lists): the move with
        fresh risks also jumps between them, rewriting the runs of rules in which two of them differ
        wherever a sampled list holds such a run (:mod:`frl_engine.jumps`; a symmetric proposal, exact).
        ``None`` or fewer than two distinct lists: no jumps.
    jump_share : float, default DEFAULT_JUMP_SHARE
        Share of the moves with fresh risks that try a jump (when there are jumps; ``refresh > 0``).
    siblings : sequence of sequences, optional
        Each candidate rule's conditions (hashable keys, e.g. :func:`frl_engine.siblings.condition_ids`
        of the mined rules).  A share ``sibling_share`` of the moves with fresh risks then replaces a
        rule by one drawn uniformly among its *siblings*, the rules sharing a condition with it
        (:mod:`frl_engine.siblings`; list ratio ``n_siblings(old) / n_siblings(new)``, risks drawn as
        for the other moves).  ``None``: no such move (the sampler as it was).
    sibling_share : float, default DEFAULT_SIBLING_SHARE
        That share, when ``siblings`` are given (``refresh > 0``).
    map_risk : bool, default True
        Run the fixed-list chain behind ``map_risk`` and ``map_draws``.  ``False``: both are None and
        :func:`with_map_risk` draws them later, the same draws (the schedules that draw a sample several
        times use it for the one they return).
    risk_scans : int, default DEFAULT_RISK_SCANS
        Scans per sweep of Step 3d, which draws one position's log odds at a time given the rest
        (:func:`frl_engine.refresh.site_risk_updates`, exact); only with ``refresh > 0`` (``refresh=0``
        stays the paper's sampler).  The paper's Gibbs Steps 1 and 2 move the risks very slowly
        when positions capture thousands of rows.
    temperatures : int or sequence of float, default 1
        Parallel tempering (:func:`run_tempered`): every chain runs replicas at inverse
        temperatures ``1 = beta_0 > beta_1 > ...`` (target ``prior x likelihood^beta``) that
        exchange states; only the ``beta = 1`` replica is kept.  An int is the number of rungs of
        :func:`temperature_ladder` (1: no tempering, the sampler without replicas exactly); a
        sequence gives the betas themselves.  The estimator's default is ``DEFAULT_TEMPERATURES``.
    temper_prior : bool, default False
        Temper the list prior with the likelihood: the replica at ``beta`` targets
        ``p(c)^beta p(r | c) L(c, r)^beta`` (the prior of the list's length and rules, eq. pc, raised to
        ``beta`` too; the risks' prior given the list is not), instead of ``p(c) p(r | c) L^beta``.  Each rule a
        list holds costs ``beta`` times its prior there, so a hot replica crosses between lists that differ in
        several rules (each costing about ``log |B|`` nats), where tempering the likelihood alone makes the hot
        lists shorter and leaves that cost whole.  Exchanges accept with
        ``min(1, exp((beta_k - beta_{k+1}) (E_{k+1} - E_k)))``, ``E = log L + log p(c)``.  The ``beta = 1``
        replica samples exactly the paper's posterior either way.  Below ``beta`` of about 0.7 the tempered prior
        no longer holds the length (on UCI Spambase, 28,657 mined rules, the lists at ``beta = 0.6`` hold 25 to
        30 rules): keep the ladder within ``PRIOR_LADDER``'s range.
    resume : PosteriorSample or None
        Continue the chains of this earlier sample (same problem, same ``n_chains``) from where they
        stopped, each with its own generator as it was left, rather than starting them afresh: all
        its sweeps count as burn-in of this one (``burn_in`` more are discarded first).  On the same
        ladder the continued chain is the longer chain draw for draw; on another ladder each level
        starts from the earlier replica nearest in temperature.  ``start``/``starts`` then only name
        the list whose risks are summarised; ``random_state`` still seeds the fixed-list run.
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_chains = _check_int("n_chains", n_chains, 1)
    thin = _check_int("thin", thin, 1)
    burn_in = n_samples if burn_in is None else _check_int("burn_in", burn_in, 0)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0
                               or n_jobs < -1):
        raise FRLError(f"n_jobs must be a positive whole number, -1 or None, got {n_jobs!r}")
    if not isinstance(problem, PackedProblem):
        raise FRLError("problem must be a PackedProblem (fit the model first)")
    n_rules = problem.n_rules
    if n_rules == 0:
        raise FRLError("There are no candidate rules to sample lists from")
    if rule_names is not None:
        rule_names = tuple(str(name) for name in rule_names)
        if len(rule_names) != n_rules:
            raise FRLError(f"rule_names must name all {n_rules} candidate rules, got {len(rule_names)} names")
    refresh = _check_int("refresh", refresh, 0)
    risk_scans = _check_int("risk_scans", risk_scans, 0) if refresh > 0 else 0
    betas = _check_temperatures(temperatures)
    if not isinstance(temper_prior, (bool, np.bool_)):
        raise FRLError(f"temper_prior must be True or False, got {temper_prior!r}")
    if isinstance(focus_share, bool) or not isinstance(focus_share, (int, float)) or not 0 <= focus_share < 1:
        raise FRLError(f"focus_share must be a number in [0, 1), got {focus_share!r}")
    if isinstance(local_share, bool) or not isinstance(local_share, (int, float)) or not 0 <= local_share <= 1:
        raise FRLError(f"local_share must be a number in [0, 1], got {local_share!r}")
    if isinstance(jump_share, bool) or not isinstance(jump_share, (int, float)) or not 0 <= jump_share <= 1:
        raise FRLError(f"jump_share must be a number in [0, 1], got {jump_share!r}")
    jump_tables = None
    if jumps is not None and refresh > 0 and jump_share > 0:
        jump_lists = [[int(r) for r in lst] for lst in jumps]
        if any(r < 0 or r >= n_rules for lst in jump_lists for r in lst):
            raise FRLError(f"jumps must hold lists of rule indices between 0 and {n_rules - 1}")
        data, jump_starts = list_jumps(jump_lists)
        if len(jump_starts) > 1:
            jump_tables = (data, jump_starts, *jump_index(data, jump_starts, n_rules))
    if (isinstance(sibling_share, bool) or not isinstance(sibling_share, (int, float))
            or not 0 <= sibling_share <= 1):
        raise FRLError(f"sibling_share must be a number in [0, 1], got {sibling_share!r}")
    sibling_tables_ = None
    if siblings is not None and refresh > 0 and sibling_share > 0:
        if len(siblings) != n_rules:
            raise FRLError(f"siblings must give the conditions of all {n_rules} candidate rules, "
                           f"got {len(siblings)}")
        sibling_tables_ = sibling_tables(siblings)
    focus_tables = None
    if focus is not None:
        focus = [int(r) for r in focus]
        if any(r < 0 or r >= problem.n_rules for r in focus):
            raise FRLError(f"focus must hold rule indices between 0 and {problem.n_rules - 1}")
        focus_tables = focus_weights(problem, focus, focus_share)
    if starts is not None:
        if start is not None:
            raise FRLError("give either start (one list) or starts (one list per chain), not both")
        if len(starts) == 0:
            raise FRLError("starts must hold at least one list")
        chain_states = [_start_from_list(problem, s) for s in starts]
        n_starts = len({tuple(int(i) for i in s) for s in starts})
        start = starts[0]
        start_state = chain_states[0]
        chain_states = [chain_states[i % len(chain_states)] for i in range(n_chains)]
    else:
        start_state = None if start is None else _start_from_list(problem, start)
        chain_states = [start_state] * n_chains
        n_starts = 1

    root = generator(random_state)
    chain_rngs = root.spawn(n_chains)
    risk_rng = root.spawn(1)[0]
    inits = [None] * n_chains
    earlier_sweeps = 0
    if resume is not None:
        finals = getattr(resume, "chain_states", None)
        if not finals or len(finals) != n_chains or any(f is None for f in finals):
            raise FRLError(f"resume must be a posterior sample of {n_chains} chains drawn by this version")
        inits = [_state_on_ladder(f, betas) for f in finals]
        chain_rngs = [f.generator() for f in finals]
        earlier_sweeps = int(finals[0].sweeps)
    if n_chains == 1 or n_jobs == 1:
        outputs = [_run_one(r, problem, state, burn_in, n_samples, thin, False, refresh, focus_tables, betas,
                            init=init, local_share=local_share, risk_scans=risk_scans, jumps=jump_tables,
                            jump_share=jump_share, siblings=sibling_tables_, sibling_share=sibling_share,
                            temper_prior=bool(temper_prior))
                   for r, state, init in zip(chain_rngs, chain_states, inits)]
    else:
        workers = min(n_chains, os.cpu_count() or 1) if n_jobs is None else n_jobs
        load_kernel(problem)
        outputs = Parallel(n_jobs=workers, prefer="threads")(
            delayed(_run_one)(r, problem, state, burn_in, n_samples, thin, False, refresh, focus_tables, betas,
                              init=init, local_share=local_share, risk_scans=risk_scans, jumps=jump_tables,
                              jump_share=jump_share, siblings=sibling_tables_, sibling_share=sibling_share,
                              temper_prior=bool(temper_prior))
            for r, state, init in zip(chain_rngs, chain_states, inits))
    for chain, out in enumerate(outputs):
        _check_chain(chain, out)

    names = rule_names if rule_names is not None else tuple(range(n_rules))
    orders, gammas = [], []
    for out in outputs:
        flat = out.orders_flat.tolist()
        for draw in draw_slices(out.lengths):
            orders.append(tuple(flat[draw]))
            gammas.append(out.gammas_flat[draw])
    if rule_names is None:
        lists = orders
    else:
        lists = [tuple(names[i] for i in order) for order in orders]
    lengths = np.concatenate([out.lengths for out in outputs])
    chain_ids = np.repeat(np.arange(n_chains), n_samples)
    ks = np.concatenate([out.ks for out in outputs])
    log_post_trace = np.stack([out.log_posts for out in outputs])
    length_trace = np.stack([out.lengths for out in outputs]).astype(float)

    proposed = np.sum([out.n_proposed for out in outputs], axis=0)
    accepted = np.sum([out.n_accepted for out in outputs], axis=0)
    acceptance = _acceptance(proposed, accepted)
    per_chain = tuple(_acceptance(out.n_proposed, out.n_accepted) for out in outputs)
    proposals = {name: int(proposed[m]) for m, name in enumerate(MOVE_NAMES)}
    proposals["all"] = int(proposed.sum())
    refresh_acceptance = _acceptance(np.sum([out.n_refresh_proposed for out in outputs], axis=0),
                                     np.sum([out.n_refresh_accepted for out in outputs], axis=0))
    params_proposed = sum(out.n_params_proposed for out in outputs)
    refresh_acceptance["risks"] = (sum(out.n_params_accepted for out in outputs) / params_proposed
                                   if params_proposed else math.nan)
    jumps_proposed = sum(out.n_jumps_proposed for out in outputs)
    if jump_tables is not None:
        refresh_acceptance["jumps_proposed"] = jumps_proposed
        refresh_acceptance["jumps"] = (sum(out.n_jumps_accepted for out in outputs) / jumps_proposed
                                       if jumps_proposed else math.nan)
    siblings_proposed = sum(out.n_siblings_proposed for out in outputs)
    if sibling_tables_ is not None:
        refresh_acceptance["siblings_proposed"] = siblings_proposed
        refresh_acceptance["siblings"] = (sum(out.n_siblings_accepted for out in outputs) / siblings_proposed
                                          if siblings_proposed else math.nan)
    sites_proposed = sum(out.n_site_proposed for out in outputs)
    refresh_acceptance["risk_sites"] = (sum(out.n_site_accepted for out in outputs) / sites_proposed
                                        if sites_proposed else math.nan)

    swap_proposed = np.sum([out.n_swap_proposed for out in outputs], axis=0)
    swap_accepted = np.sum([out.n_swap_accepted for out in outputs], axis=0)
    swap_acceptance = tuple(float(a / p) if p else math.nan for a, p in zip(swap_accepted, swap_proposed))

    rhat = {"log_posterior": split_rhat(log_post_trace), "length": split_rhat(length_trace)}
    ess = {"log_posterior": effective_sample_size(log_post_trace), "length": effective_sample_size(length_trace)}

    n_total = len(orders)
    counts = np.bincount(np.concatenate([out.orders_flat for out in outputs]), minlength=n_rules)
    ranking = sorted(range(n_rules), key=lambda j: (-counts[j], j))
    inclusion = {str(names[j]): float(counts[j]) / n_total for j in ranking}

    if start_state is not None:
        map_order = tuple(int(i) for i in start_state[0])
        source = "start"
        fixed_start = start_state
    else:
        counter = Counter(orders)
        map_order = min(counter, key=lambda o: (-counter[o], len(o), o))
        source = "most frequent sampled list"
        fixed_start = _start_from_list(problem, map_order)
    frequency = sum(1 for o in orders if o == map_order) / n_total
    groups_frequency = same_groups_frequency(problem, map_order, orders)
    pending = (risk_rng, fixed_start, n_chains * n_samples, burn_in, thin)
    fixed, risk_summary = _map_risk(problem, *pending) if map_risk else (None, None)

    return PosteriorSample(
        lists=tuple(lists), orders=tuple(orders), chain_ids=chain_ids, lengths=lengths, gammas=tuple(gammas), K=ks,
        log_posterior_trace=log_post_trace, length_trace=length_trace, acceptance=acceptance,
        acceptance_per_chain=per_chain, proposals=proposals, rhat=rhat, ess=ess, inclusion=inclusion,
        map_list=tuple(names[i] for i in map_order), map_order=map_order, map_list_source=source,
        map_list_frequency=frequency, map_groups_frequency=groups_frequency, map_risk=risk_summary, n_chains=n_chains,
        n_samples=n_samples, burn_in=earlier_sweeps + burn_in, thin=thin, rule_names=rule_names, map_draws=fixed,
        refresh_acceptance=refresh_acceptance, refresh=refresh, n_starts=n_starts,
        temperatures=tuple(float(b) for b in betas), swap_acceptance=swap_acceptance,
        prior_tempered=bool(temper_prior and len(betas) > 1), chain_states=tuple(out.final for out in outputs),
        map_risk_pending=None if map_risk else pending,
    )


def _map_risk(problem: PackedProblem, rng: np.random.Generator, start, n_draws: int, burn_in: int, thin: int):
    """The fixed-list run for the MAP list's risks and its summary (``PosteriorSample.map_draws``, ``map_risk``)."""
    fixed = _fixed_list_draws(rng, problem, start, n_draws, burn_in, thin)
    return fixed, {
        "method": "fixed-list Gibbs (Steps 1, 2, 4 and 3d with the list held fixed)",
        "n_draws": n_draws,
        "ess": float(min(effective_sample_size(fixed.risks[:, pos].reshape(1, -1))
                         for pos in range(fixed.risks.shape[1]))),
        "median": np.median(fixed.risks, axis=0),
        "lower": np.quantile(fixed.risks, 0.025, axis=0),
        "upper": np.quantile(fixed.risks, 0.975, axis=0),
        "mean": fixed.risks.mean(axis=0),
    }


def with_map_risk(problem: PackedProblem, sample: PosteriorSample) -> PosteriorSample:
    """``sample`` with its MAP list's risk draws, when it was drawn with ``map_risk=False``.

    The run is the one :func:`sample_posterior` would have made (the same generator, burn-in and thinning), so
    the result is the same as drawing with ``map_risk=True``; the default schedules draw it only for the
    attempt they return (at 20,000 rows, about 0.5 s for each attempt that is not).
    """
    if sample.map_risk_pending is None:
        return sample
    rng, *rest = sample.map_risk_pending
    # a copy of the generator: the pending sample gives the same draws however often it is asked
    fixed, summary = _map_risk(problem, copy.deepcopy(rng), *rest)
    return replace(sample, map_risk=summary, map_draws=fixed, map_risk_pending=None)


# Longer runs tried, in turn, when a sample has not converged (burn-in and thinning scaled, same kept samples).
EXTEND_FACTORS = (1, 4, 16)
# The tempered escalation (sample_posterior_tempered_until_converged): below this swap rate between the
# beta = 1 replica and the next one the default ladder is too wide near beta = 1, and the last, long
# attempt uses the closer ladder: 6 rungs from 1 down to 0.5 (neighbours 13% apart).
MIN_TOP_SWAP = 0.1
CLOSE_TEMPERATURES = (6, 0.5)
# Thinning factors of the continued attempts after the first tempered one (the default sample):
# 1 + 4 + 18 units of work on the close ladder, sized so that UCI Spambase fits in 60 s on 2 cores
# shared with another job (39 s measured; (2, 6), the afresh schedule's 29 units, took 60 s there).
CONTINUE_FACTORS = (2, 4)
# A last, longer attempt (thinning LONG_FACTOR) when the 4x attempt has not converged and its worst R-hat is at
# most LONG_WITHIN: by default always.  UCI breast cancer, when it has not converged by 4x, ends there at
# 1.011-1.015 and converges at 8x on most seeds (28 s).  UCI Spambase ends its 4x attempt at a worst R-hat of
# 1.07 to 1.44 (sampler seeds 0 to 5: 1.178, 1.066, 1.443, 1.105, 1.151, 1.097; 20 to 22 s); the 8x attempt
# brings it to 1.048, 1.066, 1.258, 1.168, 1.073, 1.093 (41 to 46 s in all, within the 60 s budget): above the
# hard bar of 1.1 on 2 seeds instead of 4.  It used to run only within 1.05 of converging, to save those 20 s
# (benchmarks/bench_tempering.py; docs/search.md section 4).
LONG_FACTOR = 8
LONG_WITHIN = math.inf
# The estimator's default (sample_posterior_continued_until_converged): the thinning factors of the attempts
# that continue the plain chains after the first, while they have not converged.  Doubling stops easy data
# early (the raw export: at 1x or 2x, 1 to 2 s); the last attempt is as long as all before it together, which
# are its burn-in.  The whole schedule: 2,000 + 126,000 sweeps a chain at the defaults, within the work budget
# of LIST_WORK_BUDGET below (on a slower machine the whole schedule took UCI Spambase's sample to 90 s and the
# logistic export's, 20,000 rows, to 100 s; the budget now ends both at 32x); docs/search.md section 2.
PLAIN_FACTORS = (2, 4, 8, 16, 32, 64)
# The default sample's work budget, so that it returns in about a minute on 2 cores whatever the rows: a
# chain's sweep (a replica's, when tempered) is taken to cost as much as rows + SWEEP_OVERHEAD_ROWS, and an
# attempt runs only while the chain's sweeps x (rows + SWEEP_OVERHEAD_ROWS) so far stay within WORK_BUDGET per
# 1,000 samples (scaled with n_samples).  Fitted to the plain sweeps of the logistic export (4 chains on 2
# cores: 0.40 ms a sweep at 20,000 rows, 1.85 ms at 100,000; its lists hold 12 rules) on a machine about 1.8
# times faster than the one of LIST_WORK_BUDGET below: the whole plain schedule (128,000 sweeps) fit up to
# 20,000 rows; at 100,000 rows it stopped after the 8x attempt.  Longer lists cost more a sweep than this counts
# (UCI Spambase's 17 rules: 0.39 ms at 4,601 rows), so the default plain schedule now counts the lists' length
# (LIST_WORK_BUDGET); the tempered escalation keeps this model.  The first attempt always runs.
# docs/search.md section 2.
SWEEP_OVERHEAD_ROWS = 5_000
WORK_BUDGET = 3.3e9
# The default plain schedule's work model (sample_posterior_continued_until_converged).  A sweep's list moves
# each recount the rows below their change and score the positions below it, so a chain's sweep costs about
# L x (rows + LIST_SWEEP_OVERHEAD_ROWS), L the mean length of the lists drawn; the rows-only model above had UCI
# Spambase's 17-rule lists at 0.4 times their cost, and breast cancer's 9-rule posterior lists on 683 rows at
# about twice it.  Fitted to four default samples on the slower machine that measured them (4 chains on 2 cores,
# ms per sweep: the logistic export 0.87 at 20,000 rows, L about 12.5, and 3.5 at 100,000, L about 21; breast
# cancer 0.41; Spambase 0.79, which this over-counts by about 13%): 1.21e-6 ms x L x (rows + 37,000).
# LIST_WORK_BUDGET is a minute of that per 1,000 samples: breast cancer runs to 64x (about 52 s), Spambase and
# the logistic export at 20,000 rows to 32x (51 and 56 s), that export at 100,000 rows to 8x (56 s).  An
# attempt runs only if the work so far plus its own, counted at the last attempt's mean L, stays within it.
# A function of the draws, not of the clock: the sample still depends on the seed alone.
LIST_SWEEP_OVERHEAD_ROWS = 37_000
LIST_WORK_BUDGET = 4.95e10
# The default plain schedule's plain attempts stop after this factor; while it has not converged, the chains
# are continued with parallel tempering of the list prior and the likelihood together (sample_posterior's
# temper_prior) on PRIOR_LADDER, at the thinning factors TEMPERED_FACTORS, within the same work budget (a
# tempered sweep costs a sweep per replica).  Plain chains on UCI Spambase cross between its regions of short and
# long lists only every few tens of thousands of sweeps, each rule added before one is removed costing about
# log |B| nats of rule prior; with the prior tempered too a replica at beta pays beta times that, and its
# length mixes several times faster, while its lists keep about their length down to beta = 0.7 on Spambase
# (at 0.6 they grow to 25 to 30 rules) and 0.8 on UCI breast cancer.  Easy data converge before 16x and never
# pay for the replicas.  docs/search.md section 2.
PLAIN_UNTIL = 8
PRIOR_LADDER = tuple(float(beta) for beta in temperature_ladder(4, 0.8))   # 1, 0.928, 0.862, 0.8
TEMPERED_FACTORS = (2, 4, 8, 16, 32)


def sample_posterior_until_converged(problem: PackedProblem, *, n_samples: int = 1000, burn_in: int | None = None,
                                     thin: int = 1, factors: Sequence[int] = EXTEND_FACTORS,
                                     **kwargs) -> PosteriorSample:
    """:func:`sample_posterior`, run again longer while its verdict is "not converged".

    Attempt ``k`` multiplies the burn-in (default ``n_samples``) and the thinning by
    ``factors[k]``, so every attempt keeps ``n_samples`` samples per chain and runs
    ``factors[k]`` times as many sweeps; each attempt starts afresh from the same seed, so
    the result is reproducible.  Returns the first converged sample, or the last one
    (whose verdict then says it did not converge).  ``kwargs`` (e.g. ``temperatures``) go to
    every attempt.
    """
    kwargs["random_state"] = fixed_seed(kwargs.get("random_state"))  # one seed for every attempt
    n_samples = _check_int("n_samples", n_samples, 1)
    thin = _check_int("thin", thin, 1)
    burn_in = n_samples if burn_in is None else _check_int("burn_in", burn_in, 0)
    result = None
    for factor in factors:
        result = sample_posterior(problem, n_samples=n_samples, burn_in=burn_in * factor, thin=thin * factor,
                                  **kwargs)
        if result.verdict.converged:
            break
    return result


def sample_posterior_tempered_until_converged(problem: PackedProblem, *, n_samples: int = 1000,
                                              burn_in: int | None = None, thin: int = 1,
                                              temperatures=DEFAULT_TEMPERATURES,
                                              close_temperatures=CLOSE_TEMPERATURES,
                                              min_top_swap: float = MIN_TOP_SWAP, continue_chains: bool = True,
                                              factors: Sequence[int] = CONTINUE_FACTORS,
                                              long_factor: int | None = LONG_FACTOR,
                                              long_within: float = LONG_WITHIN,
                                              work_budget: float | None = WORK_BUDGET,
                                              **kwargs) -> PosteriorSample:
    """The plain sampler first, parallel tempering when it has not converged (the estimator's default before).

    With ``continue_chains`` (default) every attempt continues the chains of the one before from
    where they stopped (``sample_posterior(..., resume=...)``), so all earlier sweeps are burn-in
    of the next attempt and no work is thrown away; only the last attempt's samples are kept.
    Attempts, until one converges:

    1. the sampler without tempering (``burn_in``, ``thin`` as given);
    2. parallel tempering on the ladder ``temperatures`` (every replica starts from the plain
       chain's state), ``burn_in`` sweeps discarded for the new replicas, then ``n_samples * thin``
       kept;
    3. then, for each ``f`` of ``factors`` (default 2, then 4): ``n_samples`` kept with thinning
       ``f * thin`` and no further burn-in, tempered on the same ladder if attempt 2's swap rate
       between ``beta = 1`` and the next replica is at least ``min_top_swap``; otherwise (the
       ladder is too wide near ``beta = 1``: the replicas barely exchange with the kept one) on
       ``close_temperatures``, ``(rungs, beta_min)`` of :func:`temperature_ladder` or the betas;
    4. then, when the chains are continued and the last attempt has not converged (and its worst
       R-hat is at most ``long_within``: by default any), one more on the same ladder with thinning
       ``long_factor * thin`` (``None``: never).  A finite ``long_within`` stops chains still far
       apart after the attempts above: the verdict says "not converged" and what to do.

    The last attempt is shaped as the afresh schedule's last (``n_samples`` at thinning
    ``4 * thin``), after more burn-in, for less work: at most ``1 + R + R (2 + 4) / 2`` times the
    work (replica-sweeps) of attempt 1, 17 on the default ladder and 23 on the close one (against
    21 and 29 when every attempt started afresh), and ``R * long_factor / 2`` more when step 4 runs
    (47 in all on the close ladder).  The draws are a function of the seed alone (not of
    ``n_jobs``).  ``continue_chains=False``: the earlier schedule, every attempt afresh from the
    seed (plain 1x, tempered 1x, then one 4x attempt).

    ``work_budget`` (``None``: none) bounds the time on large data: an attempt after the first runs only
    if each chain's replica-sweeps so far, times ``n_rows + SWEEP_OVERHEAD_ROWS``, stay within
    ``work_budget * n_samples / 1000``; otherwise the sample is the last attempt's, its last attempt
    records ``"over_budget": True`` and the summary says the longer attempt was not run.  The budget is a
    function of the problem's size and the schedule alone, so the draws still depend on the seed alone.
    """
    kwargs["random_state"] = fixed_seed(kwargs.get("random_state"))  # one seed for every attempt
    n_samples = _check_int("n_samples", n_samples, 1)
    thin = _check_int("thin", thin, 1)
    burn_in = n_samples if burn_in is None else _check_int("burn_in", burn_in, 0)
    factors = [_check_int("factors", f, 1) for f in factors] if continue_chains else [4]
    long_factor = None if long_factor is None else _check_int("long_factor", long_factor, 1)
    attempt = _Attempts(problem, n_samples, thin, work_budget, continue_chains, kwargs)
    try:
        result = _escalate(attempt, burn_in, temperatures, close_temperatures, min_top_swap, continue_chains,
                           factors, long_factor, long_within)
    except _OverBudget as stop:
        result = stop.sample
    return with_map_risk(problem, result)


def sample_posterior_continued_until_converged(problem: PackedProblem, *, n_samples: int = 1000,
                                               burn_in: int | None = None, thin: int = 1,
                                               factors: Sequence[int] = PLAIN_FACTORS,
                                               work_budget: float | None = LIST_WORK_BUDGET,
                                               plain_until: int | None = PLAIN_UNTIL,
                                               tempered_factors: Sequence[int] = TEMPERED_FACTORS,
                                               prior_ladder: Sequence[float] = PRIOR_LADDER,
                                               progress=None, **kwargs) -> PosteriorSample:
    """The estimator's default sample: the plain sampler, its chains continued longer while it has not converged.

    Attempt 1 is :func:`sample_posterior` as asked (``burn_in``, default ``n_samples``, then ``n_samples`` kept
    at ``thin``).  While the verdict is "not converged", attempt ``k + 1`` continues every chain from where
    attempt ``k`` stopped (``sample_posterior(..., resume=...)``) and keeps ``n_samples`` at thinning
    ``factors[k] * thin`` (default 2, 4, 8, ..., 64): all earlier sweeps are its burn-in, so no work is thrown
    away and only the last attempt's samples are kept and diagnosed.  The plain attempts stop after the factor
    ``plain_until`` (default ``PLAIN_UNTIL``; ``None``: never); the attempts after it continue the chains with
    parallel tempering on ``prior_ladder`` with the list prior tempered too (:func:`sample_posterior`'s
    ``temper_prior``) at the thinning factors ``tempered_factors``.  Only the ``beta = 1`` replica is kept.
    A continued chain is the longer chain
    draw for draw, so the sample is drawn from exactly the paper's posterior, and it is a function of the seed
    alone (not of ``n_jobs``).  The whole schedule is ``burn_in + n_samples * thin * (1 + 2 + ... + 64)`` sweeps a chain,
    128,000 at the defaults.

    ``work_budget`` (``None``: none) bounds the time, about a minute on 2 cores: an attempt's work is its
    sweeps per chain times ``L * (n_rows + LIST_SWEEP_OVERHEAD_ROWS)``, ``L`` the mean length of the lists the
    attempt drew (for an attempt not yet drawn, of the last one drawn), and an attempt after the first runs
    only if the work so far plus its own stays within ``work_budget * n_samples / 1000``; otherwise the sample
    is the last attempt's, its last attempt records ``"over_budget": True`` and the summary says the longer
    attempt was not run.  Every attempt records its ``"work"``.

    ``progress`` (a callable or None) is told one line of text as each attempt starts (the dashboard's
    progress bar, ``frl sample`` at a terminal); it never changes the sample.

    Why plain first, and why these replicas: on the data measured (docs/search.md section 2), the tempered
    escalation's replicas, which temper the likelihood alone, took most of the work from the kept chain without
    carrying it between the regions its chains were stuck in (their lists are shorter: the rule prior's cost stays
    whole); the same work spent on the plain chains converged more often or sooner.  Replicas that temper the
    list prior too pay beta times that cost, and from the 8x attempt on they carry UCI Spambase's chains between
    its regions faster than plain sweeps do (worst R-hat 1.007 to 1.073 over sampler seeds 0 to 7, against 1.020
    to 1.186); data that mix converge before them.
    """
    kwargs["random_state"] = fixed_seed(kwargs.get("random_state"))  # one seed for every attempt
    n_samples = _check_int("n_samples", n_samples, 1)
    thin = _check_int("thin", thin, 1)
    burn_in = n_samples if burn_in is None else _check_int("burn_in", burn_in, 0)
    factors = [_check_int("factors", f, 1) for f in factors]
    if len(_check_temperatures(kwargs.pop("temperatures", 1))) != 1:
        raise FRLError("sample_posterior_continued_until_converged runs the plain sampler: use "
                       "sample_posterior_tempered_until_converged or sample_posterior for tempering")
    tempered_factors = [_check_int("tempered_factors", f, 1) for f in tempered_factors]
    ladder = _check_temperatures(prior_ladder)
    if plain_until is not None:
        plain_until = _check_int("plain_until", plain_until, 1)
        factors = [f for f in factors if f <= plain_until]
    schedule = [(f, 1, False) for f in factors]
    if plain_until is not None:
        schedule += [(f, ladder, True) for f in tempered_factors]
    attempt = _Attempts(problem, n_samples, thin, work_budget, True, kwargs, length_aware=True, progress=progress)
    try:
        result = attempt(1, 1, burn_in, None)
        for factor, rungs, temper_prior in schedule:
            if result.verdict.converged:
                break
            result = attempt(factor, rungs, 0, result, temper_prior=temper_prior)
    except _OverBudget as stop:
        result = stop.sample
    return with_map_risk(problem, result)


class _Attempts:
    """The attempts of a default schedule: each one drawn, recorded, and refused past the work budget.

    ``attempt(factor, ladder, burn, previous)`` draws ``burn`` sweeps then ``n_samples`` kept at thinning
    ``factor * thin`` on ``ladder``, continuing ``previous`` (when chains are continued), and returns the
    sample with every attempt so far in ``attempts``; it raises :class:`_OverBudget` instead when the
    chains' replica-sweeps so far, times ``n_rows + SWEEP_OVERHEAD_ROWS``, would pass the budget (never for
    the first attempt).  ``length_aware``: a sweep costs ``L * (n_rows + LIST_SWEEP_OVERHEAD_ROWS)`` instead,
    ``L`` the mean length of an attempt's draws (of the last attempt's, for the one about to be drawn).
    ``progress`` is told what each attempt is about to do (:func:`attempt_text`).
    """

    def __init__(self, problem: PackedProblem, n_samples: int, thin: int, work_budget, continue_chains: bool,
                 kwargs: dict, length_aware: bool = False, progress=None):
        if work_budget is not None and (isinstance(work_budget, bool) or not isinstance(work_budget, Real)
                                        or not work_budget > 0):
            raise FRLError(f"work_budget must be a positive number of units of work or None, got {work_budget!r}")
        self.problem = problem
        self.n_samples = n_samples
        self.thin = thin
        self.budget = math.inf if work_budget is None else float(work_budget) * n_samples / 1000.0
        self.length_aware = length_aware
        self.per_sweep = problem.n_rows + (LIST_SWEEP_OVERHEAD_ROWS if length_aware else SWEEP_OVERHEAD_ROWS)
        self.continue_chains = continue_chains
        self.kwargs = kwargs
        self.spent = 0.0
        self.done = []
        self.progress = progress

    def _length(self, sample) -> float:
        """The mean length of ``sample``'s lists when the work counts them, else 1."""
        return float(np.mean(sample.lengths)) if self.length_aware and len(sample.lengths) else 1.0

    def __call__(self, factor: int, ladder, burn: int, previous, temper_prior: bool = False):
        sweeps = burn + self.n_samples * self.thin * factor
        work = len(_check_temperatures(ladder)) * sweeps * self.per_sweep
        if previous is not None and self.spent + work * self._length(previous) > self.budget:
            self.done[-1]["over_budget"] = True
            raise _OverBudget(replace(previous, attempts=tuple(self.done)))
        resume = previous if self.continue_chains else None
        if self.progress is not None:
            verdict = None if previous is None else previous.verdict
            self.progress(attempt_text(len(self.done) + 1, factor, len(_check_temperatures(ladder)), self.n_samples,
                                       None if verdict is None else verdict.worst_rhat, resume is not None,
                                       None if verdict is None else verdict.smallest_ess))
        # temper_prior is passed only when the schedule asks for it: otherwise the caller's own (in kwargs, e.g.
        # for the tempered escalation) applies
        result = sample_posterior(self.problem, n_samples=self.n_samples, burn_in=burn, thin=self.thin * factor,
                                  temperatures=ladder, resume=resume, map_risk=False,
                                  **({"temper_prior": True} if temper_prior else {}), **self.kwargs)
        work *= self._length(result)
        self.spent += work
        self.done.append({"factor": factor, "replicas": len(result.temperatures),
                          "worst_rhat": result.verdict.worst_rhat, "smallest_ess": result.verdict.smallest_ess,
                          "converged": result.verdict.converged,
                          "top_swap": result.swap_acceptance[0] if result.swap_acceptance else math.nan,
                          "sweeps": sweeps, "continued": resume is not None, "work": work,
                          "prior_tempered": result.prior_tempered})
        return replace(result, attempts=tuple(self.done))


def attempt_text(number: int, factor: int, replicas: int, n_samples: int, worst_rhat: float | None,
                 continued: bool, smallest_ess: float | None = None) -> str:
    """One line for a progress display: what attempt ``number`` of a default schedule is about to draw, and why
    (the R-hat of the attempt before, or its effective sample size when its R-hat was within the target).

    >>> attempt_text(1, 1, 1, 1000, None, False)
    'sampling: 1,000 draws a chain'
    >>> attempt_text(5, 4, 4, 1000, 1.0834, True)
    'sampling: not converged yet (worst R-hat 1.083), so the chains run on 4 times as long, with 4 tempered replicas each (attempt 5)'
    >>> attempt_text(2, 2, 1, 1000, 1.009, True, 336.2)
    'sampling: not converged yet (effective sample size 336, under 400), so the chains run on 2 times as long (attempt 2)'
    """
    if worst_rhat is None:
        return f"sampling: {n_samples:,} draws a chain"
    how = "run on" if continued else "start again"
    why = (f"effective sample size {smallest_ess:.0f}, under {ESS_TARGET:.0f}" if worst_rhat <= RHAT_TARGET
           and smallest_ess is not None and math.isfinite(smallest_ess) and smallest_ess < ESS_TARGET
           else f"worst R-hat {worst_rhat:.3f}")
    text = f"sampling: not converged yet ({why}), so the chains {how}"
    if factor > 1:
        text += f" {factor} times as long"
    if replicas > 1:
        text += f", with {replicas} tempered replicas each"
    return f"{text} (attempt {number})"


class _OverBudget(Exception):
    """The next attempt of the default schedule would pass its work budget; ``sample`` is the last one drawn."""

    def __init__(self, sample):
        super().__init__("over the work budget")
        self.sample = sample


def _escalate(attempt, burn_in, temperatures, close_temperatures, min_top_swap, continue_chains, factors,
              long_factor, long_within) -> PosteriorSample:
    """The attempts of :func:`sample_posterior_tempered_until_converged`, until one converges."""
    result = attempt(1, 1, burn_in, None)
    if result.verdict.converged:
        return result
    result = attempt(1, temperatures, burn_in, result)
    if result.verdict.converged or (len(result.temperatures) == 1 and not continue_chains):
        return result
    ladder = temperatures
    if len(result.temperatures) > 1 and result.swap_acceptance[0] < min_top_swap:
        ladder = close_temperatures
        if isinstance(ladder, tuple) and len(ladder) == 2 and isinstance(ladder[0], Integral):
            ladder = temperature_ladder(*ladder)
    for factor in factors:
        result = attempt(factor, ladder, burn_in * factor if not continue_chains else 0, result)
        if result.verdict.converged:
            break
    if (continue_chains and long_factor and not result.verdict.converged
            and result.verdict.worst_rhat <= long_within):
        result = attempt(long_factor, ladder, 0, result)
    return result
