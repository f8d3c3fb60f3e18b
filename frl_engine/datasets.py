"""Loaders for the four UCI data sets of the paper's section 5 (Table 3).

Each loader reads the *unmodified* UCI file (``spambase.data``,
``mammographic_masses.data``, ``breast-cancer-wisconsin.data``, ``car.data``)
from a folder it is given -- the data is never copied into the project -- and
returns a :class:`Dataset`: a DataFrame of features with readable column names
and values, and the outcome as a bool event array.

The raw formats are plain comma-separated lines without a header, ``?`` for a
missing value.  A file that cannot be parsed raises
:class:`~frl_engine.errors.DataError` naming the file and the line
(``car.data line 17: expected 7 comma-separated values, got 5``); a missing
file names the file and what it is
(``spambase.data (UCI Spambase, 4601 e-mails) is missing from /data``).

Choices (see ``docs/evaluation.md``):

* **Spambase**: the 57 numeric columns under their names from
  ``spambase.names``; event = spam (1).
* **Mammographic masses**: the BI-RADS assessment is left out (it is the
  radiologist's verdict, not a finding; the paper left it out too).  Age and
  Density are numbers (Density keeps its ordinal codes 1 high, 2 iso, 3 low,
  4 fat-containing), Shape and Margin become their names.  Event = malignant.
  With ``impute=True`` missing values are filled with the median Age and the
  most frequent Shape, Margin and Density of the file (label-blind), so all 961
  rows are kept, as in the paper.
* **Breast cancer Wisconsin**: the sample id is dropped; the nine cytology
  scores (1-10) are numbers; event = malignant (class 4).  By default only the
  683 complete rows are kept, as in the paper (``complete_rows=False`` keeps
  all 699 with the 16 unknown Bare Nuclei as missing).
* **Car evaluation**: six categorical columns; the four classes become one
  event, by default "acceptable" = acc, good or vgood (30.0%) against unacc.
  The paper does not say how it made the label binary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import DataError

__all__ = [
    "Dataset", "DatasetFile", "DATASET_FILES", "load_spambase", "load_mammographic", "load_breast_cancer", "load_car",
    "load_dataset", "dataset_file",
]

MISSING_TOKEN = "?"

SPAMBASE_COLUMNS = (
    "word_freq_make", "word_freq_address", "word_freq_all", "word_freq_3d", "word_freq_our", "word_freq_over",
    "word_freq_remove", "word_freq_internet", "word_freq_order", "word_freq_mail", "word_freq_receive",
    "word_freq_will", "word_freq_people", "word_freq_report", "word_freq_addresses", "word_freq_free",
    "word_freq_business", "word_freq_email", "word_freq_you", "word_freq_credit", "word_freq_your", "word_freq_font",
    "word_freq_000", "word_freq_money", "word_freq_hp", "word_freq_hpl", "word_freq_george", "word_freq_650",
    "word_freq_lab", "word_freq_labs", "word_freq_telnet", "word_freq_857", "word_freq_data", "word_freq_415",
    "word_freq_85", "word_freq_technology", "word_freq_1999", "word_freq_parts", "word_freq_pm", "word_freq_direct",
    "word_freq_cs", "word_freq_meeting", "word_freq_original", "word_freq_project", "word_freq_re", "word_freq_edu",
    "word_freq_table", "word_freq_conference", "char_freq_;", "char_freq_(", "char_freq_[", "char_freq_!",
    "char_freq_$", "char_freq_#", "capital_run_length_average", "capital_run_length_longest",
    "capital_run_length_total",
)
MAMMOGRAPHIC_SHAPES = {1: "round", 2: "oval", 3: "lobular", 4: "irregular"}
MAMMOGRAPHIC_MARGINS = {1: "circumscribed", 2: "microlobulated", 3: "obscured", 4: "ill-defined", 5: "spiculated"}
BREAST_COLUMNS = (
    "Clump Thickness", "Uniformity of Cell Size", "Uniformity of Cell Shape", "Marginal Adhesion",
    "Single Epithelial Cell Size", "Bare Nuclei", "Bland Chromatin", "Normal Nucleoli", "Mitoses",
)
CAR_VALUES = {
    "buying": ("vhigh", "high", "med", "low"),
    "maint": ("vhigh", "high", "med", "low"),
    "doors": ("2", "3", "4", "5more"),
    "persons": ("2", "4", "more"),
    "lug_boot": ("small", "med", "big"),
    "safety": ("low", "med", "high"),
}
CAR_CLASSES = ("unacc", "acc", "good", "vgood")
CAR_EVENTS = {
    "acceptable": ("acc", "good", "vgood"),   # default: acceptable or better vs unacceptable
    "unacceptable": ("unacc",),
    "good": ("good", "vgood"),
}


@dataclass(frozen=True)
class DatasetFile:
    """One raw UCI file the reproduction reads."""

    key: str            # short name used in tables and on the command line
    filename: str       # the UCI file name
    title: str          # e.g. "Spambase"
    description: str    # what it is, for messages: "UCI Spambase, 4601 e-mails"


DATASET_FILES = {
    "spam": DatasetFile("spam", "spambase.data", "Spambase", "UCI Spambase, 4601 e-mails"),
    "mammo": DatasetFile("mammo", "mammographic_masses.data", "Mammographic masses",
                         "UCI Mammographic Mass, 961 mammograms"),
    "breast": DatasetFile("breast", "breast-cancer-wisconsin.data", "Breast cancer Wisconsin",
                          "UCI Breast Cancer Wisconsin (Original), 699 biopsies"),
    "cars": DatasetFile("cars", "car.data", "Car evaluation", "UCI Car Evaluation, 1728 cars"),
}


@dataclass(frozen=True)
class Dataset:
    """A loaded data set: features, the event, and how they were made.

    Attributes
    ----------
    key : str
        ``"spam"``, ``"mammo"``, ``"breast"`` or ``"cars"``.
    X : DataFrame
        Features with readable names (the outcome is not among them).
    y : ndarray of bool
        The event (spam, malignant, acceptable car).
    target : str
        A name for the event column, e.g. ``"Malignant"``.
    event : str
        What ``y == True`` means, in words.
    notes : tuple of str
        The preprocessing applied, one sentence each.
    raw_label : ndarray
        The label as it is in the file (e.g. the four car classes).
    """

    key: str
    X: pd.DataFrame = field(repr=False)
    y: np.ndarray = field(repr=False)
    target: str
    event: str
    notes: tuple[str, ...] = ()
    raw_label: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        return int(len(self.X))

    @property
    def positive_rate(self) -> float:
        return float(np.mean(self.y))

    def frame(self) -> pd.DataFrame:
        """The features with the event appended as a bool column named :attr:`target`."""
        out = self.X.copy()
        out[self.target] = self.y
        return out


def dataset_file(key: str) -> DatasetFile:
    try:
        return DATASET_FILES[key]
    except KeyError:
        raise DataError(f"Unknown data set {key!r}: choose one of {', '.join(DATASET_FILES)}") from None


def _resolve(source, key: str) -> Path:
    """The file for data set ``key``: ``source`` is its folder or the file itself."""
    info = dataset_file(key)
    path = Path(source)
    if not (path.is_file() or path.name == info.filename):
        path = path / info.filename
    if not path.is_file():
        folder = path.parent
        where = f"from {folder}" if folder.is_dir() else f"from {folder} (no such folder)"
        raise DataError(f"{info.filename} ({info.description}) is missing {where}: "
                        "put the unmodified UCI file there")
    return path


def _read_lines(path: Path, n_fields: int) -> list[tuple[int, list[str]]]:
    """Non-blank lines of a headerless comma-separated file, each split into exactly ``n_fields`` fields."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path.name} line {line}: not plain text (byte {exc.object[exc.start]:#x}): "
                        "use the unmodified UCI file") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        fields = [f.strip() for f in stripped.split(",")]
        if len(fields) != n_fields:
            raise DataError(f"{path.name} line {number}: expected {n_fields} comma-separated values, got {len(fields)}")
        rows.append((number, fields))
    if not rows:
        raise DataError(f"{path.name} is empty: use the unmodified UCI file")
    return rows


