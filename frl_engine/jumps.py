r"""Jumps between known good lists: a symmetric list move of several rules at once.

Why.  Two lists of high posterior may differ in several coupled rules, each change alone far
less likely than either list (the logistic export at 20,000 rows: a block of three
ward-12/creatinine rules against ``age >= 56 AND ward = 12`` and a creatinine rule at the
bottom).  The four moves of the paper (:mod:`frl_engine.moves`) cross such a valley only
through its improbable middle, so chains started on the two sides disagree for a long time.
This move makes the whole change in one step, for changes read off lists the search found.

A **jump** is a set of *segments* read off an alignment of two lists ``a`` and ``b`` (their
longest common subsequence of rules, the *anchors*); between consecutive anchors ``a`` holds a
run of rules ``A`` and ``b`` a run ``B``:

* a *replacement* (``A`` and ``B`` both non-empty) applies to a list holding ``A`` as a
  contiguous run, anywhere, and puts ``B`` in its place;
* a *deletion* (``B`` empty) applies to a list in which ``A`` follows the anchor ``x`` directly
  (``x`` the rule before the gap in ``a``, or the top of the list) and removes it;
* an *insertion* (``A`` empty) puts ``B`` directly after the anchor ``x``.

A jump applies to a list when every segment does and no rule of a ``B`` that is not also in an
``A`` is in the list already; it then rewrites all its segments at once (insertions right after
their anchor, before whatever follows).  Its *inverse* (every ``A`` and ``B`` exchanged) applies to
the result and gives back the list: anchors are in no segment, so they survive; an inserted run
sits right after its anchor, so the inverse's deletion finds it; a replaced run is found anywhere.
So ``J`` takes ``c`` to ``c'`` exactly when ``J^{-1}`` takes ``c'`` to ``c``.

The proposal.  The set of jumps is fixed before a chain runs (:func:`list_jumps`, from the search's
lists, a function of the data only) and holds the inverse of each of its jumps.  A proposal draws one
of the ``n(c)`` jumps that apply to the current list ``c`` uniformly (none: the chain stays).  The
probability of proposing ``c'`` is then ``m / n(c)``, ``m`` the number of jumps taking ``c`` to ``c'``;
by the pairing above ``m`` jumps take ``c'`` back to ``c``, so the reverse has probability
``m / n(c')`` and the list part of the Hastings ratio is ``n(c) / n(c')``
(:func:`count_applicable` on both lists).  The sampler draws fresh risks for the positions from the
first change down (:mod:`frl_engine.refresh`), whose proposal densities enter the ratio as for the
other moves with fresh risks; so the move leaves the paper's posterior exactly invariant.

Layout.  :func:`list_jumps` returns ``(data, starts)``: jump ``t`` is ``data[starts[t]:starts[t+1]]``,
``[n_segments, (anchor, n_a, A..., n_b, B...) * n_segments]`` with ``anchor = TOP`` for the top of
the list and ``NO_ANCHOR`` for a replacement.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numba
import numpy as np

TOP = -1
NO_ANCHOR = -2
# Jumps kept at most (those of more segments first).
MAX_JUMPS = 512
# Two lists that differ in more gaps than this give only their whole difference and each gap alone.
MAX_GAPS = 5


def _common_subsequence(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The longest common subsequence of two lists of distinct rules (dynamic programming)."""
    n, m = len(a), len(b)
    table = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i, j] = table[i + 1, j + 1] + 1 if a[i] == b[j] else max(table[i + 1, j], table[i, j + 1])
    common, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            common.append(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1, j] >= table[i, j + 1]:
            i += 1
        else:
            j += 1
    return common


