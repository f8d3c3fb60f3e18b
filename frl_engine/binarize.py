"""From a raw clinical table to readable yes/no *items*, packed as bits.

Rules are built from items, each a :class:`~frl_engine.rules.Condition` a
clinician can read. How a column is read (its *kind*, and why) is decided in
:mod:`frl_engine.columns`; this module turns each used column into items:

- **boolean** (``BedSores`` = yes/no, true/false, y/n, 0/1): one item ``BedSores``.
- **numeric** (``Age``, or age bands ``[70-80)`` read by their lower bound):
  thresholds at evenly spaced interior quantiles (25/50/75% for
  ``n_thresholds=3``), rounded to 2 significant figures (59.73 -> 60), or to as
  many more as keep the quantiles' cuts apart (sodium 133 / 137 / 143, not 130 /
  140; pH 7.35; a year 2019), and two
  items per threshold, ``Age >= 60`` and ``Age < 60``. A threshold at the
  column's minimum moves up to the smallest value above it (``PriorAdmissions
  >= 1``). When rounding and ties leave fewer thresholds than asked for (a
  count that is mostly 0), the quantiles of the values above the most common
  one are added, so the tail still gets cuts (``number_inpatient >= 2``, ``>= 3``).
  Thresholds a user gives are used exactly as given.
- **categorical** and **nominal** (integer labels such as a discharge code):
  one item per level covering at least ``min_support`` of the rows
  (``DischargeTo = home``), most frequent first; rarer levels make no item of
  their own and are never refused. When the column has 3 to 10 distinct
  values, each level with an item also gets its negation
  (``safety is not low``, ``DischargeTo is not home``) if that covers at least
  ``min_support`` and less than 99% of the rows: an event that needs several
  things to be *absent* (a car is acceptable only if its safety is not low and
  it seats more than two) can then head a falling list. A negation that is
  (nearly, 95% or more) one other level is left to that level's item
  (``gender is not Female`` when the rest is Male bar a few); with two levels
  that is always so. With many values (a discharge code among twenty-five)
  "not this one" is a grab bag, better read through the levels.
- **code** (ICD-9/ICD-10/ATC-like): an item per frequent code
  (``diag_1 = 250.83``) and per frequent code group by prefix
  (``diag_1 starts with 428``, ``diag_1 starts with 25``), most specific
  first, so rare codes still count through their group.
- **code list** (several codes in one cell: ``428|250.01``, ``I50.9; E11.65``): the same items, each true when
  the cell's list holds the code (``diagnoses includes 428``) or a code of the group (``diagnoses includes a
  code starting with 25``); a code's support counts each patient once, however often the list repeats it.

A missing value (NaN, blank, ``?``, ``NA``, ``NULL``...) matches no item
(``is not`` included) except ``<column> is missing``, which exists when the fitting data had missing values
in that column (and it is not near-universal).

Items are computed column by column from the column's distinct values and
packed into ``uint64`` bit vectors (:meth:`Binarizer.transform_packed`): no
dense one-hot table is built. Everything learned by :meth:`Binarizer.fit` is a
list of frozen :class:`ColumnSpec`, and transforming new data applies exactly that.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .columns import (
    ITEM_KINDS,
    NEAR_CONSTANT_SHARE,
    ColumnReading,
    boolean_values,
    canonical_kind,
    category_label,
    category_labels,
    code_label,
    code_prefixes,
    listed_codes,
    has_identifier_name,
    is_number,
    looks_like_identifier,
    missing_mask,
    numeric_values,
    read_column,
    read_columns,
    written_units,
)
from .errors import DataError, ModelFileError
from .mining import EARNS_ITS_PLACE, NEAR_UNIVERSAL
from .rules import Condition, list_holds

__all__ = ["KINDS", "ColumnSpec", "infer_column_kind", "round_threshold", "Binarizer", "has_identifier_name",
           "looks_like_identifier"]

KINDS = ITEM_KINDS
#: Most distinct values a categorical or nominal column may have for its levels to get ``is not`` items too.
NEGATED_MAX_LEVELS = 10


def round_threshold(x: float, digits: int = 2) -> float:
    """Round to ``digits`` significant figures: 59.73 -> 60, 0.2374 -> 0.24, 1234 -> 1200."""
    return float(f"{float(x):.{digits}g}")


def infer_column_kind(series: pd.Series) -> str:
    """The kind :func:`frl_engine.columns.read_column` gives this column (name-blind: ``"column"``).

    Returns one of ``numeric``, ``categorical``, ``boolean``, ``code``, ``nominal``,
    ``identifier``, ``near-constant``, ``constant``, ``empty``, ``unsupported``.
    """
    return read_column(str(series.name) if series.name is not None else "column", series).kind


def _check_cuts_against_bands(column: str, series: pd.Series, cuts) -> None:
    """Refuse a user's threshold that falls inside a band of a banded column (``65`` against ``[60-70)``).

    Patients in a band are read at its lower bound, so ``age >= 65`` would catch exactly the
    patients of ``age >= 70`` while the card says otherwise.
    """
    from .columns import band_bounds

    bands = [(label, b) for label in pd.unique(series.dropna()) if (b := band_bounds(label)) is not None]
    for t in cuts:
        inside = [label for label, (lo, hi) in bands if lo < t < hi]
        if inside:
            edges = sorted({e for _, (lo, hi) in bands for e in (lo, hi) if math.isfinite(e)})
            near = sorted(edges, key=lambda e: abs(e - t))[:2]
            raise DataError(f"Column '{column}' is written in bands such as {str(inside[0]).strip()!r}, and the "
                            f"threshold {t:g} falls inside it: its patients are all read at the band's lower bound, "
                            f"so the rule would not mean what it says. Use band edges, such as "
                            f"{' or '.join(f'{e:g}' for e in sorted(near))}")


@dataclass(frozen=True)
class ColumnSpec:
    """What the binarizer learned about one column.

    Parameters
    ----------
    name : str
    kind : {"numeric", "categorical", "boolean", "code", "nominal", "code list"}
    thresholds : tuple of float
        Cut points, ascending (numeric only).
    categories : tuple of str
        Levels with an item (categorical, nominal), or whole codes with an item (code, code list).
    has_missing : bool
        Whether the column has an ``is missing`` item.
    prefixes : tuple of str
        Code groups with an item (code and code list only), most specific first.
    negated : tuple of str
        Levels whose negation is an item, ``<column> is not <level>``
        (categorical and nominal only).
    flag : bool
        A checkbox column: one value (``X``, ``Y``, ``1``) where the finding is present, blank where it is
        not (:func:`frl_engine.columns.is_flag`).  Its blanks mean "no", so scoring new patients does not
        report them as unknown values.
    """

    name: str
    kind: str
    thresholds: tuple[float, ...] = ()
    categories: tuple[str, ...] = ()
    has_missing: bool = False
    prefixes: tuple[str, ...] = ()
    negated: tuple[str, ...] = ()
    flag: bool = False
    unit: str = ""   # a numeric column's numbers written with one unit at fit time ("kg" of "72 kg"), else ""
    missing: float = 0.0   # the share of rows missing at fit time (what a new table's empty cells are compared to)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"A column spec needs a column name, got {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(f"Column kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        thresholds = tuple(float(t) for t in self.thresholds)
        categories = tuple(self.categories)
        prefixes = tuple(self.prefixes)
        negated = tuple(self.negated)
        if self.kind == "numeric":
            if not (thresholds or self.has_missing) or not all(math.isfinite(t) for t in thresholds):
                raise ValueError(f"Numeric column '{self.name}' needs finite thresholds, got {self.thresholds!r}")
            if any(a >= b for a, b in zip(thresholds, thresholds[1:])):
                raise ValueError(f"Thresholds of '{self.name}' must increase, got {self.thresholds!r}")
        elif thresholds:
            raise ValueError(f"Only numeric columns have thresholds ('{self.name}' is {self.kind})")
        if self.kind in ("categorical", "nominal", "code", "code list"):
            if not all(isinstance(c, str) and c for c in categories + prefixes):
                raise ValueError(f"Column '{self.name}' needs text levels, got {self.categories!r}")
            if not (categories or prefixes or self.has_missing):
                raise ValueError(f"Column '{self.name}' ({self.kind}) has no item")
            if len(set(categories)) != len(categories) or len(set(prefixes)) != len(prefixes):
                raise ValueError(f"Levels of '{self.name}' repeat: {self.categories!r}")
        elif categories:
            raise ValueError(f"Only categorical, nominal and code columns have levels ('{self.name}' is {self.kind})")
        if prefixes and self.kind not in ("code", "code list"):
            raise ValueError(f"Only code columns have code groups ('{self.name}' is {self.kind})")
        if negated and self.kind not in ("categorical", "nominal"):
            raise ValueError(f"Only categorical and nominal columns have 'is not' items ('{self.name}' is {self.kind})")
        if not all(isinstance(c, str) and c for c in negated) or len(set(negated)) != len(negated):
            raise ValueError(f"'is not' levels of '{self.name}' must be distinct texts, got {self.negated!r}")
        if not isinstance(self.has_missing, (bool, np.bool_)):
            raise ValueError(f"has_missing must be true or false, got {self.has_missing!r}")
        object.__setattr__(self, "thresholds", thresholds)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "prefixes", prefixes)
        object.__setattr__(self, "negated", negated)
        object.__setattr__(self, "has_missing", bool(self.has_missing))
        object.__setattr__(self, "flag", bool(self.flag))

    def conditions(self) -> list[Condition]:
        """The column's items, in order (the columns of :meth:`item_matrix`)."""
        if self.kind == "numeric":
            items = [Condition(self.name, op, t) for t in self.thresholds for op in (">=", "<")]
        elif self.kind == "code list":
            items = [Condition(self.name, "includes", c) for c in self.categories]
            items += [Condition(self.name, "includes code starting with", p) for p in self.prefixes]
        elif self.kind in ("categorical", "nominal", "code"):
            items = [Condition(self.name, "==", c) for c in self.categories]
            items += [Condition(self.name, "!=", c) for c in self.negated]
            items += [Condition(self.name, "starts with", p) for p in self.prefixes]
        else:
            items = [Condition(self.name, "is true")]
        if self.has_missing:
            items.append(Condition(self.name, "is missing"))
        return items

    def item_matrix(self, series: pd.Series) -> np.ndarray:
        """The items of this column for each row, shape (len(series), n_items), bool.

        The same truth as evaluating each of :meth:`conditions` on the column
        (tested), computed once per distinct value.
        """
        n_items = len(self.conditions())
        out = np.zeros((len(series), n_items), dtype=bool)
        missing = missing_mask(series)
        if self.kind == "numeric":
            values = numeric_values(series, self.name, scoring=True)  # fit read the column before
            with np.errstate(invalid="ignore"):
                for j, t in enumerate(self.thresholds):
                    out[:, 2 * j] = values >= t
                    out[:, 2 * j + 1] = values < t
        elif self.kind == "boolean":
            out[:, 0] = boolean_values(series, self.name)
        elif self.kind == "code list":
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
            lists = [listed_codes(v) for v in np.asarray(uniques, dtype=object)]
            present = (codes >= 0) & ~missing
            truth = np.zeros((len(lists) + 1, n_items), dtype=bool)  # last row: NaN cells
            for j, condition in enumerate(self.conditions()[: len(self.categories) + len(self.prefixes)]):
                want = condition.value.upper()
                truth[: len(lists), j] = [list_holds(listed, want, condition.op) for listed in lists]
            out[:] = truth[np.where(present, codes, len(lists))]
        else:
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
            labels = [category_label(v) for v in np.asarray(uniques, dtype=object)]
            present = (codes >= 0) & ~missing
            truth = np.zeros((len(labels) + 1, n_items), dtype=bool)  # last row: NaN cells
            folded = [label.casefold() for label in labels]  # levels match without case, as Condition does
            for j, category in enumerate(self.categories):
                truth[: len(labels), j] = [f == category.casefold() for f in folded]
            for k, category in enumerate(self.negated):  # any other known value (never a missing one)
                j = len(self.categories) + k
                truth[: len(labels), j] = [f != category.casefold() for f in folded]
            upper = [label.upper() for label in labels]
            for k, prefix in enumerate(self.prefixes):
                j = len(self.categories) + len(self.negated) + k
                want = prefix.upper()
                truth[: len(labels), j] = [u.startswith(want) for u in upper]
            out[:] = truth[np.where(present, codes, len(labels))]
        if self.has_missing:
            out[:, -1] = missing
        return out

    def to_dict(self) -> dict:
        """JSON-safe dict; whole-number thresholds are written as ints."""
        d = {
            "name": self.name,
            "kind": self.kind,
            "thresholds": [int(t) if t.is_integer() and abs(t) < 2**53 else t for t in self.thresholds],
            "categories": list(self.categories),
            "has_missing": self.has_missing,
        }
        if self.prefixes:
            d["prefixes"] = list(self.prefixes)
        if self.negated:
            d["negated"] = list(self.negated)
        if self.flag:
            d["flag"] = True
        if self.unit:
            d["unit"] = self.unit
        if self.missing:
            d["missing"] = self.missing
        return d

    @classmethod
    def from_dict(cls, d) -> ColumnSpec:
        """Rebuild a spec written by :meth:`to_dict`.

        Raises
        ------
        ModelFileError
            If ``d`` is not a well-formed column spec.
        """
        if not isinstance(d, dict) or "name" not in d or "kind" not in d:
            raise ModelFileError(f"A binarizer column should be an object with name and kind, got {d!r}: the model file is damaged")
        unknown = sorted(set(d) - {"name", "kind", "thresholds", "categories", "has_missing", "prefixes", "negated",
                                   "flag", "unit", "missing"})
        thresholds = d.get("thresholds", [])
        categories = d.get("categories", [])
        prefixes = d.get("prefixes", [])
        negated = d.get("negated", [])
        if (unknown or not isinstance(thresholds, list) or not all(is_number(t) for t in thresholds)
                or not isinstance(categories, list) or not isinstance(prefixes, list) or not isinstance(negated, list)
                or not isinstance(d.get("unit", ""), str) or not is_number(d.get("missing", 0.0))):
            raise ModelFileError(f"Bad binarizer column {d!r}: the model file is damaged")
        try:
            return cls(d["name"], d["kind"], tuple(thresholds), tuple(categories), d.get("has_missing", False),
                       tuple(prefixes), tuple(negated), bool(d.get("flag", False)), d.get("unit", ""),
                       float(d.get("missing", 0.0)))
        except ValueError as err:
            raise ModelFileError(f"Bad binarizer column {d!r} ({err}): the model file is damaged") from None