def _number(path: Path, number: int, value: str, column: str, *, allow_missing: bool = False,
            choices=None, integer: bool = False) -> float:
    if value == MISSING_TOKEN and allow_missing:
        return np.nan
    try:
        parsed = float(value)
    except ValueError:
        parsed = None
    if parsed is None or not np.isfinite(parsed) or (integer and not parsed.is_integer()):
        kind = "a whole number" if integer else "a number"
        raise DataError(f"{path.name} line {number}: {column} is {value!r}, not {kind}"
                        + (" or '?'" if allow_missing else ""))
    if choices is not None and parsed not in choices:
        shown = ", ".join(str(c) for c in choices)
        raise DataError(f"{path.name} line {number}: {column} is {value!r}, expected one of {shown}")
    return parsed


def _as_event(dataset_key: str, y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=bool)
    if y.all() or not y.any():
        raise DataError(f"{dataset_file(dataset_key).filename}: every row has the same outcome, so it cannot be used")
    return y


def load_spambase(source) -> Dataset:
    """UCI Spambase: 4601 e-mails, 57 numeric features, event = spam (39.4%).

    Parameters
    ----------
    source : str or Path
        The folder holding ``spambase.data``, or the file itself.
    """
    path = _resolve(source, "spam")
    n = len(SPAMBASE_COLUMNS)
    rows = _read_lines(path, n + 1)
    try:  # fast path; on any bad value, go line by line to say where it is
        table = np.asarray([fields for _, fields in rows], dtype=float)
        if not np.isfinite(table).all() or not np.isin(table[:, n], (0.0, 1.0)).all():
            raise ValueError
    except ValueError:
        for number, fields in rows:
            for j in range(n):
                _number(path, number, fields[j], SPAMBASE_COLUMNS[j])
            _number(path, number, fields[n], "the label (spam)", choices=(0.0, 1.0))
        raise  # pragma: no cover - the loop above always finds the bad value
    values = table[:, :n]
    label = table[:, n] == 1.0
    X = pd.DataFrame(values, columns=list(SPAMBASE_COLUMNS))
    for column in ("capital_run_length_longest", "capital_run_length_total"):
        X[column] = X[column].astype(np.int64)
    return Dataset("spam", X, _as_event("spam", label), target="Spam", event="the e-mail is spam",
                   notes=("57 numeric columns named as in spambase.names; event = spam (label 1)",),
                   raw_label=label.astype(np.int64))


