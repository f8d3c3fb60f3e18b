"""The training rows re-ordered so that the rows a list puts in one group sit side by side in memory.

The objective of a rule list (paper eq. alt_max_eqn, rows mapped to positions by eq. z_n) depends on the
rows only through the counts ``n_l`` and ``s_l`` of each position: permuting the rows
changes no count, hence no objective, no search step and no draw.  It does change the cost
of counting.  The polish's counting sweep (:func:`frl_engine.polish._scan_replace_add`)
visits every machine word of every *cell* of the list (the rows captured at position ``k``
that would fall to ``j`` without ``c_k``).  With the rows in file order, each of a list's
tens of cells is scattered over nearly all ``W = N / 64`` words; with the rows sorted by
cell, a cell holds ``n_cell / 64 + 2`` words at most.  On a 100,000-row export (1,563 words,
a 21-rule list) that is 1,633 word-cells instead of 45,670, and a polish pass takes 0.03 s
instead of 0.18 s.

The order is taken from a *reference list* close to the lists the search will meet: the
search's greedy list (steepest ascent from the empty list), itself computed on the rows
sorted by the greedy list of a regular subsample.  A poor reference only makes the
counting slower, never different.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from .bits import unpack_rows
from .model import PackedProblem
from .polish import polish_list

# Below this many rows the cells' words are few whatever the order (Spambase: 72 words), and re-packing is
# not worth it.
MIN_ROWS = 8_192
# Rows of the subsample whose greedy list orders the rows (a regular subsample: every k-th row).
REFERENCE_ROWS = 8_192
# Improving moves the reference greedy list may take.
REFERENCE_MOVES = 64


@numba.njit(nogil=True, cache=True)
def permute_bits(rows, source, out):
    """Bit ``i`` of every row of ``out`` is bit ``source[i]`` of the same row of ``rows``.

    ``rows`` is ``(M, W)`` packed bit vectors (:mod:`frl_engine.bits`), ``out`` is ``(M, W')`` with
    ``W' = ceil(len(source) / 64)``; padding bits past ``len(source)`` are left zero.
    """
    n_out = source.shape[0]
    for r in range(rows.shape[0]):
        src = rows[r]
        dst = out[r]
        for w in range(dst.shape[0]):
            dst[w] = 0
        for i in range(n_out):
            s = source[i]
            bit = (src[s >> 6] >> np.uint64(s & 63)) & np.uint64(1)
            dst[i >> 6] |= bit << np.uint64(i & 63)


def take_rows(problem: PackedProblem, source: np.ndarray) -> PackedProblem:
    """The problem on rows ``source`` (row ``i`` of the result is row ``source[i]``), same rules and prior.

    A permutation of every row gives the same objective for every list; a subset gives another data set.
    The rules are re-packed in blocks on the machine's cores (the kernel releases the GIL).
    """
    source = np.ascontiguousarray(source, dtype=np.int64)
    n_words = max(1, -(-len(source) // 64))
    rules = np.empty((problem.n_rules, n_words), dtype=np.uint64)
    bounds = np.linspace(0, problem.n_rules, max(1, min(os.cpu_count() or 1, problem.n_rules)) + 1).astype(int)
    with ThreadPoolExecutor(max_workers=len(bounds) - 1) as pool:
        list(pool.map(lambda lo, hi: permute_bits(problem.rules[lo:hi], source, rules[lo:hi]), bounds[:-1], bounds[1:]))
    packed = np.empty((2, n_words), dtype=np.uint64)
    outcome_and_rows = np.stack([problem.y, problem.all_rows])
    outcome_and_rows.setflags(write=False)   # the rules are read-only: one compiled version of the kernel
    permute_bits(outcome_and_rows, source, packed)
    return PackedProblem(rules=rules, y=packed[0].copy(), all_rows=packed[1].copy(), n_rows=len(source),
                         hyper=problem.hyper, consts=problem.consts, cum_weights=problem.cum_weights,
                         log_weights=problem.log_weights)


def cell_order(problem: PackedProblem, reference) -> np.ndarray:
    """The rows sorted by their cell of ``reference``, then by outcome: a permutation of ``range(N)``.

    A row's cell is ``(k, j)``: ``k`` the first position of the list it satisfies (``L``: the
    default), ``j`` the first later one (``L``: none), as in :func:`frl_engine.polish._cells`.
    The sort is stable, so rows of one cell and outcome keep their file order.
    """
    order = np.asarray(reference, dtype=np.int64)
    n, length = problem.n_rows, len(order)
    members = [unpack_rows(problem.rules[rule], n) for rule in order]
    first = np.full(n, length, dtype=np.int64)
    for pos in range(length - 1, -1, -1):
        first[members[pos]] = pos
    then = np.full(n, length, dtype=np.int64)
    for pos in range(length - 1, -1, -1):
        then[members[pos] & (first < pos)] = pos
    outcome = unpack_rows(problem.y, n)
    return np.lexsort((outcome, then, first)).astype(np.int64)


def subsample_greedy(problem: PackedProblem) -> np.ndarray:
    """The greedy list of every ``k``-th row (about ``REFERENCE_ROWS`` rows): a first, cheap reference."""
    step = max(1, problem.n_rows // REFERENCE_ROWS)
    sample = take_rows(problem, np.arange(0, problem.n_rows, step, dtype=np.int64))
    order, _, _ = polish_list(sample.rules, sample.rules_by_word, sample.y, sample.all_rows, sample.cum_weights,
                              sample.log_weights, sample.consts, np.zeros(0, dtype=np.int64), REFERENCE_MOVES)
    return order


def grouped_by(problem: PackedProblem, reference) -> PackedProblem:
    """The same problem with its rows sorted by the cells of ``reference`` (:func:`cell_order`)."""
    return take_rows(problem, cell_order(problem, reference))


def grouped_for_search(problem: PackedProblem, greedy) -> PackedProblem:
    """The problem with its rows sorted by the cells of the search's greedy list; unchanged below ``MIN_ROWS``.

    ``greedy(problem)`` returns the greedy list (steepest ascent from the empty list).  It is computed on
    the rows sorted by :func:`subsample_greedy` first, where it is several times cheaper than in file
    order, and then orders the rows itself: the lists the search meets share its top rules.  Every list
    has the same counts, objective and draws in the result; only the time to count them differs.
    """
    if problem.n_rows < MIN_ROWS or problem.n_rules == 0:
        return problem
    first = cell_order(problem, subsample_greedy(problem))
    rough = take_rows(problem, first)
    source = first[cell_order(rough, greedy(rough))]
    del rough   # one re-packed copy at a time
    return take_rows(problem, source)
