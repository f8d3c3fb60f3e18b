"""Reading users' tables and targets, and reading/writing model files (JSON, never pickle).

Every problem a user can fix is raised as :class:`~frl_engine.errors.DataError`
or :class:`~frl_engine.errors.ModelFileError` with a one-line message.
"""

from __future__ import annotations

import csv
import difflib
import io
import itertools
import json
import math
import re
import shlex
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
from pandas._libs.parsers import STR_NA_VALUES

from .errors import DataError, MissingOutcomeError, ModelFileError
from .columns import MISSING_MARKERS, has_code_name
from .export_layout import check_header, decimal_commas_in_cells, drop_export_debris, european_thousands
from .stat_files import read_stat_file
from .sniff import (CONTENT_NAMES, DELIMITER_NAMES, STAT_SUFFIXES, TEXT_SUFFIXES, WORKBOOK_SUFFIXES, check_content,
                    decode_text, detect_content, header_row, parse_failure, text_dialect, text_encoding,
                    unpack_compressed)

#: Characters of a text export looked at for its header (the first 20 rows); the whole file is parsed from its bytes.
HEAD_CHARACTERS = 1 << 24
TABLE_EXTENSIONS = (".csv", ".tsv", ".txt") + WORKBOOK_SUFFIXES + (".parquet",) + tuple(STAT_SUFFIXES)
# Other names of delimited text exports (database and lab-system extracts), read as such when they hold text;
# "" is a name without extension.
TEXT_EXPORT_SUFFIXES = (".dat", ".data", ".asc", ".prn", ".psv", ".dsv", "")
MODEL_FORMAT = "frl-model"
MODEL_FORMAT_VERSION = 1
#: An outcome of numbers with more distinct values than this is a measurement (length of stay), not an outcome.
MAX_OUTCOME_LEVELS = 20
POSITIVE_TOKENS = ("1", "1.0", "true", "yes", "y", "positive", "pos",
                   # yes in the languages of European exports: German, Dutch, Scandinavian, French, Spanish,
                   # Italian, Portuguese
                   "ja", "j", "oui", "si", "sí", "sim", "wahr", "vrai", "verdadero", "vero", "positiv", "positif",
                   "positivo")
#: Outcome values that say "the event happened" (compared trimmed, without case and without accents).
EVENT_WORDS = POSITIVE_TOKENS + ("died", "dead", "death", "deceased", "expired", "readmitted", "malignant",
                                 "event", "case", "relapse", "failure", "failed", "infected", "present",
                                 "abnormal", "complication", "admitted", "non-survivor", "nonsurvivor",
                                 "non survivor", "not survived", "did not survive",
                                 # the same in the languages of European exports
                                 "exitus", "verstorben", "gestorben", "tot", "tod", "wiederaufnahme", "maligne",
                                 "bösartig", "rezidiv", "komplikation", "décédé", "décédée", "décès", "mort",
                                 "morte", "réadmis", "réhospitalisé", "malin", "rechute", "fallecido",
                                 "fallecida", "muerto", "muerta", "defunción", "reingreso", "reingresado",
                                 "maligno", "maligna", "recaída", "complicación", "deceduto", "deceduta", "morto",
                                 "morta", "decesso", "riammesso", "ricaduta", "óbito", "falecido", "falecida",
                                 "readmitido", "reinternado", "recidiva", "overleden", "dood", "heropname",
                                 "kwaadaardig", "død", "död", "avliden", "døde")
#: Outcome values that say "no event" whatever the other values are.
NO_EVENT_TOKENS = ("no", "0", "0.0", "false", "n", "negative", "neg", "none", "no event", "alive",
                   "nein", "nee", "nej", "nei", "non", "não", "nao", "falsch", "faux", "falso", "negativ", "négatif",
                   "negatif", "negativo")
#: Outcome values that say "no event" against one other value (``Home`` against ``Death``, ``Vivo``
#: against ``Fallecido``; among ``home``, ``rehab``, ``nursing`` no value is the event by itself).
NO_EVENT_WORDS = NO_EVENT_TOKENS + ("survived", "survivor", "discharged alive", "recovered", "living", "benign",
                                    "normal", "absent", "control", "home",
                                    "discharged", "not readmitted", "healthy", "success",
                                    "lebend", "lebt", "überlebt", "entlassen", "gutartig", "benigne", "vivant",
                                    "vivante", "survécu", "sorti", "sortie", "bénin", "bénigne", "vivo", "viva",
                                    "alta", "sobrevivió", "benigno", "benigna", "dimesso", "dimessa", "levend",
                                    "in leven", "ontslagen", "goedaardig", "levende", "lever", "i live", "vid liv")


#: What pandas reads as missing in a text file, but ``None``: an outcome's no-event value (``None`` / ``Minor``).
_PANDAS_MISSING = sorted(set(STR_NA_VALUES) - {"None"})


def plain_word(value) -> str:
    """An outcome value as the word lists compare it: trimmed, case-folded, accents removed (``Décédé`` ~ ``decede``)."""
    text = unicodedata.normalize("NFKD", str(value).strip().casefold())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


_POSITIVE = frozenset(plain_word(w) for w in POSITIVE_TOKENS)
_EVENTS = frozenset(plain_word(w) for w in EVENT_WORDS)
_NO_EVENTS = frozenset(plain_word(w) for w in NO_EVENT_WORDS)


def _duplicates(names) -> list[str]:
    seen, dups = set(), []
    for name in names:
        key = str(name).strip()
        if key in seen and key not in dups:
            dups.append(key)
        seen.add(key)
    return dups


