"""Candidate rules: every readable conjunction of items worth searching over.

The candidate IF clauses are mined as in the paper's experiments (section 5:
"rules with a support of at least 5% and a cardinality of at most 2
conditions"): every conjunction of 1 to ``max_conditions`` items (the
binarizer's conditions) covering at least ``min_support`` of ALL rows.
Two miners give the same answer:

- ``method="fpgrowth"``: mlxtend's FP-Growth, the reference;
- ``method="bitset"``: our own, on the items packed as ``uint64`` bit vectors
  (the layout of :mod:`frl_engine.bits`): a set's support is the popcount of
  the AND of its items' vectors. Pairs are counted all at once; larger sets
  Apriori-style (a k-set is counted only if all its (k-1)-subsets are frequent).
  The counting is compiled (:mod:`frl_engine.mining_kernels`): each set's words
  are AND-ed, counted, counted against the events and hashed as they are read,
  in one pass, so no set's bit vector is written down (a wide export mines 1.7
  million pairs in about 5 s instead of 55 s).

Both results then get the same clean-up, so that every condition of a rule
earns its place on a printed card:

1. an item true for at least 99% of the rows (``metformin = No``) is no
   condition: it says nothing about the patient;
2. a conjunction is dropped when two of its conditions are on the same column,
   since that is redundant (``Age >= 45 AND Age >= 60``) or contradictory; the
   one exception is a range ``Age >= 45 AND Age < 60``, which is kept;
3. a conjunction is dropped unless each of its conditions removes at least 5%
   of what its other conditions cover: ``|rule| <= 0.95 |rule without c|``
   for every condition ``c`` (``BedSores AND drug = No`` is ``BedSores``);
4. rules are ordered by number of conditions, then by the items' order;
5. a rule covering exactly the same patients as an earlier rule is dropped, so
   the simplest, earliest wording of each set of patients survives.

Screening. When more rules remain than ``max_rules`` (the search works well
with a few thousand), every one-condition rule is kept and the conjunctions
are ranked by their likelihood-ratio (G) statistic for a higher event rate
than the rest of the patients,
:math:`G = 2[n_1 \\mathrm{KL}(\\hat p_1 \\| \\hat p) + n_0 \\mathrm{KL}(\\hat p_0 \\| \\hat p)]`
(signed: rules with a lower rate than the rest come after all with a higher
one); the best are kept, and :attr:`CandidateRules.note` says so in one line.
Without an outcome, conjunctions are ranked by support.

A support count is ``ceil(min_support * n_rows)`` rows (so 5% of 40 rows is 2
rows), the same for both miners.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .columns import _examples, category_label, format_number, is_number
from .errors import DataError, RuleMiningError
from .rules import Condition, Rule

__all__ = ["CandidateRules", "mine_rules", "mine_packed", "rules_from_boolean_columns", "MINING_METHODS",
           "NEAR_UNIVERSAL", "EARNS_ITS_PLACE"]

MINING_METHODS = ("bitset", "fpgrowth")
#: An item true for at least this share of rows is no condition.
NEAR_UNIVERSAL = 0.99
#: Each condition of a rule must leave out at least this share of what the rule's other conditions cover
#: (5%: a condition that changes who the rule covers by less, such as ``AND drug = No`` on a drug almost
#: nobody takes, is padding on a printed card even when it is not near-universal).
EARNS_ITS_PLACE = 0.05

# Guards against memory blow-up, checked before the work is done.
MAX_ITEM_PAIRS = 5_000_000  # pairs of frequent items (about 3,160 items)
MAX_CANDIDATES = 5_000_000  # candidate k-sets at one Apriori level, k >= 3
_CHUNK_ROWS = 1 << 14  # itemsets processed at once when AND-ing bit vectors, at most
_CHUNK_WORDS = 1 << 22  # ... and at most this many words (32 MB) in one chunk's bit vectors


def _chunks(itemsets: np.ndarray, n_words: int):
    """``(start, chunk)`` blocks of ``itemsets`` whose bit vectors fill at most ``_CHUNK_WORDS`` words.

    At 100,000 rows (1,563 words) a block of ``_CHUNK_ROWS`` itemsets held 205 MB of bits, and numpy's
    temporaries (the popcounts, the hash products) as much again: most of ``frl fit``'s peak memory there.
    """
    size = max(1, min(_CHUNK_ROWS, _CHUNK_WORDS // max(1, int(n_words))))
    for start in range(0, len(itemsets), size):
        yield start, itemsets[start : start + size]


class CandidateRules:
    """The candidate IF clauses and which rows each covers.

    Parameters
    ----------
    rules : tuple of Rule
    coverage : numpy.ndarray of bool, shape (n_rows, n_rules), optional
        ``coverage[n, j]`` is True when rule ``j`` applies to row ``n``.
    packed : numpy.ndarray of uint64, shape (n_rules, ceil(n_rows / 64)), optional
        The same as bit vectors (:mod:`frl_engine.bits`); give this or ``coverage``.
    n_rows : int, optional
        Needed with ``packed``.
    note : str
        What screening did, if anything (one line), else "".

    The coverage is stored packed; :attr:`coverage` unpacks it on request.
    """

    __slots__ = ("rules", "packed", "n_rows", "note", "n_mined", "_dense", "_names")

    def __init__(self, rules, coverage=None, *, packed=None, n_rows=None, note: str = "", n_mined: int | None = None):
        from .bits import pack_columns

        rules = tuple(rules)
        if packed is None:
            coverage = np.asarray(coverage)
            if coverage.dtype != bool or coverage.ndim != 2 or coverage.shape[1] != len(rules):
                raise ValueError(f"coverage must be a bool array of shape (n_rows, {len(rules)}), "
                                 f"got {coverage.dtype} {coverage.shape}")
            n_rows = coverage.shape[0]
            packed = pack_columns(coverage) if len(rules) else np.zeros((0, max(1, -(-n_rows // 64))), np.uint64)
        else:
            packed = np.ascontiguousarray(packed, dtype=np.uint64)
            if n_rows is None or packed.ndim != 2 or packed.shape[0] != len(rules) or packed.shape[1] != max(1, -(-n_rows // 64)):
                raise ValueError(f"packed must have shape ({len(rules)}, ceil(n_rows / 64)), got {packed.shape}")
        packed.setflags(write=False)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "packed", packed)
        object.__setattr__(self, "n_rows", int(n_rows))
        object.__setattr__(self, "note", note)
        object.__setattr__(self, "n_mined", len(rules) if n_mined is None else int(n_mined))
        object.__setattr__(self, "_dense", None)
        object.__setattr__(self, "_names", None)

    def __setattr__(self, name, value):
        raise AttributeError("CandidateRules is read-only")

    def __len__(self) -> int:
        return len(self.rules)

    @property
    def coverage(self) -> np.ndarray:
        """Dense coverage, shape (n_rows, n_rules), bool (built on first request and kept: prefer :attr:`packed`)."""
        if self._dense is None:
            dense = np.unpackbits(self.packed.view(np.uint8), axis=1, count=self.n_rows, bitorder="little").view(bool).T
            dense.setflags(write=False)
            object.__setattr__(self, "_dense", dense)
        return self._dense

    @property
    def names(self) -> list[str]:
        """The rules' names, in order."""
        if self._names is None:  # kept: the estimator and the pages ask for them more than once
            object.__setattr__(self, "_names", tuple(rule.name for rule in self.rules))
        return list(self._names)

    @property
    def counts(self) -> np.ndarray:
        """Rows each rule covers, shape (n_rules,)."""
        return np.bitwise_count(self.packed).sum(axis=1, dtype=np.int64)

    @property
    def support(self) -> np.ndarray:
        """Fraction of rows each rule covers, shape (n_rules,)."""
        return self.counts / max(self.n_rows, 1)