def _cuts(values: np.ndarray, levels: np.ndarray, low: float, high: float, ordered: np.ndarray) -> list[float]:
    """Rounded cut points at the given quantile levels of ``values``, inside (low, high], distinct splits.

    Rounded to 2 significant figures. When that merges cuts the unrounded quantiles keep apart and the
    rounding step is coarse for the column's range (above a tenth of it), more figures are used until
    the cuts are apart: a narrow range far from 0 (sodium 125 to 149, pH 7.2 to 7.5, a year) would
    otherwise lose its cuts (sodium's quartiles 131, 138, 143 round to 130 and 140), while quantiles
    bunched in a wide range (ages 59.6, 60.1, 60.4 of 50 to 90) still read as one ``Age >= 60``.
    On whole numbers (a count of visits) a cut between two of them is written as the next whole number:
    ``visits >= 8``, the same patients as ``visits >= 7.5``.
    """
    whole = bool(np.all(ordered == np.floor(ordered)))
    quantiles = np.quantile(values, levels)
    above_min = ordered[np.searchsorted(ordered, low, side="right")]
    wanted = len({int(np.searchsorted(ordered, max(q, above_min))) for q in quantiles if q < high})
    top = max(abs(float(low)), abs(float(high)))
    magnitude = math.floor(math.log10(top)) if top > 0 else 0
    best: list[float] = []
    for digits in range(2, 7):
        if best and 10.0 ** (magnitude - digits + 2) <= (high - low) / 10:
            break   # the last rounding step was already fine for this range: its merged cuts read as one
        chosen, splits = [], set()
        for q in quantiles:
            t = round_threshold(q, digits)
            if whole and t != math.floor(t):
                t = float(math.ceil(t))
            if t <= low:  # everyone would be on one side: cut just above the minimum instead
                t = round_threshold(above_min, digits)
                if t <= low:
                    t = float(above_min)
            split = int(np.searchsorted(ordered, t))
            if low < t <= high and split not in splits:
                chosen.append(t)
                splits.add(split)
        if len(chosen) > len(best):
            best = chosen
        if best and len(best) >= wanted:
            break
    return best or [float(above_min)]


