"""From a raw clinical table to readable yes/no *items*.

Rules are built from items, each a :class:`~frl_engine.rules.Condition` a
clinician can read. A column gives items according to its kind:

- **boolean** (``BedSores`` = yes/no, true/false, y/n in any case, 0/1, or a
  bool column): one item ``BedSores``, true for the "yes" rows.
- **numeric** (``Age``): thresholds at evenly spaced interior quantiles (the
  25/50/75% quantiles for ``n_thresholds=3``), rounded to 2 significant
  figures so they read well (59.73 -> 60, 0.2374 -> 0.24, 1234 -> 1200), and
  two items per threshold: ``Age >= 60`` and ``Age < 60``. Thresholds that
  round to the same value, or split the patients the same way, are kept once.
  A threshold at (or rounding below) the column's minimum would put every
  patient on one side, so it moves up to the smallest value above the minimum
  (for a mostly-zero count this gives ``PriorAdmissions >= 1``). Only if 2
  significant figures leave no threshold inside the column's range are more
  figures used. Thresholds a user gives (``thresholds={"Age": [45, 60]}``)
  are used exactly as given.
- **categorical** (``DischargeTo``): one item per category,
  ``DischargeTo = home``, categories ordered by frequency then name. Two-valued
  text that is not yes/no-like (``Sex`` = F/M) is categorical; so is a
  two-valued number column other than 0/1.

Missing values (NaN, None, blank text) never match a threshold, category or
yes/no item: ``Age >= 60`` is False for a patient whose age is unknown. When a
column has missing values in the data the binarizer is fitted on, it also
gets the item ``Age is missing``, so a rule can say so in words.

Columns holding a single value (ignoring missing values) are skipped
silently, since they make no useful item; their names are kept in
``constant_columns_``. If blanks in such a column mean something (a box left
unticked), fill them in first.

Everything learned by :meth:`Binarizer.fit` (kinds, thresholds, categories,
whether a missing item exists) is a list of frozen :class:`ColumnSpec`, and
:meth:`Binarizer.transform` applies exactly that to new data.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError, ModelFileError
from .rules import (
    FALSE_WORDS,
    TRUE_WORDS,
    Condition,
    boolean_values,
    category_label,
    is_number,
    missing_mask,
    numeric_values,
)

__all__ = ["KINDS", "ColumnSpec", "infer_column_kind", "round_threshold", "Binarizer"]

KINDS = ("numeric", "categorical", "boolean")
# Share of the non-missing values that must read as numbers for a text column
# to be taken as a numeric column with some junk in it (rather than categories).
NUMERIC_SHARE = 0.9


def round_threshold(x: float, digits: int = 2) -> float:
    """Round to ``digits`` significant figures: 59.73 -> 60, 0.2374 -> 0.24, 1234 -> 1200.

    Parameters
    ----------
    x : float
    digits : int, default 2

    Returns
    -------
    float
    """
    return float(f"{float(x):.{digits}g}")


def _numbers_kind(values: np.ndarray) -> str:
    distinct = np.unique(values)
    if len(distinct) == 1:
        return "constant"
    if len(distinct) == 2:
        return "boolean" if set(distinct.tolist()) == {0.0, 1.0} else "categorical"
    return "numeric"


_ID_WORDS = re.compile(r"(^|[_\s.\-])(id|mrn|uuid|guid|identifier)$|^(id|mrn|uuid|guid)($|[_\s.\-])"
                       r"|^(record|patient|subject|encounter|visit|case|admission)[_\s.\-]?"
                       r"(no|num|number|nr|key|code)$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z0-9](ID|Id)$")


def has_identifier_name(name: str) -> bool:
    """``PatientID``, ``patient_id``, ``MRN``, ``record_no``...: a name that says "identifier"."""
    return bool(_ID_WORDS.search(name.strip()) or _ID_CAMEL.search(name.strip()))


def looks_like_identifier(name: str, series: pd.Series) -> str | None:
    """Why a column looks like an identifier, or None.

    A name such as ``PatientID``, ``patient_id``, ``MRN``; or text / whole numbers
    that are different in every row (at least 20 rows).  The dashboard leaves such
    columns out by default.  :class:`Binarizer` refuses a numeric column with an
    identifier's name and a different value in every row (a rule
    ``PatientID >= 100750`` would be meaningless); a text one is refused for having
    too many categories.
    """
    if has_identifier_name(name):
        return "identifier (by its name)"
    present = series.dropna()
    n = len(series)
    if n >= 20 and len(present) == n and present.nunique() == n:
        dtype, types = series.dtype, pd.api.types
        if types.is_integer_dtype(dtype) or types.is_object_dtype(dtype) or types.is_string_dtype(dtype):
            return "identifier (different in every row)"
    return None


def infer_column_kind(series: pd.Series) -> str:
    """What the binarizer does with this column when not told otherwise.

    Parameters
    ----------
    series : pandas.Series

    Returns
    -------
    str
        ``"numeric"``, ``"categorical"`` or ``"boolean"`` (see the module
        docstring), ``"constant"`` (one value only: skipped), ``"empty"`` (no
        values: an error unless excluded) or ``"unsupported"`` (dates,
        durations, complex numbers: an error unless excluded). A text column
        that is mostly numbers is ``"numeric"`` even if some values are junk
        (fitting then says which ones).
    """
    missing = missing_mask(series)
    if missing.all():
        return "empty"
    dtype = series.dtype
    if (
        pd.api.types.is_datetime64_any_dtype(dtype)
        or pd.api.types.is_timedelta64_dtype(dtype)
        or pd.api.types.is_complex_dtype(dtype)
        or isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype))
    ):
        return "unsupported"
    present = series[~missing]
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean" if present.nunique() == 2 else "constant"
    if pd.api.types.is_numeric_dtype(dtype):
        return _numbers_kind(present.to_numpy(dtype=float))
    words = {category_label(v).lower() for v in pd.unique(present)}
    if len(words) == 1:
        return "constant"
    if len(words) == 2 and words & TRUE_WORDS and words & FALSE_WORDS:
        return "boolean"
    parsed = pd.to_numeric(present.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
    share = parsed.notna().mean()
    if share == 1:
        return _numbers_kind(parsed.to_numpy(dtype=float))
    return "numeric" if share >= NUMERIC_SHARE else "categorical"


@dataclass(frozen=True)
class ColumnSpec:
    """What the binarizer learned about one column.

    Parameters
    ----------
    name : str
        Column name.
    kind : {"numeric", "categorical", "boolean"}
    thresholds : tuple of float
        Cut points, ascending (numeric only).
    categories : tuple of str
        Category labels, most frequent first (categorical only).
    has_missing : bool
        Whether the column had missing values when fitted (then it has an
        ``is missing`` item).
    """

    name: str
    kind: str
    thresholds: tuple[float, ...] = ()
    categories: tuple[str, ...] = ()
    has_missing: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"A column spec needs a column name, got {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(f"Column kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        thresholds = tuple(float(t) for t in self.thresholds)
        categories = tuple(self.categories)
        if self.kind == "numeric":
            if not thresholds or not all(math.isfinite(t) for t in thresholds):
                raise ValueError(f"Numeric column '{self.name}' needs finite thresholds, got {self.thresholds!r}")
            if any(a >= b for a, b in zip(thresholds, thresholds[1:])):
                raise ValueError(f"Thresholds of '{self.name}' must increase, got {self.thresholds!r}")
        elif thresholds:
            raise ValueError(f"Only numeric columns have thresholds ('{self.name}' is {self.kind})")
        if self.kind == "categorical":
            if not categories or not all(isinstance(c, str) and c for c in categories):
                raise ValueError(f"Categorical column '{self.name}' needs category names, got {self.categories!r}")
            if len(set(categories)) != len(categories):
                raise ValueError(f"Categories of '{self.name}' repeat: {self.categories!r}")
        elif categories:
            raise ValueError(f"Only categorical columns have categories ('{self.name}' is {self.kind})")
        if not isinstance(self.has_missing, (bool, np.bool_)):
            raise ValueError(f"has_missing must be true or false, got {self.has_missing!r}")
        object.__setattr__(self, "thresholds", thresholds)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "has_missing", bool(self.has_missing))

    def conditions(self) -> list[Condition]:
        """The column's items, in order: ``>=``/``<`` per threshold, or one per category, or the yes item; then ``is missing``."""
        if self.kind == "numeric":
            items = [Condition(self.name, op, t) for t in self.thresholds for op in (">=", "<")]
        elif self.kind == "categorical":
            items = [Condition(self.name, "==", c) for c in self.categories]
        else:
            items = [Condition(self.name, "is true")]
        if self.has_missing:
            items.append(Condition(self.name, "is missing"))
        return items

    def to_dict(self) -> dict:
        """JSON-safe dict; whole-number thresholds are written as ints."""
        return {
            "name": self.name,
            "kind": self.kind,
            "thresholds": [int(t) if t.is_integer() and abs(t) < 2**53 else t for t in self.thresholds],
            "categories": list(self.categories),
            "has_missing": self.has_missing,
        }

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
        unknown = sorted(set(d) - {"name", "kind", "thresholds", "categories", "has_missing"})
        thresholds = d.get("thresholds", [])
        categories = d.get("categories", [])
        if (
            unknown
            or not isinstance(thresholds, list)
            or not all(is_number(t) for t in thresholds)
            or not isinstance(categories, list)
        ):
            raise ModelFileError(f"Bad binarizer column {d!r}: the model file is damaged")
        try:
            return cls(d["name"], d["kind"], tuple(thresholds), tuple(categories), d.get("has_missing", False))
        except ValueError as err:
            raise ModelFileError(f"Bad binarizer column {d!r} ({err}): the model file is damaged") from None