def read_table(source, filename: str | None = None, *, tidy: bool = True, text_columns=(),
               as_written: bool = False, sheet: str | None = None, wanted_columns=()) -> pd.DataFrame:
    """Read a CSV, Excel, Parquet, SPSS, Stata or SAS table from a path or from bytes.

    Parameters
    ----------
    source : str, Path, bytes or file-like
        The table.  Bytes (an upload) are read in memory and never written to disk.
    filename : str, optional
        Name used to pick the format and in messages (defaults to the path's name).
    tidy : bool, default True
        Trim spaces around text cells and merge spellings that differ only in case
        (:func:`tidy_text_cells`); False keeps the cells as written (``frl predict`` copies them
        to its output).  A delimited text file's delimiter and decimal mark are kept in
        ``frame.attrs["delimiter"]`` and ``frame.attrs["decimal"]``.
    as_written : bool, default False
        Every cell of a delimited text file as its text, blanks as ``""`` (``00012`` stays
        ``00012``, ``NULL`` stays ``NULL``, ``82`` is not written back ``82.0``): what ``frl
        predict`` copies to its output.  The same header, footer and repeated-header lines are
        left out as in the usual read, so the rows are the same patients in the same order.
    text_columns : sequence of str, optional
        Columns of a delimited text file kept as written (``038`` stays ``038``, ``250.80`` stays
        ``250.80``), besides those named like codes (:func:`frl_engine.columns.has_code_name`):
        for example the columns a user declares as codes.
    sheet : str, optional
        A workbook's sheet to read, by its name (any case) or its number (``"2"``); by default the sheet whose
        header holds every one of ``wanted_columns`` (the outcome, say), else the one with the most filled cells
        (:func:`_read_workbook`).  Ignored for other formats.
    wanted_columns : sequence of str, optional
        Columns the caller needs (``frl fit --target``): a workbook's sheet holding them is read before a larger
        one that does not (a lookup table of ICD codes beside the patients).

    Raises
    ------
    DataError
        Unknown extension, missing file, empty or header-only file, duplicate
        column names, a file the parser cannot read.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        filename = filename or path.name
        if not path.exists():
            raise DataError(f"File not found: {path}")
        if path.is_dir():
            raise DataError(f"{path} is a folder, not a data file")
        raw = path.read_bytes()
    elif isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    else:
        raw = source.read()
    filename = filename or "data.csv"
    raw, filename, how_read = unpack_compressed(raw, filename, TABLE_EXTENSIONS)   # export.csv.gz, export.zip
    suffix = Path(filename).suffix.lower()
    text_names = set(text_columns)

    def code_or_declared(name) -> bool:  # read as written: codes and the columns the user declares as text
        return has_code_name(name) or name in text_names

    if suffix not in TABLE_EXTENSIONS:
        # A text export under a name text exports use (export.dat, extract.data, .asc, .prn, a name without
        # extension) is read as the delimited text it holds; anything else is refused, saying what it holds.
        content = detect_content(raw)
        if content != "text" or suffix not in TEXT_EXPORT_SUFFIXES:
            what = "" if content == "empty" else f" (it holds {CONTENT_NAMES[content]})"
            raise DataError(f"{filename}: unsupported file type '{suffix or 'none'}'{what}: use a .csv (or .tsv, .txt), "
                            ".xlsx, .ods or .parquet file, an SPSS (.sav), Stata (.dta) or SAS (.sas7bdat, .xpt) file "
                            "(also compressed: .csv.gz, or a .zip holding one table)")
        named = f"its name ends in '{suffix}'" if suffix else "its name has no extension"
        how_read = "; ".join(filter(None, [how_read, f"delimited text ({named})"]))
        suffix = ".csv"
    check_content(raw, filename, suffix)  # a plain message when the bytes are not what the name says
    try:
        if suffix in TEXT_SUFFIXES:
            text = decode_text(raw)
            delimiter, decimal = text_dialect(text)
            head = io.StringIO(text[:HEAD_CHARACTERS])  # the header is in the first rows: no copy of the whole text
            first_rows = list(itertools.islice(csv.reader(head, delimiter=delimiter), 20))
            if looks_like_prose(first_rows):
                raise DataError(f"{filename} does not look like a table: its lines are sentences ("
                                f"{_first_words(first_rows)}), not rows of values separated by commas. Export the "
                                "patients as a table, one row per patient and one column per finding, and try again")
            skip = header_row(first_rows)
            header = first_rows[skip] if first_rows else []
            check_header(header, filename)
            dups = _duplicates([name for name in header if str(name).strip()])  # blank: Excel's empty columns
            if dups:
                raise DataError(f"{filename}: duplicate column names {', '.join(map(repr, dups))}: rename them so each column is unique")
            # With a decimal comma a marker such as "?" must be missing at once, or "75,3" stays text.
            markers = sorted({m for m in MISSING_MARKERS if m} | {m.upper() for m in MISSING_MARKERS}
                             | {m.title() for m in MISSING_MARKERS}) if decimal == "," else None
            # Codes are labels: read as written, so 038 and 250.80 are not turned into 38 and 250.8.
            as_text = {name: str for name in header if code_or_declared(name)}
            # The parser reads the bytes in the file's encoding (a StringIO of the text would hold four bytes a
            # character: 680 MB more for a 170 MB export); UTF-16 is given to it decoded.
            encoding = text_encoding(raw)
            if encoding == "utf-16":
                source = (io.StringIO(text), {})
            else:  # UTF-8 was checked to decode; Windows-1252 has five undefined bytes, read as the replacement mark
                source = (io.BytesIO(raw), {"encoding": encoding, **({"encoding_errors": "replace"}
                                                                      if encoding == "cp1252" else {})})
            del text
            if as_written:
                frame = pd.read_csv(source[0], sep=delimiter, skipinitialspace=True, skiprows=skip,
                                    dtype=str, keep_default_na=False, na_filter=False, **source[1])
            else:
                # pandas reads "None" as missing; an outcome None / Minor / Major holds it as its no-event value, so
                # it is kept as written (columns.missing_mask still reads it as missing in a finding's column)
                frame = pd.read_csv(source[0], sep=delimiter, decimal=decimal, skipinitialspace=True,
                                    na_values=markers or _PANDAS_MISSING, keep_default_na=markers is not None,
                                    skiprows=skip, dtype=as_text or None, **source[1])
            frame.attrs["delimiter"], frame.attrs["decimal"] = delimiter, decimal
            frame.attrs["encoding"] = encoding
            said = []
            if (delimiter, decimal) != (",", "."):
                said.append(f"{DELIMITER_NAMES[delimiter]}-separated" + (", decimal comma" if decimal == "," else ""))
            if skip:
                said.append(f"a table whose header is on line {skip + 1} (the {skip} line{'s' if skip != 1 else ''} "
                            "above it skipped)")
            if said:
                frame.attrs["read_as"] = "; ".join(said)
        elif suffix in WORKBOOK_SUFFIXES:
            frame, chosen, sheets, header_at, why = _read_workbook(raw, filename, sheet, wanted_columns,
                                                                   percents=not as_written)
            frame.attrs["sheets"], frame.attrs["sheet"] = list(sheets), chosen   # the dashboard offers the others
            said = []
            if len(sheets) > 1:
                said.append(f"sheet {chosen!r} of {len(sheets)} ({', '.join(map(repr, sheets))}): {why}")
            percent = frame.attrs.pop("percent_columns", [])
            same = frame.attrs.pop("same_sheets", [])
            frame.attrs["unread_sheets"] = list(same)   # their patients are not in the table: the dashboard warns
            if same:
                said.append(f"sheet{'s' if len(same) > 1 else ''} {', '.join(map(repr, same))} "
                            f"{'have' if len(same) > 1 else 'has'} the same columns and "
                            f"{'were' if len(same) > 1 else 'was'} not read: put all the patients on one sheet "
                            "to use them")
            if header_at:
                said.append(f"a table whose header is on row {header_at + 1} (the {header_at} "
                            f"row{'s' if header_at != 1 else ''} above it skipped)")
            if percent:
                shown = ", ".join(map(repr, percent[:4])) + (" ..." if len(percent) > 4 else "")
                said.append(f"with {shown} as the percentages Excel shows (33 for a cell stored as 0.33 and shown as "
                            "33%)")
            if said:
                frame.attrs["read_as"] = "; ".join(said)
        elif suffix in STAT_SUFFIXES:
            frame = read_stat_file(raw, filename, suffix)
        else:
            frame = pd.read_parquet(io.BytesIO(raw))
    except (DataError, MemoryError):
        raise
    except pd.errors.EmptyDataError:
        raise DataError(f"{filename} is empty: it needs a header row and at least one row of patients") from None
    except Exception as exc:  # noqa: BLE001 - any parser failure becomes one plain message, never its jargon
        raise parse_failure(exc, filename, suffix) from exc
    if how_read:   # unpacked, or read as text under another name: said before the dialect
        frame.attrs["read_as"] = "; ".join(filter(None, [how_read, frame.attrs.get("read_as")]))
    if frame.shape[1] == 0:
        raise DataError(f"{filename} has no columns: it needs a header row and at least one row of patients")
    if frame.shape[0] == 0:
        raise DataError(f"{filename} has a header but no rows of data")
    # one spelling of accents: macOS tools write 'âge' decomposed (NFD), Windows composed (NFC); they look the same
    frame.columns = [unicodedata.normalize("NFC", str(c).strip()) for c in frame.columns]

    def keep_text(name):  # never turned into numbers
        return as_written or code_or_declared(name)

    decimal_comma = frame.attrs.get("decimal") == ","
    frame = drop_export_debris(frame, keep_text=keep_text, decimal_comma=decimal_comma)
    if decimal_comma and not as_written:
        european_thousands(frame, keep_text=keep_text)
    if not as_written and decimal_commas_in_cells(frame, keep_text=keep_text, decimal_comma=decimal_comma) \
            and not decimal_comma:   # "98,6 %", "<0,5", "6,1 kPa" as numbers: the file writes decimal commas after all,
        european_thousands(frame, keep_text=keep_text)   # so its "1.808" is 1808
    if tidy:
        tidy_text_cells(frame)
    dups = _duplicates(frame.columns)
    if dups:
        raise DataError(f"{filename}: duplicate column names {', '.join(map(repr, dups))}: rename them so each column is unique")
    return frame


def tidy_text_cells(frame: pd.DataFrame) -> None:
    """Trim spaces around text cells and merge spellings that differ only in case, in place.

    ``"F "`` and ``"F"`` are one level, and so are ``"f"`` and ``"F"`` (each such group becomes its most
    frequent spelling); a blank cell is missing.  Only the distinct values are looked at, so this is
    cheap on 100,000 rows.  ``frame.attrs["merged_spellings"]`` counts, per column, the spellings merged
    away by case.
    """
    merged = {}
    examples = {}
    for column in frame.columns:
        series = frame[column]
        if series.dtype != object and not pd.api.types.is_string_dtype(series.dtype):
            continue
        changed = {v: (v.strip() or np.nan) for v in pd.unique(series) if isinstance(v, str) and v != v.strip()}
        if changed:
            series = series.where(~series.isin(list(changed)), series.map(changed))
        texts = [v for v in pd.unique(series) if isinstance(v, str)]
        folded = {}
        for v in texts:
            folded.setdefault(v.casefold(), []).append(v)
        groups = [spellings for spellings in folded.values() if len(spellings) > 1]
        if groups:
            counts = series.value_counts()
            rename = {}
            for spellings in groups:
                keep = max(spellings, key=lambda v: (counts.get(v, 0), v))
                rename.update({v: keep for v in spellings if v != keep})
            series = series.where(~series.isin(list(rename)), series.map(rename))
            merged[str(column)] = len(rename)
            first = next(iter(rename))
            examples[str(column)] = f"{first!r} into {rename[first]!r}"
        if changed or groups:
            frame[column] = series
    if merged:
        frame.attrs["merged_spellings"] = merged
        frame.attrs["merged_examples"] = examples


def _sheet_header(grid: pd.DataFrame) -> tuple[int, list]:
    """A sheet's header row (past any title rows, :func:`header_row`) and its cells."""
    skip = header_row(grid.head(20).itertuples(index=False))
    return skip, grid.iloc[skip].tolist()