def _quantile_thresholds(values: np.ndarray, n_thresholds: int, min_count: int = 1) -> tuple[float, ...]:
    """Readable cut points at evenly spaced interior quantiles (see the module docstring)."""
    low, high = values.min(), values.max()
    if low == high:
        return ()
    ordered = np.sort(values)
    levels = np.arange(1, n_thresholds + 1) / (n_thresholds + 1)
    chosen = _cuts(ordered, levels, low, high, ordered)  # the same quantiles, quicker to select from sorted values
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1], [True]]))
    largest_tie = int(np.diff(starts).max())  # the most rows sharing one value
    if len(chosen) < n_thresholds and largest_tie >= len(values) / (n_thresholds + 1):
        # Ties (a count that is mostly 0): cut the values above the top threshold found so far too.
        tail = values[values >= max(chosen)]
        if len(tail) and tail.min() < tail.max():
            extra = _cuts(tail, levels, tail.min(), high, ordered)
            for t in extra:
                upper = len(ordered) - int(np.searchsorted(ordered, t))
                if t not in chosen and upper >= min_count and round_threshold(t) == t:
                    chosen.append(t)
    chosen = sorted(set(chosen))
    # Keep one threshold per distinct split, and at most n_thresholds + the tail's (never more than 2n).
    return tuple(chosen[: 2 * n_thresholds])


