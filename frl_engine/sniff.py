"""What a file's bytes really hold, and plain messages when that is not the table its name promises.

Users rename files, save web pages instead of downloads, and pick the wrong file
in a dialog. Before a parser gets the bytes (and answers with its own jargon, such
as "Excel file format cannot be determined" or "Error tokenizing data. C error"),
:func:`check_content` looks at the first bytes (the file's signature) and raises a
:class:`~frl_engine.errors.DataError` that says in plain words what the file is and
what to do. :func:`parse_failure` turns a parser's own failure into such a message.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zipfile
import zlib
from collections import Counter
from pathlib import Path

from .errors import DataError

SNIFF_BYTES = 8192

#: What each detected content is, in plain words.
CONTENT_NAMES = {
    "zip": "a compressed (ZIP) file or an Excel workbook",
    "ole2": "an old Excel 97-2003 workbook (or another old Office file)",
    "parquet": "a Parquet file",
    "pdf": "a PDF document",
    "gzip": "a compressed (gzip) file",
    "html": "a web page (HTML)",
    "json": "JSON data",
    "binary": "binary data of an unknown kind",
    "spss": "an SPSS data file",
    "stata": "a Stata data file",
    "sas": "a SAS data file",
    "text": "plain text",
}
_HOW_TO_SAVE = "save the table as CSV (comma-separated text), .xlsx or .parquet"
#: The first bytes of a SAS7BDAT file (after 12 zero bytes).
_SAS7BDAT_MAGIC = b"\xc2\xea\x81\x60\xb3\x14\x11\xcf\xbd\x92\x08\x00\x09\xc7\x31\x8c\x18\x1f\x10\x11"
#: What to do with a file whose content is not what its name says, by what it holds (the one it should hold never
#: asks: a workbook's "zip" is refused only under other names).
_HINTS = {
    "text": "if it is comma-separated, rename it to .csv",
    "zip": "if it is an Excel workbook, rename it to .xlsx",
    "ole2": "open it in Excel and save it as CSV or .xlsx",
    "parquet": "rename it to .parquet",
    "html": "download the file itself, not the web page that links to it",
    "spss": "rename it to .sav",
    "stata": "rename it to .dta",
    "sas": "rename it to .sas7bdat (or .xpt)",
}
#: Files of statistics packages (read by :mod:`frl_engine.stat_files`): the package that writes each extension.
STAT_SUFFIXES = {".sav": "SPSS", ".zsav": "SPSS", ".por": "SPSS", ".dta": "Stata", ".sas7bdat": "SAS", ".xpt": "SAS"}
#: The content kind (:func:`detect_content`) of each package's files.
STAT_CONTENT = {"SPSS": "spss", "Stata": "stata", "SAS": "sas"}
#: Extensions of spreadsheets (read by calamine): Excel's and LibreOffice's (OpenDocument).
WORKBOOK_SUFFIXES = (".xlsx", ".xls", ".ods")
#: Extensions of delimited text tables (comma, semicolon, tab or vertical bar: :func:`text_dialect`).
TEXT_SUFFIXES = (".csv", ".tsv", ".txt")


def detect_content(raw: bytes) -> str:
    """The kind of content in ``raw``: a key of :data:`CONTENT_NAMES`, or ``"empty"``.

    Parameters
    ----------
    raw : bytes
        The whole file, or at least its first :data:`SNIFF_BYTES` bytes
        (Parquet is recognised by its opening magic bytes alone).
    """
    if not raw[:SNIFF_BYTES].strip() and not raw.strip():  # the whole file only when its start is blank
        return "empty"
    if raw.startswith(b"PK\x03\x04") or raw.startswith(b"PK\x05\x06"):
        return "zip"
    if raw.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole2"
    if raw.startswith(b"PAR1"):
        return "parquet"
    if raw.startswith(b"%PDF"):
        return "pdf"
    if raw.startswith((b"$FL2", b"$FL3")) or b"SPSSPORT" in raw[:512]:
        return "spss"
    if raw.startswith(b"<stata_dta>") or (len(raw) > 4 and 104 <= raw[0] <= 115 and raw[1] in (1, 2)
                                          and raw[2] == 1 and raw[3] == 0):
        return "stata"
    if raw[12:32] == _SAS7BDAT_MAGIC or raw.startswith(b"HEADER RECORD*******LIB"):
        return "sas"
    if raw.startswith(b"\x1f\x8b"):
        return "gzip"
    head = raw[:SNIFF_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text with its byte-order mark
        return "text"
    if re.match(rb"\s*<(!doctype\s+html|html|head|body)\b", head[:512].lower()):
        return "html"
    if b"\x00" in head:
        return "binary"
    if re.match(rb"\s*(\[\s*[\[{]|\{\s*\")", head[:512].removeprefix(b"\xef\xbb\xbf")):  # [{"Age": 61, ...
        return "json"
    control = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13))
    return "binary" if control > 0.05 * len(head) else "text"


#: The largest table a compressed file may unpack to (a 100,000-row export is about 20 MB): a shared
#: server must not fill its memory from a small upload that expands without end.
MAX_UNPACKED_BYTES = 2 * 1024 ** 3


def unpack_compressed(raw: bytes, filename: str, table_suffixes) -> tuple[bytes, str, str | None]:
    """The table inside a gzip or ZIP file: ``(its bytes, its name, what was done)``; anything else as it is.

    Exports of 100,000 patients are often sent compressed.  ``export.csv.gz`` (or a ``.csv`` that is
    gzip inside, as some servers send it) is decompressed and read by its inner name (``export.csv``; a
    name without a table extension is read as delimited text).  A ``.zip`` must hold exactly one file
    with a table extension (folders and the ``__MACOSX`` copies macOS adds are ignored).  An Excel
    workbook is a ZIP too, but it is named ``.xlsx`` and never reaches here.  The third value says
    what was unpacked, for the "Read ... as" line; ``None`` when nothing was.

    Raises
    ------
    DataError
        A ``.gz`` or ``.zip`` that is not one, a damaged one, or a ZIP without exactly one table.
    """
    suffix = Path(filename).suffix.lower()
    content = detect_content(raw)
    if suffix == ".gz" or (content == "gzip" and suffix in TEXT_SUFFIXES):
        if content != "gzip":
            raise DataError(f"{filename} could not be read: it is named .gz but is {CONTENT_NAMES[content]}, not a "
                            "gzip file: rename it without .gz")
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
                inner = stream.read(MAX_UNPACKED_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"{filename} could not be read: the gzip file is damaged or cut short ({type(exc).__name__}): "
                            "compress the table again, or send it uncompressed") from None
        _check_unpacked_size(len(inner), filename)
        name = filename[:-3] if suffix == ".gz" else filename
        if Path(name).suffix.lower() not in table_suffixes:
            name += ".csv"
        return inner, name, "a gzip-compressed table"
    if suffix == ".zip":
        if content != "zip":
            raise DataError(f"{filename} could not be read: it is named .zip but is {CONTENT_NAMES[content]}, not a "
                            "ZIP file: rename it without .zip")
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                members = [m for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/")
                           and not Path(m.filename).name.startswith(".")]
                tables = [m for m in members if Path(m.filename).suffix.lower() in table_suffixes]
                if len(tables) != 1:
                    listed = ", ".join(Path(m.filename).name for m in members[:6]) + (", ..." if len(members) > 6 else "")
                    found = (f"{len(tables)} tables" if tables else
                             "no table (.csv, .tsv, .txt, .xlsx, .ods, .parquet, or an SPSS, Stata or SAS file)")
                    raise DataError(f"{filename} holds {found} among its {len(members)} file(s) ({listed or 'none'}): "
                                    "unzip it and give the one table of patients")
                _check_unpacked_size(tables[0].file_size, filename)
                return archive.read(tables[0]), Path(tables[0].filename).name, f"the table {tables[0].filename} inside it"
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, zlib.error) as exc:
            raise DataError(f"{filename} could not be read: the ZIP file is damaged, encrypted or uses an unknown "
                            f"compression ({type(exc).__name__}): unzip it and give the table itself") from None
    return raw, filename, None


def _check_unpacked_size(n_bytes: int, filename: str) -> None:
    if n_bytes > MAX_UNPACKED_BYTES:
        raise DataError(f"{filename} unpacks to more than {MAX_UNPACKED_BYTES // 1024 ** 3} GB: give a smaller table "
                        "(fewer columns or rows), or save it as Parquet")


def check_content(raw: bytes, filename: str, suffix: str) -> str:
    """Raise a plain :class:`DataError` if ``raw`` is not what the extension ``suffix`` promises.

    Returns
    -------
    str
        The detected content (see :func:`detect_content`).
    """
    content = detect_content(raw)
    if content == "empty":
        raise DataError(f"{filename} is empty: it needs a header row and at least one row of patients")
    what = CONTENT_NAMES[content]
    if suffix in TEXT_SUFFIXES and content != "text":
        raise DataError(f"{filename} could not be read: it is not a CSV file but {what}: "
                        f"{_HINTS.get(content, _HOW_TO_SAVE)}")
    if suffix in (".xlsx", ".xls") and content == "ole2":  # also what Excel writes for a password-protected file
        raise DataError(f"{filename} could not be read: it is an old Excel 97-2003 workbook or a password-protected "
                        "one: open it in Excel, remove any password, and save it as Excel Workbook (.xlsx) or CSV")
    if suffix in WORKBOOK_SUFFIXES and content != "zip":
        kind = "a LibreOffice spreadsheet" if suffix == ".ods" else "an Excel workbook"
        raise DataError(f"{filename} could not be read: it is not {kind} but {what}: {_HINTS.get(content, _HOW_TO_SAVE)}")
    if suffix == ".parquet" and content != "parquet":
        raise DataError(f"{filename} could not be read: it is not a Parquet file but {what}: "
                        f"{_HINTS.get(content, _HOW_TO_SAVE)}")
    package = STAT_SUFFIXES.get(suffix)
    if package and content != STAT_CONTENT[package]:
        article = "an" if package == "SPSS" else "a"
        raise DataError(f"{filename} could not be read: it is not {article} {package} data file but {what}: "
                        f"{_HINTS.get(content, _HOW_TO_SAVE)}")
    return content


_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_OPEN_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")


def parse_failure(exc: BaseException, filename: str, suffix: str) -> DataError:
    """A plain message for a parser's failure on a file whose content looked right.

    The parser's own text is never part of the message (it stays the exception's
    ``__cause__`` for developers).
    """
    text = str(exc)
    if suffix in TEXT_SUFFIXES:
        fields = _FIELDS.search(text)
        if fields:
            expected, line, seen = fields.groups()
            return DataError(f"{filename} could not be read: line {line} has {seen} values but the header has "
                             f"{expected} columns: "
                             "check the delimiter (a comma) and the quoting of values that contain commas")
        quote = _OPEN_QUOTE.search(text)
        if quote:
            return DataError(f"{filename} could not be read: a quote (\") opened on row {quote.group(1)} is never "
                             "closed: check the quoting")
        return DataError(f"{filename} could not be read as a CSV table: check that it is comma-separated text "
                         "with a header row")
    if suffix == ".ods":
        return DataError(f"{filename} could not be read as a spreadsheet: it may be damaged or incomplete; save it "
                         "again from LibreOffice as .ods or .xlsx, or as CSV")
    if suffix in WORKBOOK_SUFFIXES:
        return DataError(f"{filename} could not be read as an Excel workbook: it may be damaged, incomplete or "
                         "password-protected; save it again from Excel as .xlsx, or as CSV")
    return DataError(f"{filename} could not be read as a Parquet file: it may be damaged or incomplete; "
                     "write it again, or save the table as CSV")


#: Field separators of delimited text, most common first (ties go to the earlier one).
DELIMITERS = (",", ";", "\t", "|")
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
COMMA_DECIMAL = re.compile(r"^\s*[-+]?\d+,\d+\s*$")
POINT_DECIMAL = re.compile(r"^\s*[-+]?\d+\.\d+\s*$")


def text_dialect(text: str, max_lines: int = 200) -> tuple[str, str]:
    """``(delimiter, decimal)`` of delimited text: what a hospital system or a European Excel wrote.

    The delimiter is the one of :data:`DELIMITERS` that splits the lines into the most fields
    while at least 80% of the first ``max_lines`` lines have that many (quotes respected; title
    lines above the header may have fewer); a comma when none does.  The decimal mark is a comma only when the delimiter is
    not a comma and numbers such as ``75,3`` occur while ``75.3`` do not (the usual
    ``;``-separated export of a European Excel); otherwise a point.
    """
    lines = [line for line in text.splitlines()[: max_lines + 1] if line.strip()]
    if not lines:
        return ",", "."
    best, best_key = ",", (1, 0)
    for delimiter in DELIMITERS:
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter))
        except csv.Error:
            continue
        counts = Counter(len(row) for row in rows)
        fields, seen = max(counts.items(), key=lambda item: (item[1], item[0])) if counts else (0, 0)
        if fields < 2:
            continue
        consistent = seen >= 0.8 * len(rows)
        # Equal field counts: the delimiter that splits more lines (the header too) that way wins, so
        # "lactate;death" over "2,9;no" is semicolon-separated with a decimal comma.
        if consistent and (fields, seen) > best_key:
            best, best_key = delimiter, (fields, seen)
    decimal = "."
    if best != ",":
        rows = list(csv.reader(io.StringIO("\n".join(lines[1:])), delimiter=best))
        decimal = "," if _decimal_comma_columns(rows) else "."
    return best, decimal


_EUROPEAN_DECIMAL = re.compile(r"^\s*[-+]?\d{1,3}(\.\d{3})+,\d+\s*$")  # 1.234,5
_THOUSANDS_ONLY = re.compile(r"^\s*[-+]?\d{1,3}(,\d{3})+\s*$")


# A number with an assay's limit sign before it or a unit or a percent sign after it ("<0,5", "98,6 %", "37,0 °C",
# "13.5 kPa"): group 1 is the number, looked at as a plain cell would be.
_MARKED_NUMBER = re.compile(r"^\s*(?:(?:[<>]=?|≤|≥)\s*)?([-+]?[\d.,]*\d)\s*(?:%|[A-Za-zµμ°/×][^;|\t]{0,24})?\s*$")


def _number_part(cell: str) -> str:
    """The number of a cell written with a limit, a unit or a percent sign; the cell itself otherwise."""
    match = _MARKED_NUMBER.match(cell)
    return match.group(1) if match else cell


def _decimal_comma_columns(rows) -> bool:
    """Whether some column writes its numbers with a decimal comma (``75,3``, also ``37,0 °C``, ``<0,5``, ``98,6 %``)
    and never with a point.

    Looked at column by column, so that diagnosis codes such as ``250.83`` in another column do not
    hide the decimal commas of the measurements.  When every comma number looks like thousands
    (``12,345``), a point number anywhere in the file says the comma is not a decimal mark.
    """
    width = max((len(row) for row in rows), default=0)
    comma_columns, thousands_only, any_point = 0, True, False
    for j in range(width):
        cells = [_number_part(row[j]) for row in rows if j < len(row)]   # "37,0 °C" says decimal comma as "37,0" does
        commas = [c for c in cells if COMMA_DECIMAL.match(c) or _EUROPEAN_DECIMAL.match(c)]
        points = any(POINT_DECIMAL.match(c) for c in cells)
        any_point = any_point or points
        if commas and not points:
            comma_columns += 1
            thousands_only = thousands_only and all(_THOUSANDS_ONLY.match(c) for c in commas)
    return comma_columns > 0 and not (thousands_only and any_point)


def header_row(rows, max_rows: int = 20) -> int:
    """Where the header is: past the title lines a report export puts above the table.

    ``rows`` are the first rows as lists of cells.  The header is the first row with more than
    half as many filled cells as the typical row (the most common count among the first
    ``max_rows``): "Mortality report", "Generated 2024-05-01" and blank lines above it are
    skipped, and so is a title line with a comma of its own ("Mortality report, ward 5") that has fewer
    cells, filled or not, than the table's rows; row 0 for an ordinary table (even one with a ragged row
    further down, or a header with a blank name).  A row of group
    headings with blanks between them (``Demographics,,Labs,,Outcome``, as Excel reports put above
    the column names) is skipped too when the row under it has every cell filled with distinct
    names over a column of numbers.
    """
    rows = [list(row) for row in list(rows)[:max_rows]]
    filled = [sum(1 for cell in row if _filled(cell)) for row in rows]
    if not filled:
        return 0
    typical = max(Counter(filled).items(), key=lambda item: (item[1], item[0]))[0]
    at = next((i for i, count in enumerate(filled) if count > typical / 2), 0)
    widths = [len(row) for row in rows]
    width = max(Counter(widths).items(), key=lambda item: (item[1], item[0]))[0]
    if filled[at] < typical and widths[at] < width:
        # a title line with a comma of its own ("Mortality report, ward 5") above a short table: fewer cells
        # than the table's rows, filled or not, so it is no header even when it passes half the typical count
        # (R's write.table writes its header one cell short of the rows, for the row names: kept as the header
        # unless two short lines stand above the table or the full row under it reads as column names)
        full = next((i for i in range(at, len(rows)) if widths[i] >= width), at)
        if full > at + 1 or (full == at + 1 and _names_over_data(rows[full], rows[full + 1:], typical)):
            at = full
    if at + 2 < len(rows) and filled[at] < typical and _names_over_data(rows[at + 1], rows[at + 2:], typical):
        return at + 1  # a row of group headings ("Demographics", "", "Labs", "") above the column names
    return at


def _filled(cell) -> bool:
    return cell is not None and str(cell).strip() not in ("", "nan")


def _names_over_data(row, below, typical: int) -> bool:
    """Whether ``row`` reads as the column names of the rows ``below``: every one of its ``typical`` cells filled,
    distinct, and text, over a column whose cells below are mostly numbers (so a row of an all-text table, or the
    first patient under a header with a blank name, is never taken for the header)."""
    from .columns import _number_from_text, is_missing_marker, is_no_value_word  # columns imports this module

    def is_number(cell) -> bool:  # a decimal comma too: this runs before the dialect's decimal mark is applied
        return _number_from_text(str(cell).strip().replace(",", ".")) is not None

    names = [str(cell).strip() for cell in row if _filled(cell)]
    if (len(names) != typical or len(set(names)) != len(names)
            or any(is_number(name) or is_missing_marker(name) or is_no_value_word(name) for name in names)):
        return False
    for position in range(len(row)):
        cells = [r[position] for r in below if position < len(r) and _filled(r[position])]
        if cells and sum(is_number(cell) for cell in cells) >= 0.8 * len(cells):
            return True
    return False


def text_encoding(raw: bytes) -> str:
    """The encoding :func:`decode_text` reads: ``utf-16`` (with its mark), ``utf-8-sig`` (UTF-8 with a
    byte-order mark, as Excel writes it), ``utf-8``, else ``cp1252`` (Excel's "CSV" on Windows).  A file
    written back for the user (``frl predict``) uses the same, so their Excel shows the accents it did."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8"


def decode_text(raw: bytes) -> str:
    """CSV bytes as text: UTF-8 (with or without a byte-order mark), UTF-16 with a mark, else Windows-1252."""
    encoding = text_encoding(raw)
    if encoding == "cp1252":
        return raw.decode("cp1252", errors="replace")  # never fails
    return raw.decode("utf-8-sig" if encoding == "utf-8" else encoding)