def _gaps(a: Sequence[int], b: Sequence[int]) -> list[tuple[int, tuple[int, ...], tuple[int, ...], int | None]]:
    """``(anchor before, A, B, anchor after)`` for each gap between the rules lists ``a`` and ``b`` share in order.

    The anchor before is ``TOP`` for a gap at the top; the anchor after ``None`` for a gap at the bottom.
    """
    a = [int(r) for r in a]
    b = [int(r) for r in b]
    gaps = []
    i = j = 0
    before = TOP
    for rule in [*_common_subsequence(a, b), None]:
        i_end = a.index(rule, i) if rule is not None else len(a)
        j_end = b.index(rule, j) if rule is not None else len(b)
        run_a, run_b = tuple(a[i:i_end]), tuple(b[j:j_end])
        if run_a or run_b:
            gaps.append((before, run_a, run_b, rule))
        if rule is not None:
            before = rule
            i, j = i_end + 1, j_end + 1
    return gaps


def list_segments(a: Sequence[int], b: Sequence[int]) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """The segments that turn list ``a`` into list ``b``: ``(anchor, A, B)`` per gap between shared rules.

    >>> list_segments([1, 2, 3, 4], [1, 5, 3])
    [(-2, (2,), (5,)), (3, (4,), ())]
    """
    return [(NO_ANCHOR if run_a and run_b else before, run_a, run_b) for before, run_a, run_b, _ in _gaps(a, b)]


def _segment_forms(gap):
    """The ways to write one gap as a segment: a replacement as it is; a deletion or insertion after its
    anchor, or as a replacement that takes in the shared rule after (or before) it, which applies
    wherever that pair of rules stands, whatever precedes it."""
    before, run_a, run_b, after = gap
    if run_a and run_b:
        return [(NO_ANCHOR, run_a, run_b)]
    forms = [(before, run_a, run_b)]
    if after is not None:
        forms.append((NO_ANCHOR, (*run_a, after), (*run_b, after)))
    if before != TOP:
        forms.append((NO_ANCHOR, (before, *run_a), (before, *run_b)))
    return forms


def _valid(jump) -> bool:
    """Runs of A (and of B) disjoint, anchors distinct and in no run: what the module note's pairing needs."""
    runs_a = [r for _, run_a, _ in jump for r in run_a]
    runs_b = [r for _, _, run_b in jump for r in run_b]
    anchors = [anchor for anchor, _, _ in jump if anchor != NO_ANCHOR]
    return (len(set(runs_a)) == len(runs_a) and len(set(runs_b)) == len(runs_b)
            and len(set(anchors)) == len(anchors) and not set(anchors) & (set(runs_a) | set(runs_b)))


def _inverse(jump):
    return tuple((anchor, run_b, run_a) for anchor, run_a, run_b in jump)


def list_jumps(lists: Sequence[Sequence[int]], max_jumps: int = MAX_JUMPS) -> tuple[np.ndarray, np.ndarray]:
    """Jumps between every ordered pair of distinct ``lists``: every non-empty set of the gaps in which the two
    differ, each gap in each of its forms (:func:`_segment_forms`), the jumps of more segments first.

    A sampled list seldom holds all of a known list's differences at once, and the rules around a
    gap are often written another way (``admission_type_id = 3`` or ``age < 75 AND admission_type_id =
    3``), so the parts of a jump and the forms that do not need the rule before a gap reach more lists.
    The set is closed under inversion (the module's note): each jump is kept with its inverse, at most
    ``max_jumps`` in all.  Returns ``(data, starts)`` in the layout of the module's note; no lists (or one)
    give no jumps.
    """
    distinct = list(dict.fromkeys(tuple(int(r) for r in lst) for lst in lists))
    candidates = []
    for a in distinct:
        for b in distinct:
            if a == b:
                continue
            gaps = _gaps(a, b)
            if len(gaps) > MAX_GAPS:
                # lists far apart: every part and form would be 4 ** gaps jumps (minutes of work at 12 gaps);
                # the whole difference as it is, and each gap alone in each form
                whole = tuple(_segment_forms(gap)[0] for gap in gaps)
                if _valid(whole):
                    candidates.append(whole)
                candidates.extend((form,) for gap in gaps for form in _segment_forms(gap))
                continue
            for size in range(len(gaps), 0, -1):
                for chosen in itertools.combinations(gaps, size):
                    for forms in itertools.product(*(_segment_forms(gap) for gap in chosen)):
                        if _valid(forms):
                            candidates.append(tuple(forms))
    candidates.sort(key=len, reverse=True)   # stable: the order of the pairs within a size
    jumps = []
    seen = set()
    for jump in candidates:
        if jump in seen:
            continue
        pair = [jump] if _inverse(jump) == jump else [jump, _inverse(jump)]
        if len(jumps) + len(pair) > max_jumps:
            break
        for item in pair:
            seen.add(item)
            jumps.append(item)
    return encode_jumps(jumps)


