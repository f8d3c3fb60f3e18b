"""Steepest ascent over the whole neighbourhood of a rule list (the MAP search's last step).

The neighbourhood of a list ``c_0..c_{L-1}`` is every list one move of
:mod:`frl_engine.moves` away: every SWAP of two positions, every REPLACE of a
position by an unused candidate, every ADD of an unused candidate at one of the
``L+1`` insertion points and every REMOVE.  :func:`polish_list` evaluates the
exact objective of :mod:`frl_engine.model` over all of them, moves to the best
one if it improves the objective, and repeats until no neighbour improves: the
result is a *local maximum* of the objective (no single move improves it).
(Moving to the first improving block instead of the best neighbour is cheaper,
but it lets the greedy start split a strong rule in two, e.g. on the raw export,
and two chains then agree on a list 5 nats below the MAP: steepest ascent it is.)

Two things keep it cheap:

* a change at position ``k`` leaves the captured rows of positions ``0..k-1``
  as they were, so each neighbour's counts are re-walked from ``k`` only
  (:func:`frl_engine.bits.capture_counts_from`);
* the cheap upper bound :func:`frl_engine.model.log_posterior_upper_bound` is
  computed first, and the exact inner maximisation over ``K`` and the gammas
  is solved only when the bound beats the best neighbour seen so far.  Almost
  every REPLACE and ADD is pruned this way.

Started from the empty list, the first passes are a greedy construction (the best
single rule, then the best additions to it, ...), interleaved with the swaps,
replacements and removals that improve it: a data-driven start for the
annealing chains.
"""

from __future__ import annotations

import numba
import numpy as np

from .bits import capture_counts_from, recount_from
from .model import log_posterior_into, log_posterior_upper_bound

# Move codes of the best neighbour (as in frl_engine.moves).
_SWAP, _REPLACE, _ADD, _REMOVE = 0, 1, 2, 3
# A neighbour must improve the objective by more than this to be taken (floating point noise).
IMPROVEMENT_TOL = 1e-9


@numba.njit(nogil=True, cache=True)
def _evaluate(rules, y, cum_weights, log_weights, consts, proposal, new_length, start, remaining, n_cap, n_pos,
              remaining_new, n_cap_new, n_pos_new, x, work, free, threshold):
    """The exact objective of ``proposal`` if its upper bound exceeds ``threshold``; else -inf."""
    recount_from(rules, y, proposal, new_length, start, remaining, n_cap, n_pos, remaining_new, n_cap_new,
                 n_pos_new)
    if log_posterior_upper_bound(proposal, new_length, n_cap_new, n_pos_new, cum_weights, log_weights,
                                 consts) <= threshold:
        return -np.inf
    return log_posterior_into(proposal, new_length, n_cap_new, n_pos_new, cum_weights, log_weights, consts,
                              x, work, free)


