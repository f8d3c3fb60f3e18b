"""Basin hopping from a local maximum: the MAP search's step after the polish.

A polished list (:mod:`frl_engine.polish`) is a local maximum: no single move
improves it.  On data with thousands of candidate rules (UCI Spambase: 5,000
rules, lists of 15 to 17 rules) there are many such lists within 1 to 5 nats of
each other.  They share their top rules and differ in the tail, and leaving one
needs several moves at once: no single move out of it improves the objective.

:func:`hop` therefore iterates a local search over larger moves (iterated
local search, Lourenco, Martin & Stuetzle 2003), always accepting only an
improvement of the exact objective, so the result is never worse than its start:

1. **Tail re-growth** (:func:`regrow_tails`): cut the list after position ``k``
   and polish the prefix again (which re-grows a tail by steepest ascent), for
   every ``k`` from ``L - 1`` down to ``L // 2``.  The first cut that ends
   better is taken and the sweep starts again from the new list, until no cut
   helps.  On small problems (``DROP_CELLS_MAX``) the sweep also drops each
   other rule in turn and polishes again: a rule in the middle that a better one
   should replace lower down.  When neither improves, a beam search grows new
   tails below the last ``TAIL_CUTS`` cuts (:mod:`frl_engine.tails`): a better
   tail of several rules whose shorter parts are all worse.  This is deterministic.
2. **Random kicks** (optional; ``patience = 0`` in the default search, where
   they cost more than they found on Spambase): remove 2 or 3 rules chosen at
   random (or a block of 2 to 4 consecutive rules), polish, re-grow tails; keep
   the result if it is better.  It stops after ``patience`` kicks in a row that
   did not improve.  The kicks use only the chain's own generator, so the result
   does not depend on threads.

Every polish goes through a :class:`PolishCache` shared by the chains of one
search: the polish is a deterministic function of its start, so the cache
changes the time, never the result.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .model import PackedProblem
from .polish import IMPROVEMENT_TOL, polish_list
from .tails import BEAM_MARGIN, BEAM_WIDTH, beam_tail

# Improving moves one polish may take (each strictly improves the objective, so it always ends well before).
MAX_POLISH_MOVES = 10_000
# Kicks in a row that did not improve the list before a chain stops hopping (the default search's setting).
DEFAULT_PATIENCE = 0
# :func:`regrow_tails` also drops each rule in turn on problems of at most this many rows x candidate rules
# (about 3,000 rows x 2,600 rules).  Above it the drops cost more than they found: on UCI Spambase (4,601 x
# 5,000) they took the search from 20 to 22-25 s and changed no chain's end but one, by 0.07 nats, where the
# posterior walks do that work (docs/search.md section 1, step 8).
DROP_CELLS_MAX = 8_000_000
# :func:`regrow_tails` grows new tails by beam search (:mod:`frl_engine.tails`) below this many cuts: the whole
# list and the list without its last 1, 2 and 3 rules (docs/search.md section 1, step 9).
TAIL_CUTS = 4
# The once-a-search wider beam over the best list's tail (:func:`wide_tail_check`): tails kept at each depth,
# and how far below the best they may fall.
WIDE_BEAM_WIDTH = 128
WIDE_BEAM_MARGIN = 25.0


@dataclass(frozen=True)
class HopResult:
    """The outcome of :func:`hop`.

    Attributes
    ----------
    order : tuple of int
        The best list found (a local maximum of the polish, and of every tail cut).
    value : float
        Its exact objective; at least the start's.
    start_value : float
        The objective of the polished start.
    n_polishes : int
        Polishes run (tail cuts and kicks).
    n_improvements : int
        Tail cuts and kicks that improved the list.
    """

    order: tuple[int, ...]
    value: float
    start_value: float
    n_polishes: int
    n_improvements: int


class PolishCache:
    """Polished lists by start list, shared by the chains of one search.

    The polish is a deterministic function of its start, so a cached result is the one
    any thread would compute: sharing it changes the time, never the result.  Chains
    that reach the same list repeat the same tail cuts; they are polished once.
    """

    def __init__(self) -> None:
        self._results: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}
        self._tails: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}
        self._lock = threading.Lock()
        self.n_polishes = 0
        self.n_passes = 0
        self.n_hits = 0

    def polish(self, problem: PackedProblem, order) -> tuple[np.ndarray, float]:
        key = tuple(int(i) for i in order)
        with self._lock:
            found = self._results.get(key)
            if found is not None:
                self.n_hits += 1
                return found
        result, value, moves = polish_list(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                           problem.cum_weights, problem.log_weights, problem.consts,
                                           np.asarray(key, dtype=np.int64), MAX_POLISH_MOVES)
        found = (result, float(value))
        with self._lock:
            self._results[key] = found
            self.n_polishes += 1
            self.n_passes += int(moves) + 1
        return found

    def beam_tail(self, problem: PackedProblem, prefix, width: int = BEAM_WIDTH,
                  margin: float = BEAM_MARGIN, map_jobs=None) -> tuple[np.ndarray, float]:
        """:func:`frl_engine.tails.beam_tail` of ``prefix``, computed once per search (for each width and margin;
        ``map_jobs`` changes only the time)."""
        prefix = tuple(int(i) for i in prefix)
        key = (prefix, width, margin)
        with self._lock:
            found = self._tails.get(key)
            if found is not None:
                return found
        found = beam_tail(problem, np.asarray(prefix, dtype=np.int64), width=width, margin=margin, map_jobs=map_jobs)
        with self._lock:
            self._tails[key] = found
        return found


def polish_order(problem: PackedProblem, order, cache: PolishCache | None = None) -> tuple[np.ndarray, float]:
    """Steepest ascent from ``order`` to a local maximum (:func:`frl_engine.polish.polish_list`)."""
    return (cache or PolishCache()).polish(problem, order)


def regrow_tails(problem: PackedProblem, order, value: float, cache: PolishCache | None = None,
                 beam: bool = True, beam_width: int = BEAM_WIDTH,
                 beam_margin: float = BEAM_MARGIN, map_jobs=None) -> tuple[np.ndarray, float, int, int]:
    """Cut the tail at each position from the bottom up and polish again, then drop each other rule in turn
    and polish again, then grow new tails by beam search below the last ``TAIL_CUTS`` cuts and polish them;
    repeat while any of them improves.

    A drop reaches lists a cut cannot: a rule in the middle of the list that a better rule should replace
    lower down (``A, B, C, D`` -> ``A, B, D, C'``: no single move improves ``A, B, C, D``, while ``A, B, D``
    polishes to the better list by adding ``C'`` at the end).

    The drops run on problems of at most ``DROP_CELLS_MAX`` rows x candidate rules.  The beam
    (:func:`frl_engine.tails.beam_tail`, ``beam=False`` for none) reaches a tail of several rules whose every
    shorter part is worse than the list's own tail, which neither a cut nor a drop does.

    ``map_jobs`` (a thread pool's ``map``, or None): the beams count their tails' rows through it, side by side
    (:func:`frl_engine.tails.beam_tail`); the result does not depend on it.

    Returns ``(order, value, n_polishes, n_improvements)``; ``value`` is never below the start's.
    """
    cache = cache or PolishCache()
    order = np.asarray(order, dtype=np.int64)
    n_polishes = n_improvements = 0
    improved = True
    while improved:
        improved = False
        length = len(order)
        starts = [order[:cut] for cut in range(length - 1, length // 2 - 1, -1)]
        if problem.n_rows * problem.n_rules <= DROP_CELLS_MAX:
            starts += [np.delete(order, at) for at in range(length - 2, -1, -1)]
        for start in starts:
            candidate, candidate_value = polish_order(problem, start, cache)
            n_polishes += 1
            if candidate_value > value + IMPROVEMENT_TOL:
                order, value = candidate, candidate_value
                n_improvements += 1
                improved = True
                break
        if improved or not beam:
            continue
        for cut in range(length, max(length - TAIL_CUTS, -1), -1):
            start, start_value = cache.beam_tail(problem, order[:cut], beam_width, beam_margin, map_jobs)
            if start_value <= value + IMPROVEMENT_TOL:
                continue
            order, value = polish_order(problem, start, cache)      # steepest ascent: never below its start
            n_polishes += 1
            n_improvements += 1
            improved = True
            break
    return order, value, n_polishes, n_improvements


def wide_tail_check(problem: PackedProblem, order, value: float, cache: PolishCache | None = None,
                    width: int = WIDE_BEAM_WIDTH, margin: float = WIDE_BEAM_MARGIN,
                    map_jobs=None) -> tuple[np.ndarray, float, int]:
    """:func:`regrow_tails` with a beam ``width`` wide that keeps tails ``margin`` nats below the best: the last
    ``TAIL_CUTS`` cuts of the best list grown once more, what beats the list polished, repeated while anything
    improves it.

    The search's own beam (:data:`frl_engine.tails.BEAM_WIDTH` tails, 10 nats) misses a better tail whose first
    rule alone is far below the best single rule: on an export shaped like UCI's diabetes export at 100,000 rows
    the better 3-rule tail (0.75 nats above the chains' list) opens with the 70th best rule to append, 22 nats
    below the best (docs/search.md section 1, step 11).  Run once per search, on its best list, when the search
    has not converged.

    ``map_jobs``: a thread pool's ``map``, through which the beams count their tails side by side; the same
    result.

    Returns ``(order, value, n_improvements)``; ``value`` is never below the start's.
    """
    order, value, _, n_improvements = regrow_tails(problem, order, value, cache, beam_width=width, beam_margin=margin,
                                                   map_jobs=map_jobs)
    return order, value, n_improvements


def kick(rng: np.random.Generator, order) -> np.ndarray:
    """A random larger move: remove 2 or 3 rules at random, or a block of 2 to 4 consecutive rules."""
    order = np.asarray(order, dtype=np.int64)
    length = len(order)
    if length <= 2:
        return order[:0].copy()
    if rng.random() < 0.5:
        drop = rng.choice(length, size=int(rng.integers(2, 4)), replace=False)
        return np.delete(order, drop)
    size = int(rng.integers(2, 5))
    at = int(rng.integers(0, max(1, length - size + 1)))
    return np.concatenate([order[:at], order[at + size:]])


def hop(problem: PackedProblem, order, rng: np.random.Generator, patience: int = DEFAULT_PATIENCE,
        cache: PolishCache | None = None) -> HopResult:
    """Basin hopping from ``order``: polish, re-grow tails, then random kicks until ``patience`` fail in a row.

    Parameters
    ----------
    problem : PackedProblem
    order : sequence of int
        The start (any list; it is polished first).
    rng : numpy.random.Generator
        The chain's own generator (the kicks' only randomness).
    patience : int
        Kicks in a row without improvement before stopping (0: tail re-growth only).
    cache : PolishCache or None
        Polished lists shared with the other chains of the search (same results, less time).
    """
    cache = cache or PolishCache()
    current, value = polish_order(problem, order, cache)
    start_value = value
    current, value, n_polishes, n_improvements = regrow_tails(problem, current, value, cache)
    n_polishes += 1
    failures = 0
    while failures < patience:
        candidate, candidate_value = polish_order(problem, kick(rng, current), cache)
        candidate, candidate_value, polishes, _ = regrow_tails(problem, candidate, candidate_value, cache)
        n_polishes += 1 + polishes
        if candidate_value > value + IMPROVEMENT_TOL:
            current, value = candidate, candidate_value
            n_improvements += 1
            failures = 0
        else:
            failures += 1
    return HopResult(order=tuple(int(i) for i in current), value=value, start_value=start_value,
                     n_polishes=n_polishes, n_improvements=n_improvements)