def _named_sheet(names: list[str], sheet: str, filename: str) -> str:
    """The sheet ``--sheet`` names: its name (exactly, else in any case) or its number from 1."""
    text = str(sheet).strip()
    if text in names:
        return text
    folded = [name for name in names if str(name).strip().casefold() == text.casefold()]
    if folded:
        return folded[0]
    if text.isdigit() and 1 <= int(text) <= len(names):
        return names[int(text) - 1]
    raise DataError(f"{filename} has no sheet {text!r}; its sheets are {', '.join(map(repr, names))} (give a name, "
                    f"or a number from 1 to {len(names)})")


def _read_workbook(raw: bytes, filename: str, sheet: str | None = None, wanted_columns=(),
                   percents: bool = True) -> tuple[pd.DataFrame, str, list[str], int, str]:
    """The table of a workbook, parsed once: ``(frame, sheet name, all sheet names, header row, why that sheet)``.

    The sheet is the one named (``sheet``); else the one with the most filled cells among those whose header holds
    every column of ``wanted_columns`` (the outcome: a bigger lookup sheet of ICD codes beside the patients is not
    the table); else the one with the most filled cells (the first of equals): exports often put a cover or a
    legend sheet first.  Its header is the first row past any title rows (:func:`header_row`).
    """
    # calamine (Rust) reads a 100,000-row workbook's cells in about 9 s where openpyxl takes 68 s
    sheets = pd.read_excel(io.BytesIO(raw), sheet_name=None, header=None, engine="calamine")
    names = list(sheets)
    if not names:
        raise DataError(f"{filename}: the workbook has no sheets")
    filled = {name: int(sheets[name].notna().to_numpy().sum()) for name in names}
    wanted = {str(c).strip().casefold() for c in wanted_columns if c is not None}
    if sheet is not None and str(sheet).strip():
        best, why = _named_sheet(names, sheet, filename), "the one asked for"
    else:
        holding = [name for name in names if wanted and not sheets[name].empty and wanted <= {
            str(h).strip().casefold() for h in _sheet_header(sheets[name])[1] if not pd.isna(h)}]
        if holding:
            best = max(holding, key=lambda name: filled[name])
            shown = ", ".join(repr(str(c)) for c in wanted_columns if c is not None)
            why = f"the one holding {shown}" if len(holding) == 1 else f"the largest holding {shown}"
        else:
            best, why = max(names, key=lambda name: filled[name]), "the one with the most filled cells"
    grid = sheets[best]
    if grid.empty:
        raise pd.errors.EmptyDataError("no cells")
    skip, header = _sheet_header(grid)
    dups = _duplicates([h for h in header if not pd.isna(h)])
    if dups:
        raise DataError(f"{filename}: duplicate column names {', '.join(map(repr, dups))}: rename them so each column is unique")
    columns = [f"Unnamed: {i}" if pd.isna(h) else (int(h) if isinstance(h, float) and h.is_integer() else h)
               for i, h in enumerate(header)]
    frame = grid.iloc[skip + 1:].reset_index(drop=True).infer_objects()
    frame.columns = columns
    # Other sheets with the same header (a year per sheet) hold patients that are not read: said.
    same = []
    for name in names:
        other = sheets[name]
        if name != best and not other.empty:
            at = header_row(other.head(20).itertuples(index=False))
            if [str(h).strip() for h in other.iloc[at].tolist()] == [str(h).strip() for h in header]:
                same.append(name)
    frame.attrs["same_sheets"] = same
    percent = (_percent_columns(raw, best, skip, columns)   # as_written (predict's copy): the cells as stored
               if percents and filename.lower().endswith((".xlsx", ".xlsm")) else [])
    for column in percent:   # Excel shows 0.33 formatted "0%" as 33%: the number the clinician reads, as text "33%" is
        values = frame[column]
        numbers = pd.to_numeric(values, errors="coerce")
        is_number = values.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)) & numbers.notna()
        frame[column] = values.where(~is_number, (numbers * 100).round(10)).infer_objects()
    frame.attrs["percent_columns"] = percent
    return frame, best, names, skip, why


#: Data rows of a sheet whose number formats are looked at (:func:`_percent_columns`).
FORMAT_ROWS = 200


def _percent_columns(raw: bytes, sheet: str, header_at: int, columns: list) -> list:
    """The columns of a workbook's sheet whose numbers Excel shows as percentages (a number format such as ``0%``
    or ``0.0%`` on at least 90% of the number cells of the first :data:`FORMAT_ROWS` rows under the header).

    calamine, which reads the cells, does not give their formats; openpyxl reads them from the first rows only
    (read-only mode streams the sheet, so a 100,000-row workbook costs no more than a small one).
    """
    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception:  # noqa: BLE001 - the cells were read; without formats the numbers stay as stored
        return []
    try:
        rows = book[sheet].iter_rows(min_row=header_at + 1, max_row=header_at + 1 + FORMAT_ROWS)
        header = next(rows, None)
        if header is None:
            return []
        place = {}
        for index, cell in enumerate(header):   # by the header's text: calamine may start at the first used column
            if cell.value is not None and str(cell.value).strip() in {str(c).strip() for c in columns}:
                place[index] = next(c for c in columns if str(c).strip() == str(cell.value).strip())
        shown, numbers = {}, {}
        for row in rows:
            for index, cell in enumerate(row):
                if index in place and isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool):
                    numbers[index] = numbers.get(index, 0) + 1
                    fmt = str(getattr(cell, "number_format", "") or "")
                    if "%" in re.sub(r'"[^"]*"|\\.', "", fmt):   # a % outside quoted text
                        shown[index] = shown.get(index, 0) + 1
        return [place[i] for i in sorted(shown) if shown[i] >= 0.9 * numbers[i]]
    finally:
        book.close()


def _sorted_values(values) -> list:
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuUS":  # no missing values possible
        return sorted(np.unique(values), key=lambda v: str(v))
    return sorted(pd.unique(pd.Series(values).dropna()), key=lambda v: str(v))


def default_positive(values) -> object:
    """The value that counts as the event when the user does not say (:func:`default_event_reason`)."""
    return _default_event(_sorted_values(values))[0]


