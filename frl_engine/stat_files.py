"""Tables saved by statistics packages: SPSS (.sav, .zsav, .por), Stata (.dta) and SAS (.sas7bdat, .xpt).

Hospital analysts often hold their extracts in the format of the package they work in. These
files carry what a CSV export loses: *value labels* (``ward`` 12 is ``Cardiology``, ``died`` 1 is
``Yes``) and the codes the analyst declared missing (SPSS's user-missing values, Stata's ``.a`` to
``.z``, SAS's special missing values). They are read with pyreadstat (the ReadStat library), in
memory, and the labels are used the way a reader of the card would want:

* a column whose every present value has a label is read as its labels, so the card says
  ``Ward = Cardiology``, never ``Ward = 12`` (a code is a label, not a quantity);
* a value labelled with a word for "no value" (``Unknown``, ``Missing``, ``Not recorded``: the
  words of :data:`frl_engine.columns.NO_VALUE_WORDS`) is missing when the other values of the
  column are numbers without labels (``age`` 999 ``Unknown``), since a measurement of 999 years
  would otherwise make thresholds; a fully labelled column keeps ``Unknown`` as a level, as a
  category column of a CSV does;
* a column SPSS marks *ordinal* keeps its numbers, so its order can make thresholds
  (``Severity >= 2``);
* dates become dates (and are then left out of the rules, as in any table).

Variable labels (``Age at admission (years)``) are not used as column names: the names are what
``--target`` and a model file refer to.
"""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd

from .columns import is_missing_marker, is_no_value_word
from .errors import DataError
from .sniff import STAT_SUFFIXES

#: How many column names a note lists before "and N more".
NAMES_IN_NOTE = 4


def _reader(suffix: str):
    import pyreadstat

    return {".sav": pyreadstat.read_sav, ".zsav": pyreadstat.read_sav, ".por": pyreadstat.read_por,
            ".dta": pyreadstat.read_dta, ".sas7bdat": pyreadstat.read_sas7bdat, ".xpt": pyreadstat.read_xport}[suffix]


def read_stat_file(raw: bytes, filename: str, suffix: str) -> pd.DataFrame:
    """Read an SPSS, Stata or SAS data file from its bytes, its value labels applied.

    Parameters
    ----------
    raw : bytes
        The whole file (read in memory, never written to disk).
    filename : str
        Its name, for messages.
    suffix : str
        One of :data:`frl_engine.sniff.STAT_SUFFIXES`.

    Returns
    -------
    pandas.DataFrame
        The table; ``attrs["read_as"]`` says which package wrote it and what its labels did.

    Raises
    ------
    DataError
        A file the reader cannot parse (damaged, cut short, or of another kind).
    """
    package = STAT_SUFFIXES[suffix]
    article = "an" if package == "SPSS" else "a"
    try:
        frame, meta = _reader(suffix)(io.BytesIO(raw), dates_as_pandas_datetime=True)
    except Exception as exc:  # noqa: BLE001 - pyreadstat's ReadstatError, PyreadstatError, ...: one plain message
        raise DataError(f"{filename} could not be read as {article} {package} data file: it may be damaged or cut short; "
                        f"save it again from {package}, or save the table as CSV") from exc
    labels = getattr(meta, "variable_value_labels", None) or {}
    measures = getattr(meta, "variable_measure", None) or {}
    said = [f"{article} {package} data file"] + apply_value_labels(frame, labels, measures)
    frame.attrs["read_as"] = "; ".join(said)
    return frame


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_IN_NOTE])
    return shown + (f" and {len(names) - NAMES_IN_NOTE} more" if len(names) > NAMES_IN_NOTE else "")


