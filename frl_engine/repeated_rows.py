"""Records written more than once: rows that repeat an earlier row in every column, record number included.

A hospital export joined to a table of diagnoses or lab results, or two extracts appended over the
same weeks, repeats encounters.  Each copy then counts as one more patient: its outcome weighs twice in
the likelihood, the supports and risks on the card count it twice, and the posterior is more certain
than the patients warrant (duplicating every row of a table doubles every log-likelihood term).  Identical
rows alone prove nothing (in a table of a few coarse columns two patients can agree on everything), so
a row counts as a copy only when the table has a **record number** (a column named like an identifier,
``encounter_id``, ``hadm_id``, ``Sample code number``) that is unique once the copies are set aside, and the
copy repeats it along with every other column.  A patient number that repeats across a patient's
encounters (``patient_nbr``) is not a record number.

The command line warns and offers ``--drop-repeated-rows``; the dashboard's Data page warns and offers to
leave the copies out for the session; :meth:`FallingRuleListClassifier.fit` warns
(:class:`~frl_engine.errors.RepeatedRecordsWarning`).  Nothing is left out unless the user asks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["RepeatedRecords", "repeated_records", "without_repeated_records"]


@dataclass(frozen=True)
class RepeatedRecords:
    """Copies of records found in a table.

    Attributes
    ----------
    n_copies : int
        Rows that repeat an earlier row in every column (the first of each set is not counted).
    n_rows : int
        Rows of the table.
    record_column : str
        The record number the copies repeat (unique once they are set aside).
    copies : numpy.ndarray of bool
        Which rows are copies (the first of each set is not).
    """

    n_copies: int
    n_rows: int
    record_column: str
    copies: np.ndarray

    @property
    def share(self) -> float:
        return self.n_copies / max(self.n_rows, 1)

    def note(self, where: str = "cli", name=str) -> str:
        """The warning, with what to do in the command line (``"cli"``), the dashboard or the Python API;
        ``name`` writes the record column's name (the dashboard escapes it for Markdown)."""
        remedy = {"cli": "refit with --drop-repeated-rows (keeps the first of each)",
                  "dashboard": "leave them out for this session with the button below (your file is not changed)",
                  "api": "drop them first (frl_engine.repeated_rows.without_repeated_records, or "
                         "X.drop_duplicates())"}[where]
        rows = "row" if self.n_copies == 1 else "rows"
        return (f"{self.n_copies:,} of {self.n_rows:,} {rows} ({100 * self.share:.1f}%) repeat an earlier row in every "
                f"column, {name(self.record_column)} included: the same record written more than once (a join in the "
                "export, or an extract appended twice). Each copy counts as one more patient, so the risks, supports "
                f"and credible intervals overstate the evidence. Remove the copies in the export, or {remedy}.")


def _identifier_columns(frame: pd.DataFrame) -> list:
    from .columns import has_identifier_name

    return [column for column in frame.columns
            if has_identifier_name(column) and not isinstance(frame[column], pd.DataFrame)]


def _duplicated(frame: pd.DataFrame, keep) -> np.ndarray:
    """``frame.duplicated(keep=keep)`` as an array; unhashable cells (lists from a database driver) compared as
    text."""
    try:
        return frame.duplicated(keep=keep).to_numpy()
    except TypeError:
        return frame.astype(str).duplicated(keep=keep).to_numpy()


def _pairs_repeat(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For each row, whether another row has the same pair of values (``first``, ``second``)."""
    return _duplicated(pd.DataFrame({"a": first, "b": second}), keep=False)


def repeated_records(frame: pd.DataFrame) -> RepeatedRecords | None:
    """The copies of records in ``frame`` (see the module's docstring), or None when there are none.

    Cheap on an encounter export of 100,000 rows: a record number that never repeats costs one hash of its
    column; a patient number that repeats is ruled out by the first other column that differs between a
    patient's rows (pairs of two columns over the repeated rows only); only a true record number's repeated
    rows are compared in every column.
    """
    if not isinstance(frame, pd.DataFrame) or len(frame) < 2:
        return None
    from .columns import missing_mask

    for column in _identifier_columns(frame):
        values = frame[column]
        repeats = values.duplicated(keep=False).to_numpy() & ~np.asarray(missing_mask(values), dtype=bool)
        if not repeats.any():
            continue
        rows = np.flatnonzero(repeats)
        keys = values.to_numpy()[rows]
        # rows sharing a record number must agree on every other column; the first column where they do not
        # rules the record number out (a patient's encounters differ in their encounter number, dates, labs)
        agree = np.ones(len(rows), dtype=bool)
        for other in frame.columns:
            if other == column or isinstance(frame[other], pd.DataFrame):
                continue
            agree &= _pairs_repeat(keys, frame[other].to_numpy()[rows])
            if not agree.all():
                break
        if not agree.all():
            continue   # rows with one record number but different values: a patient number, or a recoded export
        # exactly, on these rows alone: copies are equal in every column, and the record number is unique without them
        copies_in_block = _duplicated(frame.iloc[rows], keep="first")
        if not copies_in_block.any() or pd.Series(keys[~copies_in_block]).duplicated().any():
            continue
        copies = np.zeros(len(frame), dtype=bool)
        copies[rows[copies_in_block]] = True
        return RepeatedRecords(n_copies=int(copies.sum()), n_rows=int(len(frame)), record_column=str(column),
                               copies=copies)
    return None


def without_repeated_records(frame: pd.DataFrame) -> tuple[pd.DataFrame, RepeatedRecords | None]:
    """``frame`` without the copies :func:`repeated_records` finds (the first of each set kept, the rows' order
    unchanged, the table's ``attrs`` kept), and what was found (None: ``frame`` itself is returned)."""
    found = repeated_records(frame)
    if found is None:
        return frame, None
    kept = frame.loc[~found.copies]
    if isinstance(frame.index, pd.RangeIndex):
        kept = kept.reset_index(drop=True)
    kept.attrs = dict(frame.attrs)
    return kept, found
