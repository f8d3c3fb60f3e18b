"""Packed truth tables: one bit per patient, 64 patients per machine word.

A candidate rule is its truth table over the N training rows.  We store the
tables of all |B| rules as a ``(|B|, W)`` array of ``uint64`` words, with
``W = ceil(N / 64)``; padding bits past row N are zero.  The outcome vector is
packed the same way.

For a rule list ``c_0, ..., c_{L-1}`` the rows *captured* by position ``l`` are
those satisfying ``c_l`` and none of ``c_0..c_{l-1}`` (the map ``Z`` of the
paper's equation for ``z_n``).  Walking the list with a running "remaining"
mask (``captured = rule & remaining; remaining &= ~rule``) gives for every
position the two counts the likelihood needs:

* ``n_l``: rows captured by position ``l`` (the rule's *support*), and
* ``s_l``: positives among them,

with position ``L`` the default rule (everything left).  A change at position
``k`` leaves the masks before ``k`` untouched, so the walk restarts at ``k``.
"""

from __future__ import annotations

import numba
import numpy as np

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


def pack_columns(matrix: np.ndarray) -> np.ndarray:
    """Pack a boolean ``(N, M)`` matrix column-wise into ``(M, W)`` uint64 words.

    Bit ``n % 64`` of word ``n // 64`` of row ``j`` is ``matrix[n, j]``.
    """
    matrix = np.asarray(matrix, dtype=bool)
    if matrix.ndim != 2:
        raise ValueError("pack_columns expects a 2-D boolean matrix")
    n_rows, n_cols = matrix.shape
    n_words = max(1, -(-n_rows // 64))
    packed = np.zeros((n_cols, n_words * 8), dtype=np.uint8)
    packed[:, : -(-n_rows // 8)] = np.packbits(matrix, axis=0, bitorder="little").T
    return np.ascontiguousarray(packed.view("<u8").astype(np.uint64, copy=False))


def pack_vector(vector: np.ndarray) -> np.ndarray:
    """Pack a boolean length-N vector into ``W`` uint64 words."""
    return pack_columns(np.asarray(vector, dtype=bool).reshape(-1, 1))[0]


def unpack_rows(words: np.ndarray, n_rows: int) -> np.ndarray:
    """The inverse of :func:`pack_columns` for each row of ``words`` (``(..., W)`` uint64): ``(..., n_rows)`` bool."""
    return np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=-1, count=n_rows,
                         bitorder="little").view(bool)


def row_mask(n_rows: int) -> np.ndarray:
    """The packed vector with the first ``n_rows`` bits set (every training row)."""
    return pack_vector(np.ones(n_rows, dtype=bool))


@numba.njit(inline="always")
def popcount(x):
    """Number of set bits of a uint64 (SWAR; LLVM lowers it to ``popcnt``)."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return (x * _H01) >> np.uint64(56)


@numba.njit(nogil=True, cache=True)
def capture_counts_from(rules, y, order, length, start, remaining, n_cap, n_pos):
    """Walk the list from position ``start`` and fill the capture counts.

    Parameters
    ----------
    rules : (M, W) uint64
        Packed truth tables of the candidate rules.
    y : (W,) uint64
        Packed outcome.
    order : (>= length,) int64
        Rule indices of the list, top first.
    length : int
        ``L``, the number of rules in the list.
    start : int
        First position to recompute; ``remaining[start]`` must hold the rows
        not captured by positions ``0..start-1``.
    remaining : (>= L+1, W) uint64
        Row ``l`` is overwritten with the rows reaching position ``l``.
    n_cap, n_pos : (>= L+1,) float64
        Output: rows captured ``n_l`` and positives ``s_l`` at each position,
        the default rule at index ``L``.
    """
    n_words = rules.shape[1]
    for pos in range(start, length):
        rule = rules[order[pos]]
        captured = np.uint64(0)
        positive = np.uint64(0)
        for w in range(n_words):
            rem = remaining[pos, w]
            cap = rule[w] & rem
            captured += popcount(cap)
            positive += popcount(cap & y[w])
            remaining[pos + 1, w] = rem & ~cap
        n_cap[pos] = captured
        n_pos[pos] = positive
    captured = np.uint64(0)
    positive = np.uint64(0)
    for w in range(n_words):
        rem = remaining[length, w]
        captured += popcount(rem)
        positive += popcount(rem & y[w])
    n_cap[length] = captured
    n_pos[length] = positive


@numba.njit(nogil=True, inline="always")
def recount_from(rules, y, proposal, new_length, start, remaining, n_cap, n_pos, remaining_new, n_cap_new, n_pos_new):
    """Captures of a proposed list that agrees with the current one before ``start``.

    Positions ``< start`` keep the current list's counts; from ``start`` on they are
    recounted (the bit vectors of the rows still uncaptured at ``start`` are shared).
    The one place the annealing, polishing and sampling kernels do this.
    """
    for pos in range(start):
        n_cap_new[pos] = n_cap[pos]
        n_pos_new[pos] = n_pos[pos]
    remaining_new[start] = remaining[start]
    capture_counts_from(rules, y, proposal, new_length, start, remaining_new, n_cap_new, n_pos_new)


@numba.njit(nogil=True, inline="always")
def adopt_counts(start, new_length, remaining, n_cap, n_pos, remaining_new, n_cap_new, n_pos_new):
    """An accepted proposal's captures become the current list's: the inverse of :func:`recount_from`.

    Only positions from ``start`` on changed (and the uncaptured rows from ``start + 1`` on).
    """
    for pos in range(start, new_length + 1):
        n_cap[pos] = n_cap_new[pos]
        n_pos[pos] = n_pos_new[pos]
        if pos > start:
            remaining[pos] = remaining_new[pos]


def row_groups(rules: np.ndarray, all_rows: np.ndarray, order) -> np.ndarray:
    """The rows each position of a list captures, packed, top first; positions that capture no row left out.

    Row ``k`` of the result holds the rows whose first applying rule is the ``k``-th rule that reaches
    any row; the rows no rule applies to (the default rule's) are what remains.  Two lists with the
    same groups put every training row in the same group, in the same order: the same likelihood for
    any risks, whatever their rules are called.
    """
    remaining = all_rows.copy()
    groups = []
    for rule in order:
        captured = rules[int(rule)] & remaining
        if captured.any():
            groups.append(captured)
            remaining &= ~rules[int(rule)]
    return np.array(groups, dtype=np.uint64).reshape(len(groups), rules.shape[1])


@numba.njit(nogil=True, cache=True)
def same_row_groups(rules, all_rows, order, groups):
    """Whether the list ``order`` splits the rows into ``groups`` (:func:`row_groups`), in that order.

    Positions that capture no row are skipped; the default rule's rows then agree as well, since
    each list's groups and default rows partition the rows.
    """
    n_words = rules.shape[1]
    remaining = all_rows.copy()
    k = 0
    for i in range(order.shape[0]):
        rule = order[i]
        reached = False
        for w in range(n_words):
            if rules[rule, w] & remaining[w]:
                reached = True
                break
        if not reached:
            continue
        if k >= groups.shape[0]:
            return False
        for w in range(n_words):
            if (rules[rule, w] & remaining[w]) != groups[k, w]:
                return False
        for w in range(n_words):
            remaining[w] &= ~rules[rule, w]
        k += 1
    return k == groups.shape[0]


def capture_counts(rules: np.ndarray, y: np.ndarray, all_rows: np.ndarray, order) -> tuple[np.ndarray, np.ndarray]:
    """Support ``n_l`` and positives ``s_l`` of each position of a list (default last).

    Convenience wrapper over :func:`capture_counts_from` for a whole list.
    """
    order = np.asarray(order, dtype=np.int64)
    length = len(order)
    remaining = np.empty((length + 1, rules.shape[1]), dtype=np.uint64)
    remaining[0] = all_rows
    n_cap = np.zeros(length + 1)
    n_pos = np.zeros(length + 1)
    capture_counts_from(rules, y, order, length, 0, remaining, n_cap, n_pos)
    return n_cap, n_pos
