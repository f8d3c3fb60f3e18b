"""A beam search over the bottom of a rule list: the MAP search's lookahead where single moves stall.

The lower rules of a falling list catch the patients of lowest risk, where the
outcome changes smoothly (a risk that grows with age, heart rate, creatinine)
and many lists score within a nat or two of each other.  There a better tail can
need several rules at once, each of them alone worse than the tail it replaces.
On 20,000 rows of ``sample_data/make_smooth_risk_table.py --variant null`` the
search's chains end at a list whose last rule is ``Age >= 37 AND Heart rate >= 100``
(8.2%, default 3.6%), while three rules in its place, ``Age >= 37 AND Heart rate
>= 120`` (9.4%), ``Creatinine < 1 AND Heart rate >= 100`` (5.6%) and ``Age >= 37``
(4.5%, default 2.4%), are 0.44 nats better.  Every one- and two-rule tail on the
way is 1.2 to 10 nats worse than the chains' tail, so neither a polish (one move
at a time), nor a tail cut (which re-grows the tail one best rule at a time), nor
a drop reaches it: about one chain in 28 did.

:func:`beam_tail` keeps the list's first ``cut`` rules and grows a tail by beam
search: from the prefix, every candidate rule is appended to each of the
``width`` best tails so far, the ``width`` best of those (by the exact objective,
:func:`frl_engine.model.log_posterior_into`) are kept, ``depth`` times; the best
list seen at any depth is the answer.  Tails with the same objective are the same
rows split the same way written with other rules (``Age >= 37`` and ``Age >= 37
AND Heart rate < 120`` once the faster hearts are taken), so only the first of
each value is kept, which leaves room in the beam for tails that differ.
Appending a rule changes only the default rule's rows, so a candidate's counts
are two popcounts over the rows that reach the default, and an upper bound whose
rates fall as the MAP's must (``_append_bounds``) spares the exact solve of almost
every candidate.  Tails far below the best list seen (``BEAM_MARGIN``) are not
grown further.  The search is deterministic (ties go to the lower rule index), so
its result is a function of the prefix alone and is cached per search like the
polish (:class:`frl_engine.basin.PolishCache`).

The basin step (:func:`frl_engine.basin.regrow_tails`) calls it once cuts and
drops no longer improve a list, at the last ``TAIL_CUTS`` cuts, and polishes what
it returns.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .bits import capture_counts_from, popcount
from .model import (PackedProblem, add_rule_prior, log_length_prior, log_posterior_from_counts,
                    parameter_prior_bound, prior_total_weight)

# Tails kept at each depth, and how many rules a tail may hold.  On the smooth-risk table above a width of 8
# reaches the better tail at depth 3 and a width of 4 (without merging equal tails) did not.
BEAM_WIDTH = 8
BEAM_DEPTH = 4
# Tails more than this many nats below the best list the beam has seen are not grown further.  The better
# tail of the smooth-risk table above passes 3.2 nats below the list it replaces (a margin of 3 misses it); on
# 50,000 rows of that table a margin of 6 or 8 left two of six seeds "not converged" where 10 and more
# converge on all six; below a long list whose default holds few events every appended rule costs its prior
# (8 to 10 nats on UCI Spambase) and the tails sink from there (30 nats in 3 rules).
BEAM_MARGIN = 10.0
# Exact objectives solved at each depth, at most: the candidates come best bound first, and below a list whose
# default holds few events thousands of them tie within a nat (each adds a rule's prior cost and nothing else):
# on UCI Spambase a beam solved up to 37,000 a depth (0.7 s) for tails 30 nats below the list.
MAX_SOLVES = 256
# Two tails whose objectives differ by less than this are taken to be the same split of the rows.
SAME_VALUE_TOL = 1e-9


@numba.njit(inline="always")
def _binomial_max(n, s):
    """The binomial log likelihood of ``s`` events in ``n`` rows at the rate ``s / n`` (0 when ``s`` is 0 or n)."""
    if s <= 0.0 or s >= n:
        return 0.0
    return s * math.log(s / n) + (n - s) * math.log1p(-s / n)


# Rules counted together in one pass over a word of every tail's rows (_append_counts): their counters, for
# every tail of a wide beam (128 x 256 x 2 words, 512 KiB), stay in a core's cache while the word is read.
COUNT_TILE = 256
# A wide beam's tails are counted in this many parts side by side when the caller gives a map (a thread pool's).
COUNT_PARTS = 4


@numba.njit(nogil=True, cache=True)
def _append_counts(rules_by_word, y, remainings, captured, positive):
    """For every tail ``p`` and rule ``r``: the rows of ``remainings[p]`` that rule ``r`` captures
    (``captured[p, r]``) and the events among them (``positive[p, r]``).

    ``remainings`` is ``(P, W)``: each tail's rows reaching its default rule.  The truth tables (``|B| x W``
    words, 55 MB for 4,396 rules over 100,000 rows) are read once for all ``P`` tails, a tile of
    ``COUNT_TILE`` rules at a time, instead of once a tail: counting tail by tail read them from memory 128
    times at each depth of a wide beam, 7 ms a tail where this takes 3 (docs/search.md section 1, step 11).
    Words holding no row of a tail are skipped for it (the search sorts the rows by its reference list's
    groups, :mod:`frl_engine.row_order`, so near the bottom of a list they are a fraction of all).
    """
    n_words, n_rules = rules_by_word.shape
    n_tails = remainings.shape[0]
    tile_captured = np.zeros((n_tails, COUNT_TILE), dtype=np.uint64)
    tile_positive = np.zeros((n_tails, COUNT_TILE), dtype=np.uint64)
    for low in range(0, n_rules, COUNT_TILE):
        high = min(low + COUNT_TILE, n_rules)
        size = high - low
        tile_captured[:] = 0
        tile_positive[:] = 0
        for w in range(n_words):
            row = rules_by_word[w, low:high]
            for p in range(n_tails):
                rem = remainings[p, w]
                if rem == 0:
                    continue
                events = rem & y[w]
                caught = tile_captured[p]
                events_caught = tile_positive[p]
                for r in range(size):
                    caught[r] += popcount(row[r] & rem)
                    events_caught[r] += popcount(row[r] & events)
        captured[:, low:high] = tile_captured[:, :size]
        positive[:, low:high] = tile_positive[:, :size]


@numba.njit(nogil=True, cache=True)
def _append_bounds(captured, positive, order, length, n_cap, n_pos, in_list, cum_weights, log_weights, consts,
                   bounds):
    """For every rule not in the list: an upper bound of the objective of the list with the rule appended after
    ``order[:length]`` (``-inf`` for a rule that would capture no row).

    ``captured`` / ``positive`` hold each rule's captures among the rows that reach the default rule and the
    events among them (:func:`_append_counts`), ``n_cap`` / ``n_pos`` the list's counts with the default at
    index ``length``.  The bound is the list prior, plus the largest binomial log likelihood whose
    rates fall down the list (the MAP's do: every ``gamma_l >= 1``), plus the parameters' prior at its modes
    (:func:`frl_engine.model.parameter_prior_bound`).  The falling rates are pooled adjacent violators: the
    list's own rules' blocks are pooled once, and each candidate and the default below it are pooled onto
    them.  It is tighter than :func:`frl_engine.model.log_posterior_upper_bound`, whose rates need not fall,
    which matters here: below a long list most rules catch patients riskier than the last rule's.
    """
    n_rules = captured.shape[0]
    # The longer list's prior (model.log_list_prior) is the prefix's terms, the same for every appended rule,
    # then the appended rule's own: summed in the same order, so the same number to the last bit.
    head, unused = add_rule_prior(log_length_prior(length + 1, consts), order, 0, length,
                                  prior_total_weight(cum_weights, consts), log_weights)
    log_unused = math.log(unused)
    # The list's rules pooled into falling blocks; below[t] is the log likelihood of blocks 0..t-1.
    block_n = np.empty(length + 1)
    block_s = np.empty(length + 1)
    below = np.zeros(length + 2)
    n_blocks = 0
    for pos in range(length):
        n, s = n_cap[pos], n_pos[pos]
        if n == 0.0:
            continue
        while n_blocks > 0 and block_s[n_blocks - 1] * n < s * block_n[n_blocks - 1]:
            n_blocks -= 1
            n += block_n[n_blocks]
            s += block_s[n_blocks]
        block_n[n_blocks] = n
        block_s[n_blocks] = s
        below[n_blocks + 1] = below[n_blocks] + _binomial_max(n, s)
        n_blocks += 1
    default_cap = n_cap[length]
    default_pos = n_pos[length]
    parameters = parameter_prior_bound(length + 1, consts)
    for r in range(n_rules):
        bounds[r] = -np.inf
        if in_list[r] or captured[r] == 0:
            continue
        n, s = float(captured[r]), float(positive[r])
        t = n_blocks
        while t > 0 and block_s[t - 1] * n < s * block_n[t - 1]:
            t -= 1
            n += block_n[t]
            s += block_s[t]
        rest_n, rest_s = default_cap - float(captured[r]), default_pos - float(positive[r])
        likelihood = 0.0
        if rest_n > 0.0:
            if s * rest_n < rest_s * n:                   # the default riskier than the new rule: pool them
                n += rest_n
                s += rest_s
                while t > 0 and block_s[t - 1] * n < s * block_n[t - 1]:
                    t -= 1
                    n += block_n[t]
                    s += block_s[t]
            else:
                likelihood += _binomial_max(rest_n, rest_s)
        likelihood += below[t] + _binomial_max(n, s)
        bounds[r] = head + (log_weights[r] - log_unused) + likelihood + parameters


@numba.njit(nogil=True, cache=True)
def _select(ranked, flat_bounds, n_rules, orders, lengths, n_caps, n_poss, caps, positives, cum_weights,
            log_weights, consts, width, max_solves, chosen, values):
    """The ``width`` best children by exact objective, one per distinct value: walks ``ranked`` (candidates by
    upper bound, best first) until the bound cannot beat the ``width``-th value kept, or ``max_solves`` exact
    objectives have been solved.

    Candidate ``at`` is rule ``at % n_rules`` appended to parent ``at // n_rules`` (``orders[k, :lengths[k]]``,
    counts ``n_caps[k, :lengths[k] + 1]``).  Fills ``chosen`` and ``values`` best first; returns how many.
    """
    max_length = orders.shape[1] + 1
    order = np.empty(max_length, dtype=np.int64)
    n_cap = np.empty(max_length + 1)
    n_pos = np.empty(max_length + 1)
    x = np.empty(max_length + 1)
    n_kept = 0
    for solved, at in enumerate(ranked):
        if solved == max_solves or (n_kept == width and flat_bounds[at] <= values[n_kept - 1]):
            break
        k = at // n_rules
        rule = at % n_rules
        length = lengths[k]
        for pos in range(length):
            order[pos] = orders[k, pos]
            n_cap[pos] = n_caps[k, pos]
            n_pos[pos] = n_poss[k, pos]
        order[length] = rule
        n_cap[length] = caps[at]
        n_pos[length] = positives[at]
        n_cap[length + 1] = n_caps[k, length] - caps[at]
        n_pos[length + 1] = n_poss[k, length] - positives[at]
        value = log_posterior_from_counts(order, length + 1, n_cap, n_pos, cum_weights, log_weights, consts, x)
        if n_kept == width and value <= values[n_kept - 1]:
            continue
        same = False
        for j in range(n_kept):
            if abs(value - values[j]) < SAME_VALUE_TOL:
                same = True
                break
        if same:
            continue
        slot = min(n_kept, width - 1)          # insert by value; an earlier equal value stays first
        while slot > 0 and values[slot - 1] < value:
            chosen[slot] = chosen[slot - 1]
            values[slot] = values[slot - 1]
            slot -= 1
        chosen[slot] = at
        values[slot] = value
        n_kept = min(n_kept + 1, width)
    return n_kept


class _Tail:
    """One list of the beam: its rules, the rows reaching its default, its counts and objective."""

    __slots__ = ("order", "remaining", "n_cap", "n_pos", "value")

    def __init__(self, order, remaining, n_cap, n_pos, value):
        self.order, self.remaining, self.n_cap, self.n_pos, self.value = order, remaining, n_cap, n_pos, value


def _start(problem: PackedProblem, prefix: np.ndarray) -> _Tail:
    length = len(prefix)
    remaining = np.empty((length + 1, problem.rules.shape[1]), dtype=np.uint64)
    remaining[0] = problem.all_rows
    n_cap = np.empty(length + 1)
    n_pos = np.empty(length + 1)
    capture_counts_from(problem.rules, problem.y, prefix, length, 0, remaining, n_cap, n_pos)
    value = log_posterior_from_counts(prefix, length, n_cap, n_pos, problem.cum_weights, problem.log_weights,
                                      problem.consts, np.empty(length + 1))
    return _Tail(prefix, remaining[length].copy(), n_cap, n_pos, float(value))


def _children(problem: PackedProblem, parents: list[_Tail], width: int, map_jobs=None) -> list[_Tail]:
    """The ``width`` best lists one appended rule away from ``parents``, one per distinct objective.

    ``map_jobs`` (a thread pool's ``map``, or None): the parents' rows are counted in ``COUNT_PARTS`` parts side
    by side (:func:`_append_counts` releases the GIL and writes its own parents' rows); the same result."""
    n_rules, n_parents = problem.n_rules, len(parents)
    longest = max(len(parent.order) for parent in parents)
    orders = np.zeros((n_parents, longest + 1), dtype=np.int64)
    n_caps = np.zeros((n_parents, longest + 1))
    n_poss = np.zeros((n_parents, longest + 1))
    lengths = np.array([len(parent.order) for parent in parents], dtype=np.int64)
    bounds = np.empty((n_parents, n_rules))
    captured = np.empty((n_parents, n_rules), dtype=np.uint64)
    positive = np.empty((n_parents, n_rules), dtype=np.uint64)
    remainings = np.stack([parent.remaining for parent in parents])

    def count(part: slice) -> None:
        _append_counts(problem.rules_by_word, problem.y, remainings[part], captured[part], positive[part])

    if map_jobs is None or n_parents < 2 * COUNT_PARTS:
        count(slice(0, n_parents))
    else:
        edges = np.linspace(0, n_parents, COUNT_PARTS + 1).astype(int)
        list(map_jobs(count, [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]))
    for k, parent in enumerate(parents):
        length = lengths[k]
        orders[k, :length] = parent.order
        n_caps[k, :length + 1] = parent.n_cap
        n_poss[k, :length + 1] = parent.n_pos
        in_list = np.zeros(n_rules, dtype=np.bool_)
        in_list[parent.order] = True
        _append_bounds(captured[k], positive[k], parent.order, length, parent.n_cap, parent.n_pos, in_list,
                       problem.cum_weights, problem.log_weights, problem.consts, bounds[k])
    caps, positives = captured.astype(np.float64), positive.astype(np.float64)   # what _select reads
    # Best bound first; ties by parent rank, then rule index (the flat index's order, kept by a stable sort).
    flat = bounds.ravel()
    live = np.flatnonzero(np.isfinite(flat))
    ranked = live[np.argsort(-flat[live], kind="stable")].astype(np.int64)
    chosen = np.empty(width, dtype=np.int64)
    values = np.empty(width)
    n_kept = _select(ranked, flat, n_rules, orders, lengths, n_caps, n_poss, caps.ravel(), positives.ravel(),
                     problem.cum_weights, problem.log_weights, problem.consts, width, MAX_SOLVES, chosen, values)
    kept = []
    for at, value in zip(chosen[:n_kept].tolist(), values[:n_kept].tolist()):
        k, rule = divmod(at, n_rules)
        parent, length = parents[k], int(lengths[k])
        captured, positive = caps[k, rule], positives[k, rule]
        kept.append(_Tail(np.append(parent.order, rule).astype(np.int64), parent.remaining & ~problem.rules[rule],
                          np.append(parent.n_cap[:length], [captured, parent.n_cap[length] - captured]),
                          np.append(parent.n_pos[:length], [positive, parent.n_pos[length] - positive]), value))
    return kept


def beam_tail(problem: PackedProblem, prefix, *, width: int = BEAM_WIDTH, depth: int = BEAM_DEPTH,
              margin: float = BEAM_MARGIN, map_jobs=None) -> tuple[np.ndarray, float]:
    """The best list that keeps ``prefix`` and appends at most ``depth`` rules, by beam search of ``width``.

    Parameters
    ----------
    problem : PackedProblem
    prefix : sequence of int
        The rules kept at the top, in order.
    width : int
        Tails kept at each depth (one per distinct objective).
    depth : int
        Most rules appended.
    margin : float
        Tails more than ``margin`` nats below the best list seen are not grown further.
    map_jobs : callable or None
        A thread pool's ``map``, through which a wide beam's tails are counted side by side (:func:`_children`);
        ``None``: in the calling thread.  The result does not depend on it.

    Returns
    -------
    order : ndarray of int64
        The best list seen (``prefix`` itself when no tail beats it).
    value : float
        Its exact objective (eq. 5's log posterior at the MAP of ``K`` and the gammas).
    """
    best = _start(problem, np.asarray(prefix, dtype=np.int64))
    beam = [best]
    for _ in range(depth):
        beam = _children(problem, beam, width, map_jobs)
        if beam and beam[0].value > best.value:
            best = beam[0]
        beam = [tail for tail in beam if tail.value >= best.value - margin]
        if not beam:
            break
    return best.order.copy(), best.value