def load_mammographic(source, *, impute: bool = False) -> Dataset:
    """UCI Mammographic Mass: 961 masses; Age, Shape, Margin, Density; event = malignant (46.3%).

    Parameters
    ----------
    source : str or Path
        The folder holding ``mammographic_masses.data``, or the file itself.
    impute : bool, default False
        Fill missing values (median Age; most frequent Shape, Margin, Density),
        so that no row is lost -- the paper's choice.  Otherwise they stay
        missing (NaN).
    """
    path = _resolve(source, "mammo")
    rows = _read_lines(path, 6)
    records, label = [], []
    for number, fields in rows:
        _number(path, number, fields[0], "BI-RADS assessment", allow_missing=True)  # checked, then left out
        age = _number(path, number, fields[1], "Age", allow_missing=True)
        shape = _number(path, number, fields[2], "Shape", allow_missing=True, choices=tuple(map(float, MAMMOGRAPHIC_SHAPES)))
        margin = _number(path, number, fields[3], "Margin", allow_missing=True,
                         choices=tuple(map(float, MAMMOGRAPHIC_MARGINS)))
        density = _number(path, number, fields[4], "Density", allow_missing=True, choices=(1.0, 2.0, 3.0, 4.0))
        severity = _number(path, number, fields[5], "Severity", choices=(0.0, 1.0))
        records.append({
            "Age": age,
            "Shape": None if np.isnan(shape) else MAMMOGRAPHIC_SHAPES[int(shape)],
            "Margin": None if np.isnan(margin) else MAMMOGRAPHIC_MARGINS[int(margin)],
            "Density": density,
        })
        label.append(severity == 1.0)
    X = pd.DataFrame.from_records(records, columns=["Age", "Shape", "Margin", "Density"])
    X["Shape"] = X["Shape"].astype(object)
    X["Margin"] = X["Margin"].astype(object)
    notes = ["BI-RADS assessment left out (as in the paper); Shape and Margin by name; Density as its ordinal code "
             "1 high, 2 iso, 3 low, 4 fat-containing"]
    if impute:
        filled = []
        for column in X.columns:
            missing = X[column].isna()
            if not missing.any():
                continue
            if column == "Age":
                value = float(X[column].median())
                how = "median"
            else:
                value = X[column].dropna().value_counts().sort_index(kind="stable").idxmax()
                how = "most frequent value"
            X.loc[missing, column] = value
            filled.append(f"{int(missing.sum())} {column} by the {how} ({value:g})" if isinstance(value, float)
                          else f"{int(missing.sum())} {column} by the {how} ({value})")
        notes.append("missing values imputed, label-blind, on the whole file: " + "; ".join(filled))
    return Dataset("mammo", X, _as_event("mammo", np.asarray(label)), target="Malignant",
                   event="the mass is malignant", notes=tuple(notes), raw_label=np.asarray(label, dtype=np.int64))


