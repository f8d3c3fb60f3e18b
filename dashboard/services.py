"""The dashboard's one door into :mod:`frl_engine`, with caching.

Every call into the engine the pages make goes through this module:

* reading tables (``st.cache_data`` keyed by the file's bytes; the bytes stay in
  memory and are never written to disk);
* what the engine will do with each column (kind, thresholds, identifiers);
* the binarised items and the number of candidate rules (cached per data and settings);
* fitting (``st.cache_data`` keyed by the data's hash and every setting; the cached
  value is the fitted estimator, which ``cache_data`` pickles, so every caller gets
  its own copy and can never change another session's model);
* posterior sampling, cross-validation, the card, scoring, the patient look-up.

Functions without ``st.`` decorators are pure and unit-tested without Streamlit.
Errors a user can fix are :class:`~frl_engine.errors.FRLError` with a one-line
message; the pages show them with ``st.error(str(exc))``.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from frl_engine.binarize import KINDS, Binarizer
from frl_engine.columns import looks_like_identifier, numeric_values, read_columns  # noqa: F401  (looks_like_identifier: re-exported)
from frl_engine.errors import (DataError, FewPatientsWarning, FRLError, ModelFileError, PossibleLeakWarning,
                               RepeatedRecordsWarning)
from frl_engine.io import NO_EVENT_TOKENS, ambiguous_codes, default_positive, dumps_model, event_is_ambiguous, event_label, flag_outcome_value, outcome_counts, outcome_spellings, parse_model, read_table, split_target, suggested_event
from frl_engine.rules import LIST_OPS, category_label, format_number, mine_rules, missing_mask
from frl_engine.search_report import SENSITIVE_NAME

# The Rule list page says so in its own words (search_report.leakage_note): no warning in the server's log.
warnings.filterwarnings("ignore", category=PossibleLeakWarning)
warnings.filterwarnings("ignore", category=RepeatedRecordsWarning)  # the Data page says so, with a button
warnings.filterwarnings("ignore", category=FewPatientsWarning)  # the Data and Rule list pages say so

if TYPE_CHECKING:  # the estimator pulls in scikit-learn: imported on first fit, not on the landing page
    from frl_engine.estimator import FallingRuleListClassifier

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_PATH = REPO_ROOT / "sample_data" / "readmission.csv"
SAMPLE_TARGET = "Readmitted30d"
MAX_CATEGORIES = 30  # the Binarizer's default: more distinct values than this cannot be categories
MAX_EVENT_CHOICES = 50  # an outcome with more distinct values than this is not offered as an event picker
DEFAULT_UPLOAD_MB = 200
CARD_SIZES = {"pocket": "Pocket (85.6 × 54 mm)", "index": "Index card (5 × 3 in)", "a6": "A6 (148 × 105 mm)"}
# Words of a column name that say "outcome", most telling first: a word of the name must start with the stem
# (readmitted, readmission, Readmitted30d) or equal the word (y, event, status).
OUTCOME_STEMS = ("readmi", "rehospitali", "wiederaufnahme", "reingreso", "outcome", "death", "dead", "died", "deceased",
                 "tod", "verstorben", "deces", "muerte", "mortalit", "sterblichkeit", "surviv", "malignan", "relaps",
                 "recurren", "rel", "target", "label", "event", "class", "status", "fstat", "y")
_STEM_PREFIX = ("readmi", "rehospitali", "wiederaufnahme", "reingreso", "mortalit", "surviv", "malignan", "relaps",
                "recurren")
# Words that make a column an attribute of the outcome rather than the outcome (readmission_date, event_id).
_NOT_OUTCOME_WORDS = ("id", "nbr", "number", "num", "date", "time", "count", "type", "code", "datum", "zeit", "nr")
# Values that read as "no event" (compared as lower-case text).
NEGATIVE_TOKENS = NO_EVENT_TOKENS


# ============================================================================ data
@dataclass(frozen=True, eq=False)
class LoadedData:
    """A table the user brought (or the sample), kept in memory for the session."""

    name: str
    key: str  # hash of the file's bytes: the cache key of everything computed from it
    frame: pd.DataFrame = field(repr=False)
    n_bytes: int
    is_sample: bool = False
    sha256: str | None = None  # full SHA-256 of the file's bytes: the data fingerprint in the model registry
    # a workbook of several sheets keeps its bytes, so the Data page can read another sheet (services.load_table)
    raw: bytes | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.frame.shape[1])


def bytes_key(raw: bytes) -> str:
    """A short hash of the file's bytes."""
    return hashlib.sha256(raw).hexdigest()[:16]


def max_upload_mb() -> int:
    """The upload limit set in ``.streamlit/config.toml`` (``server.maxUploadSize``, MB)."""
    try:
        return int(st.get_option("server.maxUploadSize"))
    except Exception:  # noqa: BLE001 - outside a Streamlit runtime
        return DEFAULT_UPLOAD_MB


@st.cache_data(max_entries=6, show_spinner=False)
def _read_table_cached(raw: bytes, name: str, sheet: str | None = None) -> pd.DataFrame:
    # Keyed by the file's bytes (and name, which picks the format, and the sheet).  Errors are not cached.
    return read_table(raw, name, sheet=sheet)


def load_table(raw: bytes, name: str, *, is_sample: bool = False, limit_mb: int | None = None,
               sheet: str | None = None) -> LoadedData:
    """Read an uploaded table (CSV, Excel, Parquet; also gzip-compressed or alone in a ZIP) from memory.

    ``sheet``: a workbook's sheet to read (by default the one with the most filled cells); a workbook of several
    sheets keeps its bytes (``raw``) so that another can be read, and each sheet is a table of its own (``key``).

    Raises
    ------
    DataError
        Too large, wrong extension, empty, header only, duplicate column names, unreadable.
    """
    limit_mb = max_upload_mb() if limit_mb is None else limit_mb
    if len(raw) > limit_mb * 1024 * 1024:
        raise DataError(f"{name} is {len(raw) / 1024 / 1024:.0f} MB; the dashboard accepts files up to {limit_mb} MB: "
                        "drop columns or rows you do not need, or save it as Parquet")
    frame = _read_table_cached(raw, name, sheet)   # the engine's messages for a file that is not a table
    if sheet is None:
        frame, sheet = _sheet_with_an_outcome(raw, name, frame)
    several = len(frame.attrs.get("sheets") or ()) > 1
    key = bytes_key(raw) if sheet is None else bytes_key(raw + f"\0sheet {sheet}".encode())
    return LoadedData(name=name, key=key, frame=frame, n_bytes=len(raw), is_sample=is_sample,
                      sha256=hashlib.sha256(raw).hexdigest(), raw=raw if several else None)