def encode_jumps(jumps) -> tuple[np.ndarray, np.ndarray]:
    """``(data, starts)`` of jumps given as tuples of segments ``(anchor, A, B)`` (the module note's layout)."""
    data, starts = [], [0]
    for jump in jumps:
        data.append(len(jump))
        for anchor, run_a, run_b in jump:
            data.extend([int(anchor), len(run_a), *(int(r) for r in run_a), len(run_b), *(int(r) for r in run_b)])
        starts.append(len(data))
    return np.asarray(data, dtype=np.int64), np.asarray(starts, dtype=np.int64)


@numba.njit(nogil=True, cache=True)
def mark_positions(position, order, length):
    """``position[r]`` = the position of rule ``r`` in ``order[:length]`` (the other entries stay -1)."""
    for pos in range(length):
        position[order[pos]] = pos


@numba.njit(nogil=True, cache=True)
def clear_positions(position, order, length):
    """Undo :func:`mark_positions` (every entry -1 again)."""
    for pos in range(length):
        position[order[pos]] = -1


@numba.njit(nogil=True, cache=True)
def jump_growth(data, starts, t):
    """How many rules jump ``t`` adds to a list it applies to (negative: removes)."""
    k = starts[t]
    n_segments = data[k]
    k += 1
    growth = 0
    for _ in range(n_segments):
        n_a = data[k + 1]
        n_b = data[k + 2 + n_a]
        growth += n_b - n_a
        k += 3 + n_a + n_b
    return growth


@numba.njit(nogil=True, cache=True)
def jump_applies(data, starts, t, position, where):
    """Whether jump ``t`` applies to the list whose rules' positions are ``position`` (:func:`mark_positions`;
    -1: not in the list), as in the module note; ``where[s + 1]`` gets where segment ``s`` acts and
    ``where[0]`` the first changed position."""
    k0 = starts[t]
    n_segments = data[k0]
    k = k0 + 1
    first = -1
    for s in range(n_segments):
        anchor = data[k]
        n_a = data[k + 1]
        n_b = data[k + 2 + n_a]
        if anchor == NO_ANCHOR:
            p = position[data[k + 2]]
            if p < 0:
                return False
        elif anchor == TOP:
            p = 0
        else:
            q = position[anchor]
            if q < 0:
                return False
            p = q + 1
        for i in range(n_a):
            if position[data[k + 2 + i]] != p + i:
                return False
        for i in range(n_b):
            rule = data[k + 3 + n_a + i]
            if position[rule] >= 0 and not _in_runs_a(data, k0, rule):
                return False
        where[s + 1] = p
        first = p if first < 0 else min(first, p)
        k += 3 + n_a + n_b
    where[0] = first
    return True


def jump_index(data: np.ndarray, starts: np.ndarray, n_rules: int) -> tuple[np.ndarray, np.ndarray]:
    """Jumps by a rule a list must hold for them to apply (a run's first rule, or an anchor).

    Returns ``(key_starts, key_jumps)``: the jumps keyed by rule ``r`` are
    ``key_jumps[key_starts[r]:key_starts[r + 1]]``; those keyed by ``n_rules`` need no rule (an
    insertion at the top alone) and are tried for every list.  So counting the jumps that apply to a
    list looks only at those of its own rules.
    """
    keys = np.full(len(starts) - 1, n_rules, dtype=np.int64)
    for t in range(len(starts) - 1):
        k = int(starts[t]) + 1
        for _ in range(int(data[starts[t]])):
            anchor, n_a = int(data[k]), int(data[k + 1])
            n_b = int(data[k + 2 + n_a])
            if anchor >= 0 or n_a > 0:
                keys[t] = anchor if anchor >= 0 else int(data[k + 2])
                break
            k += 3 + n_a + n_b
    key_jumps = np.argsort(keys, kind="stable").astype(np.int64)
    key_starts = np.searchsorted(keys[key_jumps], np.arange(n_rules + 2)).astype(np.int64)
    return key_starts, key_jumps