def default_event_reason(values) -> str:
    """Why :func:`default_positive` chose its value, in words for the user."""
    return _default_event(_sorted_values(values))[1]


#: Why :func:`default_positive` chose the later of two number codes (``1`` / ``2``): a user must say.
AMBIGUOUS_CODES = "nothing says which code is the event"


def _number(value) -> float | None:
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def event_is_ambiguous(values) -> bool:
    """Whether an outcome is two number codes neither of which is 0 (``1`` / ``2``, ``1`` / ``3``).

    Exports disagree on such codes: survey and registry files often write 1 = yes, 2 = no, others
    1 = no, 2 = yes.  The command line and the dashboard ask the user instead of guessing; the
    Python API keeps scikit-learn's convention (the larger code is the event).
    """
    return _default_event(_sorted_values(values))[1] == AMBIGUOUS_CODES


def ambiguous_codes(values) -> tuple | None:
    """``(low, high)``, the two codes of an outcome for which :func:`event_is_ambiguous` holds, else None."""
    if not event_is_ambiguous(values):
        return None
    low, high = sorted(values, key=_number)
    return low, high


def plain_repr(value) -> str:
    """``'Alive'``, ``0``: a value as a user wrote it (numpy's ``np.int64(0)`` as ``0``); several event
    values as ``'<30' or '>30'``."""
    if isinstance(value, (tuple, list)):
        return " or ".join(plain_repr(v) for v in value)
    return repr(value.item() if isinstance(value, np.generic) else value)


def event_values(positive) -> tuple:
    """The event value(s) as a tuple: ``()`` for None, ``("<30",)`` for one value, ``("<30", ">30")`` for
    several (``--positive`` given twice, a list, or the dashboard's "also counts as the event")."""
    if positive is None:
        return ()
    if isinstance(positive, (tuple, list)):
        return tuple(dict.fromkeys(v.item() if isinstance(v, np.generic) else v for v in positive))
    return (positive,)


def event_label(positive) -> str:
    """The event as printed after ``<outcome> =``: ``<30``, or ``<30 or >30`` for several values."""
    return " or ".join(str(v) for v in event_values(positive))


#: An outcome column named for a good outcome (``survived_30d``, ``alive_at_discharge``, ``recovered``): its "yes"
#: is no risk to rank patients by.
_GOOD_OUTCOME_NAME = re.compile(r"surviv|alive|recover|cured|success|discharged[_\s.\-]?home", re.IGNORECASE)


def good_outcome_note(target, positive, values) -> str | None:
    """The line for an event that is a good outcome by the outcome column's name (``survived_30d = Yes``), else None.

    The list then ranks the chance of that good outcome, highest first: a user who wants the risk of the bad one
    gives the other value as the event.
    """
    if not _GOOD_OUTCOME_NAME.search(str(target)) or plain_word(positive) not in _POSITIVE:
        return None
    others = [v for v in values if plain_word(v) != plain_word(positive)]
    other = f" --positive {plain_repr(others[0])}" if len(others) == 1 else " --positive with the other value"
    return (f"The event is {target} = {plain_repr(positive)}, which reads as a good outcome: the list ranks the chance "
            f"of it, highest first. For the risk of the bad outcome, refit with{other}.")


_NEGATION = re.compile(r"^(absence of|without|not|non|no)[\s_\-]*", re.IGNORECASE)


def _negates(negated, value) -> bool:
    """``notckd`` of ``ckd``, ``No sepsis`` of ``Sepsis``, ``non-diabetic`` of ``Diabetic``."""
    word = plain_word(negated)
    match = _NEGATION.match(word)
    return bool(match) and match.end() < len(word) and word[match.end():] == plain_word(value)


def _default_event(uniques: list) -> tuple[object, str]:
    """In order: two number codes neither of which is 0 (``1`` / ``2``): the larger, flagged
    :data:`AMBIGUOUS_CODES`; a value reading as yes/true/1/positive; a value naming an event
    (``Died``, ``Readmitted``, ``Malignant``: :data:`EVENT_WORDS`) when only one does; the other
    value when one of two names no event (``Survived``, ``Alive``, ``Home``:
    :data:`NO_EVENT_WORDS`); the value the other negates (``ckd`` against ``notckd``, ``Sepsis`` against
    ``No sepsis``), unless it names a good outcome; the other value when one of two starts with ``none``,
    ``normal``, ``absent`` or ``negative`` (``none or mild`` against ``moderate or severe``); otherwise the later of
    the values in sorted order (scikit-learn's convention)."""
    if not uniques:  # an outcome column with no value at all: split_target says so
        return None, "the outcome has no value"
    numbers = [_number(v) for v in uniques]
    if len(uniques) == 2 and None not in numbers and 0.0 not in numbers:
        return uniques[int(numbers[1] > numbers[0])], AMBIGUOUS_CODES
    for value in uniques:
        if plain_word(value) in _POSITIVE:
            return value, "it reads as yes"
    events = [v for v in uniques if plain_word(v) in _EVENTS]
    if len(events) == 1:
        return events[0], "it names an event"
    no_events = [v for v in uniques if plain_word(v) in _NO_EVENTS]
    if len(uniques) == 2 and len(no_events) == 1:
        other = uniques[1] if uniques[0] == no_events[0] else uniques[0]
        return other, f"the other value, {plain_repr(no_events[0])}, names no event"
    if len(uniques) == 2:  # ckd / notckd, sepsis / no sepsis, diabetic / non-diabetic: the finding is the event
        for value, other in (uniques, uniques[::-1]):
            if _negates(other, value) and not _GOOD_OUTCOME_NAME.search(str(value)):
                return value, f"the other value, {plain_repr(other)}, is its negation"
        # a grade whose mildest end is named: "none or mild" against "moderate or severe" (HSAUR3's toenail)
        calm = [v for v in uniques if plain_word(v).split()[:1] in (["none"], ["normal"], ["absent"], ["negative"])]
        if len(calm) == 1:
            other = uniques[1] if uniques[0] == calm[0] else uniques[0]
            return other, f"the other value, {plain_repr(calm[0])}, names no event"
    return uniques[-1], "the later of the two values in sorted order, as nothing says which is the event"


