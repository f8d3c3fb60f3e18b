"""How many rows of a new table are rows of the training table: a small sample of the training rows' hashes.

The model file's exact fingerprints (``training.rows_sha256`` and ``rows_text_sha256``,
:func:`frl_engine.io.rows_fingerprint`) recognise the whole training table, in any order or
format.  They miss the two ways training patients most often come back as "new" ones:

- the same export with a few cells corrected (one edited cell changes the whole fingerprint);
- the training patients among new ones: a list fitted on January to June, validated on the
  whole year.

Either way the figures are partly the fit's, and a card that says "externally validated"
over them is wrong.  So the model file also keeps a *bottom-k sample* of its training rows'
hashes (Broder's sketch).  Each row is hashed as written (:func:`frl_engine.io.rows_as_written_hashes`:
``5``, ``5.0`` and ``"5"`` alike, ``?`` empty, text without case) over the columns the fit
*read as findings*: not the identifiers, nor the empty, constant or near-constant columns and
dates it left out.  A row counter or an encounter number restarted in each export would
otherwise make every row unique and match, by chance, another hospital's row with the same
number; and an unused column dropped from the new export would leave nothing to compare.
The ``k`` smallest distinct hashes are kept (``SAMPLE_SIZE``), each as its low 32 bits, with
the largest kept hash as the threshold.  Every training row whose hash is at most the
threshold is in the sample, so for a new table

    share = (new rows at most the threshold whose low bits are in the sample)
            / (new rows at most the threshold)

estimates the share of its rows that are training rows, from about ``k * n_new / n_training``
of its rows (all of them when the training table has at most ``k`` rows).  A row from
elsewhere matches only if it is written exactly as a training row in every such column, or
with probability ``k / 2**32`` (about 5e-7) otherwise.

Rows that repeat one another cannot tell patients apart: in a table of a few yes/no columns
most new patients are written exactly as some training patient.  The sample is therefore kept
only when at most ``MOST_REPEATED`` of the training rows repeat another row; then a new
patient matches by chance about as often (at most about 2%).  From ``TRAINING_SHARE`` (10%,
with at least 3 rows found) the new table is said to hold training patients; from 5% (and
more than twice the training rows' own repeats) a note says that some rows look like training
rows.  What it cannot see: a training row with a value changed in every row of a column (a
column recoded, a lab re-calibrated) is a new row to it.

What the model file reveals: the low 32 bits of the hashes of at most ``SAMPLE_SIZE``
training rows (2% of 100,000).  Someone holding a patient's whole row exactly as exported
could tell whether it is one of those; nothing else about the rows can be read back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .io import rows_as_written_hashes

#: Training rows whose hashes the model file keeps (the k of the bottom-k sample).
SAMPLE_SIZE = 2048
#: The largest share of training rows that may repeat another row for the sample to be kept.
MOST_REPEATED = 0.02
#: The share of a new table's rows, estimated, from which it is said to hold training patients.
TRAINING_SHARE = 0.10
#: The share from which a note says that some rows look like training rows (below ``TRAINING_SHARE``).
NOTED_SHARE = 0.05
#: The fewest training rows found among the sampled ones for either.
FEWEST_FOUND = 3
_LOW_BITS = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class TrainingOverlap:
    """The new table's rows that are training rows, estimated from the sample.

    ``sampled``: new rows at most the sample's threshold; ``matched``: those among them that are
    training rows; ``share``: ``matched / sampled``, the estimated share of the new table's rows
    that are training rows; ``repeated``: the share of training rows that repeat another (chance
    matches run at about that rate); ``missing``: the sample's columns the new table lacks (then
    nothing was compared).
    """

    sampled: int
    matched: int
    repeated: float = 0.0
    missing: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        return self.matched / self.sampled if self.sampled else 0.0

    @property
    def holds_training_patients(self) -> bool:
        """At least ``FEWEST_FOUND`` training rows found and a share from ``TRAINING_SHARE`` on."""
        return not self.missing and self.matched >= FEWEST_FOUND and self.share >= TRAINING_SHARE

    @property
    def some_training_rows(self) -> bool:
        """Below ``TRAINING_SHARE``, more training rows than chance gives: worth a note."""
        return (not self.missing and not self.holds_training_patients and self.matched >= FEWEST_FOUND
                and self.share >= max(NOTED_SHARE, 2.5 * self.repeated))


def finding_columns(estimator, frame: pd.DataFrame) -> list:
    """The columns of ``frame`` the fit read as findings (they make items): the sample's columns.  Without a
    column reading (rules given as boolean columns), every column."""
    binarizer = getattr(estimator, "binarizer_", None)
    readings = getattr(binarizer, "readings_", None)
    if not readings:
        return list(frame.columns)
    used = {str(r.name) for r in readings if r.used}
    return [c for c in frame.columns if str(c) in used]


def sample_training_rows(frame: pd.DataFrame, columns, size: int = SAMPLE_SIZE) -> dict | None:
    """The bottom-``size`` sample of the training rows' hashes over ``columns``, as the model file keeps it
    (``training.rows_sample``).

    None when the rows cannot be hashed over ``columns`` (none given), or when more than ``MOST_REPEATED`` of
    them repeat another row (rows alike cannot tell patients apart).  ``columns``: the columns hashed, by name;
    ``threshold``: the largest hash kept, in hexadecimal; ``low_bits``: the kept hashes' low 32 bits, 8
    hexadecimal digits each, in the order of the hashes; ``repeated``: the share of rows repeating another.
    """
    hashes = rows_as_written_hashes(frame, columns, casefold=True)
    if hashes is None or len(hashes) == 0:
        return None
    distinct, counts = np.unique(hashes, return_counts=True)
    repeated = float(counts[counts > 1].sum()) / len(hashes)   # rows with a twin, the twin included
    if repeated > MOST_REPEATED:
        return None
    kept = distinct[:size]
    threshold = int(kept[-1]) if len(distinct) > size else (1 << 64) - 1   # all of them: every new row is sampled
    return {"columns": [str(c) for c in columns], "size": int(len(kept)), "threshold": f"{threshold:016x}",
            "repeated": round(repeated, 6), "low_bits": "".join(f"{int(v):08x}" for v in (kept & _LOW_BITS))}


def rows_alike(frame: pd.DataFrame, columns) -> dict | None:
    """When the training rows repeat one another too often to keep a sample (:func:`sample_training_rows` is
    None): ``{"columns": [...], "repeated": share}``, which the model file keeps as ``training.rows_alike`` so that a
    validation says it could not check for training patients instead of saying nothing; else None."""
    hashes = rows_as_written_hashes(frame, columns, casefold=True)
    if hashes is None or len(hashes) == 0:
        return None
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    repeated = float((counts[inverse] > 1).sum()) / len(hashes)
    if repeated <= MOST_REPEATED:
        return None
    return {"columns": [str(c) for c in columns], "repeated": round(repeated, 6)}


def training_overlap(frame: pd.DataFrame, sample) -> TrainingOverlap | None:
    """How many of ``frame``'s rows are training rows, from the model file's ``training.rows_sample``.

    None without a usable sample (an older model file, rows alike, a sample damaged by hand).  When ``frame``
    lacks some of the sample's columns, nothing is compared and ``missing`` names them.
    """
    try:
        columns = [str(c) for c in sample["columns"]]
        threshold = np.uint64(int(sample["threshold"], 16))
        text = sample["low_bits"]
        kept = np.array([int(text[i:i + 8], 16) for i in range(0, len(text), 8)], dtype=np.uint64)
        repeated = float(sample.get("repeated") or 0.0)
    except (TypeError, KeyError, ValueError, OverflowError, AttributeError):
        return None
    if len(text) % 8 or len(kept) == 0 or not columns:
        return None
    names = {str(c): c for c in frame.columns}
    missing = tuple(c for c in columns if c not in names)
    if missing:
        return TrainingOverlap(0, 0, repeated, missing)
    hashes = rows_as_written_hashes(frame, [names[c] for c in columns], casefold=True)
    if hashes is None:
        return None
    sampled = hashes[hashes <= threshold]
    matched = int(np.isin(sampled & _LOW_BITS, kept).sum())
    return TrainingOverlap(int(len(sampled)), matched, repeated)