def _sheet_with_an_outcome(raw: bytes, name: str, frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """A workbook's first sheet read (the one with the most filled cells), or, when no column of it is named like an
    outcome (:func:`outcome_name_rank`) and another sheet has one, that sheet: an ICD lookup bigger than the
    patients is not the table.  Returns the frame and the sheet picked (None: the first one read)."""
    sheets = frame.attrs.get("sheets") or []
    if len(sheets) < 2 or any(outcome_name_rank(column) is not None for column in frame.columns):
        return frame, None
    for other in sheets:
        if other == frame.attrs.get("sheet"):
            continue
        try:
            candidate = _read_table_cached(raw, name, other)
        except FRLError:
            continue
        named = [column for column in candidate.columns if outcome_name_rank(column) is not None]
        if named:
            picked = candidate.copy(deep=False)   # the cached frame's attrs stay as they are
            picked.attrs = dict(candidate.attrs)
            picked.attrs["read_as"] = str(candidate.attrs.get("read_as", "")).replace(
                "the one asked for", f"the one with a column named like an outcome ({named[0]!r})")
            return picked, other
    return frame, None


def without_missing_outcome(data: LoadedData, target: str) -> LoadedData:
    """The table without the patients whose outcome is empty (``?``, blank, ``NA``), as a table of its own.

    Its name says how many were left out; its key differs from the file's, so nothing computed on the
    whole file is reused for it; its fingerprint in the registry stays the file's.
    """
    from frl_engine.io import outcome_missing_mask

    missing = outcome_missing_mask(data.frame[target])
    frame = data.frame.loc[~missing].reset_index(drop=True)
    frame.attrs = dict(data.frame.attrs)
    n = int(missing.sum())
    return LoadedData(name=f"{data.name} (without the {n:,} patient{'s' if n != 1 else ''} whose {target} is empty or not known)",
                      key=f"{data.key}-{bytes_key(str(target).encode())}-known", frame=frame, n_bytes=data.n_bytes,
                      is_sample=data.is_sample, sha256=data.sha256)


def without_number_codes(data: LoadedData, columns) -> LoadedData:
    """The table with the numbers that look like codes for not known (:func:`frl_engine.columns.number_codes`:
    age 999 among ages 18 to 94) emptied in ``columns``, as a table of its own: what the Data page's warning
    offers instead of editing the export.  Its name says which cells were emptied; its key differs from the
    file's; its fingerprint in the registry stays the file's.  The file itself is not changed.
    """
    from frl_engine.columns import empty_number_codes

    frame, done = empty_number_codes(data.frame, columns)
    if not done:
        return data
    return LoadedData(name=f"{data.name} (read as not known: {'; '.join(done)})",
                      key=f"{data.key}-{bytes_key(repr(sorted(map(str, columns))).encode())}-codes", frame=frame,
                      n_bytes=data.n_bytes, is_sample=data.is_sample, sha256=data.sha256)


@st.cache_data(max_entries=8, show_spinner=False)
def repeated_records_cached(data_key: str, _frame: pd.DataFrame):
    """:func:`frl_engine.repeated_rows.repeated_records` of a loaded table, once per table."""
    from frl_engine.repeated_rows import repeated_records

    return repeated_records(_frame)


def without_repeated_records(data: LoadedData) -> LoadedData:
    """The table without the rows that repeat an earlier row in every column, record number included
    (:mod:`frl_engine.repeated_rows`), as a table of its own: what the Data page's warning offers instead of
    editing the export.  Its name says how many were left out; its key differs from the file's; its fingerprint
    in the registry stays the file's.  The file itself is not changed."""
    from frl_engine.repeated_rows import without_repeated_records as drop

    frame, found = drop(data.frame)
    if found is None:
        return data
    n = found.n_copies
    return LoadedData(name=f"{data.name} (without {n:,} repeated row{'s' if n != 1 else ''})",
                      key=f"{data.key}-repeated", frame=frame, n_bytes=data.n_bytes, is_sample=data.is_sample,
                      sha256=data.sha256)


def load_sample() -> LoadedData:
    """The bundled sample (``sample_data/readmission.csv``)."""
    if not SAMPLE_PATH.is_file():
        raise DataError(f"The sample data ({SAMPLE_PATH.relative_to(REPO_ROOT)}) is not there: upload a file instead")
    return load_table(SAMPLE_PATH.read_bytes(), SAMPLE_PATH.name, is_sample=True, limit_mb=10_000)


# ============================================================================ columns
def _examples(series: pd.Series, limit: int = 4) -> str:
    present = series[~missing_mask(series)]
    values = [category_label(v) for v in pd.unique(present)[:limit]]
    text = ", ".join(values)
    return text if len(text) <= 48 else text[:47] + "…"


# "Why" (note) beside the Type: the reason a column is left out (an identifier, a follow-up time) is read without
# scrolling the table sideways
PROFILE_COLUMNS = ["column", "use", "kind", "note", "thresholds", "detected", "missing", "distinct", "examples"]
# The Type of a column that makes no item (an identifier, an empty or near-constant column, a date): a choice of the
# column table beside the engine's kinds, so its cell reads "left out" (an empty cell is drawn as a grey "None").
LEFT_OUT = "left out"
COLUMN_TYPES = (*KINDS, LEFT_OUT)


def profile_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column: how the engine reads it (:func:`frl_engine.columns.read_columns`), and the
    defaults the editor starts from.

    ``kind`` is the engine's kind when the column makes items (:data:`LEFT_OUT` otherwise);
    ``use`` is False for identifiers, empty, constant and near-constant columns and
    dates; ``note`` is the engine's reason, in words.  ``attrs["number_codes"]`` names the numeric
    columns holding numbers that look like codes for not known (999 among ages 18 to 94), and
    ``attrs["text_as_missing"]`` those whose text cells (``pending``, ``TNP``) are read as missing.
    """
    rows, codes, text, wordy = [], {}, {}, {}
    for reading in read_columns(frame):
        if reading.kind == "numeric" and reading.number_codes:
            codes[reading.name] = reading.number_codes
        if reading.kind == "numeric" and reading.text_as_missing:
            text[reading.name] = reading.text_as_missing
        if reading.text_among_numbers:
            wordy[reading.name] = reading.text_among_numbers
        note = reading.reason
        if reading.kind == "numeric":
            try:
                numeric_values(frame[reading.name], reading.name)
            except DataError as exc:  # the engine's own words (bands such as [70-80) are numbers)
                note = str(exc)
        rows.append({
            "column": reading.name, "use": reading.used, "kind": reading.kind if reading.used else LEFT_OUT,
            "thresholds": "", "detected": reading.kind, "missing": round(100.0 * reading.missing_share, 1),
            "distinct": reading.n_levels, "examples": reading.examples, "note": note,
        })
    table = pd.DataFrame(rows, columns=PROFILE_COLUMNS)
    table.attrs["number_codes"] = codes  # column -> "999 on 160 rows, far from its other values ...": the Data page warns
    table.attrs["text_as_missing"] = text  # column -> "'pending' on 1 row": and says these
    table.attrs["text_among_numbers"] = wordy  # column -> "'seventy' on 140 of 418 rows": read as text, no thresholds
    return table


@st.cache_data(max_entries=8, show_spinner=False)
def profile_columns_cached(data_key: str, _frame: pd.DataFrame) -> pd.DataFrame:
    return profile_columns(_frame)


def parse_thresholds(text: str, column: str) -> tuple[float, ...]:
    """``"45, 60"`` -> ``(45.0, 60.0)``; blank -> ``()`` (automatic thresholds)."""
    text = (text or "").strip()
    if not text:
        return ()
    values = []
    for part in re.split(r"[,;\s]+", text):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise DataError(f"Thresholds for '{column}' must be numbers separated by commas (e.g. 45, 60); "
                            f"'{part}' is not a number") from None
        if not math.isfinite(value):
            raise DataError(f"Thresholds for '{column}' must be finite numbers, got '{part}'")
        values.append(value)
    return tuple(sorted(set(values)))


@dataclass(frozen=True)
class ColumnChoices:
    """What the user decided about the columns: the engine's ``exclude``, ``column_kinds``, ``thresholds``."""

    exclude: tuple[str, ...] = ()
    kinds: tuple[tuple[str, str], ...] = ()
    thresholds: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def params(self) -> dict:
        """Keyword arguments of :class:`~frl_engine.estimator.FallingRuleListClassifier` / ``Binarizer``."""
        return {"exclude": tuple(self.exclude), "column_kinds": dict(self.kinds) or None,
                "thresholds": {c: list(t) for c, t in self.thresholds} or None}

    def describe(self) -> dict:
        return {"exclude": list(self.exclude), "kinds": dict(self.kinds),
                "thresholds": {c: list(t) for c, t in self.thresholds}}


def row_word(data: LoadedData) -> str:
    """"rows" for an encounter-level table (a patient column whose patients repeat: :func:`frl_engine.folds.patient_groups`,
    R's colon: 1,858 rows of 929 patients), else "patients", as the fit and the card count them."""
    from frl_engine.folds import patient_groups

    return "rows" if patient_groups(data.frame) is not None else "patients"


def follow_up_columns(table: pd.DataFrame, target: str | None = None, reason: str | None = None) -> list[str]:
    """The columns of a column table left out as named like a follow-up time
    (:data:`frl_engine.columns.FOLLOW_UP_REASON`) that are still left out (the user has not given them a type and
    ticked them), the outcome apart; with ``reason`` another reason, such as
    :data:`frl_engine.columns.LATER_OUTCOME_REASON` (a second outcome: Rotterdam's ``recur`` beside ``death``)."""
    from frl_engine.columns import FOLLOW_UP_REASON

    kept = table[(table["note"] == (reason or FOLLOW_UP_REASON)) & (table["column"] != target)
                 & ((table["kind"] == LEFT_OUT) | ~table["use"].astype(bool))]
    return [str(column) for column in kept["column"]]


def column_choices(table: pd.DataFrame, target: str | None = None) -> ColumnChoices:
    """The engine settings an edited column table stands for.

    Only kinds that differ from the engine's own inference are passed on, so a
    table left as it is fits exactly what the engine fits by default.  A column is left out when **Use** is
    unticked or its Type is :data:`LEFT_OUT` (an identifier ticked again without a type: the engine would leave it
    out anyway, and the cell says so).
    """
    exclude, kinds, thresholds = [], [], []
    for row in table.itertuples(index=False):
        column = row.column
        if column == target:
            continue
        if not bool(row.use) or row.kind == LEFT_OUT:
            exclude.append(column)
            continue
        kind = row.kind if isinstance(row.kind, str) and row.kind in KINDS else None
        if kind is not None and kind != row.detected:
            kinds.append((column, kind))
        cuts = parse_thresholds(row.thresholds if isinstance(row.thresholds, str) else "", column)
        if cuts:
            if (kind or row.detected) != "numeric":
                raise DataError(f"Column '{column}' has thresholds but is treated as {kind or row.detected}: "
                                "set its type to numeric or clear the thresholds")
            thresholds.append((column, cuts))
    return ColumnChoices(tuple(exclude), tuple(kinds), tuple(thresholds))


def column_edit_notes(table: pd.DataFrame, target: str | None = None) -> list[str]:
    """What the user's edits of the column table do, in words, one line per edited column (Markdown-free).

    The **Why** cell keeps the engine's reading (``"an identifier: a different value on every row"``); once the
    user picks another Type, these lines say what the fit will do instead. **Use** ticked again on a column the
    engine leaves out, its Type still :data:`LEFT_OUT`, does nothing (:func:`column_choices`), so that is said
    too, with what to do.
    """
    notes = []
    for row in table.itertuples(index=False):
        if row.column == target or not bool(row.use):
            continue
        if row.kind == LEFT_OUT:
            if row.detected not in KINDS:  # an identifier ticked again: Use alone does not bring it back
                notes.append(f"{row.column}: Use is ticked, but its Type is still left out, so it makes no item. "
                             "Pick a type (numeric, categorical, ...) to use it.")
        elif isinstance(row.kind, str) and row.kind in KINDS and row.kind != row.detected:
            read = ("would leave it out" if row.detected not in KINDS
                    else f"reads it as {row.detected}")
            notes.append(f"{row.column}: used as {row.kind} (your choice; the engine {read}).")
    return notes


# ============================================================================ outcome
def name_words(name) -> list[str]:
    """The lower-case words of a column name: ``"Readmitted30d"`` -> ``["readmitted", "30", "d"]``."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    text = re.sub(r"([0-9])([A-Za-z])", r"\1 \2", re.sub(r"([A-Za-z])([0-9])", r"\1 \2", text))
    return [word for word in re.split(r"[^0-9a-zA-Z]+", text.lower()) if word]


def outcome_name_rank(name) -> int | None:
    """How strongly a column's name says "outcome" (0 = most, the index in :data:`OUTCOME_STEMS`), or None."""
    words = name_words(name)
    if not words or any(word in _NOT_OUTCOME_WORDS for word in words):
        return None
    if "status" in words and words != ["status"] and "vital" not in words:
        words = [word for word in words if word != "status"]  # smoking_status, marital_status: not outcomes
    ranks = [rank for rank, stem in enumerate(OUTCOME_STEMS)
             if any(word.startswith(stem) if stem in _STEM_PREFIX else word == stem for word in words)]
    return min(ranks) if ranks else None


#: Names of a patient's demographic characteristics (:data:`frl_engine.search_report.SENSITIVE_NAME`, and sex).
_DEMOGRAPHIC_NAME = re.compile(SENSITIVE_NAME.pattern + r"|^(sex|gender|male|female|man|woman|child|adult|married|"
                               r"single|widowed|divorced|smoker|urban|rural)$", re.IGNORECASE)


def _rare_share(series: pd.Series) -> float:
    counts = series.dropna().value_counts()
    return float(counts.min() / counts.sum()) if len(counts) else 0.0


def suggest_target(frame: pd.DataFrame) -> str | None:
    """The column most likely to be the outcome.

    1. A column whose name says outcome (``readmitted``, ``Readmitted30d``,
       ``mortality``, ``DEATH_EVENT``, ``y`` ...; see :data:`OUTCOME_STEMS`) with
       2 to ``MAX_EVENT_CHOICES`` values, the most telling name first, a two-valued
       one before others of the same rank. One named like an outcome that holds a single value here
       (``death`` = ``No`` on every row: an export filtered on it) comes after those, but before any
       column of step 2: the page then says why no model can be fitted, instead of offering ``sex``;
    2. else the last yes/no (two-valued) column whose rarer value is at least 1%
       of the rows (a medication flag used once in a thousand rows is not an outcome),
       one without empty cells first (an outcome is recorded for every patient; a lab
       read as pos / neg / n/a is not an outcome);
    3. else the last column.
    """
    named = []
    for position, column in enumerate(frame.columns):
        rank = outcome_name_rank(column)
        if rank is None:
            continue
        n_values = len(outcome_counts(frame[column]))
        if 1 <= n_values <= MAX_EVENT_CHOICES:
            named.append((n_values == 1, rank, n_values != 2, position, column))
    if named:
        return min(named)[-1]
    two_valued = [c for c in frame.columns if frame[c].dropna().nunique() == 2 and _rare_share(frame[c]) >= 0.01]
    # a patient's sex or race (``black`` in Ecdat's DoctorContacts) is no outcome to offer, unless nothing else is
    two_valued = [c for c in two_valued if not _DEMOGRAPHIC_NAME.search(str(c))] or two_valued
    complete = [c for c in two_valued if not missing_mask(frame[c]).any()]
    if complete or two_valued:
        return (complete or two_valued)[-1]
    return frame.columns[-1] if len(frame.columns) else None


def single_valued_outcomes(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Columns named like an outcome that hold a single value here (``Wiederaufnahme`` all ``nein``): the
    export was probably filtered on it. ``(column, value)`` pairs, for a note on the Data page."""
    found = []
    for column in frame.columns:
        if outcome_name_rank(column) is None:
            continue
        values = frame[column][~missing_mask(frame[column])].map(category_label).unique()
        if len(values) == 1 and flag_outcome_value(frame[column]) is None:  # X and blanks: a checkbox outcome
            found.append((str(column), str(values[0])))
    return found


def suggest_event(series: pd.Series):
    """The event value to offer first for an outcome column (None: the user must pick).

    Two values: the engine's choice (:func:`default_event`). More values
    (:func:`frl_engine.io.suggested_event`): the one value naming an event (``Deceased``), else, when
    exactly one reads as "no event" (``NO``, ``0``, ``false``, ``none`` ...), the
    rarest of the others, e.g. ``<30`` for ``readmitted`` with ``NO`` / ``>30`` /
    ``<30``. Otherwise None. Missing outcomes (``?``, blanks, ``Unknown``) are no value:
    ``Yes`` / ``No`` with some ``?`` still offers ``Yes``.
    """
    counts = outcome_counts(series)
    if len(counts) == 2:
        return default_event(series)
    if len(counts) == 1:  # a checkbox outcome (X where the event happened, blank elsewhere): its one value
        return flag_outcome_value(series)
    if len(counts) < 2 or len(counts) > MAX_EVENT_CHOICES:
        return None
    return suggested_event(counts)


def _outcome_spellings(series: pd.Series) -> list:
    """The distinct outcome values as the engine reads them (:func:`frl_engine.io.outcome_spellings`)."""
    return list(outcome_spellings(series).values())


def outcome_values(series: pd.Series) -> list:
    """The distinct values of an outcome column, sorted as text (None if far too many to pick from)."""
    values = sorted(_outcome_spellings(series), key=lambda v: str(v))
    return values if len(values) <= MAX_EVENT_CHOICES else []


def default_event(series: pd.Series):
    """The event value the engine would choose, when the outcome has exactly two values."""
    values = _outcome_spellings(series)
    if len(values) != 2 or event_is_ambiguous(values):
        return None  # 1 / 2 codes: the user says which is the event
    return default_positive(values)


def split_outcome(frame: pd.DataFrame, target: str | None, event) -> tuple[pd.DataFrame, np.ndarray, Any]:
    """Features, the event indicator and the event value, or a DataError saying what to pick."""
    if not target:
        raise DataError("Pick the outcome column: the one the rule list should predict")
    if target not in frame.columns:
        raise DataError(f"The outcome column '{target}' is not in this table: pick another one")
    n_values = len(_outcome_spellings(frame[target]))
    if n_values > MAX_EVENT_CHOICES:
        if looks_like_identifier(target, frame[target]):   # as the column table calls it
            raise DataError(f"The outcome column '{target}' has {n_values:,} different values: it is an identifier "
                            "(a record or patient number), not an outcome. Pick the yes/no column the rule list "
                            "should predict")
        raise DataError(f"The outcome column '{target}' has {n_values:,} different values: it looks like a "
                        "measurement, not an outcome. Pick a yes/no column (or make one from it)")
    if n_values < 2:  # the engine's one-class message, or a checkbox outcome's event (its blanks: no event)
        return split_target(frame, target, event)
    if event is None:
        if n_values > 2:
            raise DataError(f"The outcome column '{target}' has {n_values} values, not two: pick which value "
                            "counts as the event (the others become 'no event')")
        event = default_event(frame[target])
        if event is None:
            low, high = ambiguous_codes(_outcome_spellings(frame[target]))
            raise DataError(f"The outcome column '{target}' is coded {low} and {high}: pick which one counts as "
                            f"the event (some exports write {low} = yes, others {low} = no)")
    return split_target(frame, target, event)


def plain(value):
    """A numpy scalar as a plain Python value (for JSON and messages)."""
    return value.item() if isinstance(value, np.generic) else value


# ============================================================================ items and candidate rules
@dataclass(frozen=True)
class ItemPreview:
    table: pd.DataFrame  # item, column, patients, percent
    specs: tuple[dict, ...]  # the binarizer's column specs (to_dict)
    constant: tuple[str, ...]
    # the user's thresholds outside their column's values: (column, "200 (its values are 18 to 94)")
    outside_thresholds: tuple[tuple[str, str], ...] = ()


@st.cache_data(max_entries=16, show_spinner=False)
def item_preview(data_key: str, target: str, choices: ColumnChoices, _features: pd.DataFrame) -> ItemPreview:
    """The binarised items, as a fit at the default 5% support will make them, with the patients each covers."""
    binarizer = Binarizer(n_thresholds=3, min_support=FitSettings.min_support, **choices.params())
    binarizer.fit(_features)
    return ItemPreview(binarizer.item_table(_features), tuple(s.to_dict() for s in binarizer.specs_),
                       tuple(binarizer.constant_columns_),
                       tuple((r.name, r.outside_thresholds) for r in binarizer.readings_ if r.outside_thresholds))


@st.cache_data(max_entries=32, show_spinner=False)
def candidate_count(data_key: str, target: str, choices: ColumnChoices, min_support: float, max_conditions: int,
                    _features: pd.DataFrame, n_thresholds: int = 3) -> "CandidateCount":
    """How many candidate rules mining finds, and how many of them the fit will search (at most 5,000).

    Raises RuleMiningError when none reaches the support, or when mining would need too much memory.
    """
    binarizer = Binarizer(n_thresholds=int(n_thresholds), min_support=min_support, **choices.params())
    items = binarizer.fit_transform(_features)
    mined = mine_rules(items, binarizer.conditions_, min_support=min_support, max_conditions=max_conditions,
                       max_rules=MAX_RULES)
    return CandidateCount(kept=len(mined.rules), mined=mined.n_mined)


# The fit's screening bound (``FallingRuleListClassifier(max_rules=5000)``, ``frl fit --max-rules``).
MAX_RULES = 5000


@dataclass(frozen=True)
class CandidateCount:
    """What the Fit page says before a fit: the rules mining finds, and those the search will use."""

    kept: int  # the candidate rules the search uses (the strongest ``MAX_RULES`` when mining finds more)
    mined: int  # every rule that reaches the support and earns each of its conditions

    @property
    def screened(self) -> bool:
        return self.mined > self.kept

    def slow_search(self, n_steps: int, lam: float) -> bool:
        """Whether the search will likely add posterior walks (a fit of up to a minute or two).

        The engine walks when one annealing chain proposes a given rule at a given place fewer than
        ``MIN_TARGETED_PROPOSALS`` times (:func:`frl_engine.anneal.targeted_proposals`); before the fit
        the list's length is not known, so the prior's mean ``lam`` stands for it.
        """
        from frl_engine.anneal import MIN_TARGETED_PROPOSALS, targeted_proposals

        return targeted_proposals(int(n_steps), self.kept, max(int(round(lam)), 1)) < MIN_TARGETED_PROPOSALS


# ============================================================================ fitting
@dataclass(frozen=True)
class FitSettings:
    """The hyperparameters a user sets on the Fit page (the paper's defaults)."""

    lam: float = 8.0
    min_support: float = 0.05
    max_conditions: int = 2
    n_steps: int = 5000
    n_chains: int = 4
    seed: int = 0
    n_thresholds: int = 3  # quantile thresholds per numeric column

    def params(self) -> dict:
        return {"lam": float(self.lam), "min_support": float(self.min_support),
                "max_conditions": int(self.max_conditions), "n_thresholds": int(self.n_thresholds),
                "n_steps": int(self.n_steps), "n_chains": int(self.n_chains), "random_state": int(self.seed)}

    def label(self) -> str:
        thresholds = f" · {self.n_thresholds} thresholds" if int(self.n_thresholds) != 3 else ""
        return (f"λ {format_number(self.lam)} · support {format_number(round(100 * self.min_support, 2))}% · "
                f"≤{self.max_conditions} condition{'s' if self.max_conditions != 1 else ''}{thresholds} · {self.n_steps:,} steps × {self.n_chains} · "
                f"seed {self.seed}")


@dataclass(frozen=True)
class PosteriorSettings:
    n_samples: int = 1_000  # the engine's and `frl sample`'s default
    n_chains: int = 4


@dataclass(frozen=True)
class FitSpec:
    """Everything a fit depends on; its ``key`` is the cache key (data hash + every parameter)."""

    data_key: str
    data_name: str
    target: str
    event: Any
    choices: ColumnChoices
    settings: FitSettings
    posterior: PosteriorSettings | None = None
    tuning: str | None = None  # JSON of how an Explore cell was chosen (training.tuning); not part of the key

    @property
    def key(self) -> str:
        return _digest({"data": self.data_key, "target": self.target, "event": repr(plain(self.event)),
                        "choices": self.choices.describe(), "settings": dataclasses.asdict(self.settings)})

    def estimator(self) -> FallingRuleListClassifier:
        from frl_engine.estimator import FallingRuleListClassifier

        return FallingRuleListClassifier(**self.settings.params(), **self.choices.params())

    def with_settings(self, settings: FitSettings, posterior: PosteriorSettings | None) -> FitSpec:
        return dataclasses.replace(self, settings=settings, posterior=posterior)


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


@st.cache_data(max_entries=8, show_spinner=False)  # an estimator holds its packed data: keep few
def fit_estimator(spec_key: str, _spec: FitSpec, _features: pd.DataFrame,
                  _event: np.ndarray, _job=None) -> FallingRuleListClassifier:
    """The MAP falling rule list; cached by data hash + parameters (pickled: each caller gets a copy).

    With a ``_job`` (:class:`dashboard.jobs.Job`) the fit runs in a worker process that the job's
    Stop button kills; a stopped fit raises :class:`~frl_engine.stopping.Stopped` and is not cached.
    """
    if _job is None:
        estimator = _spec.estimator()
        estimator.fit(_features, _event)
    else:
        from frl_engine import workers
        from frl_engine.stopping import run_tasks

        [estimator] = run_tasks(workers.fit, [(_spec.estimator(), _job.relay())], shared=(_features, _event),
                                processes=True, token=_job.token, on_wait=_job.wait_for_worker)
    estimator.target_name_ = _spec.target
    estimator.data_name_ = _spec.data_name
    estimator.event_label_ = plain(_spec.event)
    return estimator


@dataclass(frozen=True)
class PosteriorView:
    """What the Posterior page shows, as plain data (from a PosteriorSample)."""

    n_chains: int
    n_samples: int
    burn_in: int
    lengths: dict  # L -> fraction of samples
    length_trace: np.ndarray  # (n_chains, n_samples)
    log_posterior_trace: np.ndarray  # (n_chains, n_samples)
    inclusion: dict  # rule -> fraction, most frequent first
    acceptance: dict  # move -> rate (pooled)
    acceptance_per_chain: tuple
    proposals: dict
    rhat: dict
    ess: dict
    map_list: tuple
    map_list_frequency: float
    risk_summary: dict  # the model file's "posterior" block
    summary_text: str
    seconds: float
    map_groups_frequency: float  # share of samples grouping the patients as the list shown does
    over_budget: bool = False  # the default schedule stopped before a longer attempt (its work budget)
    # the rules the chains hold in the most different shares of their lists: (rule, per-chain shares)
    disagreement: tuple = ()


def length_note(lengths: dict, map_length: int) -> str:
    """A sentence for the length histogram when the list shown is a rare length among the sampled lists (R's pbc: 2
    rules shown, 1% of the draws, most at 4), else "": a clinician reads that as the two disagreeing."""
    if not lengths or lengths.get(map_length, 0.0) >= 0.1:
        return ""
    mode = max(lengths, key=lengths.get)
    way = "longer" if mode > map_length else "shorter"
    return (f" Most sampled lists are {way} than the list shown (most often {mode} rules, against "
            f"{100 * lengths.get(map_length, 0.0):.0f}% at {map_length}): the posterior spreads over many lists, "
            "whose rules each change little, and the list shown is its single most probable one.")


def posterior_view(sample, seconds: float = 0.0) -> PosteriorView:
    """Plain data from a :class:`frl_engine.sampler.PosteriorSample`."""
    inclusion = {str(k): float(v) for k, v in list(sample.inclusion.items())[:40] if v > 0}
    return PosteriorView(
        n_chains=int(sample.n_chains), n_samples=int(sample.n_samples), burn_in=int(sample.burn_in),
        lengths={int(k): float(v) for k, v in sample.length_histogram().items()},
        length_trace=np.asarray(sample.length_trace, dtype=float),
        log_posterior_trace=np.asarray(sample.log_posterior_trace, dtype=float),
        inclusion=inclusion, acceptance=dict(sample.acceptance),
        acceptance_per_chain=tuple(dict(a) for a in sample.acceptance_per_chain),
        proposals=dict(sample.proposals), rhat=dict(sample.rhat), ess=dict(sample.ess),
        map_list=tuple(str(r) for r in sample.map_list), map_list_frequency=float(sample.map_list_frequency),
        risk_summary=sample.map_risk_summary(), summary_text=sample.summary(), seconds=float(seconds),
        map_groups_frequency=float(sample.map_groups_frequency),
        over_budget=bool(sample.attempts and sample.attempts[-1].get("over_budget")),
        disagreement=tuple((str(d.rule), tuple(float(v) for v in d.per_chain)) for d in sample.chain_disagreement()),
    )


@st.cache_data(max_entries=16, show_spinner=False)
def sample_posterior(spec_key: str, n_samples: int, n_chains: int, seed: int,
                     _estimator: FallingRuleListClassifier, _job=None) -> PosteriorView:
    """Posterior samples of the fitted list (paper section 3.2), summarised; cached per fit + settings.

    With a ``_job`` the sampler runs in a worker process that the job's Stop button kills.
    """
    started = time.perf_counter()
    estimator = copy.copy(_estimator)  # sample_posterior sets posterior_summary_: keep the caller's copy unchanged
    # n_jobs=1: the chains run one after the other in one process (compiled). More worker processes cost
    # seconds to start, far more than the chains themselves on clinical-size data; the samples are the
    # same whatever n_jobs.
    options = {"n_samples": n_samples, "n_chains": n_chains, "random_state": seed, "n_jobs": 1}
    if _job is None:
        sample = estimator.sample_posterior(**options)
    else:
        from frl_engine import workers
        from frl_engine.stopping import run_tasks

        [sample] = run_tasks(workers.sample_posterior, [(estimator, options, _job.relay())], processes=True,
                             token=_job.token, on_wait=_job.wait_for_worker)
    return posterior_view(sample, time.perf_counter() - started)


@dataclass(frozen=True)
class FitResult:
    """A fitted (or loaded) list and everything the pages show about it.

    ``model`` (the model-file dictionary) is the single source of the list's
    rules, risks, supports and intervals; the rest is what a model file does not hold.
    """

    id: str
    model: dict = field(repr=False)
    source: str  # "fit" or "file"
    label: str
    spec: FitSpec | None = None
    data: LoadedData | None = field(default=None, repr=False)
    rule_index: np.ndarray | None = field(default=None, repr=False)  # per training row: 0..L (L = ELSE)
    n_candidates: int | None = None
    posterior: PosteriorView | None = field(default=None, repr=False)
    fit_seconds: float | None = None
    created: float = field(default_factory=time.time)

    @property
    def rules(self) -> list[str]:
        return [r["name"] for r in self.model["rules"]]

    @property
    def has_posterior(self) -> bool:
        return self.model.get("posterior") is not None

    def with_posterior(self, view: PosteriorView) -> FitResult:
        model = copy.deepcopy(self.model)
        model["posterior"] = view.risk_summary
        return dataclasses.replace(self, model=model, posterior=view)

    def with_validation(self, validation: dict | None) -> FitResult:
        model = copy.deepcopy(self.model)
        model["validation"] = validation
        return dataclasses.replace(self, model=model)


def model_dict(estimator: FallingRuleListClassifier, spec: FitSpec) -> dict:
    """The model file of a fit, with the outcome in the user's own terms (as ``frl fit`` writes it)."""
    model = estimator.to_dict(target=spec.target, data_name=spec.data_name, event_label=plain(spec.event))
    return json.loads(dumps_model(model))  # plain JSON values only


def fit_result(estimator: FallingRuleListClassifier, spec: FitSpec, data: LoadedData, features: pd.DataFrame,
               seconds: float | None, result_id: str) -> FitResult:
    model = model_dict(estimator, spec)  # the Data page's "Read these codes as missing" is kept by the estimator
    return FitResult(
        id=result_id, model=model, source="fit", label=spec.settings.label(), spec=spec,
        data=data, rule_index=estimator.apply(features), n_candidates=len(estimator.candidate_names_),
        fit_seconds=seconds,
    )


def copied_columns_note(fit: FitResult | None, escape=str) -> str | None:
    """The command line's note (``frl fit``, :func:`frl_engine.search_report.copied_note`) on the columns of ``fit``
    in no candidate rule because each of their values holds the same patients as a value of another column, whose rules
    stand for them (``sex`` F / M beside ``gender``; a model file records them as ``training.copied_columns``), with
    the names passed through ``escape`` (markdown); None when there are none, and, as ``frl fit``, on a handful of
    patients, where every column holds "the same patients" as another and the few-patients warning says why."""
    copies = (fit.model.get("training") or {}).get("copied_columns") if fit is not None else None
    if not isinstance(copies, dict) or not copies:
        return None
    from frl_engine.search_report import copied_note, few_patients_note

    if few_patients_note(fit.model):
        return None
    return copied_note({escape(column): escape(other) for column, other in copies.items()})


FIT_STAGES = ("finding the best list by simulated annealing", "sampling the posterior", "summarising")


def fit_work(spec: FitSpec, data: LoadedData, features: pd.DataFrame, event: np.ndarray, result_id: str):
    """The body of a fit job: MAP list (published at once), then the posterior (published again)."""

    def work(job) -> None:
        chains, steps = spec.settings.n_chains, spec.settings.n_steps
        job.stage(0, f"{chains} chain{'s' if chains > 1 else ''} × {steps:,} steps")
        started = time.perf_counter()
        estimator = fit_estimator(spec.key, spec, features, event, _job=job)
        result = fit_result(estimator, spec, data, features, time.perf_counter() - started, result_id)
        if spec.tuning:  # a cell of the Explore page: how it was chosen travels with the model, as `frl fit --tune`
            result.model["training"]["tuning"] = json.loads(spec.tuning)
        job.publish(result)
        if spec.posterior is not None:
            post = spec.posterior
            job.stage(1, f"{post.n_chains} chains × {post.n_samples:,} samples")
            view = sample_posterior(spec.key, post.n_samples, post.n_chains, spec.settings.seed, estimator, _job=job)
            job.stage(2)
            job.publish(result.with_posterior(view))

    return work


# ============================================================================ model files
def load_model_file(raw: bytes, name: str, result_id: str) -> FitResult:
    """A model JSON written by the dashboard or ``frl fit --out``; ModelFileError if it is not one of ours."""
    if not name.lower().endswith(".json"):
        raise ModelFileError(f"{name} is not a model file: a model is a .json file saved from this dashboard "
                             "or `frl fit --out`")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{name} is not a model file: it is not UTF-8 text") from None
    model = parse_model(text, source=name)
    estimator_from_model(model)  # checks the rules and risks are well formed
    check_renderable(model)
    hyper = model.get("hyperparameters") or {}
    support = hyper.get("min_support")
    support = (f"{format_number(round(100 * support, 2))}%" if isinstance(support, (int, float))
               and not isinstance(support, bool) else "?")   # 5%, as every other page writes it, not 0.05
    label = f"{name} (λ {hyper.get('lam', '?')}, support {support})"
    return FitResult(id=result_id, model=json.loads(dumps_model(model)), source="file", label=label)


def check_renderable(model: dict) -> None:
    """Raise ModelFileError if the card could not be drawn from this model (incomplete file)."""
    from frl_engine.card import layout_card

    layout_card(model, size="pocket")


def model_json(model: dict) -> bytes:
    return (dumps_model(model) + "\n").encode("utf-8")


def estimator_from_model(model: dict) -> FallingRuleListClassifier:
    from frl_engine.estimator import FallingRuleListClassifier

    return FallingRuleListClassifier.from_dict(model)


# ============================================================================ scoring
def scored_frame(frame: pd.DataFrame, rule_index: np.ndarray, model: dict) -> pd.DataFrame:
    """The training table with the rule that applies to each patient (1 = top) and its risk."""
    risks = np.array([r["probability"] for r in model["rules"]] + [model["default"]["probability"]])
    n_rules = len(model["rules"])
    out = frame.copy()
    out["frl_rule"] = np.asarray(rule_index) + 1
    out["frl_rule_text"] = [model["rules"][i]["name"] if i < n_rules else "ELSE" for i in rule_index]
    out["frl_risk"] = risks[np.asarray(rule_index)]
    return out


def scored_csv(frame: pd.DataFrame, rule_index: np.ndarray, model: dict) -> bytes:
    return scored_frame(frame, rule_index, model).to_csv(index=False).encode("utf-8")


# ============================================================================ the patient look-up
@dataclass(frozen=True)
class PatientField:
    """One input of the "which rule applies" form: a column the list uses."""

    column: str
    kind: str  # numeric | categorical | boolean | code (typed in)
    options: tuple[str, ...] = ()  # categories (categorical)
    thresholds: tuple[float, ...] = ()  # the cut points the list uses (numeric)
    example: str = ""  # a code as the training data wrote it, one the list tests (code)


def patient_fields(model: dict) -> list[PatientField]:
    """The columns the list's rules test, in order of first use, with how to ask for each."""
    specs = {c["name"]: c for c in ((model.get("binarizer") or {}).get("columns") or [])}
    order, ops, values = [], {}, {}
    for rule in model["rules"]:
        for cond in rule["conditions"]:
            column = cond["column"]
            if column not in order:
                order.append(column)
            ops.setdefault(column, set()).add(cond["op"])
            if cond.get("value") is not None:
                values.setdefault(column, set()).add(cond["value"])
    fields = []
    for column in order:
        spec = specs.get(column)
        column_ops = ops[column] - {"is missing"}
        if spec is not None:
            kind = spec["kind"]
        elif column_ops & {">=", "<"}:
            kind = "numeric"
        elif column_ops & {"==", "!="}:
            kind = "categorical"
        else:
            kind = "boolean"
        if kind in ("categorical", "nominal"):
            options = tuple(spec["categories"]) if spec else tuple(sorted(str(v) for v in values.get(column, ())))
            fields.append(PatientField(column, "categorical", options=options))
        elif kind in ("code", "code list") or column_ops & {"starts with", *LIST_OPS}:
            tested = values.get(column, ())
            example = _code_example(spec, tested)
            if kind == "code list":  # a list of codes, as the table writes them: two the list tests
                other = _code_example(spec, [v for v in tested if not example.startswith(str(v))])
                example = "; ".join(dict.fromkeys(filter(None, [example, other])))
            fields.append(PatientField(column, "code", example=example))
        elif kind == "numeric":
            cuts = sorted(float(v) for v in values.get(column, ()) if isinstance(v, (int, float)))
            fields.append(PatientField(column, kind, thresholds=tuple(cuts)))
        else:
            fields.append(PatientField(column, "boolean"))
    return fields


def _code_example(spec: dict | None, tested) -> str:
    """A code to show as an example in the form: one of the training data's codes in a group the list tests
    (``I50.1`` for ``diag_1 starts with I50``), else a tested value, else the column's first code."""
    codes = [str(c) for c in ((spec or {}).get("categories") or ())]
    prefixes = sorted(str(v) for v in tested)
    for prefix in prefixes:
        match = next((c for c in codes if c.startswith(prefix)), None)
        if match is not None:
            return match
    return prefixes[0] if prefixes else (codes[0] if codes else "")


@dataclass(frozen=True)
class PatientCheck:
    position: int  # 0-based rule that fires; L = ELSE
    risk: float
    lower: float | None
    upper: float | None
    steps: tuple  # per rule tried: (rule name, fired, ((condition, holds), ...))
    # the rules above the one that fires that could apply but for values left unknown (every condition they miss
    # tests a column not given): (0-based position, rule name, risk, (columns, ...)); their risks are higher
    could_apply: tuple = ()


def explain_patient(model: dict, values: dict) -> PatientCheck:
    """Which rule fires for one patient (values: column -> number / category / "yes"/"no" / None) and why.

    An unknown value meets no condition (but ``is missing``), so a patient whose age is not given passes over
    ``age >= 70`` to a lower, lower-risk rule: ``could_apply`` names each rule above that only unknown values
    kept from applying, with its risk, so the page can say the result rests on them."""
    estimator = estimator_from_model(model)
    row = pd.DataFrame([{c: (np.nan if v is None else v) for c, v in values.items()}])
    for column in estimator.used_columns_:
        if column not in row.columns:
            row[column] = np.nan
    position = int(estimator.apply(row)[0])
    steps, could_apply = [], []
    unknown = {column for column in row.columns if pd.isna(row[column].iloc[0])}
    for index, rule in enumerate(estimator.rule_objects_[: position + 1]):
        held = [bool(c.evaluate(row)[0]) for c in rule.conditions]
        conditions = tuple((c.name, ok) for c, ok in zip(rule.conditions, held))
        steps.append((rule.name, index == position, conditions))
        missed = [c for c, ok in zip(rule.conditions, held) if not ok]
        if index < position and missed and all(c.column in unknown for c in missed):
            columns = tuple(dict.fromkeys(str(c.column) for c in missed))
            could_apply.append((index, rule.name, float(estimator.probabilities_[index]), columns))
    posterior = model.get("posterior") or {}
    lower = posterior.get("risk_lower")
    upper = posterior.get("risk_upper")
    return PatientCheck(position, float(estimator.probabilities_[position]),
                        None if lower is None else float(lower[position]),
                        None if upper is None else float(upper[position]), tuple(steps), tuple(could_apply))


# ============================================================================ validation
VALIDATION_METHODS = ("frl", "logreg", "cart", "rf", "svm", "hgb")


@dataclass(frozen=True)
class ValidationSpec:
    fit_key: str
    methods: tuple[str, ...]
    n_folds: int
    seed: int

    @property
    def key(self) -> str:
        return _digest(dataclasses.asdict(self))


def validation_inputs(spec: FitSpec, features: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The table the models are compared on (excluded columns dropped) and the FRL settings."""
    used = features.drop(columns=[c for c in spec.choices.exclude if c in features.columns])
    params = {**spec.settings.params(), **spec.choices.params()}
    params.pop("random_state")
    params["exclude"] = ()
    return used, params


@st.cache_data(max_entries=32, show_spinner=False)
def cross_validate_method(fit_key: str, method: str, n_folds: int, seed: int, _X: pd.DataFrame, _event: np.ndarray,
                          _frl_params: dict, dataset: str, _progress=None, _cancel=None):
    """One method's cross-validation (the numbers do not depend on the other methods run alongside).

    ``_progress(done, total)`` is told as folds finish, ``_cancel`` (a CancelToken) stops the run and
    kills its workers (neither is part of the cache key).
    """
    from frl_engine.validation.crossval import cross_validate_models

    return cross_validate_models(_X, _event, n_folds=n_folds, methods=(method,), frl_params=_frl_params,
                                 random_state=seed, n_jobs=-1, dataset=dataset, progress=_progress, cancel=_cancel)


def merge_evaluations(results: list) -> Any:
    """One EvaluationResult from per-method runs on the same folds."""
    first = results[0]
    return dataclasses.replace(
        first, methods=tuple(m for r in results for m in r.methods), folds=tuple(f for r in results for f in r.folds),
        elapsed_seconds=float(sum(r.elapsed_seconds for r in results)),
        settings={**first.settings, **{k: v for r in results for k, v in r.settings.items()}},
    )


@dataclass(frozen=True)
class ValidationResult:
    spec: ValidationSpec
    fit_id: str
    evaluation: Any = field(repr=False)  # frl_engine.evaluate.EvaluationResult
    # the table and outcome cross-validated: results kept while the user fits on another table say so
    data_key: str = ""
    data_name: str = ""
    target: str = ""

    def same_data(self, spec: "FitSpec") -> bool:
        """Whether these results are for ``spec``'s table and outcome (another list's settings, perhaps)."""
        return (self.data_key, self.target) == (spec.data_key, spec.target)

    @property
    def missing_methods(self) -> tuple[str, ...]:
        """The methods asked for that have no result yet (still running, or stopped before them)."""
        return tuple(m for m in self.spec.methods if m not in self.evaluation.methods)

    def model_block(self) -> dict:
        return self.evaluation.validation_summary("frl")


def validation_work(vspec: ValidationSpec, fit: FitResult, features: pd.DataFrame, event: np.ndarray):
    def work(job) -> ValidationResult:
        X, params = validation_inputs(fit.spec, features)
        results = []
        for index, method in enumerate(vspec.methods):
            job.stage(index, f"{vspec.n_folds} folds")

            def folds_done(done: int, total: int) -> None:
                job.advance(done / total, f"fold {done} of {total} done")

            results.append(cross_validate_method(vspec.fit_key, method, vspec.n_folds, vspec.seed, X, event, params,
                                                 fit.spec.data_name, _progress=folds_done, _cancel=job.token))
            if len(results) < len(vspec.methods):   # the methods so far, shown while the others run (and kept on Stop)
                job.publish(ValidationResult(vspec, fit.id, merge_evaluations(results), *data))
        job.stage(len(vspec.methods))
        return ValidationResult(vspec, fit.id, merge_evaluations(results), *data)

    data = (fit.spec.data_key, fit.spec.data_name, fit.spec.target)

    return work


def validation_stages(methods) -> tuple[str, ...]:
    from frl_engine.validation.crossval import METHOD_DESCRIPTIONS

    return tuple(METHOD_DESCRIPTIONS.get(m, m) for m in methods)


# ============================================================================ the card
def pdftoppm_available() -> bool:
    return shutil.which("pdftoppm") is not None


@st.cache_data(max_entries=16, show_spinner=False)
def card_pdf(model_text: str, size: str, title: str | None) -> bytes:
    """The laminated card as PDF bytes (cached by the model's JSON text, size and title)."""
    from frl_engine.card import render_card

    return render_card(json.loads(model_text), size=size, title=title)


def card_png_pages(pdf: bytes, dpi: int = 170, first: int = 1, last: int = 2) -> list[bytes]:
    """PNG images of PDF pages (pdftoppm in a private temporary folder); [] if pdftoppm is missing or fails."""
    if not pdftoppm_available():
        return []
    with tempfile.TemporaryDirectory(prefix="frl-card-") as tmp:
        source = Path(tmp) / "card.pdf"
        source.write_bytes(pdf)
        try:
            subprocess.run(["pdftoppm", "-png", "-r", str(dpi), "-f", str(first), "-l", str(last), str(source),
                            str(Path(tmp) / "page")], check=True, capture_output=True, timeout=30)
        except (subprocess.SubprocessError, OSError):
            return []
        return [p.read_bytes() for p in sorted(Path(tmp).glob("page*.png"))]


@st.cache_data(max_entries=16, show_spinner=False)
def card_preview(model_text: str, size: str, title: str | None) -> list[bytes]:
    return card_png_pages(card_pdf(model_text, size, title))


def model_identifier(model: dict) -> str:
    from frl_engine.card import model_identifier as identifier

    return identifier(model)


# ============================================================================ the model registry
# Every fit made here is kept in the model registry (frl_engine/registry.py; FRL_REGISTRY, else the per-user
# data folder) under the ID printed on its card.  A fit whose model changes (its posterior or cross-validation
# arrives) is registered again under its new ID, linked to the entry it extends.
@st.cache_resource(show_spinner=False)
def _registry(location: str):
    from frl_engine.registry import Registry

    return Registry(location)


def model_registry():
    """The registry ``FRL_REGISTRY`` names (opened once per location); RegistryError if it cannot be used."""
    from frl_engine.registry import default_location

    return _registry(default_location())


def dashboard_user() -> str | None:
    """The signed-in user (when the dashboard runs with authentication), else None."""
    try:
        return (st.user.get("email") or st.user.get("name")) if st.user.get("is_logged_in") else None
    except Exception:  # noqa: BLE001 - no authentication configured
        return None


def register_fit(result: FitResult, parent: FitResult | None = None):
    """Keep a dashboard fit in the registry; returns its entry (FRLError if the registry cannot be used)."""
    from frl_engine.registry import DataFingerprint

    spec, data, fingerprint = result.spec, result.data, None
    if data is not None and data.sha256:
        fingerprint = DataFingerprint(data.sha256, data.name, data.n_rows, tuple(map(str, data.frame.columns)),
                                      spec.target if spec else None, None if spec is None else event_label(plain(spec.event)))
    return model_registry().register(
        model_json(result.model).decode("utf-8"), data=fingerprint, created_by="dashboard",
        user_name=dashboard_user(), hyperparameters=spec.estimator().get_params() if spec else None,
        seed=spec.settings.seed if spec else None, command=f"dashboard fit: {result.label}",
        parent=model_identifier(parent.model) if parent is not None and parent.source == "fit" else None)


def registry_entry(model: dict):
    """The registry entry of this model, or None when it is not registered (FRLError if the registry fails)."""
    return model_registry().find(model_identifier(model))


def registry_caption(entry) -> str:
    """One line saying where a model comes from, for the card and validation pages."""
    when = entry.created_at.replace("T", " ")[:16]
    who = " ".join(x for x in (entry.created_by, entry.user_name) if x) or "?"
    data = f" · fitted on {entry.data.name} ({entry.data.n_rows:,} rows, SHA-256 {entry.data.sha256[:12]}…)" \
        if entry.data else ""
    status = " · retired" if entry.retired else ""
    auroc = entry.auroc_text()
    return (f"Registry: model ID {entry.model_id}, registered {when} UTC by {who}{data}; seed {entry.seed}; "
            f"{entry.software_version}{'' if auroc == '-' else f'; AUROC {auroc}'}{status}")


def registry_table(entries) -> pd.DataFrame:
    """The Models page's table: one row per entry, newest first."""
    return pd.DataFrame([{
        "Model ID": e.model_id, "Created (UTC)": e.created_at.replace("T", " ")[:16],
        "By": " ".join(x for x in (e.created_by, e.user_name) if x), "Data": e.data_text(),
        "Rules": e.n_rules, "Intervals": e.posterior is not None, "AUROC": e.auroc_text(), "Note": e.note or "",
        "Extends": e.parent_sha256[:10] if e.parent_sha256 else "", "Retired": bool(e.retired),
    } for e in entries], columns=["Model ID", "Created (UTC)", "By", "Data", "Rules", "Intervals", "AUROC", "Extends",
                                  "Note", "Retired"])


def open_registered(model_id: str, result_id: str) -> FitResult:
    """A registered model as the current list (source "file": like a model file, it holds no training data)."""
    entry = model_registry().get(model_id)
    model = parse_model(entry.model_json, source=f"registered model {entry.model_id}")
    estimator_from_model(model)
    check_renderable(model)
    label = f"registered model {entry.model_id}" + (f" ({entry.note})" if entry.note else "")
    return FitResult(id=result_id, model=json.loads(dumps_model(model)), source="file", label=label)


# ============================================================================ start-up
def warm_up() -> None:
    """Load the engine's compiled (numba) kernels by fitting and sampling a tiny problem.

    Run once per server process on a background thread, after the first page is drawn, so the
    first real fit does not pay for it.
    """
    from frl_engine.estimator import FallingRuleListClassifier

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.normal(size=200),
                          "c": rng.choice(["x", "y", "z"], 200)})
    y = (frame["a"].to_numpy() == 1) ^ (rng.random(200) < 0.2)
    estimator = FallingRuleListClassifier(n_steps=50, n_chains=2, random_state=0).fit(frame, y)
    try:
        estimator.sample_posterior(20, n_chains=2, random_state=0, n_jobs=1, extend=False)
    except FRLError:
        pass