def looks_like_prose(rows: list[list[str]]) -> bool:
    """Whether the first lines of a text file are a letter or a note rather than a table: most lines hold one
    value, none more than three, and some value is a sentence of eight words or more ("please find attached the
    readmission figures for the last quarter ..."); or, when its sentences hold commas, its lines split into
    different numbers of fields, most of them several words. A table of one column holds short values, and the
    rows of a table have the same number of fields."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    filled = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    if not filled:
        return False
    long_sentence = any(len(cell.split()) >= 8 for row in filled for cell in row)
    if max(len(row) for row in filled) <= 3:
        single = sum(1 for row in filled if len(row) == 1)
        if single >= 0.6 * len(filled) and long_sentence:
            return True
    # a letter whose sentences hold commas: its lines split into different numbers of fields, most of them words
    # (a table's rows all have the header's number of fields, a quoted note with commas included)
    cells = [cell for row in filled for cell in row]
    wordy = sum(1 for cell in cells if len(cell.split()) >= 3)
    return (len({len(row) for row in rows}) > 1 and len(rows) >= 3 and wordy >= 0.5 * len(cells)
            and any(len(cell.split()) >= 6 for cell in cells))


def _first_words(rows: list[list[str]]) -> str:
    first = next((cell.strip() for row in rows for cell in row if cell.strip()), "")
    return repr(first if len(first) <= 40 else first[:40].rstrip() + " ...")


def suggested_event(counts: pd.Series):
    """For an outcome of three or more values (``counts``: patients per value, :func:`outcome_counts`), the value
    to offer as the event, or None: when no value reads as no event, the one value naming an event (``Deceased``
    against ``Discharged home`` and ``Transferred``: :data:`EVENT_WORDS`); when exactly one reads as no event
    (``NO``), the rarest of the others (``<30`` for ``readmitted`` = ``NO`` / ``>30`` / ``<30``).  Only ever offered, never chosen:
    ``split_target`` still asks for ``--positive``."""
    values = list(counts.index)
    negative = [v for v in values if str(v).strip().lower() in NO_EVENT_TOKENS]
    events = [v for v in values if plain_word(v) in _EVENTS]
    if not negative and len(events) == 1:
        return events[0]
    named = [v for v in events if not _is_number_text(v)]   # a word, not the 1 of 0 / 1 / 2
    if len(negative) == 1 and len(named) == 1:   # Dead among Alive / Dead / Transplant: not the rarer Transplant
        return named[0]
    if len(negative) != 1 or len(values) < 2:
        return None
    others = counts.drop(index=negative)
    if len(others) > 1 and all(_is_number_text(v) for v in others.index):
        # 0 / 1 / 2 (R's pbc: censored, transplant, dead): which number is the event only the codebook says
        return None
    return sorted(others[others == others.min()].index, key=str)[0]


def _is_number_text(value) -> bool:
    """``1``, ``"2"``, ``" 2.0 "``: a number as an outcome value is written (:func:`frl_engine.columns._is_plain_number`)."""
    from .columns import _is_plain_number

    return _is_plain_number(str(value).strip())


#: Outcome values that say the outcome is not known: missing, like "?" (never "no event").
OUTCOME_UNKNOWN_WORDS = frozenset({"unknown", "unk", "not known", "not recorded", "not reported", "pending",
                                   "lost to follow-up", "lost to follow up", "ltfu", "unbekannt", "inconnu",
                                   "desconocido", "sconosciuto", "desconhecido", "onbekend"})


_UNKNOWN = frozenset(plain_word(w) for w in OUTCOME_UNKNOWN_WORDS)


def outcome_missing_mask(outcome: pd.Series) -> np.ndarray:
    """Which outcome cells are missing: empty cells and markers (``?``, ``NA``), and words saying the outcome is
    not known (``Unknown``, ``lost to follow-up``: :data:`OUTCOME_UNKNOWN_WORDS`), which are no outcome at all.
    ``None`` is missing only beside another no-event word (``Yes`` / ``No`` / ``None``); among ``none`` /
    ``arcus`` / ``CHD`` it is the outcome's "no event"."""
    from .columns import missing_mask

    codes, uniques = pd.factorize(outcome, use_na_sentinel=True)  # each distinct value looked at once
    unknown = np.array([isinstance(v, str) and plain_word(v) in _UNKNOWN for v in uniques] + [False], dtype=bool)
    missing = np.asarray(missing_mask(outcome), dtype=bool) | unknown[codes]
    # "None" is the no-event value of an outcome none / arcus / CHD (WCGS): missing only beside another no-event word
    # (Yes / No / None, Dead / Alive / None), where it cannot be the outcome's "no"
    words = [plain_word(v) for v in uniques if isinstance(v, str)]
    if "none" in words and not any(w in _NO_EVENTS and w != "none" for w in words):
        none = np.array([isinstance(v, str) and plain_word(v) == "none" for v in uniques] + [False], dtype=bool)
        missing &= ~none[codes]
    return missing


def _outcome_key(value):
    """How an outcome value is compared: text trimmed and case-folded ("YES " ~ "yes"), anything else as is."""
    return value.strip().casefold() if isinstance(value, str) else value


_LEADING_ZERO = re.compile(r"^\s*[+-]?0\d")


def numbers_as_numbers(written: pd.DataFrame, read: pd.DataFrame) -> pd.DataFrame:
    """``written`` (a delimited file read ``as_written``: every cell its text) with each column that holds only
    numbers given the numbers ``read`` (the same file read as ``fit`` reads it): what ``frl predict`` writes to a
    typed file (.xlsx, .parquet, .sav, .dta, .xpt), where numbers kept as text would be text to Excel or Stata.

    A column keeps its text when anything would be lost: a cell ``read`` could not make a number of
    (``pending``, ``?``: its count of numbers falls short of the filled cells), a number written with a
    leading zero (``00123``, a record number), a column ``read`` holds as text (codes such as ``038``), a number
    of more than 15 significant digits (an 18-digit accession number: Excel keeps 15, Stata's doubles about 16,
    so two patients would end with one number), or ``inf`` (no file format here stores it alike).
    """
    typed = written.copy()
    for name in written.columns:
        if name not in read.columns or len(read) != len(written):
            continue
        numbers = read[name]
        if not pd.api.types.is_numeric_dtype(numbers) or pd.api.types.is_bool_dtype(numbers):
            continue
        text = written[name].astype(str).str.strip()
        filled = (text != "").to_numpy()
        if not np.array_equal(numbers.notna().to_numpy(), filled):   # a cell read as missing: its text kept
            continue
        if text[filled].str.match(_LEADING_ZERO).any() or not np.isfinite(numbers[filled]).all():
            continue
        mantissa = text[filled].str.replace(r"[eE].*$", "", regex=True).str.replace(r"[^0-9]", "", regex=True)
        if (mantissa.str.lstrip("0").str.len() > 15).any():   # more digits than a double or Excel holds
            continue
        typed[name] = numbers.to_numpy()
    return typed


def whole_numbers_as_written(values: pd.Series) -> pd.Series:
    """An outcome of whole numbers read as decimals (``0.0`` / ``1.0``) back to the integers the export wrote.

    A 0/1 column with one blank cell is read by pandas as floats, so the event would print as
    ``died = 1.0``; the values and their order are unchanged.  ``values`` holds no missing cell.
    """
    if values.dtype.kind != "f" or not len(values):
        return values
    numbers = values.to_numpy()
    if not (np.isfinite(numbers).all() and (numbers == np.round(numbers)).all() and np.abs(numbers).max() < 2**53):
        return values
    return values.astype(np.int64)


def outcome_spellings(outcome: pd.Series) -> dict:
    """Each distinct outcome value -> its most frequent spelling, missing cells left out.

    Values are compared as :func:`split_target` compares them (text trimmed and without case:
    ``"Yes"``, ``"YES"`` and ``"yes "`` are one value); keys are in order of first appearance.
    Whole numbers read as decimals are the integers written (:func:`whole_numbers_as_written`).
    """
    present = whole_numbers_as_written(outcome[~outcome_missing_mask(outcome)])
    keys = present.map(_outcome_key)
    counts = pd.DataFrame({"key": keys.to_numpy(), "value": present.to_numpy()}).value_counts(sort=True)
    spelled = {}
    for key, value in counts.index:
        spelled.setdefault(key, value)
    return {k: spelled[k] for k in pd.unique(keys)}


def outcome_counts(outcome: pd.Series) -> pd.Series:
    """How many patients have each outcome value, missing cells left out, most frequent first.

    Values are grouped as :func:`outcome_spellings` groups them (text trimmed and without case) and
    indexed by their most frequent spelling, so ``?``, blanks and ``Unknown`` are never a value.
    """
    present = whole_numbers_as_written(outcome[~outcome_missing_mask(outcome)])
    spelled = outcome_spellings(outcome)
    keys = present.map(_outcome_key)
    counts = keys.value_counts(sort=True)
    return pd.Series(counts.to_numpy(), index=pd.Index([spelled[k] for k in counts.index], dtype=object),
                     name="patients")