def apply_value_labels(frame: pd.DataFrame, labels: dict, measures: dict | None = None) -> list[str]:
    """Use a statistics file's value labels in ``frame``, in place; return what was done, in words.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as the file stores it (codes, not labels).
    labels : dict
        ``{column: {stored value: label}}`` (pyreadstat's ``variable_value_labels``).
    measures : dict, optional
        ``{column: "nominal" | "ordinal" | "scale" | "unknown"}`` (SPSS's measurement level).

    Returns
    -------
    list of str
        Notes for the "Read ... as" line: the columns read as their labels, the ordinal ones kept as
        numbers, and the codes read as missing.

    Notes
    -----
    Let V be the present values of a column and M those whose label is a word for "no value". If every
    value of V has a label, the column becomes its labels (unless it is ordinal). Otherwise the values in
    M become missing and the others stay as stored.
    """
    measures = measures or {}
    as_labels, ordinal, as_missing = [], [], []
    for column, mapping in labels.items():
        if column not in frame.columns or not mapping:
            continue
        series = frame[column]
        present = pd.unique(series.dropna())
        if len(present) == 0:
            continue
        lookup = {_key(value): label for value, label in mapping.items()}
        labelled = [value for value in present if _key(value) in lookup]
        if len(labelled) == len(present) and measures.get(column) != "ordinal":
            frame[column] = series.map({value: lookup[_key(value)] for value in present}).astype(object)
            as_labels.append(str(column))
            continue
        if len(labelled) == len(present):
            ordinal.append(str(column))
        no_value = [value for value in labelled if is_no_value_word(str(lookup[_key(value)]))
                    or is_missing_marker(str(lookup[_key(value)]))]
        if no_value:
            frame[column] = series.where(~series.isin(no_value))
            codes = ", ".join(f"{_key(value)} ({lookup[_key(value)]})" for value in sorted(no_value, key=str))
            as_missing.append(f"{column}: {codes}")
    notes = []
    if as_labels:
        notes.append(f"value labels used for {len(as_labels)} column{'s' if len(as_labels) != 1 else ''} "
                     f"({_listed(as_labels)})")
    if ordinal:
        notes.append(f"the ordinal column{'s' if len(ordinal) != 1 else ''} {_listed(ordinal)} kept as numbers")
    if as_missing:
        notes.append(f"codes labelled as no value read as missing ({'; '.join(as_missing[:NAMES_IN_NOTE])}"
                     f"{'; ...' if len(as_missing) > NAMES_IN_NOTE else ''})")
    return notes


def _key(value):
    """One key for a stored value and its label's key (12 and 12.0 are one code; text is trimmed)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return value


#: The statistics files written here (pyreadstat cannot write .sas7bdat, and .zsav and .por are rare).
WRITABLE_SUFFIXES = (".sav", ".dta", ".xpt")


def check_writable(path) -> None:
    """Raise a plain :class:`DataError` unless ``path`` names a statistics file that can be written."""
    suffix = Path(path).suffix.lower()
    if suffix not in WRITABLE_SUFFIXES:
        raise DataError(f"{path}: a file ending in '{suffix}' cannot be written here: name the output "
                        ".sav, .dta, .xpt, .csv, .xlsx or .parquet")


#: The longest variable name each format stores (Stata and SAS transport version 8: 32; SPSS: 64).
_NAME_LENGTH = {".sav": 64, ".dta": 32, ".xpt": 32}


def stat_file_names(columns, suffix: str) -> dict:
    """``{column: name}`` for the columns whose names the format cannot store, each made a legal variable name:
    letters, digits and underscores, not starting with a digit, at most 32 (64 for .sav) characters, and unique
    (``glyburide-metformin`` -> ``glyburide_metformin``, ``A1C %`` -> ``A1C__``, ``2nd dx`` -> ``v2nd_dx``).  Empty
    when every name is legal."""
    limit = _NAME_LENGTH[suffix]
    taken, renamed = set(), {}
    legal = [str(c) for c in columns if re.fullmatch(rf"[A-Za-z][A-Za-z0-9_]{{0,{limit - 1}}}", str(c))]
    taken.update(name.lower() for name in legal)
    for column in columns:
        name = str(column)
        if name in legal:
            continue
        clean = re.sub(r"[^A-Za-z0-9_]", "_", unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode())
        clean = ("v" + clean if not clean or not clean[0].isalpha() else clean)[:limit]   # SPSS: a letter first
        candidate, k = clean, 1
        while candidate.lower() in taken:
            k += 1
            candidate = f"{clean[:limit - len(str(k)) - 1]}_{k}"
        taken.add(candidate.lower())
        renamed[column] = candidate
    return renamed


def write_stat_file(frame: pd.DataFrame, path, shown=None) -> dict:
    """Write ``frame`` as an SPSS (.sav), Stata (.dta) or SAS transport (.xpt) file, by ``path``'s extension.

    Column names the format cannot store are made legal (:func:`stat_file_names`); returns them,
    ``{column: name written}``, for the caller to say.  ``shown``: the name to give in a message (default ``path``).

    Raises
    ------
    DataError
        For any other extension (.sas7bdat, .zsav and .por are read but not written), or when the package refuses
        the table (its message, in one line).
    """
    import pyreadstat

    check_writable(path)
    suffix = Path(path).suffix.lower()
    renamed = stat_file_names(frame.columns, suffix)
    writers = {".sav": pyreadstat.write_sav, ".dta": pyreadstat.write_dta, ".xpt": pyreadstat.write_xport}
    try:
        writers[suffix](frame.rename(columns=renamed) if renamed else frame, str(path))
    except pyreadstat.ReadstatError as exc:
        raise DataError(f"{shown or path}: cannot be written as a {suffix} file ({exc}): write a .csv, .xlsx or "
                        ".parquet file instead") from None
    return renamed