def _suggest(name: str, columns: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, columns, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Binarizer:
    """Turns a raw clinical table into readable items (bits).

    Parameters
    ----------
    n_thresholds : int, default 3
        Quantile thresholds per numeric column (3: the 25/50/75% quantiles).
    thresholds : dict of str to sequence of float, optional
        Your own thresholds for some columns, used as given (``{"Age": [45, 60]}``).
    column_kinds : dict of str to str, optional
        Force a kind for some columns (``"numeric"``, ``"categorical"``,
        ``"boolean"``, ``"code"``, ``"nominal"``, ``"code list"``, or ``"identifier"`` to leave
        it out) instead of inferring it (:mod:`frl_engine.columns`).
    exclude : sequence of str, default ()
        Columns to leave out (identifiers, the outcome).
    max_categories : int, default 30
        Most levels (or codes, or code groups) of one column that get an item;
        the most frequent are kept.
    min_support : float, default 0
        A level, code or code group gets an item only if it covers at least
        this fraction of rows (the estimator passes its ``min_support``: a rarer
        item could never be in a rule).
    negate_levels : bool, default True
        Give the levels with an item of a categorical or nominal column with
        3 to 10 distinct values a ``<column> is not <level>`` item too, when it covers at least ``min_support`` and
        less than 99% of the rows, and is not (95% or more) one other level.

    Attributes
    ----------
    readings_ : list of ColumnReading
        How every column was read, and why (kinds, reasons), in table order.
    specs_ : list of ColumnSpec
        What was learned, one per used column, in table order.
    conditions_ : list of Condition
        The items, in order: column ``j`` of :meth:`transform`'s output.
    constant_columns_ : tuple of str
        Columns that make no item (constant, near-constant, empty, identifiers...).
    """

    def __init__(self, *, n_thresholds: int = 3, thresholds: dict[str, Sequence[float]] | None = None,
                 column_kinds: dict[str, str] | None = None, exclude: Sequence[str] = (), max_categories: int = 30,
                 min_support: float = 0.0, negate_levels: bool = True):
        self.n_thresholds = n_thresholds
        self.thresholds = thresholds
        self.column_kinds = column_kinds
        self.exclude = exclude
        self.max_categories = max_categories
        self.min_support = min_support
        self.negate_levels = negate_levels

    # ---- fitting --------------------------------------------------------

    def fit(self, frame: pd.DataFrame) -> Binarizer:
        """Read each column (kind, reason) and learn its thresholds, levels and code groups.

        Raises
        ------
        DataError
            For an unusable table or setting; the message names the column and what to do.
        """
        _check_table(frame)
        columns = list(frame.columns)
        user_thresholds, kinds, excluded = self._checked_settings(columns)
        declared = dict(self.column_kinds or {})
        for name in user_thresholds:
            inferred = read_column(str(name), frame[name]) if name not in declared else None
            if inferred is not None and inferred.kind in ("categorical", "code", "boolean", "code list"):
                raise DataError(f"Thresholds are given for column '{name}', which holds {inferred.kind} values such "
                                f"as {inferred.examples}, not numbers: drop its thresholds (or clean the column)")
        n_rows = len(frame)
        min_count = max(1, math.ceil(round(float(self.min_support) * n_rows, 6)))
        readings, specs, skipped = [], [], []
        for reading in read_columns(frame, column_kinds=kinds, exclude=excluded):
            if reading.name in excluded:
                readings.append(reading)
                continue
            series = frame[reading.name]
            spec, reading = self._fit_column(series, reading, user_thresholds.get(reading.name), min_count)
            if spec is not None and reading.missing_share > 0:
                spec = dataclasses.replace(spec, missing=round(float(reading.missing_share), 4))
            readings.append(reading)
            if spec is None:
                skipped.append(reading.name)
            else:
                specs.append(spec)
        if len(excluded) and all(c in excluded for c in columns):
            raise DataError("Every column is left out, so there is nothing to make items from: use more columns "
                            "(fewer --exclude; on the dashboard, tick Use on more of them)")
        if not specs:
            shown = "; ".join(f"{r.name}: {r.reason}" for r in readings[:4])
            by_support = [r for r in readings if "support" in r.reason]
            if by_support and len(by_support) >= len([r for r in readings if r.kind in ITEM_KINDS]) / 2:
                raise DataError(f"No column can make an item at a minimum support of {float(self.min_support):.0%}: "
                                f"no level or threshold covers that many patients ({shown}); lower the minimum "
                                "support")
            raise DataError(f"No column can make an item ({shown}): use columns that vary, or declare their kinds")
        self.readings_ = readings
        self._set_specs(specs, tuple(skipped))
        return self

    def _set_specs(self, specs: list[ColumnSpec], constant: tuple[str, ...] = ()) -> None:
        self.specs_ = list(specs)
        self.conditions_ = [condition for spec in self.specs_ for condition in spec.conditions()]
        self.constant_columns_ = constant

    def _checked_settings(self, columns: list[str]):
        if not isinstance(self.n_thresholds, numbers.Integral) or isinstance(self.n_thresholds, bool) or self.n_thresholds < 1:
            raise DataError(f"n_thresholds must be a whole number of at least 1, got {self.n_thresholds!r}")
        if not isinstance(self.max_categories, numbers.Integral) or isinstance(self.max_categories, bool) or self.max_categories < 2:
            raise DataError(f"max_categories must be a whole number of at least 2, got {self.max_categories!r}")
        if not is_number(self.min_support) or not 0 <= self.min_support <= 1:
            raise DataError(f"min_support must be a fraction in [0, 1], got {self.min_support!r}")
        exclude = [self.exclude] if isinstance(self.exclude, str) else list(self.exclude)
        thresholds = dict(self.thresholds or {})
        kinds = dict(self.column_kinds or {})
        # A column named 0 in the user's frame is "0" here (names are text): exclude=[0] means it
        def as_named(name):
            return str(name) if name not in columns and str(name) in columns else name

        exclude = [as_named(n) for n in exclude]
        thresholds = {as_named(n): v for n, v in thresholds.items()}
        kinds = {as_named(n): v for n, v in kinds.items()}
        for setting, names in (("exclude (--exclude)", exclude), ("thresholds (--threshold)", thresholds),
                               ("column_kinds (--kind)", kinds)):
            for name in names:
                parts = [part.strip() for part in str(name).split(",")]
                if name not in columns and len(parts) > 1 and all(part in columns for part in parts):
                    flag = setting[setting.index("(") + 1:-1]
                    raise DataError(f"{setting} names '{name}', which is not a column but {len(parts)}: name each "
                                    f"column on its own ({' '.join(f'{flag} {part}' for part in parts)})")
                if name not in columns:
                    raise DataError(f"{setting} names column '{name}', which is not in the data"
                                    f"{_suggest(str(name), columns)}: check the spelling")
        kinds = {name: canonical_kind(kind, name) for name, kind in kinds.items()}
        user_thresholds = {}
        for name, cuts in thresholds.items():
            if kinds.get(name, "numeric") != "numeric":
                raise DataError(f"Column '{name}' has thresholds but column_kinds says {kinds[name]!r}: drop one of the two")
            if name in exclude:
                raise DataError(f"Column '{name}' is both excluded and given thresholds: drop one of the two")
            cuts = [cuts] if is_number(cuts) else cuts
            if isinstance(cuts, (str, dict)) or not isinstance(cuts, (Sequence, np.ndarray, pd.Series)):
                cuts = None
            if cuts is None or len(cuts) == 0 or not all(is_number(t) and math.isfinite(t) for t in cuts):
                raise DataError(f"thresholds for '{name}' must be a list of finite numbers, got "
                                f"{thresholds[name]!r}: e.g. thresholds={{'{name}': [45, 60]}}")
            user_thresholds[name] = tuple(sorted({float(t) for t in cuts}))
            kinds[name] = "numeric"
        return user_thresholds, kinds, set(exclude)

    def _fit_column(self, series: pd.Series, reading: ColumnReading, cuts, min_count: int):
        """``(spec or None, reading)`` for one column; the reading says why a column makes no item."""
        column, kind = reading.name, reading.kind
        if cuts is not None and not reading.declared:
            reading = ColumnReading(column, "numeric", "your thresholds", reading.missing_share, reading.n_levels,
                                    reading.top_share, reading.examples, declared=True)
            kind = "numeric"
        if kind not in KINDS:
            return None, reading
        missing = missing_mask(series)
        n_missing = int(missing.sum())
        n = len(series)
        # An "is missing" item only when it could be in a rule and is not near-universal.
        has_missing = n_missing >= min_count and n_missing < NEAR_CONSTANT_SHARE * n

        def skipped(reason):   # the reading's other findings (a unit not read, text read as missing) stay with it
            return None, replace(reading, reason=reason)

        if kind == "numeric":
            values = numeric_values(series, column)
            present = values[~np.isnan(values)]
            if not len(present):
                return skipped("no values")
            if np.isinf(present).any():
                raise DataError(f"Column '{column}' has infinite values: replace them with numbers or mark them missing")
            if cuts is not None and not pd.api.types.is_numeric_dtype(series):
                _check_cuts_against_bands(column, series, cuts)
            if cuts is not None:
                low, high = float(present.min()), float(present.max())
                outside = [t for t in cuts if t <= low or t > high]
                if outside:
                    reading = dataclasses.replace(
                        reading, outside_thresholds=f"{', '.join(f'{t:g}' for t in outside)} (its values are "
                                                    f"{low:g} to {high:g})")
            if cuts is None:
                cuts = _quantile_thresholds(present, self.n_thresholds, min_count)
                # A threshold neither side of which reaches the support makes items no rule can use.
                ordered = np.sort(present)
                cuts = tuple(t for t in cuts if max(np.searchsorted(ordered, t), len(ordered) - np.searchsorted(ordered, t))
                             >= min_count)
            if not cuts and not has_missing:
                return skipped("no threshold reaches the support threshold" if len(np.unique(present)) > 1
                               else "a single value: makes no item")
            if not cuts:
                return ColumnSpec(column, "numeric", has_missing=True), ColumnReading(
                    column, "numeric", f"{reading.reason}; too few values for a threshold: only 'is missing'",
                    reading.missing_share, reading.n_levels, reading.top_share, reading.examples, reading.declared)
            units = written_units(series)
            return ColumnSpec(column, "numeric", thresholds=cuts, has_missing=has_missing,
                              unit=next(iter(units.values())) if len(units) == 1 else ""), reading
        # a flag (X or Y where present, blank where not): its item, and no "is missing" item, which would be its
        # complement
        flag = reading.flag
        if kind == "boolean":
            yes = boolean_values(series, column)[~missing]
            if not yes.any() or (yes.all() and not flag):
                return skipped("a single value: makes no item")
            return ColumnSpec(column, "boolean", has_missing=has_missing and not flag, flag=flag), reading
        labels = category_labels(series[~missing])
        counts = labels.value_counts()
        if kind in ("code", "code list"):
            return self._fit_codes(column, kind, counts, has_missing, min_count, reading, skipped)
        levels = sorted((label for label in counts.index if counts[label] >= min_count and counts[label] < n),
                        key=lambda label: (-counts[label], label))
        kept = levels[: self.max_categories]
        if (len(counts) < 2 and not (flag and kept)) or not (kept or has_missing):
            return skipped(f"{reading.reason}; no level reaches the support threshold" if len(counts) >= 2
                           else "a single value: makes no item")
        rare = len(counts) - len(kept)
        negated = self._negated_levels(kept, counts, min_count, n)
        notes = []
        if rare:
            notes.append(f"{len(kept)} with an item, {rare:,} rarer level{'s' if rare != 1 else ''} without")
        if negated:
            notes.append(f"'is not' items for {len(negated)}")
        if notes:
            reading = replace(reading, reason="; ".join([reading.reason, *notes]))
        return (ColumnSpec(column, kind, categories=tuple(kept), has_missing=has_missing and not flag, negated=negated,
                           flag=flag), reading)

    def _negated_levels(self, kept, counts: pd.Series, min_count: int, n_rows: int) -> tuple[str, ...]:
        """The kept levels whose ``is not`` item could be in a rule (see the module docstring)."""
        if not self.negate_levels or not 3 <= len(counts) <= NEGATED_MAX_LEVELS:
            return ()
        present = int(counts.sum())  # "is not" never covers a missing value
        ordered = counts.sort_values(ascending=False, kind="stable")
        chosen = []
        for level in kept:
            rest = present - int(counts[level])
            largest_other = int(ordered.iloc[1] if ordered.index[0] == level else ordered.iloc[0])
            # Nearly all one other level (gender is not Female = Male, bar a few): that level's item says it.
            if min_count <= rest < NEAR_UNIVERSAL * n_rows and largest_other < (1 - EARNS_ITS_PLACE) * rest:
                chosen.append(level)
        return tuple(chosen)

    def _fit_codes(self, column, kind, counts, has_missing, min_count, reading, skipped):
        """Codes and code groups with an item: those on at least ``min_count`` rows and not on every row.

        For a code list a row counts once for each code its list holds and once for each group of those
        codes (``I50.9; I50.1`` is one row of the group ``I50``), so a count is the support of the item.
        """
        code_counts: dict[str, int] = {}
        group_counts: dict[str, int] = {}
        for label, count in counts.items():
            codes = listed_codes(label) if kind == "code list" else (label,)
            for code in codes:
                code_counts[code] = code_counts.get(code, 0) + int(count)
            for prefix in dict.fromkeys(p for code in codes for p in code_prefixes(code_label(code))):
                group_counts[prefix] = group_counts.get(prefix, 0) + int(count)
        total = int(counts.sum())
        codes = sorted((c for c, k in code_counts.items() if k >= min_count and k < total),
                       key=lambda c: (-code_counts[c], c))[: self.max_categories]
        # A group is worth an item when it holds more than one code (else it is the code itself), most specific first.
        groups = [g for g, k in group_counts.items() if k >= min_count and k < total
                  and not (g in {code_label(c) for c in codes} and group_counts[g] == code_counts.get(g, -1))]
        groups = sorted(groups, key=lambda g: (-len(g), -group_counts[g], g))[: self.max_categories]
        if not (codes or groups or has_missing):
            return skipped(f"{reading.reason}; no code or group reaches the support threshold")
        reading = replace(reading, kind=kind, reason=f"{reading.reason}; {len(codes)} codes and {len(groups)} groups "
                                                     "with an item")
        return ColumnSpec(column, kind, categories=tuple(codes), prefixes=tuple(groups), has_missing=has_missing), reading

    # ---- applying -------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "specs_"):
            raise RuntimeError("This Binarizer is not fitted yet: call fit(table) first")

    def _check_columns(self, frame) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"Expected a table (pandas DataFrame), got {type(frame).__name__}: load the data as a table")
        absent = [spec.name for spec in self.specs_ if spec.name not in frame.columns]
        if absent:
            names = ", ".join(f"'{c}'" for c in absent[:5]) + (" ..." if len(absent) > 5 else "")
            raise DataError(f"The data lacks column(s) {names}, which the model uses: add them")

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The items for each row, shape (n_rows, len(conditions_)), bool.

        Raises
        ------
        DataError
            If a needed column is absent or holds values that cannot be read as its kind.
        """
        self._check_fitted()
        self._check_columns(frame)
        blocks = [spec.item_matrix(frame[spec.name]) for spec in self.specs_]
        return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(frame), 0), dtype=bool)

    def transform_packed(self, frame: pd.DataFrame) -> np.ndarray:
        """The items as packed bit vectors, shape (len(conditions_), ceil(n_rows / 64)) uint64.

        Built column by column (the layout of :mod:`frl_engine.bits`), so no
        dense (rows x items) table is ever held.
        """
        from .bits import pack_columns

        self._check_fitted()
        self._check_columns(frame)
        blocks = [pack_columns(spec.item_matrix(frame[spec.name])) for spec in self.specs_]
        return np.concatenate(blocks, axis=0)

    def fit_transform(self, frame: pd.DataFrame) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` the same table."""
        return self.fit(frame).transform(frame)

    def item_table(self, frame: pd.DataFrame) -> pd.DataFrame:
        """One row per item: ``item``, ``column``, ``patients`` (count) and ``percent`` of ``frame``."""
        items = self.transform(frame)
        counts = items.sum(axis=0)
        return pd.DataFrame({
            "item": [c.name for c in self.conditions_],
            "column": [c.column for c in self.conditions_],
            "patients": counts.astype(int),
            "percent": 100.0 * counts / max(len(frame), 1),
        })

    def column_table(self) -> pd.DataFrame:
        """How each column was read: kind, whether it makes items, why, missing share, levels, items."""
        self._check_fitted()
        n_items = {spec.name: len(spec.conditions()) for spec in self.specs_}
        rows = []
        for reading in getattr(self, "readings_", []):
            row = reading.to_dict()
            row["items"] = n_items.get(reading.name, 0)
            row["used"] = row["items"] > 0
            rows.append(row)
        return pd.DataFrame(rows, columns=["column", "kind", "used", "items", "reason", "missing_share", "levels",
                                           "top_share", "examples", "declared"])

    # ---- saving ---------------------------------------------------------

    def to_dict(self) -> dict:
        """``{"columns": [ColumnSpec.to_dict(), ...]}``, the model file's ``binarizer`` entry."""
        self._check_fitted()
        return {"columns": [spec.to_dict() for spec in self.specs_]}

    @classmethod
    def from_dict(cls, d: dict) -> Binarizer:
        """A fitted binarizer from :meth:`to_dict`'s output.

        Raises
        ------
        ModelFileError
            If ``d`` is malformed.
        """
        if not isinstance(d, dict) or not isinstance(d.get("columns"), list) or not d["columns"]:
            raise ModelFileError(f"The binarizer entry should hold a non-empty list 'columns', got {d!r}: the model file is damaged")
        specs = [ColumnSpec.from_dict(c) for c in d["columns"]]
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ModelFileError("The binarizer entry lists a column twice: the model file is damaged")
        binarizer = cls()
        binarizer._set_specs(specs)
        return binarizer