@numba.njit(nogil=True, cache=True)
def count_applicable(data, starts, key_starts, key_jumps, order, length, position, where):
    """How many jumps apply to ``order[:length]``, whose rules' positions are ``position``
    (:func:`mark_positions`); only the jumps keyed by its rules are tried (:func:`jump_index`)."""
    n_rules = key_starts.shape[0] - 2
    count = 0
    for pos in range(length + 1):
        key = n_rules if pos == length else order[pos]
        for i in range(key_starts[key], key_starts[key + 1]):
            if jump_applies(data, starts, key_jumps[i], position, where):
                count += 1
    return count


@numba.njit(nogil=True, cache=True)
def nth_applicable(data, starts, key_starts, key_jumps, order, length, position, where, n):
    """The ``n``-th (from 0, in :func:`count_applicable`'s order) jump that applies to ``order[:length]``, or -1."""
    n_rules = key_starts.shape[0] - 2
    for pos in range(length + 1):
        key = n_rules if pos == length else order[pos]
        for i in range(key_starts[key], key_starts[key + 1]):
            t = key_jumps[i]
            if jump_applies(data, starts, t, position, where):
                if n == 0:
                    return t
                n -= 1
    return -1


@numba.njit(nogil=True, cache=True)
def apply_jump(data, starts, t, order, length, position, proposal, where):
    """Write jump ``t`` applied to ``order[:length]`` into ``proposal``; return its length, or -1.

    -1 when the jump does not apply (module note).  ``position`` holds the positions of the list's rules
    (:func:`mark_positions`) and is not changed; ``where`` (at least ``n_segments + 1`` entries) is
    scratch.  The first changed position is written to ``where[0]``, and to ``where[-1]`` the position in
    the new list just below its last rewritten run (its first position that lies in the unchanged tail,
    which is the same tail, ``L' - L`` positions away, in the list and the new list; ``L'`` when there is
    none).  So a jump and its inverse agree on both, whichever list they start from.
    """
    if not jump_applies(data, starts, t, position, where):
        return -1
    k0 = starts[t]
    n_segments = data[k0]
    # Rewrite, top to bottom: an insertion right after its anchor, a run replaced where it is.
    n_new = 0
    last = 0
    pos = 0
    while pos <= length:
        skip = 0
        k = k0 + 1
        for s in range(n_segments):
            n_a = data[k + 1]
            n_b = data[k + 2 + n_a]
            if where[s + 1] == pos and n_a == 0:
                for i in range(n_b):
                    proposal[n_new] = data[k + 3 + n_a + i]
                    n_new += 1
                last = n_new
            k += 3 + n_a + n_b
        k = k0 + 1
        for s in range(n_segments):
            n_a = data[k + 1]
            n_b = data[k + 2 + n_a]
            if where[s + 1] == pos and n_a > 0:
                for i in range(n_b):
                    proposal[n_new] = data[k + 3 + n_a + i]
                    n_new += 1
                skip = n_a
                last = n_new
            k += 3 + n_a + n_b
        if pos == length:
            break
        if skip > 0:
            pos += skip
        else:
            proposal[n_new] = order[pos]
            n_new += 1
            pos += 1
    where[where.shape[0] - 1] = last
    return n_new


@numba.njit(nogil=True, cache=True)
def _in_runs_a(data, k0, rule):
    """Whether ``rule`` is in one of the ``A`` runs of the jump starting at ``data[k0]``."""
    n_segments = data[k0]
    k = k0 + 1
    for _ in range(n_segments):
        n_a = data[k + 1]
        n_b = data[k + 2 + n_a]
        for i in range(n_a):
            if data[k + 2 + i] == rule:
                return True
        k += 3 + n_a + n_b
    return False
