"""Readable conditions, rules (their conjunctions) and rule mining.

A *condition* is one test on one column of the patients' table, such as
``Age >= 60``, ``DischargeTo = home``, ``BedSores`` or ``Creatinine is missing``.
A *rule* is the AND of one or more conditions; it is the IF clause
:math:`c_l(\\cdot)` of a falling rule list (paper, section 2). A rule *covers*
(applies to) a patient when every one of its conditions holds.

Missing values
--------------
A missing value (NaN, None, an empty or blank string) makes every condition
on its column False, except ``<column> is missing``, which is True exactly for
the missing values. So ``Age >= 60`` never silently covers a patient whose age
is unknown, and a rule can still name missingness when it matters.

Mining
------
The candidate IF clauses are mined as in the paper's experiments (section 5:
"rules with a support of at least 5% and a cardinality of at most 2
conditions"): every conjunction of 1 to ``max_conditions`` items (the
binarizer's conditions) covering at least ``min_support`` of ALL rows.
Two miners give the same answer:

- ``method="fpgrowth"``: mlxtend's FP-Growth, the reference;
- ``method="bitset"``: our own, on the items packed as ``uint64`` bit vectors
  (the layout of :mod:`frl_engine.bits`): a set's support is the popcount
  (``np.bitwise_count``) of the AND of its items' vectors. Pairs are counted
  all at once; larger sets Apriori-style (a k-set is counted only if all its
  (k-1)-subsets are frequent).

Both results then get the same clean-up:

1. a conjunction is dropped when two of its conditions are on the same column,
   since that is redundant (``Age >= 45 AND Age >= 60``) or contradictory
   (``Age >= 60 AND Age < 45``, ``Shape = round AND Shape = oval``,
   ``Age is missing AND Age >= 60``); the one exception is a range
   ``Age >= 45 AND Age < 60`` (lower bound below upper bound), which is kept;
2. rules are ordered by number of conditions, then by the items' order
   (lexicographically by item position);
3. a rule covering exactly the same patients as an earlier rule is dropped,
   so the simplest, earliest wording of each set of patients survives.

A support count is ``ceil(min_support * n_rows)`` rows (so 5% of 40 rows is 2
rows), the same for both miners.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError, ModelFileError, RuleMiningError

__all__ = [
    "OPS",
    "Condition",
    "Rule",
    "CandidateRules",
    "mine_rules",
    "rules_from_boolean_columns",
    "format_number",
    "category_label",
    "missing_mask",
    "numeric_values",
    "boolean_values",
    "is_number",
]

OPS = (">=", "<", "==", "is true", "is missing")
TRUE_WORDS = frozenset({"yes", "true", "y", "1"})
FALSE_WORDS = frozenset({"no", "false", "n", "0"})
MINING_METHODS = ("bitset", "fpgrowth")

# Guards against memory blow-up, checked before the work is done.
MAX_ITEM_PAIRS = 5_000_000  # pairs of frequent items (about 3,160 items)
MAX_CANDIDATES = 5_000_000  # candidate k-sets at one Apriori level, k >= 3
_CHUNK_ROWS = 1 << 14  # itemsets processed at once when AND-ing bit vectors


# --------------------------------------------------------------------------
# Reading values the way a clinician wrote them
# --------------------------------------------------------------------------


def format_number(x: float) -> str:
    """Write a number readably: ``60`` not ``60.0``, ``0.24`` not ``0.24000000000000002``.

    Parameters
    ----------
    x : float

    Returns
    -------
    str
        At most 12 significant digits, no exponent, no trailing zeros.
    """
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return np.format_float_positional(x, precision=12, unique=True, fractional=False, trim="-")


def category_label(value) -> str:
    """The text a category value is known by: strings stripped, ``2.0`` written ``2``.

    Parameters
    ----------
    value : object
        One non-missing cell.

    Returns
    -------
    str
    """
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Real):
        return format_number(value)
    return str(value).strip()


def _distinct(series: pd.Series) -> list:
    """Distinct non-NaN values of ``series`` in order of appearance."""
    return list(pd.unique(series.dropna()))


def missing_mask(series: pd.Series) -> np.ndarray:
    """Which cells are missing: NaN, None, NaT, or a blank string.

    Parameters
    ----------
    series : pandas.Series

    Returns
    -------
    numpy.ndarray of bool, shape (len(series),)
    """
    missing = np.array(series.isna(), dtype=bool)  # a writable copy
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        blanks = [v for v in _distinct(series) if isinstance(v, str) and not v.strip()]
        if blanks:
            missing |= series.isin(blanks).to_numpy(dtype=bool)
    return missing


def _examples(values: Sequence, limit: int = 3) -> str:
    """``'abc', '?'``: a few offending values, quoted, for an error message."""
    return ", ".join(f"'{v}'" for v in list(values)[:limit])


def numeric_values(series: pd.Series, column: str) -> np.ndarray:
    """The column as floats, NaN where missing.

    Parameters
    ----------
    series : pandas.Series
    column : str
        Its name, for the error message.

    Returns
    -------
    numpy.ndarray of float, shape (len(series),)

    Raises
    ------
    DataError
        If a non-missing value is not a number.
    """
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype("float64").to_numpy(dtype=float, na_value=np.nan)
    missing = missing_mask(series)
    parsed = pd.to_numeric(series.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
    values = np.array(parsed, dtype=float)  # a writable copy, NaN where unreadable
    bad = ~missing & np.isnan(values)
    if bad.any():
        raise DataError(
            f"Column '{column}' is numeric but has non-numeric values such as "
            f"{_examples(_distinct(series[bad]))}: clean them or mark them missing"
        )
    values[missing] = np.nan
    return values


def _as_truth(value) -> bool | None:
    """True/False for a yes/no-like cell, None if it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Real):
        return {0.0: False, 1.0: True}.get(float(value))
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        try:
            return {0.0: False, 1.0: True}.get(float(word))
        except ValueError:
            return None
    return None


