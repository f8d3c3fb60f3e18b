"""Files that are not the table their name promises get one plain message (frl_engine/sniff.py via read_table).

Regression for issue 12: a text file renamed .xlsx, a binary blob named .csv or an
empty file used to reach the user as the parser's own words ("Excel file format
cannot be determined, you must specify an engine manually", "Error tokenizing data.
C error ...") or, for some files, as an unhandled exception.
"""

import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.errors import DataError
from frl_engine.io import read_table
from frl_engine.sniff import detect_content

# Words of the libraries' own messages that must never reach a user.
JARGON = ("engine", "tokeniz", "C error", "zip file", "magic bytes", "Buffer", "openpyxl", "calamine", "pyarrow",
          "Traceback", "codec", "utf-8", "Error:")


def _xlsx() -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame({"Age": [61, 72], "Outcome": ["yes", "no"]}).to_excel(buffer, index=False)
    return buffer.getvalue()


def _parquet() -> bytes:
    return pd.DataFrame({"Age": [61, 72], "Outcome": ["yes", "no"]}).to_parquet(index=False)


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "hello")
    return buffer.getvalue()


BLOB = np.random.default_rng(12).integers(0, 256, 4000, dtype=np.uint8).tobytes()
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + BLOB

BAD = [
    ("text renamed .xlsx", "notes.xlsx", b"Age,Outcome\n61,yes\n", "not an Excel workbook but plain text"),
    ("binary blob named .csv", "blob.csv", BLOB, "not a CSV file but binary data"),
    ("empty csv", "empty.csv", b"", "is empty"),
    ("blank lines only", "blank.csv", b"  \n\n \n", "is empty"),
    ("empty xlsx", "empty.xlsx", b"", "is empty"),
    ("workbook named .csv", "book.csv", _xlsx(), "rename it to .xlsx"),
    ("parquet named .csv", "table.csv", _parquet(), "rename it to .parquet"),
    ("web page named .csv", "export.csv", b"<!DOCTYPE html>\n<html><body>Please log in</body></html>", "web page"),
    ("pdf named .csv", "report.csv", b"%PDF-1.7\n" + BLOB, "PDF document"),
    ("old or protected workbook", "old.xlsx", OLE2, "password-protected"),
    ("old .xls", "old.xls", OLE2, "Excel 97-2003"),
    ("zip that is no workbook", "archive.xlsx", _zip(), "could not be read as an Excel workbook"),
    ("truncated workbook", "cut.xlsx", _xlsx()[:900], "could not be read as an Excel workbook"),
    ("text named .parquet", "t.parquet", b"Age,Outcome\n61,yes\n", "not a Parquet file but plain text"),
    ("truncated parquet", "cut.parquet", _parquet()[:200], "could not be read as a Parquet file"),
    ("ragged rows", "ragged.csv", b"Age,Outcome\n61,yes\n72,no,3,4\n", "line 3 has 4 values but the header has 2"),
    ("open quote", "quote.csv", b'Age,Outcome\n"61,yes\n72,no\n', "never closed"),
]


@pytest.mark.parametrize("case, name, raw, words", BAD, ids=[b[0] for b in BAD])
def test_unreadable_files_get_one_plain_message(case, name, raw, words):
    with pytest.raises(DataError) as caught:
        read_table(raw, name)
    message = str(caught.value)
    assert words in message
    assert message.startswith(name) and "\n" not in message
    assert not any(word.lower() in message.lower() for word in JARGON), message


def test_good_files_still_read_whatever_their_encoding():
    assert read_table(_xlsx(), "book.xlsx")["Age"].tolist() == [61, 72]
    assert read_table(_xlsx(), "book.xls")["Outcome"].tolist() == ["yes", "no"]  # a workbook with the old name
    assert read_table(_parquet(), "t.parquet")["Age"].tolist() == [61, 72]
    windows = "Name,Outcome\nJosé,yes\nZoë,no\n".encode("cp1252")  # Excel's CSV on Windows, not UTF-8
    assert read_table(windows, "w.csv")["Name"].tolist() == ["José", "Zoë"]
    undefined = b"Name,Outcome\nJos\xe9\x81,yes\nAnn,no\n"          # 0x81 is no character in Windows-1252
    assert read_table(undefined, "w.csv")["Name"].tolist() == ["Jos\u00e9\ufffd", "Ann"]
    utf16 = "Name,Outcome\nJosé,yes\nAnn,no\n".encode("utf-16")
    assert read_table(utf16, "u.csv")["Name"].tolist() == ["José", "Ann"]
    assert read_table("Name,Outcome\nJosé,yes\nAnn,no\n".encode("utf-8-sig"), "b.csv").columns[0] == "Name"


def test_detect_content_reads_signatures():
    assert detect_content(_xlsx()) == "zip"
    assert detect_content(_parquet()) == "parquet"
    assert detect_content(OLE2) == "ole2"
    assert detect_content(BLOB) == "binary"
    assert detect_content(b"a,b\n1,2\n") == "text"
    assert detect_content(b"\n  \t\n") == "empty"
    assert detect_content(b"  <html><head></head></html>") == "html"
    assert detect_content(b'[{"Age":61,"Outcome":"yes"}]') == "json"
    assert detect_content(b'\xef\xbb\xbf{"Age": {"0": 61}}') == "json"
    assert detect_content(b"[70-80),yes\n[80-90),no\n") == "text"  # a band in the first cell is a table


@pytest.mark.parametrize("name, raw, words", [
    ("notes.xlsx", b"Age,Outcome\n61,yes\n", "not an Excel workbook"),
    ("blob.csv", BLOB, "not a CSV file"),
    ("empty.csv", b"", "is empty"),
    ("records.csv", b'[{"Age":61,"Outcome":"yes"},{"Age":47,"Outcome":"no"}]', "not a CSV file but JSON data"),
])
def test_cli_says_it_in_one_line_and_exits_2(tmp_path, capsys, name, raw, words):
    path = tmp_path / name
    path.write_bytes(raw)
    status = main(["fit", str(path), "--target", "Outcome"])
    out, err = capsys.readouterr()
    assert status == 2, err
    assert err.startswith("frl: error: ") and err.count("\n") == 1 and words in err, err
    assert "Traceback" not in err and out == ""


def test_an_outcome_with_one_value_says_what_to_check(tmp_path, capsys):
    path = tmp_path / "filtered.csv"
    path.write_text("Age,Outcome\n61,No\n72,No\n55,No\n")
    status = main(["fit", str(path), "--target", "Outcome"])
    err = capsys.readouterr().err
    assert status == 2 and "only one value ('No')" in err and "was not filtered to one outcome" in err


def test_a_letter_saved_as_csv_is_no_table_and_a_table_of_one_column_still_is():
    """A note uploaded by mistake was read as a table of one column named 'Dear colleague', and the page said that
    outcome had only one value."""
    letter = (b"Dear colleague,\n\nplease find attached the readmission figures for the last quarter as discussed in "
              b"the meeting. Let me know if you need anything else.\n\nBest regards,\nAnna\n")
    with pytest.raises(DataError, match=r"letter.csv does not look like a table: its lines are sentences "
                                        r"\('Dear colleague'\)"):
        read_table(letter, "letter.csv")
    one = read_table(b"readmitted\nyes\nno\nno\nyes\n", "outcome.csv")
    assert list(one.columns) == ["readmitted"] and len(one) == 4
    notes = read_table(b"id,note\n1,patient was admitted for chest pain and sent home the next day\n"
                       b"2,patient came back two days later with the same pain and stayed a week\n", "notes.csv")
    assert list(notes.columns) == ["id", "note"]
