"""Posterior walks: the sampler's list moves as a last step of the MAP search (docs/search.md section 1, step 6).

On data with thousands of candidate rules (UCI Spambase: 5,000) the polished ends of the annealing
chains are many local maxima a few nats apart, and the better ones are reached by few chains: the
annealing moves draw one rule of |B| from the prior, and a good rule is rarely proposed.  The
posterior sampler's moves with fresh risks (:mod:`frl_engine.refresh`) propose the rules of a focus
set and redraw the risks with the list, so a chain of the sampler at temperature 1 travels between
such lists: on Spambase, from the common local maximum (-1162.18) it visits lists 7 to 11 rules away
within a few thousand sweeps.  It does not maximise anything; it only shows where good lists are.

A walk stage therefore:

1. runs ``n_walkers`` chains of the sampler (all of its kernels; burn-in 0, every sweep kept) from
   lists the search has ended at so far (:func:`walk_starts`: the best list of each different top rule
   first, as lists that open with one rule tend to share a region of co-adapted rules lower down, then
   the best lists left), for ``n_sweeps`` sweeps each, with the
   rules of those lists, and of the best lists the earlier stages' walkers visited, as the focus set
   (a rule that only helps together with others, such as the four that the best known Spambase list has
   and the common one lacks, is seldom drawn from the prior twice in one stage; once a walker has used
   it in a good list, the next stage proposes it often);
2. scores every different list the walkers visited by the search's own objective, the exact
   maximum over ``K`` and the gammas (:func:`frl_engine.model.fit_list`);
3. picks the ``n_picks`` best of them that differ from each other in at least ``min_distance``
   rules and from every list the search had ended at in at least ``avoid_distance``
   (:func:`pick_diverse`: the best visited lists are mostly a move or two from a start, and
   polish back to it);
4. polishes each pick and re-grows its tails (:func:`frl_engine.basin.hop`, no kicks), as the
   annealing chains' lists are.

The search keeps a walk's end only when it beats every chain's, so the step never makes the
printed list worse.  Each walker has its own generator spawned from the stage's, the picks are
polished in their order, and the polish is deterministic, so the result does not depend on the
number of workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .basin import PolishCache, hop
from .model import PackedProblem, fit_list
from .row_order import MIN_ROWS

#: Walk stages after the annealing rounds, run only when those have not converged.  On Spambase one stage from
#: the common local maximum finds the best known list (-1159.50) about 4 times in 10 (docs/search.md section 4).
DEFAULT_WALKS = 4
#: Sweeps per walker (every sweep is kept).  On Spambase, 10,000 sweeps of 4 walkers take about 6 s on 2
#: cores; 1,000 never left the start's neighbourhood (docs/search.md section 4).
WALK_SWEEPS = 10_000
WALK_CHAINS = 4
#: Up to this many rows a walker runs ``WALK_SWEEPS``; above, fewer (:func:`walk_sweeps`), so that a stage costs
#: what it costs at this size.  The logistic export at 100,000 rows: 3,144 sweeps a walker, the fit 109 s -> 65 s
#: (its walks found nothing better at 10,000 sweeps either; docs/search.md section 1, step 6).
FULL_WALK_ROWS = 20_000
#: The fewest sweeps a walker runs, however many rows.
MIN_WALK_SWEEPS = 2_000
#: Visited lists polished per stage, how many rules each must differ by from every other pick, and from
#: every list the search had ended at before the stage (its neighbours polish back to it).
WALK_PICKS = 6
PICK_DISTANCE = 4
AVOID_DISTANCE = 6
#: The best visited lists whose rules join the next stages' focus set (:attr:`WalkStage.good_rules`).
LEARNED_LISTS = 200
#: Above ``FULL_PLAN_ROWS`` rows the walk stages and the picks each stage polishes shrink in proportion to
#: ``(FULL_PLAN_ROWS + SWEEP_OVERHEAD_ROWS) / (rows + SWEEP_OVERHEAD_ROWS)``, to at least ``MIN_WALK_STAGES`` and
#: ``MIN_WALK_PICKS`` (:func:`walk_plan`).  ``FULL_PLAN_ROWS`` is where the search starts to sort its rows
#: (:data:`frl_engine.row_order.MIN_ROWS`): every UCI set keeps its four stages of six picks.  Never fewer than two
#: stages of three picks (the plan at 20,000 rows): with one stage of two, five seeds of an export shaped like UCI's
#: diabetes export at 100,000 rows ended 3.6 nats apart, with two of three 0.75 (docs/search.md section 1, step 6).
FULL_PLAN_ROWS = MIN_ROWS
MIN_WALK_STAGES = 2
MIN_WALK_PICKS = 3


#: Sweeps per walker of a *short* stage: where annealing proposes every rule often (not sparse in the candidates,
#: :data:`frl_engine.anneal.MIN_TARGETED_PROPOSALS`) every search ends with stages of this many sweeps, repeated
#: while each finds a better list; the first checks the chains' best list, even when they agreed.  On the
#: 3,000-patient sample table (lam 4, support 10%, one threshold per number; 241 rules) the four chains of four
#: seeds in eight agreed on a list 2.5 nats below the best one (3 of 64 chains reach it); with 250 sweeps the
#: search still missed it on 2 of 16 seeds, with 500 on none (docs/search.md section 1, step 7).
CHECK_WALK_SWEEPS = 500


def walk_sweeps(n_rows: int) -> int:
    """Sweeps per walker on ``n_rows`` rows: ``WALK_SWEEPS`` up to ``FULL_WALK_ROWS`` rows, then the same work.

    A sweep costs about as much as ``n_rows + SWEEP_OVERHEAD_ROWS`` rows (its list moves recount the rows
    below their change, plus a fixed cost: :data:`frl_engine.sampler.SWEEP_OVERHEAD_ROWS`), so above
    ``FULL_WALK_ROWS`` the sweeps shrink in proportion, to at least ``MIN_WALK_SWEEPS``.  A function of
    the size alone, not of the clock: the walks, hence the search, depend only on the seed.
    """
    from .sampler import SWEEP_OVERHEAD_ROWS

    if n_rows <= FULL_WALK_ROWS:
        return WALK_SWEEPS
    scaled = WALK_SWEEPS * (FULL_WALK_ROWS + SWEEP_OVERHEAD_ROWS) // (int(n_rows) + SWEEP_OVERHEAD_ROWS)
    return max(MIN_WALK_SWEEPS, int(scaled))


def walk_plan(n_rows: int, stages: int, picks: int = WALK_PICKS) -> tuple[int, int]:
    """``(stages, picks)``: the walk stages a search on ``n_rows`` rows runs, and the lists each stage polishes.

    Up to ``FULL_PLAN_ROWS`` rows (every UCI set), ``stages`` and ``picks`` as asked (the default: 4 stages of
    6 picks).  Above, a stage costs more with every row (its walkers up to ``FULL_WALK_ROWS``, then the same:
    :func:`walk_sweeps`; its picks are polished on every row), and a clinician with a large export waits for
    all of it.  So both shrink by the factor ``s = (FULL_PLAN_ROWS + SWEEP_OVERHEAD_ROWS) / (n_rows +
    SWEEP_OVERHEAD_ROWS)``: ``max(MIN_WALK_STAGES, floor(stages * s))`` stages of ``max(MIN_WALK_PICKS,
    floor(picks * s))`` picks: 3 stages of 5 at 10,000 rows, from 20,000 rows 2 stages of 3 picks.  On
    the logistic export (20,000 and 100,000 rows), where the four stages of six picks had found nothing
    better, ``frl fit`` takes about half the time (docs/search.md section 1, step 6).  A function of the
    size, not of the clock: the search depends on the seed alone.  Never more than asked.
    """
    from .sampler import SWEEP_OVERHEAD_ROWS

    stages, picks = int(stages), int(picks)
    if n_rows <= FULL_PLAN_ROWS:
        return stages, picks
    share = (FULL_PLAN_ROWS + SWEEP_OVERHEAD_ROWS) / (int(n_rows) + SWEEP_OVERHEAD_ROWS)
    return (min(stages, max(MIN_WALK_STAGES, math.floor(stages * share))),
            min(picks, max(MIN_WALK_PICKS, math.floor(picks * share))))


@dataclass(frozen=True)
class WalkStage:
    """What one walk stage did.

    Attributes
    ----------
    starts : tuple of tuple of int
        The walkers' starting lists (:func:`walk_starts` of the lists found before the stage).
    n_visited : int
        Different lists the walkers visited.
    picks : tuple of tuple of int
        The visited lists polished (:func:`pick_diverse`).
    ends : tuple of tuple of int
        Each pick's list after polishing and tail re-growth, in the order of ``picks``.
    values : tuple of float
        The objective of each end.
    good_rules : tuple of int
        The rules of the ``LEARNED_LISTS`` best lists the walkers visited (by objective), which the next
        stages' walkers propose as often as the starts' rules.
    """

    starts: tuple
    n_visited: int
    picks: tuple
    ends: tuple
    values: tuple
    good_rules: tuple = ()


def pick_diverse(scored, n_picks: int = WALK_PICKS, min_distance: int = PICK_DISTANCE, avoid=(),
                 avoid_distance: int = 0) -> list[tuple]:
    """The best lists, each differing from every list picked before it in at least ``min_distance`` rules.

    Parameters
    ----------
    scored : iterable of (float, tuple of int)
        Lists with their objectives, in any order.
    n_picks : int
    min_distance : int
        Size of the symmetric difference of two lists' rule sets (their order is ignored).
    avoid : iterable of tuple of int
        Lists (e.g. the walks' starts) whose neighbourhoods are left out: a list is picked only if it
        differs from each of them in at least ``avoid_distance`` rules.
    avoid_distance : int

    Returns
    -------
    list of tuple of int
        At most ``n_picks`` lists, best first (ties: the list first in ``scored``).
    """
    ranked = sorted(enumerate(scored), key=lambda item: (-item[1][0], item[0]))
    picked: list[tuple] = []
    rule_sets: list[set] = []
    avoided = [set(order) for order in avoid]
    for _, (_, order) in ranked:
        if len(picked) == n_picks:
            break
        rules = set(order)
        if all(len(rules ^ other) >= min_distance for other in rule_sets) and \
                all(len(rules ^ other) >= avoid_distance for other in avoided):
            picked.append(tuple(order))
            rule_sets.append(rules)
    return picked


def walk_starts(ends, n_walkers: int = WALK_CHAINS) -> list[tuple]:
    """The walkers' starting lists: the best list of each different top rule first, then the best others.

    Parameters
    ----------
    ends : sequence of (tuple of int, float)
        Lists the search has ended at, with their objectives.
    n_walkers : int

    Returns
    -------
    list of tuple of int
        ``n_walkers`` lists (the best one repeated when there are fewer different lists), best first within
        each pass; ties keep the order of ``ends``.
    """
    best_first = sorted(ends, key=lambda end: -end[1])   # stable: ties keep the order of ends
    distinct = list(dict.fromkeys(tuple(int(i) for i in order) for order, _ in best_first))
    starts: list[tuple] = []
    tops: set = set()
    for order in distinct:   # lists that open with one rule share a region of co-adapted rules lower down
        if len(starts) < n_walkers and order and order[0] not in tops:
            starts.append(order)
            tops.add(order[0])
    for order in distinct:
        if len(starts) < n_walkers and order not in starts:
            starts.append(order)
    return starts + [starts[0]] * (n_walkers - len(starts))


def walk_stage(problem: PackedProblem, ends, rng: np.random.Generator, *, n_sweeps: int = WALK_SWEEPS,
               n_walkers: int = WALK_CHAINS, n_picks: int = WALK_PICKS, min_distance: int = PICK_DISTANCE,
               cache: PolishCache | None = None, map_jobs=map, avoid_distance: int = AVOID_DISTANCE,
               learned_rules=()) -> WalkStage:
    """One walk stage from the search's ends so far (module docstring).

    Parameters
    ----------
    problem : PackedProblem
    ends : sequence of (tuple of int, float)
        Lists the search has ended at, with their objectives.
    rng : numpy.random.Generator
        The stage's generator; walker ``i`` uses the ``i``-th generator spawned from it.
    n_sweeps, n_walkers, n_picks, min_distance, avoid_distance : int
        See :func:`pick_diverse`; ``avoid_distance`` keeps picks that far from every list in ``ends``.
    cache : PolishCache or None
        The search's polished lists (same results, less time).
    map_jobs : callable
        ``map`` or a thread pool's ``map``: runs the walkers and the polishes (the results do not depend on it).
    learned_rules : iterable of int
        Rules added to the focus set: the earlier stages' :attr:`WalkStage.good_rules`.
    """
    from .sampler import (DEFAULT_REFRESH, _check_chain, _run_one, _start_from_list, draw_slices, focus_rules,
                          focus_weights, load_kernel)

    cache = cache or PolishCache()
    starts = walk_starts(ends, n_walkers)
    focus = focus_weights(problem, sorted(set(focus_rules(problem, starts)) | {int(r) for r in learned_rules}),
                          0.8)
    states = [_start_from_list(problem, order) for order in starts]
    walker_rngs = rng.spawn(n_walkers)
    load_kernel(problem)
    outputs = list(map_jobs(lambda r, state: _run_one(r, problem, state, 0, n_sweeps, 1, False, DEFAULT_REFRESH,
                                                      focus),
                            walker_rngs, states))
    visited: dict[tuple, float] = {}
    for walker, output in enumerate(outputs):
        _check_chain(f"walk {walker}", output)
        flat = output.orders_flat.tolist()
        for draw in draw_slices(output.lengths):
            order = tuple(flat[draw])
            if order not in visited:
                visited[order] = fit_list(problem, order).log_posterior
    scored = [(value, order) for order, value in visited.items()]
    picks = pick_diverse(scored, n_picks, min_distance, [order for order, _ in ends], avoid_distance)
    if len(picks) < n_picks:   # few lists far from every end (short lists): fill up with the nearer ones
        picks += pick_diverse(scored, n_picks - len(picks), min_distance, picks, min_distance)
    results = list(map_jobs(lambda order: hop(problem, order, None, patience=0, cache=cache), picks))
    best_visited = sorted(scored, key=lambda item: -item[0])[:LEARNED_LISTS]   # stable: ties in visiting order
    good = sorted({rule for _, order in best_visited for rule in order})
    return WalkStage(starts=tuple(starts), n_visited=len(visited), picks=tuple(picks),
                     ends=tuple(r.order for r in results), values=tuple(r.value for r in results),
                     good_rules=tuple(good))