def _is_blank(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def flag_outcome_value(outcome: pd.Series):
    """The one value of a checkbox outcome (``X`` where the event happened, *blank* cells elsewhere, never ``?`` or
    ``NA``), else None."""
    missing = np.asarray(outcome_missing_mask(outcome), dtype=bool)
    if not missing.any() or missing.all() or not all(_is_blank(v) for v in pd.unique(outcome[missing])):
        return None
    spelled = outcome_spellings(whole_numbers_as_written(outcome[~missing]))
    return next(iter(spelled.values())) if len(spelled) == 1 else None


def _flag_outcome(frame: pd.DataFrame, target: str, outcome: pd.Series, missing, positive):
    """:func:`split_target` for a checkbox outcome: one value (``X``, ``Y``, ``Died``) where the event happened and
    *blank* cells elsewhere (never ``?``, ``NA`` or ``Unknown``, which say not known).  With that value named as the
    event, the blanks are no event (``features.attrs["outcome_blank_as_no"]`` counts them); without it, a message
    asks, since a blank may also mean not known.  None when the outcome is not such a column."""
    missing = np.asarray(missing, dtype=bool)
    value = flag_outcome_value(outcome)
    if value is None:
        return None
    n_blank, n_event = int(missing.sum()), int((~missing).sum())
    if positive is None:
        raise DataError(f"Outcome column {target!r} holds one value, {plain_repr(value)} ({n_event:,} patients), and "
                        f"blanks ({n_blank:,}): if a blank means no event (a checkbox outcome), name the event "
                        f"(--positive {shlex.quote(str(value))}) and the blanks count as no event; if a blank means not "
                        "known, the table holds no patient known to be without the event")
    wanted = event_values(positive)
    if len(wanted) != 1 or _matching_value([value], wanted[0]) is None:
        return None  # another event named: the usual messages
    features = frame.drop(columns=[target])
    if features.shape[1] == 0:
        return None
    features.attrs["outcome_blank_as_no"] = n_blank
    return features, ~missing, value


def split_target(frame: pd.DataFrame, target: str, positive=None, *,
                 drop_missing: bool = False) -> tuple[pd.DataFrame, np.ndarray, object]:
    """Separate the outcome column and turn it into a 0/1 event indicator.

    Parameters
    ----------
    frame : DataFrame
    target : str
        The outcome column.
    positive : optional
        The value that counts as the event; compared as text, trimmed and without case, so
        ``"1"`` matches ``1`` and ``"yes"`` matches ``"YES "``.  Required when the outcome has
        more than two values (the event is then that value against all others).  Spellings of
        one value that differ only in case or surrounding spaces are one value.  A list or tuple
        of values makes any of them the event (``["<30", ">30"]``: any readmission against
        ``NO``); so does one text ``"<30,>30"`` that is not itself a value but whose
        comma-separated parts all are.
    drop_missing : bool, default False
        Leave out the rows whose outcome is empty (``?``, blank, ``NA``: patients lost to
        follow-up) instead of refusing them; ``features.attrs["outcome_missing_left_out"]``
        then says how many.  An outcome of one value and blanks (a checkbox outcome, ``X``
        where the event happened) with that value named as ``positive`` reads its blanks as no
        event instead, counted in ``features.attrs["outcome_blank_as_no"]``.

    Returns
    -------
    features : DataFrame
    event : ndarray of bool
    positive : the matched value as it appears in the data (its most frequent spelling); a tuple of them,
        in the order given, when several values are the event
    """
    if target not in frame.columns:
        same = [c for c in frame.columns if str(c).strip().casefold() == str(target).strip().casefold()]
        close = same or difflib.get_close_matches(str(target), [str(c) for c in frame.columns], n=1)
        if close:
            raise DataError(f"Outcome column {target!r} is not in the data: did you mean {close[0]!r}?")
        shown = ", ".join(map(repr, list(frame.columns)[:12])) + (" ..." if frame.shape[1] > 12 else "")
        raise DataError(f"Outcome column {target!r} is not in the data; columns are {shown}")
    outcome = frame[target]
    missing = outcome_missing_mask(outcome)  # NaN, markers such as "?" or "NA", "Unknown": never an outcome value
    n_missing = int(missing.sum())
    if n_missing and n_missing == len(frame):
        markers = sorted({str(v).strip() for v in outcome.dropna().unique()})
        shown = f" (written {', '.join(repr(m) for m in markers[:4])})" if markers else ""
        raise DataError(f"Outcome column {target!r} is empty on all {n_missing:,} rows{shown}: check that it is the "
                        "outcome column and that the export filled it in")
    if n_missing and not drop_missing:
        flagged = _flag_outcome(frame, target, outcome, missing, positive)
        if flagged is not None:
            return flagged
    if n_missing and drop_missing and n_missing < len(frame):
        kept = frame.loc[~np.asarray(missing, dtype=bool)].reset_index(drop=True)
        kept.attrs = dict(frame.attrs)
        features, event, positive = split_target(kept, target, positive)
        features.attrs["outcome_missing_left_out"] = n_missing
        return features, event, positive
    if n_missing:
        markers = sorted({str(v).strip() for v in outcome[missing].dropna().unique()} - {""})
        blank = bool(outcome[missing].map(lambda v: v is None or (isinstance(v, float) and math.isnan(v))
                                          or (isinstance(v, str) and not v.strip())).any())
        written = f"written {', '.join(repr(m) for m in markers[:4])}" if markers else ""
        shown = f" ({'empty, or ' + written if blank else written})" if markers else ""
        raise MissingOutcomeError(f"Outcome column {target!r} has {n_missing} missing values{shown}: remove those rows "
                                  "or fill them", n_missing)
    outcome = whole_numbers_as_written(outcome)   # no cell is missing here: 0.0 / 1.0 read back as 0 / 1
    # "Yes", "YES" and "yes " are one outcome: text is compared trimmed and without case.
    keys = outcome.map(_outcome_key)
    spelled = outcome_spellings(outcome)
    values = list(spelled)
    if positive is None:
        if len(values) < 2:
            raise DataError(f"Outcome column {target!r} has only one value ({spelled[values[0]]!r}): a model needs both "
                            "outcomes; check that this is the outcome column and that the export was not filtered to "
                            "one outcome")
        if len(values) > MAX_OUTCOME_LEVELS and pd.to_numeric(outcome, errors="coerce").notna().mean() > 0.95:
            raise DataError(f"Outcome column {target!r} has {len(values):,} different numbers: it looks like a "
                            "measurement, not an outcome. Make a yes/no column from it (e.g. stay longer than "
                            "7 days) and use that as --target")
        if len(values) > 2:
            names = sorted(map(str, spelled.values()))
            shown = ", ".join(names[:8]) + (" ..." if len(values) > 8 else "")
            offer = suggested_event(outcome_counts(outcome)) if len(values) <= MAX_OUTCOME_LEVELS else None
            example = f", e.g. --positive {shlex.quote(str(offer))}" if offer is not None else ""
            raise DataError(f"Outcome column {target!r} has {len(values)} values ({shown}), not two: "
                            f"say which value is the event (--positive VALUE{example}); give --positive again for "
                            "each further value that counts as the event")
        positive = default_positive(list(spelled.values()))
    wanted = event_values(positive)
    found = [_matching_value(values, v) for v in wanted]
    if len(wanted) == 1 and found[0] is None and isinstance(wanted[0], str) and "," in wanted[0]:
        parts = tuple(p.strip() for p in wanted[0].split(",") if p.strip())
        if len(parts) > 1 and all(_matching_value(values, p) is not None for p in parts):
            wanted, found = parts, [_matching_value(values, p) for p in parts]  # "<30,>30": each part is a value
    missing = [v for v, k in zip(wanted, found) if k is None]
    if missing:
        shown = ", ".join(sorted(map(str, spelled.values()))[:8])
        named = " and ".join(repr(v) for v in missing)
        raise DataError(f"Event value {named} does not occur in target column {target!r} (values: {shown})")
    matches = list(dict.fromkeys(found))
    event = keys.isin(matches).to_numpy()
    positive = spelled[matches[0]] if len(matches) == 1 else tuple(spelled[k] for k in matches)
    if event.all() or not event.any():
        if len(matches) > 1:
            raise DataError(f"Outcome column {target!r} has only one class after choosing {plain_repr(positive)} as the "
                            "event: every patient has one of these values; leave one out so that some patients have "
                            "no event")
        raise DataError(f"Outcome column {target!r} has only one class after choosing {positive!r} as the event: a model needs both outcomes")
    features = frame.drop(columns=[target])
    if features.shape[1] == 0:
        raise DataError(f"The table holds only the outcome column {target!r}: add the patients' findings (age, "
                        "diagnoses, lab results ...) as further columns, one per finding")
    return features, event, positive


def _matching_value(values: list, wanted):
    """The outcome value (a key of :func:`outcome_spellings`) that ``wanted`` names, or None: equal as text
    trimmed and without case, else as numbers (``1`` for a column read as ``1.0``)."""
    for k in values:
        if _outcome_key(k) == _outcome_key(wanted) or str(k).strip().casefold() == str(wanted).strip().casefold():
            return k
    def as_number(value):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None

    number = as_number(wanted)  # numeric equality, e.g. --positive 1 for a float column of 1.0 (or True)
    return None if number is None else next((k for k in values if as_number(k) == number), None)


_HASH_CELLS = 1 << 19  # cells hashed at once by _row_hashes: 4 MB of hashes


def rows_fingerprint(frame: pd.DataFrame, columns) -> str | None:
    """A SHA-256 of a table's rows over ``columns``, whatever the rows' order; None without those columns.

    The model keeps its training rows' fingerprint (``training.rows_sha256``), so that validating it on the very
    table it was fitted on (the same file, or the same rows re-exported in another order) is said, and not
    printed on the card as an external validation.  Each row is hashed by pandas (``hash_pandas_object``, its
    values as read), the row hashes are sorted, and their bytes hashed.
    """
    import hashlib

    names = [str(c) for c in columns]
    if not names or len(set(names)) != len(names) or not set(names).issubset(frame.columns):
        return None
    block = frame[sorted(names)]
    if block.shape[1] != len(names):  # a duplicated column name
        return None
    try:
        hashes = _row_hashes(block)
    except TypeError:  # cells pandas cannot hash (lists): their text instead, the same at fit and at validation
        hashes = pd.util.hash_pandas_object(block.astype(str), index=False).to_numpy(dtype=np.uint64)
    rows = np.sort(hashes)
    return hashlib.sha256(rows.tobytes()).hexdigest()


_PLAIN_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")


def _written(value) -> str:
    """A cell as written, for :func:`rows_text_fingerprint`: missing markers empty, a number written as text
    (``"1.0"``) as the number reads (``1``), other text trimmed."""
    from .columns import category_label, format_number, is_missing_marker

    if isinstance(value, str):
        text = value.strip()
        if is_missing_marker(text):
            return ""
        return format_number(float(text)) if _PLAIN_NUMBER.match(text) else text
    return category_label(value)


def rows_text_fingerprint(frame: pd.DataFrame, columns, hashes: np.ndarray | None = None) -> str | None:
    """A SHA-256 of a table's rows over ``columns`` as *written*, whatever the rows' order or the file's format;
    None without those columns.

    :func:`rows_fingerprint` hashes the values as read, so the training CSV saved as Excel with its cells as text
    (``"5"`` for 5), or re-read with ``?`` as empty cells, hashes differently.  Here every cell is its label
    (``5``, ``5.0``, ``"5"`` and ``"5.0"`` are ``5``, text trimmed: :func:`_written`) and every
    missing cell (NaN, ``?``, ``NA``, blank) the empty text; each column's distinct labels are hashed once, the
    cells take their label's hash, and the columns are mixed in name order (``training.rows_text_sha256``).
    """
    import hashlib

    mixed = rows_as_written_hashes(frame, columns) if hashes is None else hashes   # ``hashes``: computed already
    return None if mixed is None else hashlib.sha256(np.sort(mixed).tobytes()).hexdigest()


def rows_as_written_hashes(frame: pd.DataFrame, columns, casefold: bool = False) -> np.ndarray | None:
    """One uint64 hash per row of ``frame`` over ``columns``, each cell as written (:func:`rows_text_fingerprint`);
    None without those columns.  Two rows that read the same in any format hash the same; with ``casefold``,
    also when their text differs only in case (``FEMALE`` and ``Female``, one category to the binarizer)."""
    from .columns import _distinct_labels

    names = sorted(columns, key=str)   # mixed in name order; names as the table has them (0, 1, ... too)
    if (not names or len({str(n) for n in names}) != len(names)
            or not all(isinstance(n, (str, int, np.integer)) and n in frame.columns for n in names)):
        return None
    known: dict[str, np.uint64] = {}   # a label's hash, hashed once for all columns (550 columns of True / False)

    def hashes_of(labels) -> np.ndarray:   # pd.util.hash_array(labels), elementwise as it is
        new = list(dict.fromkeys(label for label in labels if label not in known))
        if new:
            known.update(zip(new, pd.util.hash_array(np.asarray(new, dtype=object))))
        return np.fromiter((known[label] for label in labels), dtype=np.uint64, count=len(labels))

    mixed = np.zeros(len(frame), dtype=np.uint64)
    for name in names:
        series = frame[name]
        if isinstance(series, pd.DataFrame):  # a duplicated column name
            return None
        try:
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
        except TypeError:  # cells pandas cannot hash (lists): their text
            codes, uniques = pd.factorize(series.astype(str), use_na_sentinel=True)
        as_objects = np.asarray(uniques, dtype=object)
        labels = (_distinct_labels(uniques, as_objects) if np.asarray(uniques).dtype.kind in "biuf"
                  else [_written(v) for v in as_objects])  # numbers: all at once
        labels = [str(label).casefold() for label in labels] if casefold else [*map(str, labels)]
        hashed = hashes_of([*labels, ""])  # the last: NaN cells (code -1)
        with np.errstate(over="ignore"):
            mixed = mixed * np.uint64(0x100000001B3) ^ hashed[codes]
    return mixed


def _row_hashes(block: pd.DataFrame) -> np.ndarray:
    """``pd.util.hash_pandas_object(block, index=False)`` as a uint64 array, the same numbers, faster on wide tables.

    pandas hashes every cell of a table (15 ms for 4,601 rows x 550 boolean columns, the paper's simulation
    setting: more than the rest of a fit outside its search).  Here consecutive columns of one numpy number dtype
    are hashed in one call (``hash_array`` is elementwise for them), boolean cells from the two hashes of False and
    True, the other columns as pandas does, and the column hashes are combined in column order by pandas' own
    ``combine_hash_arrays`` (about 5 ms for that table).  As in pandas, the hashes are made as they are combined, a
    block of at most ``_HASH_CELLS`` cells at a time, so a wide table of 100,000 rows never holds all its cells'
    hashes (8 bytes each) at once.  When that private function is not there (another pandas), pandas' public
    function is used.
    """
    try:
        from pandas.core.util.hashing import combine_hash_arrays
    except ImportError:  # pragma: no cover - a pandas without it
        return pd.util.hash_pandas_object(block, index=False).to_numpy(dtype=np.uint64)
    n_rows, n_columns = block.shape
    if n_columns == 0:
        return pd.util.hash_pandas_object(block, index=False).to_numpy(dtype=np.uint64)
    dtypes = [dtype if isinstance(dtype, np.dtype) and dtype.kind in "biuf" else None for dtype in block.dtypes]
    per_block = max(1, _HASH_CELLS // max(n_rows, 1))

    def column_hashes():
        position = 0
        while position < n_columns:
            dtype = dtypes[position]
            if dtype is None:
                yield pd.util.hash_pandas_object(block.iloc[:, position], index=False).to_numpy(dtype=np.uint64)
                position += 1
                continue
            stop = position + 1
            # `is not None` first: numpy reads None as float64, so dtype('float64') == None is True
            while (stop < n_columns and stop - position < per_block and dtypes[stop] is not None
                   and dtypes[stop] == dtype):
                stop += 1
            values = np.ravel(block.iloc[:, position:stop].to_numpy(), order="F")  # one dtype: no conversion
            if dtype.kind == "b":  # two values, two hashes: h0 for False, h0 ^ (h0 ^ h1) for True
                h0, h1 = pd.util.hash_array(np.array([False, True]))
                hashed = np.multiply(values.view(np.uint8), h0 ^ h1, dtype=np.uint64)
                hashed ^= h0
            else:
                hashed = pd.util.hash_array(values)
            hashed = hashed.reshape(stop - position, n_rows)
            # combine_hash_arrays keeps the first array to the end: a copy, not a view holding its whole block
            yield from ([hashed[0].copy()] + list(hashed[1:])) if position == 0 else hashed
            position = stop

    return combine_hash_arrays(column_hashes(), n_columns, n_rows)


def to_jsonable(value, *, strict: bool = False):
    """Numpy scalars and arrays (inside dicts, lists, tuples) as plain Python for ``json.dumps``.

    With ``strict=True`` non-finite floats become JSON-safe too: NaN -> None, +-inf -> "inf"/"-inf".
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, strict=strict) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, strict=strict) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist(), strict=strict)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if strict and not np.isfinite(value):
            return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
        return value
    return value


def dumps_model(model: dict) -> str:
    """The model dictionary as pretty JSON text."""
    return json.dumps(to_jsonable(model, strict=True), indent=2, ensure_ascii=False, allow_nan=False)


def save_model(model: dict, path) -> None:
    """Write a model dictionary to ``path`` as UTF-8 JSON."""
    Path(path).write_text(dumps_model(model) + "\n", encoding="utf-8")


def parse_model(text, source: str = "model file") -> dict:
    """Parse and check model JSON text; raise ModelFileError if it is not one of ours."""
    try:
        model = json.loads(text)
    except json.JSONDecodeError as exc:   # where, in words, not the parser's ("Expecting property name ...")
        if not str(text).strip():
            raise ModelFileError(f"{source} is not a model file: it is empty") from None
        where = f"line {exc.lineno}, column {exc.colno}" if exc.pos else "its start"
        cut = " (cut short?)" if exc.pos >= len(text.rstrip()) else " (edited by hand, or cut short?)"
        raise ModelFileError(f"{source} is not a model file: it is not valid JSON, from {where}{cut}; save the model "
                             "again from the dashboard or `frl fit --out`") from None
    except UnicodeDecodeError:
        raise ModelFileError(f"{source} is not a model file: it is not valid JSON (not UTF-8 text)") from None
    return check_model_dict(model, source)


def load_model_dict(path) -> dict:
    """Read and check a model file from disk."""
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"Model file not found: {path}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{path} is not a model file: it is not UTF-8 text") from None
    return parse_model(text, source=str(path))


def rule_columns(model: dict) -> list[str]:
    """The columns a model's rules test, each once, in the order the list first uses them."""
    return list(dict.fromkeys(str(c.get("column")) for rule in model.get("rules") or ()
                              for c in rule.get("conditions") or ()))


def check_model_dict(model, source: str = "model") -> dict:
    """Check that a parsed JSON value is one of our model dictionaries."""
    if not isinstance(model, dict) or model.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{source} is not a falling rule list model (no \"format\": \"{MODEL_FORMAT}\"): "
                             "give a file written by `frl fit --out`")
    version = model.get("format_version")
    if version != MODEL_FORMAT_VERSION:
        raise ModelFileError(f"{source} has model format version {version!r}; this frl reads version {MODEL_FORMAT_VERSION}")
    for key in ("rules", "default", "outcome"):
        if key not in model:
            raise ModelFileError(f"{source} is missing the {key!r} section: the file is damaged")
    if not isinstance(model["rules"], list) or not isinstance(model["default"], dict):
        raise ModelFileError(f"{source} has a malformed rule list: the file is damaged")
    _check_outcome_and_counts(model, source)
    return check_model_numbers(model, source)


#: The training counts a model file may hold: whole numbers of patients, rows or rules (or absent / null).
_TRAINING_COUNTS = ("n_rows", "n_positive", "n_patients", "n_candidate_rules", "n_mined_rules")


def _check_outcome_and_counts(model: dict, source: str) -> None:
    """Refuse an ``outcome`` that is not a section of names, an event value that is not one value (a list is written
    as ``event_values``), and training counts that are not whole numbers or contradict each other: what printing the
    file (``frl show``, ``frl models show``, the card) reads."""
    outcome = model["outcome"]
    if not isinstance(outcome, dict):
        raise ModelFileError(f"{source} is damaged: its 'outcome' section is {type(outcome).__name__}, not the outcome's "
                             "names; fit the model again or use the file `frl fit --out` wrote")
    event = outcome.get("positive_class")
    if isinstance(event, (list, dict)):
        raise ModelFileError(f"{source} is damaged: its event value (outcome.positive_class) is {event!r}, not one "
                             "value; fit the model again or use the file `frl fit --out` wrote")
    training = model.get("training")
    if training is None:
        return
    if not isinstance(training, dict):
        raise ModelFileError(f"{source} is damaged: its 'training' section is not a section of figures; fit the model "
                             "again or use the file `frl fit --out` wrote")
    for key in _TRAINING_COUNTS:
        value = training.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ModelFileError(f"{source} is damaged: training.{key} is {value!r}, not a whole number; fit the model "
                                 "again or use the file `frl fit --out` wrote")
    rate = training.get("positive_rate")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1):
        raise ModelFileError(f"{source} is damaged: training.positive_rate is {rate!r}, not a share between 0 and 1; "
                             "fit the model again or use the file `frl fit --out` wrote")
    n_rows, events, patients = training.get("n_rows"), training.get("n_positive"), training.get("n_patients")
    too_many = [name for name, count in (("events", events), ("patients", patients))
                if n_rows is not None and count is not None and count > n_rows]
    if too_many:
        raise ModelFileError(f"{source} is damaged: it counts more {too_many[0]} than training rows ({n_rows:,}); fit "
                             "the model again or use the file `frl fit --out` wrote")


def check_model_numbers(model: dict, source: str = "model") -> dict:
    """Refuse a model whose numbers no fit writes: a risk outside [0, 1] or not a number, risks that rise down
    the list, a support that is not a whole number of patients, or supports that do not add up to the training
    rows (each training patient is caught by exactly one rule).  A file without a rule list is left to the
    caller's own checks."""
    rows = ([*model["rules"], model["default"]] if isinstance(model.get("rules"), list)
            and isinstance(model.get("default"), dict) else [])
    if not rows or not all(isinstance(rule, dict) and "probability" in rule and "support" in rule for rule in rows):
        return model
    for number, rule in enumerate(rows, start=1):
        which = "the ELSE rule" if number == len(rows) else f"rule {number}"
        risk = rule["probability"]
        if isinstance(risk, bool) or not isinstance(risk, (int, float)) or not 0.0 <= risk <= 1.0:
            raise ModelFileError(f"{source} is damaged: {which}'s risk is {risk!r}, not a probability between 0 and 1; "
                                 "fit the model again or use the file `frl fit --out` wrote")
        support = rule["support"]
        if isinstance(support, bool) or not isinstance(support, (int, float)) or not (
                support >= 0 and float(support).is_integer()):
            raise ModelFileError(f"{source} is damaged: {which}'s support is {support!r}, not a number of patients; "
                                 "fit the model again or use the file `frl fit --out` wrote")
    risks = [rule["probability"] for rule in rows]
    for number in range(1, len(risks)):
        if risks[number] > risks[number - 1] + 1e-12:
            which = "the ELSE rule" if number == len(risks) - 1 else f"rule {number + 1}"
            raise ModelFileError(f"{source} is damaged: {which}'s risk ({risks[number]:.4g}) is above the risk of the "
                                 f"rule before it ({risks[number - 1]:.4g}), and a falling rule list's risks fall; fit "
                                 "the model again or use the file `frl fit --out` wrote")
    n_rows = (model.get("training") or {}).get("n_rows") if isinstance(model.get("training"), dict) else None
    caught = sum(rule["support"] for rule in rows)
    if isinstance(n_rows, int) and not isinstance(n_rows, bool) and caught != n_rows:
        raise ModelFileError(f"{source} is damaged: its rules catch {caught:,.0f} training patients, but it was fitted "
                             f"on {n_rows:,} (each patient is caught by exactly one rule); fit the model again or use "
                             "the file `frl fit --out` wrote")
    return model
