"""Readable conditions and rules (their conjunctions).

A *condition* is one test on one column of the patients' table, such as
``Age >= 60``, ``DischargeTo = home``, ``safety is not low``, ``diag_1 starts
with 428``, ``BedSores`` or ``Creatinine is missing``. A *rule* is the AND of one or more conditions; it
is the IF clause :math:`c_l(\\cdot)` of a falling rule list (paper, section 2).
A rule *covers* (applies to) a patient when every one of its conditions holds.

A missing value (NaN, blank, or a marker such as ``?``, ``NA``, ``NULL``; see
:mod:`frl_engine.columns`) makes every condition on its column False, except
``<column> is missing``, which is True exactly for the missing values. So
``Age >= 60`` never silently covers a patient whose age is unknown, and
``safety is not low`` covers only patients whose safety is known (and not low).

Candidate rules are mined in :mod:`frl_engine.mining` (``mine_rules``,
``CandidateRules`` and ``rules_from_boolean_columns`` are still importable from
here).
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .columns import (  # noqa: F401  (re-exported: the readers used to live here)
    FALSE_WORDS,
    TRUE_WORDS,
    _distinct,
    _examples,
    boolean_values,
    category_label,
    format_number,
    is_number,
    listed_codes,
    missing_mask,
    numeric_values,
)
from .errors import DataError, ModelFileError

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

OPS = (">=", "<", "==", "starts with", "is true", "is missing", "!=", "includes", "includes code starting with")
#: The operators of a column of code lists (several codes in one cell): the list holds the code, or a code of the group.
LIST_OPS = ("includes", "includes code starting with")
#: The operators whose value is a text (a category, a code or a code group).
TEXT_OPS = ("==", "!=", "starts with") + LIST_OPS


def __getattr__(name):  # mining moved to frl_engine.mining; keep the old imports working
    if name in ("CandidateRules", "mine_rules", "mine_packed", "rules_from_boolean_columns", "MINING_METHODS"):
        from . import mining

        return getattr(mining, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


# A level that would break a printed list or read as more than one condition is shown in quotes.
_NEEDS_QUOTES = re.compile(r'[\n\r\t"]| = | AND |^\s|\s$|^$')


# A column name that would read as two conditions or as a test of its own (``Age >= 65``, ``ward=ICU``), or
# break the printed line, is shown in quotes too.
_COLUMN_NEEDS_QUOTES = re.compile(r'[\n\r\t"<>=]| AND | is not | is missing| starts with ')

# One condition's text in a rule's name: a quoted name or level is never split at an AND inside it.
_QUOTED_OR_AND = re.compile(r'"(?:[^"\\]|\\.)*"| AND ')


def _shown_column(column: str) -> str:
    """A column name as a condition prints it: as written, or in double quotes when it holds ``" AND "``, a
    comparison (``>=``, ``<``, ``=``, ``is not``), a quote or a line break: ``"Score AND Risk" >= 7`` and
    ``"Age >= 65" >= 74``, never ``Score AND Risk >= 7`` (two conditions to a reader) or ``Age >= 65 >= 74``.
    Line breaks and runs of spaces inside a quoted name are shown as one space (``"length of stay"``)."""
    if not _COLUMN_NEEDS_QUOTES.search(column):
        return column
    return json.dumps(" ".join(column.split()), ensure_ascii=False)


def split_conditions(name: str) -> list[str]:
    """A rule's name cut back into its conditions' names: the inverse of :attr:`Rule.name`.

    Cuts at each ``" AND "`` outside double quotes, so a level or column name quoted because it holds
    ``" AND "`` stays whole (``x = "a AND b" AND Age >= 60`` is two conditions).
    """
    parts, start = [], 0
    for match in _QUOTED_OR_AND.finditer(name):
        if match.group() == " AND ":
            parts.append(name[start:match.start()])
            start = match.end()
    parts.append(name[start:])
    return parts


def _shown_level(value) -> str:
    """A category as a list prints it: as written, or in double quotes with escapes when it holds a line
    break, a quote, ``" = "`` or ``" AND "``, or starts or ends with a space (``notes = "CHF,\\n..."``)."""
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if _NEEDS_QUOTES.search(text) else text


def list_holds(codes: tuple[str, ...], want: str, op: str) -> bool:
    """Whether a cell's codes (:func:`frl_engine.columns.listed_codes`) hold ``want`` (``includes``) or a code of
    the group ``want`` (``includes code starting with``); ``want`` upper-cased, as the codes are."""
    if op == "includes":
        return want in codes
    return any(code.startswith(want) for code in codes)


@dataclass(frozen=True)
class Condition:
    """One readable test on one column.

    Parameters
    ----------
    column : str
        Column name in the patients' table.
    op : str
        One of ``">="``, ``"<"``, ``"=="``, ``"!="``, ``"starts with"``, ``"is true"``, ``"is missing"``, and for
        a column of code lists (``I50.9; E11.65``) ``"includes"`` and ``"includes code starting with"``.
    value : float or str or None
        The threshold (float) for ``>=`` and ``<``, the category (str) for
        ``==`` and ``!=`` (read "is not": any other known value), the code group (str, compared case-insensitively) for
        ``starts with``, the code (``includes``) or code group (``includes code starting with``) a cell's list must
        hold (case-insensitively), None otherwise.
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
        elif self.op in TEXT_OPS:
            if not isinstance(self.value, str) or not self.value:
                raise ValueError(f"Condition '{self.column} {self.op}' needs a category or code, got {self.value!r}")
        elif self.value is not None:
            raise ValueError(f"Condition '{self.column} {self.op}' takes no value, got {self.value!r}")

    @property
    def name(self) -> str:
        """How the condition reads: ``Age >= 60``, ``Shape = irregular``, ``safety is not low``,
        ``diag_1 starts with 428``, ``diagnoses includes I50.9``, ``diagnoses includes a code starting with I50``,
        ``BedSores``, ``Age is missing``."""
        column = _shown_column(self.column)
        if self.op in (">=", "<"):
            return f"{column} {self.op} {format_number(self.value)}"
        if self.op == "==":
            return f"{column} = {_shown_level(self.value)}"
        if self.op == "!=":
            return f"{column} is not {_shown_level(self.value)}"
        if self.op == "starts with":
            return f"{column} starts with {_shown_level(self.value)}"
        if self.op == "includes":
            return f"{column} includes {_shown_level(self.value)}"
        if self.op == "includes code starting with":
            return f"{column} includes a code starting with {_shown_level(self.value)}"
        if self.op == "is true":
            return column
        return f"{column} is missing"

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
        if self.op in TEXT_OPS:
            missing = missing_mask(series)
            if self.op in LIST_OPS:
                want = self.value.upper()
                matching = [v for v in _distinct(series) if list_holds(listed_codes(v), want, self.op)]
            elif self.op == "starts with":
                prefix = self.value.upper()
                matching = [v for v in _distinct(series) if category_label(v).upper().startswith(prefix)]
            else:  # without case: "f" in new data is the "F" of the training data
                want = str(self.value).casefold()
                matching = [v for v in _distinct(series) if category_label(v).casefold() == want]
            hits = series.isin(matching).to_numpy(dtype=bool)
            if self.op == "==":
                # the value the model knows as a level is one, even where a few new patients alone would read it as
                # missing (one patient whose pain is "None", a level of the scale at fit time)
                return hits
            if self.op == "!=":
                hits = ~hits
            return hits & ~missing  # never a missing value
        values = numeric_values(series, self.column, scoring=True)
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

    @functools.cached_property
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