def boolean_values(series: pd.Series, column: str) -> np.ndarray:
    """Which cells say yes (True, 1, "yes", "true", "y" in any case); missing cells are False.

    Parameters
    ----------
    series : pandas.Series
    column : str
        Its name, for the error message.

    Returns
    -------
    numpy.ndarray of bool, shape (len(series),)

    Raises
    ------
    DataError
        If a non-missing value is not yes/no-like.
    """
    missing = missing_mask(series)
    present = series[~missing]
    truths = {}
    bad = []
    for value in _distinct(present):
        truth = _as_truth(value)
        if truth is None:
            bad.append(value)
        else:
            truths[value] = truth
    if bad:
        raise DataError(
            f"Column '{column}' should hold yes/no values but has {_examples(bad)}: "
            "clean them or mark them missing"
        )
    yes = [value for value, truth in truths.items() if truth]
    return series.isin(yes).to_numpy(dtype=bool) & ~missing


def _column(frame: pd.DataFrame, column: str) -> pd.Series:
    """``frame[column]`` with an actionable error if it is absent or duplicated."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"Expected a table (pandas DataFrame), got {type(frame).__name__}: load the data as a table")
    if column not in frame.columns:
        raise DataError(f"Column '{column}' is not in the data: add it (the rules need it)")
    series = frame[column]
    if isinstance(series, pd.DataFrame):
        raise DataError(f"Column '{column}' appears {series.shape[1]} times: rename or drop the duplicates")
    return series


# --------------------------------------------------------------------------
# Conditions and rules
# --------------------------------------------------------------------------


def is_number(value) -> bool:
    """A real number that is not a bool (``True`` is not a threshold)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Condition:
    """One readable test on one column.

    Parameters
    ----------
    column : str
        Column name in the patients' table.
    op : str
        One of ``">="``, ``"<"``, ``"=="``, ``"is true"``, ``"is missing"``.
    value : float or str or None
        The threshold (float) for ``>=`` and ``<``, the category (str) for
        ``==``, None otherwise.
    """

    column: str
    op: str
    value: float | str | None = None

    def __post_init__(self):
        if not isinstance(self.column, str) or not self.column:
            raise ValueError(f"A condition's column must be a non-empty name, got {self.column!r}")
        if self.op not in OPS:
            raise ValueError(f"Unknown condition operator {self.op!r}: use one of {', '.join(OPS)}")
        if self.op in (">=", "<"):
            if not is_number(self.value) or not math.isfinite(self.value):
                raise ValueError(f"Condition '{self.column} {self.op}' needs a finite number, got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        elif self.op == "==":
            if not isinstance(self.value, str) or not self.value:
                raise ValueError(f"Condition '{self.column} =' needs a category name, got {self.value!r}")
        elif self.value is not None:
            raise ValueError(f"Condition '{self.column} {self.op}' takes no value, got {self.value!r}")

    @property
    def name(self) -> str:
        """How the condition reads: ``Age >= 60``, ``Shape = irregular``, ``BedSores``, ``Age is missing``."""
        if self.op in (">=", "<"):
            return f"{self.column} {self.op} {format_number(self.value)}"
        if self.op == "==":
            return f"{self.column} = {self.value}"
        if self.op == "is true":
            return self.column
        return f"{self.column} is missing"

    def evaluate(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows satisfy the condition.

        Parameters
        ----------
        frame : pandas.DataFrame
            Must have the column.

        Returns
        -------
        numpy.ndarray of bool, shape (len(frame),)
            A missing value gives False, except for ``is missing``.

        Raises
        ------
        DataError
            If the column is absent, or its values cannot be read for this test
            (text in a numeric column, "maybe" in a yes/no column).
        """
        series = _column(frame, self.column)
        if self.op == "is missing":
            return missing_mask(series)
        if self.op == "is true":
            return boolean_values(series, self.column)
        if self.op == "==":
            matching = [v for v in _distinct(series) if category_label(v) == self.value]  # never a missing value
            return series.isin(matching).to_numpy(dtype=bool)
        values = numeric_values(series, self.column)
        with np.errstate(invalid="ignore"):
            return values >= self.value if self.op == ">=" else values < self.value

    def to_dict(self) -> dict:
        """JSON-safe ``{"column", "op", "value"}``; whole-number thresholds are written as ints."""
        value = self.value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)
        return {"column": self.column, "op": self.op, "value": value}

    @classmethod
    def from_dict(cls, d: dict) -> Condition:
        """Rebuild a condition written by :meth:`to_dict`.

        Raises
        ------
        ModelFileError
            If ``d`` is not a well-formed condition.
        """
        if not isinstance(d, dict):
            raise ModelFileError(f"A condition should be a JSON object, got {d!r}: the model file is damaged")
        unknown = sorted(set(d) - {"column", "op", "value"})
        if unknown or "column" not in d or "op" not in d:
            raise ModelFileError(
                f"A condition should have keys column, op, value; got {sorted(d)}: the model file is damaged"
            )
        value = d.get("value")
        if d["op"] in (">=", "<") and not is_number(value):
            raise ModelFileError(f"Condition {d!r} needs a number as value: the model file is damaged")
        try:
            return cls(d["column"], d["op"], value)
        except ValueError as err:
            raise ModelFileError(f"Bad condition {d!r} ({err}): the model file is damaged") from None


@dataclass(frozen=True)
class Rule:
    """An IF clause: the AND of its conditions.

    Parameters
    ----------
    conditions : tuple of Condition
        At least one.
    """

    conditions: tuple[Condition, ...]

    def __post_init__(self):
        if isinstance(self.conditions, Condition):
            raise ValueError("Rule takes a tuple of conditions, e.g. Rule((condition,))")
        conditions = tuple(self.conditions)
        if not conditions:
            raise ValueError("A rule needs at least one condition")
        for condition in conditions:
            if not isinstance(condition, Condition):
                raise ValueError(f"A rule's conditions must be Condition objects, got {condition!r}")
        object.__setattr__(self, "conditions", conditions)

    @property
    def name(self) -> str:
        """The conditions' names joined with ``" AND "``."""
        return " AND ".join(condition.name for condition in self.conditions)

    def evaluate(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows the rule covers (all its conditions hold).

        Parameters
        ----------
        frame : pandas.DataFrame

        Returns
        -------
        numpy.ndarray of bool, shape (len(frame),)
        """
        covered = self.conditions[0].evaluate(frame)
        for condition in self.conditions[1:]:
            covered = covered & condition.evaluate(frame)
        return covered

    def to_dict(self) -> dict:
        """JSON-safe ``{"name", "conditions": [...]}``."""
        return {"name": self.name, "conditions": [c.to_dict() for c in self.conditions]}

    @classmethod
    def from_dict(cls, d: dict) -> Rule:
        """Rebuild a rule written by :meth:`to_dict`.

        Other keys (a model file stores a rule's probability and support next
        to it) are ignored. A ``name`` that does not match the conditions is
        refused, since it means the file was edited inconsistently.

        Raises
        ------
        ModelFileError
            If ``d`` is not a well-formed rule.
        """
        if not isinstance(d, dict) or not isinstance(d.get("conditions"), list) or not d["conditions"]:
            raise ModelFileError(
                f"A rule should be a JSON object with a non-empty list 'conditions', got {d!r}: "
                "the model file is damaged"
            )
        rule = cls(tuple(Condition.from_dict(c) for c in d["conditions"]))
        if "name" in d and d["name"] != rule.name:
            raise ModelFileError(
                f"Rule name {d['name']!r} does not match its conditions ({rule.name!r}): the model file is damaged"
            )
        return rule


@dataclass(frozen=True, eq=False)
class CandidateRules:
    """The candidate IF clauses and which rows each covers.

    Parameters
    ----------
    rules : tuple of Rule
    coverage : numpy.ndarray of bool, shape (n_rows, n_rules)
        ``coverage[n, j]`` is True when rule ``j`` applies to row ``n``.
        Stored read-only.
    """

    rules: tuple[Rule, ...]
    coverage: np.ndarray

    def __post_init__(self):
        rules = tuple(self.rules)
        coverage = np.asarray(self.coverage)
        if coverage.dtype != bool or coverage.ndim != 2 or coverage.shape[1] != len(rules):
            raise ValueError(
                f"coverage must be a bool array of shape (n_rows, {len(rules)}), "
                f"got {coverage.dtype} {coverage.shape}"
            )
        coverage = coverage.view()
        coverage.setflags(write=False)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "coverage", coverage)

    @property
    def names(self) -> list[str]:
        """The rules' names, in order."""
        return [rule.name for rule in self.rules]

    @property
    def support(self) -> np.ndarray:
        """Fraction of rows each rule covers, shape (n_rules,)."""
        return self.coverage.mean(axis=0)


# --------------------------------------------------------------------------
# Mining
# --------------------------------------------------------------------------


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

    Every pair's count is the popcount of the AND of the two packed columns,
    computed for blocks of items against all frequent items at once.
    """
    columns = packed[frequent]
    n, n_words = columns.shape
    counts = np.empty((n, n), dtype=np.int64)
    block = max(1, (1 << 22) // (n * n_words))  # at most 32 MB of words at once
    for start in range(0, n, block):
        both = columns[start : start + block, None, :] & columns[None, :, :]
        counts[start : start + block] = np.bitwise_count(both).sum(axis=2, dtype=np.int64)
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
    counts = np.empty(len(itemsets), dtype=np.int64)
    for start in range(0, len(itemsets), _CHUNK_ROWS):
        chunk = itemsets[start : start + _CHUNK_ROWS]
        counts[start : start + len(chunk)] = np.bitwise_count(_and_bits(packed, chunk)).sum(axis=1)
    return counts


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
        valid = np.ones(len(sets), dtype=bool)
        for a in range(size):
            for b in range(a + 1, size):
                valid &= ~conflicts[position[sets[:, a]], position[sets[:, b]]]
        levels.append(sets[valid])
    return levels


def _distinct_coverage(itemsets: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the itemsets whose coverage differs from every earlier one."""
    n_words = packed.shape[1]
    multipliers = (np.arange(1, n_words + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    hashes = np.empty(len(itemsets), dtype=np.uint64)
    for start in range(0, len(itemsets), _CHUNK_ROWS):
        chunk = itemsets[start : start + _CHUNK_ROWS]
        hashes[start : start + len(chunk)] = (_and_bits(packed, chunk) * multipliers).sum(axis=1, dtype=np.uint64)
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    shared = counts[inverse] > 1  # same hash: maybe the same coverage, compare the bits themselves
    keep = ~shared
    suspects = np.flatnonzero(shared)
    if len(suspects):
        _, first = np.unique(_and_bits(packed, itemsets[suspects]), axis=0, return_index=True)
        keep[suspects[first]] = True
    return np.flatnonzero(keep)


def mine_rules(
    items: np.ndarray,
    conditions: Sequence[Condition],
    *,
    min_support: float = 0.05,
    max_conditions: int = 2,
    max_rules: int = 5000,
    method: str = "bitset",
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
        Refuse to return more rules than this.
    method : {"bitset", "fpgrowth"}, default "bitset"
        Our bit-vector miner, or mlxtend's FP-Growth (the reference). Both
        return the same rules.

    Returns
    -------
    CandidateRules
        After the clean-up described in the module docstring, ordered by
        number of conditions, then by the items' order.

    Raises
    ------
    RuleMiningError
        For a bad setting, when no rule reaches ``min_support``, when more
        than ``max_rules`` rules are found, or when the search would need too
        much memory.
    """
    _check_settings(min_support, max_conditions, max_rules, method)
    conditions = list(conditions)
    items = _as_item_matrix(items, conditions)
    n_rows, n_items = items.shape
    if n_rows == 0:
        raise RuleMiningError("Rule mining needs at least one row of data: the table is empty")
    settings = (
        f"raise min_support (now {min_support}) or lower max_conditions (now {max_conditions}), or raise max_rules"
    )

    min_count = max(1, math.ceil(round(min_support * n_rows, 6)))
    item_counts = items.sum(axis=0)
    frequent = np.flatnonzero(item_counts >= min_count)
    if not len(frequent):
        hint = ""
        if n_items:
            top = int(np.argmax(item_counts))
            hint = f" (the most common item, '{conditions[top].name}', covers {_percent(item_counts[top] / n_rows)})"
        raise RuleMiningError(
            f"No rule covers at least {_percent(min_support)} of the {n_rows:,} rows{hint}: "
            f"lower min_support (now {min_support}) or add more columns"
        )
    if max_conditions >= 2:
        _check_pair_count(len(frequent), min_support)

    # Conflicts among the frequent items only: no frequent set holds any other item.
    conflicts = _conflicts([conditions[i] for i in frequent])
    # Packed item columns (frl_engine.bits layout), plus one last "item" covering every row,
    # used to pad shorter itemsets so that all sizes share one array.
    from .bits import pack_columns, row_mask  # numba loads on first mining, not when the binarizer is imported

    packed = np.concatenate([pack_columns(items), row_mask(n_rows)[None, :]])
    everyone = n_items
    if method == "bitset":
        levels = _mine_bitset(packed, n_items, frequent, conflicts, min_count, max_conditions, settings)
    else:
        levels = _mine_fpgrowth(items, frequent, conflicts, min_count, max_conditions)

    itemsets = np.full((sum(len(level) for level in levels), len(levels)), everyone, dtype=np.int64)
    row = 0
    for level in levels:
        itemsets[row : row + len(level), : level.shape[1]] = level
        row += len(level)

    keep = _distinct_coverage(itemsets, packed)
    if len(keep) > max_rules:
        raise RuleMiningError(
            f"Rule mining found {len(keep):,} rules, more than max_rules={max_rules}: {settings}"
        )
    itemsets = itemsets[keep]
    rules = tuple(Rule(tuple(conditions[i] for i in itemset if i != everyone)) for itemset in itemsets.tolist())
    by_rule = np.empty((len(rules), n_rows), dtype=bool)  # one contiguous row per rule
    for start in range(0, len(itemsets), _CHUNK_ROWS):
        chunk = _and_bits(packed, itemsets[start : start + _CHUNK_ROWS])
        by_rule[start : start + len(chunk)] = np.unpackbits(
            chunk.view(np.uint8), axis=1, count=n_rows, bitorder="little"
        ).view(bool)
    return CandidateRules(rules=rules, coverage=by_rule.T)


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
    columns = list(frame.columns)
    for position, column in enumerate(columns):
        if not isinstance(column, str) or not column:
            raise DataError(
                f"Column {position} is named {column!r}, but rule columns need text names: name the columns"
            )
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise DataError(f"Column '{repeated[0]}' appears {columns.count(repeated[0])} times: rename or drop the duplicates")
    coverage = np.zeros(frame.shape, dtype=bool)
    for j, column in enumerate(columns):
        series = frame[column]
        if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
            values = series.astype("float64").to_numpy(dtype=float, na_value=np.nan)
        else:  # e.g. an object column of True/False
            values = np.array([float(v) if is_number(v) or isinstance(v, (bool, np.bool_)) else np.nan for v in series])
        ok = np.isin(values, (0.0, 1.0))
        if not ok.all():
            bad = ["NaN" if pd.isna(v) else category_label(v) for v in pd.unique(series[~ok])]
            raise DataError(
                f"Column '{column}' must be boolean or 0/1 to be used as a rule, but has values such as "
                f"{_examples(bad)}: fix it or drop the column"
            )
        coverage[:, j] = values == 1.0
    rules = tuple(Rule((Condition(column, "is true"),)) for column in columns)
    return CandidateRules(rules=rules, coverage=coverage)