def _check_settings(min_support, max_conditions, max_rules, method) -> None:
    if not is_number(min_support) or not (0 < min_support <= 1):
        raise RuleMiningError(
            f"min_support must be a fraction of the rows in (0, 1], e.g. 0.05 for 5%; got {min_support!r}"
        )
    if not isinstance(max_conditions, numbers.Integral) or isinstance(max_conditions, bool) or max_conditions < 1:
        raise RuleMiningError(
            f"max_conditions must be a whole number of at least 1 (the paper uses 2); got {max_conditions!r}"
        )
    if not isinstance(max_rules, numbers.Integral) or isinstance(max_rules, bool) or max_rules < 1:
        raise RuleMiningError(f"max_rules must be a whole number of at least 1; got {max_rules!r}")
    if method not in MINING_METHODS:
        raise RuleMiningError(f"method must be 'bitset' or 'fpgrowth'; got {method!r}")


def _as_item_matrix(items, conditions) -> np.ndarray:
    items = np.asarray(items)
    if items.ndim != 2:
        raise ValueError(f"items must be a 2-D array (n_rows, n_items), got shape {items.shape}")
    if items.shape[1] != len(conditions):
        raise ValueError(f"items has {items.shape[1]} columns but {len(conditions)} conditions were given")
    if items.dtype != bool:
        if not np.isin(items, (0, 1)).all():
            raise ValueError("items must be bool (or 0/1)")
        items = items.astype(bool)
    for condition in conditions:
        if not isinstance(condition, Condition):
            raise ValueError(f"conditions must be Condition objects, got {condition!r}")
    return items