def _quantile_thresholds(values: np.ndarray, n_thresholds: int) -> tuple[float, ...]:
    """Readable cut points at evenly spaced interior quantiles (see the module docstring)."""
    low, high = values.min(), values.max()
    if low == high:
        return ()
    quantiles = np.quantile(values, np.arange(1, n_thresholds + 1) / (n_thresholds + 1))
    above_min = values[values > low].min()
    ordered = np.sort(values)
    for digits in range(2, 7):
        chosen, splits = [], set()
        for q in quantiles:
            t = round_threshold(q, digits)
            if t <= low:  # everyone would be on one side: cut just above the minimum instead
                t = round_threshold(above_min, digits)
            split = int(np.searchsorted(ordered, t))  # patients below t
            if low < t <= high and split not in splits:
                chosen.append(t)
                splits.add(split)
        if chosen:
            return tuple(sorted(chosen))
    return (float(above_min),)


def _suggest(name: str, columns: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, columns, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Binarizer:
    """Turns a raw clinical table into a bool matrix of readable items.

    Parameters
    ----------
    n_thresholds : int, default 3
        Quantile thresholds per numeric column (3: the 25/50/75% quantiles).
    thresholds : dict of str to sequence of float, optional
        Your own thresholds for some columns, used as given
        (``{"Age": [45, 60]}``); those columns are numeric.
    column_kinds : dict of str to str, optional
        Force a kind (``"numeric"``, ``"categorical"``, ``"boolean"``) for
        some columns instead of inferring it.
    exclude : sequence of str, default ()
        Columns to leave out (identifiers, the outcome).
    max_categories : int, default 30
        A categorical column with more distinct values is refused.

    Attributes
    ----------
    specs_ : list of ColumnSpec
        What was learned, one per used column, in table order.
    conditions_ : list of Condition
        The items, in order: column ``j`` of :meth:`transform`'s output.
    constant_columns_ : tuple of str
        Columns skipped because they hold a single value.
    """

    def __init__(
        self,
        *,
        n_thresholds: int = 3,
        thresholds: dict[str, Sequence[float]] | None = None,
        column_kinds: dict[str, str] | None = None,
        exclude: Sequence[str] = (),
        max_categories: int = 30,
    ):
        self.n_thresholds = n_thresholds
        self.thresholds = thresholds
        self.column_kinds = column_kinds
        self.exclude = exclude
        self.max_categories = max_categories

    # ---- fitting --------------------------------------------------------

    def fit(self, frame: pd.DataFrame) -> Binarizer:
        """Learn each column's kind, thresholds and categories.

        Parameters
        ----------
        frame : pandas.DataFrame
            The raw table (without the outcome, or with it in ``exclude``).

        Returns
        -------
        Binarizer
            ``self``, fitted.

        Raises
        ------
        DataError
            For an unusable table or setting; the message names the column
            and what to do.
        """
        _check_table(frame)
        columns = list(frame.columns)
        user_thresholds, kinds, excluded = self._checked_settings(columns)
        used = [c for c in columns if c not in excluded]
        if not used:
            raise DataError("Every column is excluded, so there is nothing to make items from: exclude fewer columns")
        specs, constant = [], []
        for column in used:
            spec = self._fit_column(frame[column], column, kinds.get(column), user_thresholds.get(column))
            if spec is None:
                constant.append(column)
            else:
                specs.append(spec)
        if not specs:
            raise DataError(
                f"Every used column holds a single value ({', '.join(constant[:5])}), so no item can tell "
                "patients apart: use columns that vary"
            )
        self._set_specs(specs, tuple(constant))
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
        exclude = [self.exclude] if isinstance(self.exclude, str) else list(self.exclude)
        thresholds = dict(self.thresholds or {})
        kinds = dict(self.column_kinds or {})
        for setting, names in (("exclude", exclude), ("thresholds", thresholds), ("column_kinds", kinds)):
            for name in names:
                if name not in columns:
                    raise DataError(
                        f"{setting} names column '{name}', which is not in the data{_suggest(str(name), columns)}: "
                        "check the spelling"
                    )
        for name, kind in kinds.items():
            if kind not in KINDS:
                raise DataError(f"column_kinds gives '{name}' the kind {kind!r}: use 'numeric', 'categorical' or 'boolean'")
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
                raise DataError(
                    f"thresholds for '{name}' must be a list of finite numbers, got {self.thresholds[name]!r}: "
                    f"e.g. thresholds={{'{name}': [45, 60]}}"
                )
            values = sorted({float(t) for t in cuts})
            user_thresholds[name] = tuple(values)
            kinds[name] = "numeric"
        return user_thresholds, kinds, set(exclude)

    def _fit_column(self, series: pd.Series, column: str, kind: str | None, cuts) -> ColumnSpec | None:
        inferred = infer_column_kind(series)
        if inferred == "empty":
            raise DataError(f"Column '{column}' has no values: fill it or exclude it")
        if inferred == "unsupported":
            raise DataError(
                f"Column '{column}' holds {series.dtype} values, which cannot become items: "
                "turn them into numbers (e.g. days) or exclude the column"
            )
        if (kind is None and inferred == "numeric" and has_identifier_name(column)
                and series.dropna().is_unique):
            raise DataError(
                f"Column '{column}' looks like a patient identifier, not a measurement: exclude it "
                f"(--exclude {column}), or declare it numeric if it really is one"
            )
        kind = kind or inferred
        if kind == "constant":
            return None
        has_missing = bool(missing_mask(series).any())
        if kind == "numeric":
            values = numeric_values(series, column)
            present = values[~np.isnan(values)]
            if np.isinf(present).any():
                raise DataError(f"Column '{column}' has infinite values: replace them with numbers or mark them missing")
            cuts = cuts if cuts is not None else _quantile_thresholds(present, self.n_thresholds)
            return ColumnSpec(column, "numeric", thresholds=cuts, has_missing=has_missing) if cuts else None
        if kind == "boolean":
            yes = boolean_values(series, column)[~missing_mask(series)]
            return ColumnSpec(column, "boolean", has_missing=has_missing) if 0 < yes.sum() < len(yes) else None
        labels = series[~missing_mask(series)].map(category_label)
        counts = labels.value_counts()
        if len(counts) > self.max_categories:
            raise DataError(
                f"Column '{column}' has {len(counts):,} distinct values, too many to use as categories "
                f"(max {self.max_categories}): exclude it, or group its values"
            )
        if len(counts) < 2:
            return None
        categories = sorted(counts.index, key=lambda label: (-counts[label], label))
        return ColumnSpec(column, "categorical", categories=tuple(categories), has_missing=has_missing)

    # ---- applying -------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "specs_"):
            raise RuntimeError("This Binarizer is not fitted yet: call fit(table) first")

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The items for each row, using what :meth:`fit` learned.

        Parameters
        ----------
        frame : pandas.DataFrame
            Must have every column the binarizer uses; may have missing
            values and more columns. Categories not seen in fitting match no
            category item.

        Returns
        -------
        numpy.ndarray of bool, shape (n_rows, len(conditions_))

        Raises
        ------
        DataError
            If a needed column is absent or holds values that cannot be read
            as its kind.
        """
        self._check_fitted()
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"Expected a table (pandas DataFrame), got {type(frame).__name__}: load the data as a table")
        absent = [spec.name for spec in self.specs_ if spec.name not in frame.columns]
        if absent:
            names = ", ".join(f"'{c}'" for c in absent[:5]) + (" ..." if len(absent) > 5 else "")
            raise DataError(f"The data lacks column(s) {names}, which the model uses: add them")
        items = np.zeros((len(frame), len(self.conditions_)), dtype=bool)
        for j, condition in enumerate(self.conditions_):
            items[:, j] = condition.evaluate(frame)
        return items

    def fit_transform(self, frame: pd.DataFrame) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` the same table."""
        return self.fit(frame).transform(frame)

    def item_table(self, frame: pd.DataFrame) -> pd.DataFrame:
        """One row per item: how many patients of ``frame`` it covers.

        Parameters
        ----------
        frame : pandas.DataFrame

        Returns
        -------
        pandas.DataFrame
            Columns ``item`` (its name), ``column``, ``patients`` (count)
            and ``percent`` (0-100), in item order.
        """
        items = self.transform(frame)
        counts = items.sum(axis=0)
        return pd.DataFrame(
            {
                "item": [c.name for c in self.conditions_],
                "column": [c.column for c in self.conditions_],
                "patients": counts.astype(int),
                "percent": 100.0 * counts / max(len(frame), 1),
            }
        )

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