@numba.njit(nogil=True, cache=True)
def polish_list(rules, y, all_rows, cum_weights, log_weights, consts, start_order, max_passes):
    """Steepest ascent from ``start_order`` to a local maximum; at most ``max_passes`` moves.

    Returns ``(order, value, n_moves)``: the local maximum, its exact objective
    and the number of improving moves taken.  Ties between equally good
    neighbours go to the first one met (swaps, removals, replacements, additions;
    positions and rules in increasing order), so the result is deterministic.
    """
    n_rules, n_words = rules.shape
    max_len = n_rules
    order = np.empty(max_len + 1, dtype=np.int64)
    proposal = np.empty(max_len + 1, dtype=np.int64)
    in_list = np.zeros(n_rules, dtype=np.bool_)
    remaining = np.empty((max_len + 1, n_words), dtype=np.uint64)
    remaining_new = np.empty((max_len + 1, n_words), dtype=np.uint64)
    n_cap = np.zeros(max_len + 1)
    n_pos = np.zeros(max_len + 1)
    n_cap_new = np.zeros(max_len + 1)
    n_pos_new = np.zeros(max_len + 1)
    x = np.zeros(max_len + 1)
    capacity = max_len + 1
    if capacity > 65:
        capacity = 65
    work = np.empty((2 * capacity + 5, capacity))
    free = np.empty(capacity, dtype=np.int64)

    length = start_order.shape[0]
    for pos in range(length):
        order[pos] = start_order[pos]
        in_list[start_order[pos]] = True
    remaining[0] = all_rows
    remaining_new[0] = all_rows
    capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
    if length + 2 > capacity:
        capacity = min(max_len + 1, length + 34)
        work = np.empty((2 * capacity + 5, capacity))
        free = np.empty(capacity, dtype=np.int64)
    value = log_posterior_into(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x, work, free)
    n_moves = 0
    for _ in range(max_passes):
        if length + 2 > capacity:
            capacity = min(max_len + 1, 2 * capacity)
            work = np.empty((2 * capacity + 5, capacity))
            free = np.empty(capacity, dtype=np.int64)
        best_value = value + IMPROVEMENT_TOL
        best_move = -1
        best_i = -1
        best_j = -1
        # SWAP positions i < j
        for i in range(length):
            for j in range(i + 1, length):
                for pos in range(length):
                    proposal[pos] = order[pos]
                proposal[i] = order[j]
                proposal[j] = order[i]
                v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length, i, remaining, n_cap,
                              n_pos, remaining_new, n_cap_new, n_pos_new, x, work, free, best_value)
                if v > best_value:
                    best_value, best_move, best_i, best_j = v, _SWAP, i, j
        # REMOVE position i
        for i in range(length):
            for pos in range(i):
                proposal[pos] = order[pos]
            for pos in range(i, length - 1):
                proposal[pos] = order[pos + 1]
            v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length - 1, i, remaining, n_cap,
                          n_pos, remaining_new, n_cap_new, n_pos_new, x, work, free, best_value)
            if v > best_value:
                best_value, best_move, best_i, best_j = v, _REMOVE, i, -1
        # REPLACE position i by rule r
        for i in range(length):
            for pos in range(length):
                proposal[pos] = order[pos]
            for r in range(n_rules):
                if in_list[r]:
                    continue
                proposal[i] = r
                v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length, i, remaining, n_cap,
                              n_pos, remaining_new, n_cap_new, n_pos_new, x, work, free, best_value)
                if v > best_value:
                    best_value, best_move, best_i, best_j = v, _REPLACE, i, r
        # ADD rule r at insertion point i
        if length < n_rules:
            for i in range(length + 1):
                for pos in range(i):
                    proposal[pos] = order[pos]
                for pos in range(i, length):
                    proposal[pos + 1] = order[pos]
                for r in range(n_rules):
                    if in_list[r]:
                        continue
                    proposal[i] = r
                    v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length + 1, i, remaining,
                                  n_cap, n_pos, remaining_new, n_cap_new, n_pos_new, x, work, free, best_value)
                    if v > best_value:
                        best_value, best_move, best_i, best_j = v, _ADD, i, r
        if best_move < 0:
            break
        if best_move == _SWAP:
            held = order[best_i]
            order[best_i] = order[best_j]
            order[best_j] = held
        elif best_move == _REMOVE:
            in_list[order[best_i]] = False
            for pos in range(best_i, length - 1):
                order[pos] = order[pos + 1]
            length -= 1
        elif best_move == _REPLACE:
            in_list[order[best_i]] = False
            order[best_i] = best_j
            in_list[best_j] = True
        else:
            for pos in range(length, best_i, -1):
                order[pos] = order[pos - 1]
            order[best_i] = best_j
            in_list[best_j] = True
            length += 1
        capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
        value = best_value
        n_moves += 1
    return order[:length].copy(), value, n_moves


@numba.njit(nogil=True, cache=True)
def near_neighbour_rules(rules, y, all_rows, cum_weights, log_weights, consts, start_order, margin):
    """Which unused candidates enter a neighbour of ``start_order`` within ``margin`` nats of its objective.

    Every REPLACE and ADD neighbour is scored (the upper bound prunes the hopeless ones);
    rule ``r`` is marked when some neighbour that brings it in has an objective at least
    ``objective(start_order) - margin``.  The posterior sampler proposes these rules more often.
    """
    n_rules, n_words = rules.shape
    max_len = n_rules
    length = start_order.shape[0]
    order = start_order.copy()
    proposal = np.empty(max_len + 1, dtype=np.int64)
    in_list = np.zeros(n_rules, dtype=np.bool_)
    marked = np.zeros(n_rules, dtype=np.bool_)
    remaining = np.empty((max_len + 1, n_words), dtype=np.uint64)
    remaining_new = np.empty((max_len + 1, n_words), dtype=np.uint64)
    n_cap = np.zeros(max_len + 1)
    n_pos = np.zeros(max_len + 1)
    n_cap_new = np.zeros(max_len + 1)
    n_pos_new = np.zeros(max_len + 1)
    x = np.zeros(max_len + 1)
    capacity = min(max_len + 1, length + 2)
    work = np.empty((2 * capacity + 5, capacity))
    free = np.empty(capacity, dtype=np.int64)
    for pos in range(length):
        in_list[order[pos]] = True
    remaining[0] = all_rows
    remaining_new[0] = all_rows
    capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
    value = log_posterior_into(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x, work, free)
    threshold = value - margin
    for i in range(length):
        for pos in range(length):
            proposal[pos] = order[pos]
        for r in range(n_rules):
            if in_list[r] or marked[r]:
                continue
            proposal[i] = r
            v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length, i, remaining, n_cap, n_pos,
                          remaining_new, n_cap_new, n_pos_new, x, work, free, threshold)
            if v >= threshold:
                marked[r] = True
    if length < n_rules:
        for i in range(length + 1):
            for pos in range(i):
                proposal[pos] = order[pos]
            for pos in range(i, length):
                proposal[pos + 1] = order[pos]
            for r in range(n_rules):
                if in_list[r] or marked[r]:
                    continue
                proposal[i] = r
                v = _evaluate(rules, y, cum_weights, log_weights, consts, proposal, length + 1, i, remaining, n_cap,
                              n_pos, remaining_new, n_cap_new, n_pos_new, x, work, free, threshold)
                if v >= threshold:
                    marked[r] = True
    return marked