def _conflicts(conditions: Sequence[Condition]) -> np.ndarray:
    """``conflicts[i, j]``: items i and j cannot be in one rule (same column, not a range)."""
    n = len(conditions)
    conflicts = np.zeros((n, n), dtype=bool)
    by_column: dict[str, list[int]] = {}
    for j, condition in enumerate(conditions):
        by_column.setdefault(condition.column, []).append(j)
    for members in by_column.values():
        for a_pos, a in enumerate(members):
            for b in members[a_pos + 1 :]:
                ca, cb = conditions[a], conditions[b]
                lower, upper = (ca, cb) if ca.op == ">=" else (cb, ca)
                is_range = lower.op == ">=" and upper.op == "<" and lower.value < upper.value
                conflicts[a, b] = conflicts[b, a] = not is_range
    return conflicts


def _percent(fraction: float) -> str:
    return f"{format_number(round(100 * fraction, 6))}%"


def _check_pair_count(n_frequent: int, min_support: float) -> None:
    n_pairs = n_frequent * (n_frequent - 1) // 2
    if n_pairs > MAX_ITEM_PAIRS:
        raise RuleMiningError(
            f"Rule mining would have to check {n_pairs:,} pairs of the {n_frequent:,} items that reach "
            f"min_support, more than {MAX_ITEM_PAIRS:,}: use fewer items (exclude columns, lower "
            f"n_thresholds or max_categories) or raise min_support (now {min_support})"
        )


def _frequent_pairs(packed: np.ndarray, frequent: np.ndarray, conflicts: np.ndarray, min_count: int) -> np.ndarray:
    """Frequent, non-conflicting pairs (i < j) of the frequent items, lexicographic, shape (m, 2).

    Every pair's count is the popcount of the AND of the two packed columns, counted as the words are
    read (:func:`frl_engine.mining_kernels.pair_counts`).
    """
    from .mining_kernels import pair_counts

    counts = pair_counts(np.ascontiguousarray(packed[frequent]))
    keep = np.triu(counts >= min_count, k=1) & ~conflicts
    rows, cols = np.nonzero(keep)
    return np.column_stack([frequent[rows], frequent[cols]])


def _and_bits(packed: np.ndarray, itemsets: np.ndarray) -> np.ndarray:
    """Packed coverage of each itemset (rows of item indices), shape (len(itemsets), n_words)."""
    bits = packed[itemsets[:, 0]]
    for t in range(1, itemsets.shape[1]):
        bits &= packed[itemsets[:, t]]
    return bits


def _count(packed: np.ndarray, itemsets: np.ndarray) -> np.ndarray:
    """Rows each itemset covers, counted as its words are read (no bit vector written)."""
    from .mining_kernels import itemset_counts

    if len(itemsets) == 0:
        return np.zeros(0, dtype=np.int64)
    return itemset_counts(packed, np.ascontiguousarray(itemsets, dtype=np.int64))


def _keys(itemsets: np.ndarray, base: int) -> np.ndarray:
    keys = np.zeros(len(itemsets), dtype=np.int64)
    for t in range(itemsets.shape[1]):
        keys = keys * base + itemsets[:, t]
    return keys


