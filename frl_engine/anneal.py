"""Simulated annealing for the MAP falling rule list (paper section 3.1).

The state is an ordered list of distinct candidate rules; its energy is minus
the objective of :mod:`frl_engine.model` (the exact maximum over ``K`` and the
``gamma``'s).  Each step proposes a neighbour with one of the four moves of
:mod:`frl_engine.moves` and accepts it with probability
``min(1, exp((objective' - objective) / T(t)))``.  The result is the best list
visited.  The paper's setting is 5000 steps at constant temperature 1; a
geometric cooling schedule is available.

Each chain starts from a draw of the prior over lists (``L ~ Poisson(lam)``
truncated to ``|B|``, rules from eq. pc) and has its own random generator,
spawned from the user's seed, so the result does not depend on how many
workers run the chains.  The whole chain runs in one compiled function that
releases the GIL; chains run on threads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numba
import numpy as np
import threading
from concurrent.futures import ThreadPoolExecutor

from .basin import DEFAULT_PATIENCE, WIDE_BEAM_WIDTH, PolishCache, hop, wide_tail_check
from .bits import adopt_counts, capture_counts_from, recount_from
from .errors import FRLError
# The objective's rule prior draws from every mined rule (model.prior_total_weight); the moves draw from the
# kept ones (moves.draw_unused_rule).  Annealing needs no Hastings ratio, so only the objective sees it.
from .model import ListFit, PackedProblem, fit_list, log_posterior_into, log_posterior_upper_bound
from .moves import FIRST_CHANGED, propose
from .polish import polish_list
from .row_order import grouped_for_search
from .seeds import generator
from .search_report import AGREEMENT_TOL, SearchReport, search_report  # noqa: F401  (re-exported)
from .walk import CHECK_WALK_SWEEPS, DEFAULT_WALKS, WALK_CHAINS, walk_plan, walk_stage, walk_sweeps

COOLING_SCHEDULES = ("constant", "geometric")


@numba.njit(nogil=True, cache=True)
def anneal_chain(rng, rules, y, all_rows, cum_weights, log_weights, consts, start_order, temperatures):
    """Run one annealing chain; return ``(best_order, best_length, best_value, n_accepted)``."""
    n_rules, n_words = rules.shape
    max_len = n_rules
    order = np.empty(max_len + 1, dtype=np.int64)
    proposal = np.empty(max_len + 1, dtype=np.int64)
    best = np.empty(max_len + 1, dtype=np.int64)
    in_list = np.zeros(n_rules, dtype=np.bool_)
    remaining = np.empty((max_len + 1, n_words), dtype=np.uint64)
    remaining_new = np.empty((max_len + 1, n_words), dtype=np.uint64)
    n_cap = np.zeros(max_len + 1)
    n_pos = np.zeros(max_len + 1)
    n_cap_new = np.zeros(max_len + 1)
    n_pos_new = np.zeros(max_len + 1)
    x = np.zeros(max_len + 1)
    info = np.zeros(6, dtype=np.int64)
    length = start_order.shape[0]
    # scratch for the inner solver, room for the start list (a prior draw at a large lam can be long);
    # it grows if a list gets longer
    capacity = min(max_len, max(63, length)) + 1
    work = np.empty((2 * capacity + 5, capacity))
    free = np.empty(capacity, dtype=np.int64)

    for pos in range(length):
        order[pos] = start_order[pos]
        in_list[start_order[pos]] = True
    remaining[0] = all_rows
    remaining_new[0] = all_rows
    capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
    value = log_posterior_into(order, length, n_cap, n_pos, cum_weights, log_weights, consts, x, work, free)
    best_value = value
    best_length = length
    for pos in range(length):
        best[pos] = order[pos]
    n_accepted = 0

    for step in range(temperatures.shape[0]):
        new_length = propose(rng, order, length, cum_weights, in_list, proposal, info)
        if new_length < 0:
            break
        start = info[FIRST_CHANGED]
        if new_length + 1 > capacity:
            capacity = min(max_len + 1, 2 * capacity)
            work = np.empty((2 * capacity + 5, capacity))
            free = np.empty(capacity, dtype=np.int64)
        recount_from(rules, y, proposal, new_length, start, remaining, n_cap, n_pos, remaining_new, n_cap_new,
                     n_pos_new)
        # Accept iff new_value >= value + T log u.  When even an upper bound on new_value
        # falls short, the proposal is rejected without solving for K and the gammas.
        threshold = value + temperatures[step] * np.log(rng.random())
        if log_posterior_upper_bound(proposal, new_length, n_cap_new, n_pos_new, cum_weights, log_weights,
                                     consts) < threshold:
            continue
        new_value = log_posterior_into(proposal, new_length, n_cap_new, n_pos_new,
                                       cum_weights, log_weights, consts, x, work, free)
        if new_value >= threshold:
            n_accepted += 1
            for pos in range(length):
                in_list[order[pos]] = False
            for pos in range(new_length):
                order[pos] = proposal[pos]
                in_list[proposal[pos]] = True
            adopt_counts(start, new_length, remaining, n_cap, n_pos, remaining_new, n_cap_new, n_pos_new)
            length = new_length
            value = new_value
            if value > best_value:
                best_value = value
                best_length = length
                for pos in range(length):
                    best[pos] = order[pos]
    return best[:best_length].copy(), best_length, best_value, n_accepted


def temperature_schedule(n_steps: int, temperature: float = 1.0, cooling: str = "constant") -> np.ndarray:
    """Temperatures ``T(t)`` for ``t = 0..n_steps-1``.

    ``"constant"``: ``T(t) = temperature`` (the paper's experiments).
    ``"geometric"``: from ``temperature`` down to ``temperature / 1000`` geometrically.
    """
    if cooling not in COOLING_SCHEDULES:
        raise FRLError(f"Unknown cooling schedule {cooling!r}: choose one of {', '.join(COOLING_SCHEDULES)}")
    if not np.isfinite(temperature) or temperature <= 0:
        raise FRLError(f"temperature must be a positive number, got {temperature!r}")
    if cooling == "constant":
        return np.full(n_steps, float(temperature))
    return temperature * np.power(1e-3, np.arange(n_steps) / max(n_steps - 1, 1))


def draw_prior_list(rng: np.random.Generator, problem: PackedProblem) -> np.ndarray:
    """A list from the prior: ``L ~ Poisson(lam)`` truncated to ``|B|``, rules by eq. pc."""
    n_rules = problem.n_rules
    length = int(rng.poisson(problem.hyper.lam))
    while length > n_rules:
        length = int(rng.poisson(problem.hyper.lam))
    weights = np.exp(problem.log_weights)
    return rng.choice(n_rules, size=length, replace=False, p=weights / weights.sum()).astype(np.int64)


@dataclass(frozen=True)
class AnnealResult:
    """The outcome of a (multi-chain) annealing run.

    Attributes
    ----------
    best : ListFit
        The best list found over all chains, with its exact MAP parameters.
    chain_values : tuple of float
        Each chain's final objective (its best visited list, polished), in chain order.
    chain_orders : tuple of tuple of int
        Each chain's final list.
    acceptance_rates : tuple of float
        Fraction of proposals each chain accepted.
    report : SearchReport or None
        Whether the chains agreed on the best list.
    chain_starts : tuple of str
        How each chain started: ``"greedy"`` or ``"prior"``.
    chain_polished_values : tuple of float
        Each chain's objective after the polish and before basin hopping (:mod:`frl_engine.basin`);
        empty when the chains were not polished.
    n_polish_passes : int
        Passes over the whole neighbourhood that the polishes of the basin hopping took (its cost in
        work, not in seconds; 0 without basin hopping).  Two threads that polish the same list at the same
        moment both count it, so it can differ by a few polishes from run to run; the lists cannot.
    round_size : int
        Chains per round (``n_chains``): ``chain_orders[:round_size]`` are the first round's lists
        (0: not recorded, every chain).
    walks : tuple of WalkStage
        The posterior walks run after the rounds had not converged (:mod:`frl_engine.walk`); empty
        when none ran.  ``best`` is a walk's end only when it beats every chain's list.
    wide_tail_value : float or None
        Where the walks ran and the search had still not converged, the objective of the best list after the
        wider beam over its tail (:func:`frl_engine.basin.wide_tail_check`); ``best`` is that list when it is
        higher, and such a list counts as one no chain reached.  None when the check did not run.
    """

    best: ListFit
    chain_values: tuple[float, ...]
    chain_orders: tuple[tuple[int, ...], ...] = field(repr=False)
    acceptance_rates: tuple[float, ...]
    report: SearchReport | None = None
    chain_starts: tuple[str, ...] = field(default=(), repr=False)
    chain_polished_values: tuple[float, ...] = field(default=(), repr=False)
    n_polish_passes: int = 0
    round_size: int = 0
    walks: tuple = field(default=(), repr=False)
    wide_tail_value: float | None = None


def greedy_list(problem: PackedProblem) -> np.ndarray:
    """The data-driven start: steepest ascent from the empty list (best single rule, best addition, ...)."""
    order, _, _ = polish_list(problem.rules, problem.rules_by_word, problem.y, problem.all_rows, problem.cum_weights,
                              problem.log_weights, problem.consts, np.zeros(0, dtype=np.int64), MAX_POLISH_MOVES)
    return order


def polish(problem: PackedProblem, order) -> tuple[tuple[int, ...], float]:
    """Steepest ascent over the full neighbourhood from ``order`` (:mod:`frl_engine.polish`)."""
    result, value, _ = polish_list(problem.rules, problem.rules_by_word, problem.y, problem.all_rows,
                                   problem.cum_weights, problem.log_weights, problem.consts,
                                   np.asarray(order, dtype=np.int64), MAX_POLISH_MOVES)
    return tuple(int(i) for i in result), float(value)


# Improving moves a polish may take (each strictly improves the objective, so it always ends well before).
MAX_POLISH_MOVES = 10_000
# Rounds of ``n_chains`` the default budget allows (``max_chains``) ...
DEFAULT_ROUNDS = 4
# ... and up to this many where chains are cheap (:func:`default_chain_budget`).
MAX_ROUNDS = 16
# Work the default budget allows, in chains x rows x candidate rules (a polish pass reads each rule's rows;
# an annealing chain's steps read rows too): 64 chains of 2,000,000 cells, about 3,000 rows x 650 rules,
# where 16 chains take about 0.2 s.  A search this cheap can afford 64 chains where its local maxima are many
# and close (smooth risks: ages and heart rates cut at neighbouring thresholds), in under a second.
SEARCH_CELL_BUDGET = 128_000_000
# Rounds always run before the posterior walks may take over the rest of the budget (a second round is cheap
# and converges where the first was unlucky).
ROUNDS_BEFORE_WALKS = 2
# Below this many proposals, per chain, of one given rule at one given place (:func:`targeted_proposals`), more
# rounds of annealing rarely add the rule a better list needs: the search goes on with posterior walks.  UCI
# Spambase: 0.014 (5,000 rules, L = 17); breast cancer 0.17, the planted problem 0.32, car 0.54.
MIN_TARGETED_PROPOSALS = 0.05
# On such data agreeing chains are weak evidence (on Spambase, 2 of 16 seeds' chains agreed on the common local
# maximum, 2.7 nats below the best known list): a converged search is checked by this many walk stages, and
# the rest of ``walks`` follow only when the check finds a better list.
CHECK_WALKS = 1


def default_chain_budget(n_rows: int, n_rules: int, n_chains: int) -> int:
    """The default ``max_chains`` of :func:`anneal`: ``DEFAULT_ROUNDS`` rounds of ``n_chains``, or up to
    ``MAX_ROUNDS`` rounds while the chains' work stays within ``SEARCH_CELL_BUDGET`` (at least 4 chains).

    Only a search whose chains have not converged uses more than its first round, so the budget costs time
    only where the chains disagree.  It depends on the problem's size alone, never on the clock, so a seed
    gives one result on any machine.
    """
    n_chains = max(int(n_chains), 1)
    affordable = SEARCH_CELL_BUDGET // max(int(n_rows) * int(n_rules), 1)
    rounds = min(max(affordable // n_chains, DEFAULT_ROUNDS), MAX_ROUNDS)
    return max(rounds * n_chains, 4)


def targeted_proposals(n_steps: int, n_rules: int, length: int) -> float:
    """How often one annealing chain proposes one given rule at one given place of a list of ``length`` rules.

    A step proposes one of four moves; a REPLACE or ADD draws its rule among the ``|B|`` candidates (by
    their prior weights: uniformly at the defaults) and its place among the ``L + 1``, so a given rule
    at a given place is proposed about ``n_steps / (4 |B| (L + 1))`` times a chain.
    """
    return n_steps / (4.0 * max(n_rules, 1) * (length + 1))


def _run_chain(rng: np.random.Generator, problem: PackedProblem, temperatures: np.ndarray, start, do_polish: bool,
               patience: int | None, cache: PolishCache | None = None):
    """One chain: anneal, then polish (and basin-hop when ``patience`` is not None).

    Returns ``(order, value, acceptance rate, polished value or None)``.
    """
    if start is None:
        start = draw_prior_list(rng, problem)
    order, _, value, accepted = anneal_chain(rng, problem.rules, problem.y, problem.all_rows, problem.cum_weights,
                                             problem.log_weights, problem.consts, np.asarray(start, dtype=np.int64),
                                             temperatures)
    order = tuple(int(i) for i in order)
    value = float(value)
    polished = None
    if do_polish and patience is not None:
        hopped = hop(problem, order, rng, patience, cache)
        order, value, polished = hopped.order, hopped.value, hopped.start_value
    elif do_polish:
        order, value = polish(problem, order)
        polished = value
    return order, value, accepted / max(len(temperatures), 1), polished


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _worker_count(tasks: int, n_jobs: int | None) -> int:
    """Threads for ``tasks`` parallel chains: one per chain up to the CPUs, or ``n_jobs`` (negative: CPUs + 1 + n_jobs)."""
    cpus = os.cpu_count() or 1
    return min(tasks, cpus) if not n_jobs else (n_jobs if n_jobs > 0 else max(1, cpus + 1 + n_jobs))


def _thread_pool(workers: int) -> ThreadPoolExecutor:
    """A kept pool of ``workers`` threads (starting threads for every fit cost more than a short search)."""
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frl-chain")
        return _POOLS[workers]


def anneal(problem: PackedProblem, *, n_steps: int = 5000, n_chains: int = 1, temperature: float = 1.0,
           cooling: str = "constant", random_state=None, n_jobs: int | None = None, polish: bool = True,
           greedy_start: bool | None = None, max_chains: int | None = None,
           hop_patience: int | None = DEFAULT_PATIENCE, walks: int | None = None, progress=None) -> AnnealResult:
    """Search for the MAP falling rule list; restart until two independent chains agree.

    Each round runs ``n_chains`` annealing chains; each chain's best visited list is
    then polished by steepest ascent over its whole neighbourhood
    (:mod:`frl_engine.polish`) and improved by basin hopping (:mod:`frl_engine.basin`:
    tail re-growth and random kicks, each kept only if it improves).  The first chain starts from the greedy list
    (:func:`greedy_list`), every other from its own draw of the prior.  Rounds are
    repeated until the search has converged (the best objective reached by at least two
    chains, and at most a tenth of further chains expected to end at a list not found
    yet: :func:`frl_engine.search_report.unseen_share`) or ``max_chains`` chains have
    run; :attr:`AnnealResult.report` says which.

    Parameters
    ----------
    problem : PackedProblem
    n_steps : int
        Annealing steps per chain (paper: 5000).
    n_chains : int
        Chains per round; the best list over all chains wins (ties: lowest chain).
    temperature, cooling
        See :func:`temperature_schedule`.
    random_state : int, numpy.random.Generator or None
        The only source of randomness; chain ``i`` uses the ``i``-th generator spawned from it
        (rounds spawn in turn), so the result does not depend on ``n_jobs``.
    n_jobs : int or None
        Threads for the chains (the result does not depend on it).
    polish : bool, default True
        Polish each chain's list by steepest ascent (False: the paper's plain annealing).
    greedy_start : bool or None
        Start the first chain from the greedy list (False: every chain from the prior).
        Default: as ``polish``.
    max_chains : int or None
        Budget of chains, restarts included (default :func:`default_chain_budget`: ``4 * n_chains``, at
        least 4, up to ``16 * n_chains`` on small problems, when polishing: data whose chains agree stop
        after the first round, and data with many local maxima get more rounds, or posterior walks after the
        second).  Where the chains proposed every rule often and a short walk then found a list better than
        every chain's, the rest of the budget runs too, to see whether two independent chains reach it; where
        the rounds gave way to walks that found nothing better than the chains' best list, the rest of the
        budget runs as chains while the search has not converged.
        ``n_chains`` when ``polish`` is False: the paper's plain annealing runs exactly the chains asked for.
    hop_patience : int or None, default 0
        Basin hopping after the polish: random kicks in a row without improvement before a
        chain stops (0: tail re-growth only; None: no basin hopping, polish only).  Ignored
        when ``polish`` is False.
    walks : int or None
        Posterior walk stages (:mod:`frl_engine.walk`) run when the rounds end without converging
        (default ``DEFAULT_WALKS`` when basin hopping, else 0).  The rounds end early, after
        ``ROUNDS_BEFORE_WALKS``, when a chain would rarely propose a given rule at a given place
        (:func:`targeted_proposals` below ``MIN_TARGETED_PROPOSALS``: thousands of candidates and long
        lists).  On such data a converged search is checked by ``CHECK_WALKS`` stages, and the rest follow
        only if the check finds a better list (the search has then not converged).  On the other data (annealing
        proposes every rule often) every search ends with short stages of
        :data:`frl_engine.walk.CHECK_WALK_SWEEPS` sweeps, repeated while each finds a better list: chains that
        agree can agree on a list below the best (docs/search.md section 1, step 7).  Each stage uses the next
        generator spawned from ``random_state`` after the chains', and proposes often the rules of the best
        lists the earlier stages visited (:attr:`frl_engine.walk.WalkStage.good_rules`).
        A walk's end replaces the best chain's list only when it is better.  Above
        :data:`frl_engine.walk.FULL_PLAN_ROWS` rows there are fewer stages, each polishing fewer picks
        (:func:`frl_engine.walk.walk_plan`: from 20,000 rows two stages of three picks), and
        above :data:`frl_engine.walk.FULL_WALK_ROWS` rows the walkers run fewer sweeps for the same work
        (:func:`frl_engine.walk.walk_sweeps`).  From :data:`frl_engine.row_order.MIN_ROWS` rows the polished
        search runs on the rows sorted by its greedy list's groups (:mod:`frl_engine.row_order`): the same
        counts, hence the same result, counted faster.
    progress : callable or None
        Told one line of text as each round of chains and each walk stage starts (``frl fit`` prints
        it when a fit is slow).  It never changes the result.
    """
    def tell(text):
        if progress is not None:
            progress(text)

    if problem.n_rules == 0:
        raise FRLError("There are no candidate rules to build a list from")
    cache = PolishCache()   # polished lists shared by the chains: same results whatever the threads, less time
    original = problem
    if polish:   # the same counts for every list, counted faster (frl_engine.row_order)
        problem = grouped_for_search(problem, lambda rough: cache.polish(rough, ())[0])
    temperatures = temperature_schedule(n_steps, temperature, cooling)
    rng = generator(random_state)
    if max_chains is None:
        max_chains = default_chain_budget(problem.n_rows, problem.n_rules, n_chains) if polish else n_chains
    max_chains = max(int(max_chains), n_chains)
    if greedy_start is None:
        greedy_start = polish
    hopped = polish and hop_patience is not None
    if walks is None:
        walks = DEFAULT_WALKS if hopped else 0
    greedy = cache.polish(problem, ())[0] if greedy_start else None   # greedy_list(problem), through the cache
    runs, starts, stages = [], [], []
    converged = sparse = False

    def run_rounds(why: str, walks_may_take_over: bool = True):
        """Rounds of ``n_chains`` chains until the search converges, the budget is spent, or (sparse data,
        before the walks) the walks should take over."""
        nonlocal converged, sparse
        while len(runs) < max_chains:
            size = min(n_chains, max_chains - len(runs))
            tell(f"searching {problem.n_rules:,} candidate rules: chains {len(runs) + 1} to {len(runs) + size}"
                 + (f" of at most {max_chains} ({why})" if runs else ""))
            chain_rngs = rng.spawn(size)
            chain_starts = [greedy if (greedy_start and not runs and k == 0) else None for k in range(size)]
            if size == 1 or n_jobs == 1:
                batch = [_run_chain(r, problem, temperatures, s, polish, hop_patience, cache)
                         for r, s in zip(chain_rngs, chain_starts)]
            else:
                # The kernels release the GIL: plain threads, without joblib's pool set-up and polling
                # (which cost more than the 5,000 steps themselves on Spambase-size data).
                batch = list(_thread_pool(_worker_count(size, n_jobs)).map(
                    lambda r, s: _run_chain(r, problem, temperatures, s, polish, hop_patience, cache),
                    chain_rngs, chain_starts))
            runs.extend(batch)
            starts.extend("greedy" if s is not None else "prior" for s in chain_starts)
            walk_values = [v for stage in stages for v in stage.values]
            converged = search_report([run[1] for run in runs], walk_values=walk_values,
                                      n_walks=len(stages)).converged
            leader = max(runs, key=lambda run: run[1])[0]
            sparse = targeted_proposals(n_steps, problem.n_rules, len(leader)) < MIN_TARGETED_PROPOSALS
            if converged:
                break
            if polish and walks and walks_may_take_over and len(runs) >= ROUNDS_BEFORE_WALKS * n_chains and sparse:
                break   # more annealing would rarely propose what a better list needs: the walks take over

    run_rounds("the chains so far ended at different lists")
    values = [run[1] for run in runs]
    winner = int(np.argmax(values))
    best_order, best_value = runs[winner][0], values[winner]
    n_walks, n_picks = walk_plan(problem.n_rows, walks) if walks else (0, 0)
    # Where annealing proposes every rule often (not sparse), the walks are short stages, repeated while each
    # finds a better list: they also check chains that agreed (CHECK_WALK_SWEEPS; docs/search.md section 1,
    # step 7).
    if polish and n_walks:
        short_checks = not sparse
        workers = _worker_count(WALK_CHAINS, n_jobs)
        map_jobs = map if workers == 1 else _thread_pool(workers).map
        ends = [(run[0], run[1]) for run in runs]
        sweeps = min(CHECK_WALK_SWEEPS, walk_sweeps(problem.n_rows)) if short_checks else walk_sweeps(problem.n_rows)
        improved = True
        for _ in range(n_walks):
            if converged and len(stages) >= CHECK_WALKS and best_value <= values[winner]:
                break   # the check found nothing better than the chains' agreed list
            if short_checks and not improved:
                break   # the last short check found nothing better than the stages before it
            tell(f"searching: walk {len(stages) + 1} of at most {n_walks} of the posterior from the best lists "
                 + ("(a short check of the chains' best list)" if short_checks
                    else f"(annealing rarely proposes each of {problem.n_rules:,} candidate rules)"))
            learned = sorted({rule for earlier in stages for rule in earlier.good_rules})
            stage = walk_stage(problem, ends, rng.spawn(1)[0], n_sweeps=sweeps, cache=cache,
                               map_jobs=map_jobs, learned_rules=learned, n_picks=n_picks)
            stages.append(stage)
            ends.extend(zip(stage.ends, stage.values))
            improved = False
            for order, value in zip(stage.ends, stage.values):
                if value > best_value + AGREEMENT_TOL:
                    best_order, best_value, improved = order, value, True
    if polish and stages and sparse and not converged and best_value <= values[winner] + AGREEMENT_TOL \
            and len(runs) < max_chains:
        # The walks took over from the chains (sparse data) and found nothing better than the chains' best list,
        # but too few chains have ended for the unseen share to say the search converged: the rest of the
        # budget runs as chains, which can only confirm that list or find a better one (docs/search.md
        # section 1, step 6; the logistic export: 8 chains at 3 or 4 lists, then 12 or 16 at 3 or 4, converged).
        run_rounds("confirming the best list with more chains", walks_may_take_over=False)
        values = [run[1] for run in runs]
        winner = int(np.argmax(values))
        if values[winner] > best_value + AGREEMENT_TOL:
            best_order, best_value = runs[winner][0], values[winner]
    if polish and stages and not sparse and best_value > values[winner] + AGREEMENT_TOL and len(runs) < max_chains:
        # A short check found a list better than every chain's.  Where annealing proposes every rule often,
        # independent chains can still reach it: run the rest of the budget to see whether two do (the
        # search has converged only then), rather than report a list no chain confirmed.
        run_rounds("checking the better list a walk found")
        values = [run[1] for run in runs]
        winner = int(np.argmax(values))
        if values[winner] > best_value + AGREEMENT_TOL:
            best_order, best_value = runs[winner][0], values[winner]
    walk_values, wide_value = [v for stage in stages for v in stage.values], None
    if polish and stages and not search_report(values, walk_values=walk_values, n_walks=len(stages)).converged:
        # Not converged: look once more below the best list's rules with a much wider beam (docs/search.md
        # section 1, step 11).  A list it finds counts as one the walks found: no chain confirmed it.
        tell("searching: a wider beam over the bottom of the best list")
        workers = _worker_count(WIDE_BEAM_WIDTH, n_jobs)   # its tails counted side by side
        wide_order, wide_value, n_wide = wide_tail_check(problem, best_order, best_value, cache,
                                                         map_jobs=None if workers == 1 else _thread_pool(workers).map)
        if n_wide:
            best_order, best_value = wide_order, wide_value
            walk_values.append(wide_value)
    best = fit_list(original, best_order)
    polished = tuple(run[3] for run in runs) if polish else ()
    walk_values = tuple(walk_values) if stages else None
    return AnnealResult(best=best, chain_values=tuple(values), chain_orders=tuple(run[0] for run in runs),
                        acceptance_rates=tuple(run[2] for run in runs),
                        report=search_report(values, max_chains, polished if hopped else None, walk_values,
                                             len(stages)),
                        chain_starts=tuple(starts), chain_polished_values=polished,
                        n_polish_passes=cache.n_passes, round_size=int(n_chains), walks=tuple(stages),
                        wide_tail_value=wide_value)