def load_breast_cancer(source, *, complete_rows: bool = True) -> Dataset:
    """UCI Breast Cancer Wisconsin (Original): nine cytology scores 1-10; event = malignant.

    Parameters
    ----------
    source : str or Path
        The folder holding ``breast-cancer-wisconsin.data``, or the file itself.
    complete_rows : bool, default True
        Keep only the 683 rows without a missing value (the paper's choice);
        False keeps all 699, with unknown Bare Nuclei as NaN.
    """
    path = _resolve(source, "breast")
    rows = _read_lines(path, 11)
    values = np.empty((len(rows), len(BREAST_COLUMNS)))
    label = np.empty(len(rows), dtype=bool)
    scores = tuple(float(v) for v in range(1, 11))
    for i, (number, fields) in enumerate(rows):
        _number(path, number, fields[0], "Sample code number", integer=True)
        for j, column in enumerate(BREAST_COLUMNS):
            values[i, j] = _number(path, number, fields[j + 1], column, allow_missing=True, choices=scores)
        label[i] = _number(path, number, fields[10], "Class", choices=(2.0, 4.0)) == 4.0
    keep = ~np.isnan(values).any(axis=1) if complete_rows else np.ones(len(rows), dtype=bool)
    X = pd.DataFrame(values[keep], columns=list(BREAST_COLUMNS))
    if complete_rows:
        X = X.astype(np.int64)
    notes = ["sample id dropped; nine cytology scores 1-10 as numbers; event = malignant (class 4)"]
    notes.append(f"{int((~keep).sum())} rows with a missing Bare Nuclei left out ({int(keep.sum())} complete rows, "
                 "as in the paper)" if complete_rows else "all rows kept; unknown Bare Nuclei are missing (NaN)")
    return Dataset("breast", X, _as_event("breast", label[keep]), target="Malignant", event="the tumour is malignant",
                   notes=tuple(notes), raw_label=np.where(label[keep], 4, 2))


def load_car(source, *, event: str = "acceptable") -> Dataset:
    """UCI Car Evaluation: 1728 cars, six categorical attributes, four classes made into one event.

    Parameters
    ----------
    source : str or Path
        The folder holding ``car.data``, or the file itself.
    event : {"acceptable", "unacceptable", "good"}, default "acceptable"
        Which classes count as the event: acceptable = acc, good or vgood
        (30.0%); unacceptable = unacc; good = good or vgood (7.8%).
    """
    if event not in CAR_EVENTS:
        raise DataError(f"Unknown car event {event!r}: choose one of {', '.join(CAR_EVENTS)}")
    path = _resolve(source, "cars")
    columns = list(CAR_VALUES)
    rows = _read_lines(path, len(columns) + 1)
    data = {column: [] for column in columns}
    label = []
    for number, fields in rows:
        for column, value in zip(columns, fields):
            if value not in CAR_VALUES[column]:
                raise DataError(f"{path.name} line {number}: {column} is {value!r}, expected one of "
                                f"{', '.join(CAR_VALUES[column])}")
            data[column].append(value)
        if fields[-1] not in CAR_CLASSES:
            raise DataError(f"{path.name} line {number}: the class is {fields[-1]!r}, expected one of "
                            f"{', '.join(CAR_CLASSES)}")
        label.append(fields[-1])
    X = pd.DataFrame({column: pd.Series(values, dtype=object) for column, values in data.items()})
    raw = np.asarray(label, dtype=object)
    y = np.isin(raw, CAR_EVENTS[event])
    return Dataset("cars", X, _as_event("cars", y), target=event.capitalize(),
                   event=f"the car is rated {' or '.join(CAR_EVENTS[event])}",
                   notes=(f"six categorical attributes (one-hot: 21 features); the paper does not say how the four "
                          f"classes became binary: event = {'/'.join(CAR_EVENTS[event])} vs the rest",),
                   raw_label=raw)


LOADERS = {"spam": load_spambase, "mammo": load_mammographic, "breast": load_breast_cancer, "cars": load_car}


def load_dataset(key: str, source, **options) -> Dataset:
    """Load data set ``key`` ("spam", "mammo", "breast" or "cars") from folder ``source``."""
    dataset_file(key)
    return LOADERS[key](source, **options)
