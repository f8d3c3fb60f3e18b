"""The four local moves over ordered rule lists (paper section 3.1).

* SWAP: pick positions ``i != j`` uniformly and exchange their rules;
* REPLACE: pick a position uniformly, put there a rule drawn from ``p_c`` (eq. pc)
  among the rules not elsewhere in the list;
* ADD: pick one of the ``L+1`` insertion points uniformly and insert a rule drawn
  from ``p_c`` among the unused rules;
* REMOVE: pick a position uniformly and delete its rule.

A move type is chosen uniformly among the moves *possible* in the current
state (SWAP needs ``L >= 2``; REPLACE needs ``1 <= L < |B|``; ADD needs
``L < |B|``; REMOVE needs ``L >= 1``).  ``p_c`` draws rule ``j`` with
probability proportional to its weight ``w_j`` among the eligible rules, by
rejection from the full weighted distribution (exact for the conditional).

:func:`propose` writes the proposed list and returns what changed in ``info``
(``MOVE, I, J, NEW_RULE, OLD_RULE, FIRST_CHANGED``) so that a caller can
re-evaluate only from ``FIRST_CHANGED`` on and a sampler can compute the
Hastings ratio.
"""

from __future__ import annotations

import numba
import numpy as np

SWAP, REPLACE, ADD, REMOVE = 0, 1, 2, 3
MOVE_NAMES = ("swap", "replace", "add", "remove")
# Fields of the info vector filled by ``propose``.
MOVE, I, J, NEW_RULE, OLD_RULE, FIRST_CHANGED = range(6)


@numba.njit(inline="always")
def move_possible(move, length, n_rules):
    """Whether ``move`` can be applied to a list of ``length`` rules out of ``n_rules``."""
    if move == SWAP:
        return length >= 2
    if move == REPLACE:
        return length >= 1 and length < n_rules
    if move == ADD:
        return length < n_rules
    return length >= 1


@numba.njit(inline="always")
def n_possible_moves(length, n_rules):
    count = 0
    for move in range(4):
        if move_possible(move, length, n_rules):
            count += 1
    return count


@numba.njit(nogil=True, cache=True)
def draw_unused_rule(rng, cum_weights, in_list):
    """Draw a rule not in the list with probability proportional to its weight."""
    total = cum_weights[cum_weights.shape[0] - 1]
    while True:
        rule = np.searchsorted(cum_weights, rng.random() * total, side="right")
        if rule < in_list.shape[0] and not in_list[rule]:
            return rule


@numba.njit(nogil=True, cache=True)
def propose(rng, order, length, cum_weights, in_list, new_order, info):
    """Write a random neighbour of ``order[:length]`` into ``new_order``; return its length.

    ``in_list`` marks the rules of the current list and is not modified.
    Returns -1 when no move is possible (an empty candidate set).
    """
    n_rules = in_list.shape[0]
    n_moves = n_possible_moves(length, n_rules)
    if n_moves == 0:
        return -1
    pick = rng.integers(0, n_moves)
    move = 0
    for candidate in range(4):
        if move_possible(candidate, length, n_rules):
            if pick == 0:
                move = candidate
                break
            pick -= 1
    for pos in range(length):
        new_order[pos] = order[pos]
    info[MOVE] = move
    info[NEW_RULE] = -1
    info[OLD_RULE] = -1
    info[J] = -1
    if move == SWAP:
        i = rng.integers(0, length)
        j = rng.integers(0, length - 1)
        if j >= i:
            j += 1
        new_order[i] = order[j]
        new_order[j] = order[i]
        info[I] = i
        info[J] = j
        info[FIRST_CHANGED] = min(i, j)
        return length
    if move == REPLACE:
        i = rng.integers(0, length)
        rule = draw_unused_rule(rng, cum_weights, in_list)
        new_order[i] = rule
        info[I] = i
        info[NEW_RULE] = rule
        info[OLD_RULE] = order[i]
        info[FIRST_CHANGED] = i
        return length
    if move == ADD:
        i = rng.integers(0, length + 1)
        rule = draw_unused_rule(rng, cum_weights, in_list)
        for pos in range(length, i, -1):
            new_order[pos] = order[pos - 1]
        new_order[i] = rule
        info[I] = i
        info[NEW_RULE] = rule
        info[FIRST_CHANGED] = i
        return length + 1
    i = rng.integers(0, length)
    for pos in range(i, length - 1):
        new_order[pos] = order[pos + 1]
    info[I] = i
    info[OLD_RULE] = order[i]
    info[FIRST_CHANGED] = i
    return length - 1