def _next_level(previous: np.ndarray, packed: np.ndarray, min_count: int, n_items: int, settings: str) -> np.ndarray:
    """Frequent k-sets from the frequent (k-1)-sets (k >= 3), Apriori-style, lexicographic."""
    m, size = previous.shape
    prefix_changes = np.flatnonzero(np.any(previous[1:, :-1] != previous[:-1, :-1], axis=1)) + 1
    starts = np.concatenate([[0], prefix_changes])
    ends = np.concatenate([prefix_changes, [m]])
    sizes = ends - starts
    n_candidates = int((sizes * (sizes - 1) // 2).sum())
    if n_candidates > MAX_CANDIDATES:
        raise RuleMiningError(
            f"Rule mining would have to count {n_candidates:,} candidate rules of {size + 1} conditions, "
            f"more than {MAX_CANDIDATES:,}: {settings}"
        )
    parts = []
    for start, end in zip(starts, ends):
        if end - start < 2:
            continue
        first, second = np.triu_indices(end - start, k=1)
        block = np.empty((len(first), size + 1), dtype=np.int64)
        block[:, :-2] = previous[start, :-1]
        block[:, -2] = previous[start + first, -1]
        block[:, -1] = previous[start + second, -1]
        parts.append(block)
    if not parts:
        return np.empty((0, size + 1), dtype=np.int64)
    candidates = np.concatenate(parts)
    # Every (k-1)-subset must be frequent; those dropping one of the last two items hold by construction.
    if float(n_items + 1) ** size < 2**62:
        known = np.sort(_keys(previous, n_items + 1))
        ok = np.ones(len(candidates), dtype=bool)
        for drop in range(size - 1):
            keys = _keys(np.delete(candidates, drop, axis=1), n_items + 1)
            where = np.minimum(np.searchsorted(known, keys), len(known) - 1)
            ok &= known[where] == keys
    else:  # too many items to encode a set as one int64 key
        known = set(map(tuple, previous.tolist()))
        ok = np.array(
            [all(tuple(np.delete(c, drop)) in known for drop in range(size - 1)) for c in candidates], dtype=bool
        )
    candidates = candidates[ok]
    return candidates[_count(packed, candidates) >= min_count]


def _mine_bitset(packed, n_items, frequent, conflicts, min_count, max_conditions, settings) -> list[np.ndarray]:
    """Frequent non-conflicting itemsets, one (m_k, k) array per size k, each lexicographic."""
    levels = [frequent[:, None]]
    if max_conditions >= 2:
        levels.append(_frequent_pairs(packed, frequent, conflicts, min_count))
    while len(levels) < max_conditions and len(levels[-1]):
        levels.append(_next_level(levels[-1], packed, min_count, n_items, settings))
    return levels


def _mine_fpgrowth(items, frequent, conflicts, min_count, max_conditions) -> list[np.ndarray]:
    from mlxtend.frequent_patterns import fpgrowth

    n_rows = len(items)
    # Half a row below the count, so mlxtend's float comparison cannot round the wrong way.
    found = fpgrowth(pd.DataFrame(items), min_support=(min_count - 0.5) / n_rows, max_len=max_conditions)
    by_size: dict[int, list[tuple[int, ...]]] = {}
    for itemset in found["itemsets"]:
        by_size.setdefault(len(itemset), []).append(tuple(sorted(int(i) for i in itemset)))
    position = np.full(items.shape[1], -1)
    position[frequent] = np.arange(len(frequent))
    levels = []
    for size in range(1, max_conditions + 1):
        sets = np.array(sorted(by_size.get(size, [])), dtype=np.int64).reshape(-1, size)
        valid = (position[sets] >= 0).all(axis=1)  # near-universal items are no conditions
        for a in range(size):
            for b in range(a + 1, size):
                valid &= ~conflicts[position[sets[:, a]], position[sets[:, b]]]
        levels.append(sets[valid])
    return levels


def _itemset_stats(packed: np.ndarray, itemsets: np.ndarray, event_bits) -> tuple[np.ndarray, ...]:
    """``(counts, positives, hashes)`` of every itemset (:func:`frl_engine.mining_kernels.itemset_stats`)."""
    from .mining_kernels import itemset_stats

    n_words = packed.shape[1]
    multipliers = (np.arange(1, n_words + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    events = np.zeros(n_words, dtype=np.uint64) if event_bits is None else np.asarray(event_bits, dtype=np.uint64)
    return itemset_stats(packed, np.ascontiguousarray(itemsets, dtype=np.int64), events, multipliers)


def _distinct_coverage(itemsets: np.ndarray, packed: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the itemsets whose coverage differs from every earlier one (``hashes``: of each
    coverage, from :func:`_itemset_stats`; itemsets that share one are compared bit by bit)."""
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    shared = counts[inverse] > 1  # same hash: maybe the same coverage, compare the bits themselves
    keep = ~shared
    suspects = np.flatnonzero(shared)
    if len(suspects) * packed.shape[1] <= _CHUNK_WORDS:
        if len(suspects):
            _, first = np.unique(_and_bits(packed, itemsets[suspects]), axis=0, return_index=True)
            keep[suspects[first]] = True
    else:  # many (a wide export): one hash's itemsets at a time, so their bits never fill the memory
        by_hash = suspects[np.argsort(hashes[suspects], kind="stable")]   # in index order within a hash
        for group in np.split(by_hash, np.flatnonzero(np.diff(hashes[by_hash])) + 1):
            _, first = np.unique(_and_bits(packed, itemsets[group]), axis=0, return_index=True)
            keep[group[first]] = True
    return np.flatnonzero(keep)


def _earns_its_place(itemsets: np.ndarray, counts: np.ndarray, packed: np.ndarray, everyone: int) -> np.ndarray:
    """Which itemsets (rows, padded with ``everyone``) have every condition removing >= 5% (EARNS_ITS_PLACE) of the others' cover."""
    keep = np.ones(len(itemsets), dtype=bool)
    sizes = (itemsets != everyone).sum(axis=1)
    for size in np.unique(sizes):
        if size < 2:
            continue
        rows = np.flatnonzero(sizes == size)
        sets = itemsets[rows][:, :size]
        item_counts = np.bitwise_count(packed).sum(axis=1, dtype=np.int64) if size == 2 else None
        for drop in range(size):
            others = np.delete(sets, drop, axis=1)
            cover = item_counts[others[:, 0]] if size == 2 else _count(packed, others)
            keep[rows] &= counts[rows] <= (1 - EARNS_ITS_PLACE) * cover
    return keep


def _screening_scores(counts: np.ndarray, positives: np.ndarray | None, n_rows: int, n_events: int) -> np.ndarray:
    """Signed G statistic of each rule's event rate against the rest's (larger: higher risk, more evidence);
    the support when there is no outcome (``positives`` None)."""
    if positives is None:
        return counts.astype(float)
    p = n_events / n_rows

    def kl(k, n):
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(n > 0, k / np.maximum(n, 1), p)
            a = np.where(q > 0, q * np.log(q / p), 0.0) if p > 0 else 0.0
            b = np.where(q < 1, (1 - q) * np.log((1 - q) / (1 - p)), 0.0) if p < 1 else 0.0
        return n * (a + b)

    g = 2 * (kl(positives, counts) + kl(n_events - positives, n_rows - counts))
    rest = np.maximum(n_rows - counts, 1)
    higher = positives / np.maximum(counts, 1) > (n_events - positives) / rest
    return np.where(higher, g, -g)


def mine_packed(
    packed_items: np.ndarray,
    n_rows: int,
    conditions: Sequence[Condition],
    *,
    min_support: float = 0.05,
    max_conditions: int = 2,
    max_rules: int = 5000,
    method: str = "bitset",
    event=None,
) -> CandidateRules:
    """:func:`mine_rules` on items already packed as bit vectors, shape (n_items, ceil(n_rows / 64)).

    Parameters
    ----------
    event : array-like of bool, shape (n_rows,), optional
        The outcome; used only to screen conjunctions when more than
        ``max_rules`` remain (see the module docstring).
    """
    from .bits import pack_vector, row_mask  # numba loads on first mining, not when the binarizer is imported

    _check_settings(min_support, max_conditions, max_rules, method)
    conditions = list(conditions)
    for condition in conditions:
        if not isinstance(condition, Condition):
            raise ValueError(f"conditions must be Condition objects, got {condition!r}")
    packed_items = np.asarray(packed_items, dtype=np.uint64)
    n_items = len(conditions)
    if packed_items.shape[0] != n_items:
        raise ValueError(f"{packed_items.shape[0]} packed items but {n_items} conditions were given")
    if n_rows == 0:
        raise RuleMiningError("Rule mining needs at least one row of data: the table is empty")
    settings = f"raise min_support (now {min_support}) or lower max_conditions (now {max_conditions})"

    min_count = max(1, math.ceil(round(min_support * n_rows, 6)))
    item_counts = np.bitwise_count(packed_items).sum(axis=1, dtype=np.int64) if n_items else np.zeros(0, np.int64)
    universal = item_counts >= NEAR_UNIVERSAL * n_rows
    frequent = np.flatnonzero((item_counts >= min_count) & ~universal)
    if not len(frequent):
        hint = ""
        usable = np.flatnonzero(~universal)
        if len(usable):
            top = int(usable[np.argmax(item_counts[usable])])
            hint = f" (the most common item, '{conditions[top].name}', covers {_percent(item_counts[top] / n_rows)})"
        raise RuleMiningError(
            f"No rule covers at least {_percent(min_support)} of the {n_rows:,} rows{hint}: "
            f"lower min_support (now {min_support}) or add more columns"
        )
    if max_conditions >= 2:
        _check_pair_count(len(frequent), min_support)

    conflicts = _conflicts([conditions[i] for i in frequent])
    # One last "item" covering every row pads shorter itemsets so that all sizes share one array.
    packed = np.concatenate([packed_items, row_mask(n_rows)[None, :]])
    everyone = n_items
    if method == "bitset":
        levels = _mine_bitset(packed, n_items, frequent, conflicts, min_count, max_conditions, settings)
    else:
        dense = np.unpackbits(packed_items.view(np.uint8), axis=1, count=n_rows, bitorder="little").view(bool).T
        levels = _mine_fpgrowth(dense, frequent, conflicts, min_count, max_conditions)

    itemsets = np.full((sum(len(level) for level in levels), len(levels)), everyone, dtype=np.int64)
    row = 0
    for level in levels:
        itemsets[row : row + len(level), : level.shape[1]] = level
        row += len(level)

    event_bits, n_events = None, 0
    if event is not None:
        event = np.asarray(event, dtype=bool)
        event_bits, n_events = pack_vector(event), int(event.sum())
    # Each itemset's words are read once, for its support, its events (the screening's) and its coverage's hash.
    counts, positives, hashes = _itemset_stats(packed, itemsets, event_bits)
    earned = _earns_its_place(itemsets, counts, packed, everyone)
    itemsets, counts, positives, hashes = itemsets[earned], counts[earned], positives[earned], hashes[earned]
    keep = _distinct_coverage(itemsets, packed, hashes)
    itemsets, counts, positives = itemsets[keep], counts[keep], positives[keep]
    n_mined = len(itemsets)
    note = ""
    if n_mined > max_rules:
        single = (itemsets[:, 1:] == everyone).all(axis=1) if itemsets.shape[1] > 1 else np.ones(n_mined, bool)
        scores = _screening_scores(counts, positives if event is not None else None, n_rows, n_events)
        scores = np.where(single, np.inf, scores)
        order = np.argsort(-scores, kind="stable")[:max_rules]
        chosen = np.sort(order)
        itemsets = itemsets[chosen]
        how = ("likelihood-ratio (G) statistic for a higher event rate" if event is not None else "support")
        note = (f"Kept {max_rules:,} of {n_mined:,} candidate rules (every one-condition rule, then conjunctions "
                f"by {how}); raise max_rules (--max-rules) to keep more")
    rules = tuple(Rule(tuple(conditions[i] for i in itemset if i != everyone)) for itemset in itemsets.tolist())
    rule_bits = np.empty((len(itemsets), packed.shape[1]), dtype=np.uint64)
    for start, block in _chunks(itemsets, packed.shape[1]):
        chunk = _and_bits(packed, block)
        rule_bits[start : start + len(chunk)] = chunk
    return CandidateRules(rules, packed=rule_bits, n_rows=n_rows, note=note, n_mined=n_mined)


def mine_rules(
    items: np.ndarray,
    conditions: Sequence[Condition],
    *,
    min_support: float = 0.05,
    max_conditions: int = 2,
    max_rules: int = 5000,
    method: str = "bitset",
    event=None,
) -> CandidateRules:
    """Every conjunction of 1..max_conditions items covering at least ``min_support`` of the rows.

    Parameters
    ----------
    items : numpy.ndarray of bool, shape (n_rows, n_items)
        ``items[n, j]`` is True when ``conditions[j]`` holds for row ``n``
        (the binarizer's output).
    conditions : sequence of Condition, length n_items
    min_support : float, default 0.05
        Smallest fraction of ALL rows a rule must cover, in (0, 1].
    max_conditions : int, default 2
        Most conditions joined in one rule (>= 1).
    max_rules : int, default 5000
        Keep at most this many rules, screened as the module docstring says.
    method : {"bitset", "fpgrowth"}, default "bitset"
        Our bit-vector miner, or mlxtend's FP-Growth (the reference). Both
        return the same rules.
    event : array-like of bool, shape (n_rows,), optional
        The outcome, for screening.

    Returns
    -------
    CandidateRules
        After the clean-up described in the module docstring, ordered by
        number of conditions, then by the items' order.

    Raises
    ------
    RuleMiningError
        For a bad setting, when no rule reaches ``min_support``, or when the
        search would need too much memory.
    """
    from .bits import pack_columns

    _check_settings(min_support, max_conditions, max_rules, method)
    conditions = list(conditions)
    items = _as_item_matrix(items, conditions)
    n_rows = items.shape[0]
    if n_rows == 0:
        raise RuleMiningError("Rule mining needs at least one row of data: the table is empty")
    return mine_packed(pack_columns(items), n_rows, conditions, min_support=min_support, max_conditions=max_conditions,
                       max_rules=max_rules, method=method, event=event)


@functools.lru_cache(maxsize=65536)
def _column_rule(column: str) -> Rule:
    """The one-condition rule ``column is true`` (kept: refitting on the same columns builds none again)."""
    return Rule((Condition(column, "is true"),))


@functools.lru_cache(maxsize=64)
def _column_rules(columns: tuple) -> tuple:
    """One rule per column, in order (kept: a grid or a refit on the same table builds none again)."""
    return tuple(map(_column_rule, columns))


def rules_from_boolean_columns(frame: pd.DataFrame) -> CandidateRules:
    """Each column of ``frame`` as one candidate rule, as is (the paper's simulation setting).

    Parameters
    ----------
    frame : pandas.DataFrame
        Boolean or 0/1 columns with text names, no missing values. Column
        ``c`` becomes the rule ``Condition(c, "is true")``, named ``c``.

    Returns
    -------
    CandidateRules
        One rule per column, in column order; no support filter, no
        de-duplication.

    Raises
    ------
    DataError
        If the table is empty, a name is not text or repeated, or a column is
        not boolean/0-1.
    """
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"Expected a table (pandas DataFrame), got {type(frame).__name__}: load the data as a table")
    if frame.shape[1] == 0 or len(frame) == 0:
        raise DataError(f"The rule table is empty ({len(frame)} rows, {frame.shape[1]} columns): give it rows and rule columns")
    columns = frame.columns.tolist()  # at once: iterating an Arrow-backed index name by name is slow
    if frame.columns.inferred_type != "string" or not all(columns):
        for position, column in enumerate(columns):
            if not isinstance(column, str) or not column:
                raise DataError(
                    f"Column {position} is named {column!r}, but rule columns need text names: name the columns"
                )
    repeated = sorted(c for c, k in pd.Series(columns).value_counts().items() if k > 1) if not frame.columns.is_unique else []
    if repeated:
        raise DataError(f"Column '{repeated[0]}' appears {columns.count(repeated[0])} times: rename or drop the duplicates")
    values = frame.to_numpy()  # a view when every column is bool (one block): the paper's setting, no dtype scan
    if values.dtype == bool:
        return CandidateRules(rules=_column_rules(tuple(columns)), coverage=values)
    kinds = {dtype: pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype) for dtype in set(frame.dtypes)}
    numeric = [kinds[dtype] for dtype in frame.dtypes]
    if all(numeric):  # one conversion for the whole table (the paper's setting: 0/1 or bool columns)
        values = frame.to_numpy(dtype=float, na_value=np.nan)
        ok = (values == 0.0) | (values == 1.0)
    else:
        values = np.full(frame.shape, np.nan)
        for j, column in enumerate(columns):
            series = frame[column]
            if numeric[j]:
                values[:, j] = series.astype("float64").to_numpy(dtype=float, na_value=np.nan)
            else:  # e.g. an object column of True/False
                values[:, j] = [float(v) if is_number(v) or isinstance(v, (bool, np.bool_)) else np.nan for v in series]
        ok = (values == 0.0) | (values == 1.0)
    if not ok.all():
        j = int(np.flatnonzero(~ok.all(axis=0))[0])
        column, series = columns[j], frame[columns[j]]
        bad = ["NaN" if pd.isna(v) else category_label(v) for v in pd.unique(series[~ok[:, j]])]
        raise DataError(
            f"Column '{column}' must be boolean or 0/1 to be used as a rule, but has values such as "
            f"{_examples(bad)}: fix it or drop the column"
        )
    coverage = values == 1.0
    return CandidateRules(rules=_column_rules(tuple(columns)), coverage=coverage)
