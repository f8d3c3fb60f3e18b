"""One wording for the MAP list: each rule the simplest that catches the same patients at its place.

Mined rules write one group of patients many ways.  Below ``Age >= 37 AND Heart rate >= 120``,
the rules ``Age >= 37`` and ``Age >= 37 AND Heart rate < 120`` catch exactly the same training
rows: the faster hearts over 37 were caught above.  Lists that differ only so put every training
row in the same group (:func:`frl_engine.bits.row_groups`), so they have the same counts ``n_l``,
``s_l``, the same likelihood for any risks (paper eq. 2 counts only those) and, under the paper's
prior (each rule drawn uniformly from the candidates, section 2), the same posterior.  The MAP
is then a set of lists, and which one a search prints depends on its seed: on a 20,000-row table
whose risk is smooth, five seeds that agree to 1e-9 nats printed three different cards
(docs/search.md section 1, step 10).

:func:`simplest_wording` picks one member of that set, whatever the seed: at each place, among
the candidate rules not in the list that catch exactly the rows the list's rule catches there,
the one with the best objective (all tie under equal rule weights), then the fewest conditions,
then the first mined.  The places are independent: a rule that catches a place's rows catches
none of the rows left for the places below it (they are what the place leaves), so it cannot
be the same catch there, and no choice at one place changes the candidates at another.
"""

from __future__ import annotations

import numba
import numpy as np

from .model import ListFit, PackedProblem, fit_list

__all__ = ["simplest_wording", "same_catch"]

# Objectives closer than this are one value (the exact objective is computed to ~1e-9).
SAME_OBJECTIVE_TOL = 1e-9


@numba.njit(nogil=True, cache=True)
def _same_catch(rules, remaining, caught, out):
    n_rules, n_words = rules.shape
    for rule in range(n_rules):
        same = True
        for w in range(n_words):
            if (rules[rule, w] & remaining[w]) != caught[w]:
                same = False
                break
        out[rule] = same


def same_catch(problem: PackedProblem, remaining: np.ndarray, rule: int) -> np.ndarray:
    """The candidate rules (indices, ascending) that catch exactly the rows ``rule`` catches among ``remaining``."""
    caught = problem.rules[int(rule)] & remaining
    out = np.zeros(problem.n_rules, dtype=np.bool_)
    _same_catch(problem.rules, np.ascontiguousarray(remaining), caught, out)
    return np.flatnonzero(out)


def simplest_wording(problem: PackedProblem, fit: ListFit, n_conditions) -> ListFit:
    """``fit``'s list with each rule replaced by the simplest candidate catching the same rows at its place.

    Parameters
    ----------
    problem : PackedProblem
        The candidate rules and the training rows.
    fit : ListFit
        A list and its MAP parameters (the search's best list).
    n_conditions : sequence of int, one per candidate rule
        How many conditions each candidate rule joins with AND.

    Returns
    -------
    ListFit
        A list that puts every training row in the group ``fit`` puts it in, so its counts ``n_l``, ``s_l``,
        risks, ``K`` and gammas are ``fit``'s; its objective is ``fit``'s or better (better only when the rule
        weights are unequal).  At each place the rule is, among the candidates not elsewhere in the list
        whose catch there is the same, the one with the highest objective, then the fewest conditions, then
        the lowest index: the same list from every list in ``fit``'s set of equal wordings.  Places that catch
        no row keep their rule.  Returns ``fit`` itself when no rule changes.
    """
    sizes = np.asarray(n_conditions, dtype=np.int64)
    if sizes.shape != (problem.n_rules,):
        raise ValueError(f"n_conditions must hold one count per candidate rule ({problem.n_rules}), got {sizes.shape}")
    order = [int(rule) for rule in fit.order]
    equal_weights = bool(np.ptp(problem.log_weights) == 0.0) if problem.n_rules else True
    remaining = problem.all_rows.copy()
    for place, rule in enumerate(order):
        if (problem.rules[rule] & remaining).any():
            others = set(order) - {rule}
            same = [int(c) for c in same_catch(problem, remaining, rule) if int(c) not in others]
            order[place] = _simplest(problem, order, place, same, sizes, equal_weights)
        remaining &= ~problem.rules[order[place]]
    if tuple(order) == tuple(fit.order):
        return fit
    return fit_list(problem, order)


def _simplest(problem: PackedProblem, order: list[int], place: int, same: list[int], sizes: np.ndarray,
              equal_weights: bool) -> int:
    """The rule of ``same`` for ``place``: the best objective (ties within ``SAME_OBJECTIVE_TOL``), then the
    fewest conditions, then the lowest index."""
    if equal_weights:
        return min(same, key=lambda c: (sizes[c], c))
    values = {}
    for c in same:
        trial = list(order)
        trial[place] = c
        values[c] = fit_list(problem, trial).log_posterior
    best = max(values.values())
    return min((c for c in same if values[c] >= best - SAME_OBJECTIVE_TOL), key=lambda c: (sizes[c], c))