def format_column_table(table: pd.DataFrame) -> str:
    """The column table as aligned text (``frl fit --explain-columns``)."""
    lines = [f"{'column':<28} {'kind':<14} {'items':>5} {'missing':>8} {'levels':>7}  why"]
    for row in table.itertuples(index=False):
        kind = row.kind if row.used else f"({row.kind})"
        lines.append(f"{str(row.column)[:28]:<28} {kind:<14} {row.items:>5} {100 * row.missing_share:>7.1f}% "
                     f"{row.levels:>7}  {row.reason}")
    return "\n".join(lines)


def _check_table(frame) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"Expected a table (pandas DataFrame), got {type(frame).__name__}: load the data as a table")
    if frame.shape[1] == 0:
        raise DataError("The table has no columns: load a table with a header row and data")
    if len(frame) == 0:
        raise DataError("The table has no rows: load a table with at least one patient")
    columns = list(frame.columns)
    for position, column in enumerate(columns):
        if not isinstance(column, str) or not column.strip():
            raise DataError(f"Column {position + 1} is named {column!r}: give every column a text name (a header row)")
    seen = set()
    for column in columns:
        if column in seen:
            raise DataError(f"Column '{column}' appears {columns.count(column)} times: rename or drop the duplicates")
        seen.add(column)
