"""How many rows of a new table are rows of the training table: a small sample of the training rows' hashes.

The model file's exact fingerprints (``training.rows_sha256`` and ``rows_text_sha256``,
:func:`frl_engine.io.rows_fingerprint`) recognise the whole training table, in any order or
format.  They miss the two ways training patients most often come back as "new" ones:

- the same export with a few cells corrected (one edited cell changes the whole fingerprint);
- the training patients among new ones: a list fitted on January to June, validated on the
  whole year.

Either way the figures are partly the fit's, and a card that says "externally validated"
over them is wrong.  So the model file also keeps a *bottom-k sample* of its training rows'
hashes (Broder's sketch): each row is hashed as written over the model's columns
(:func:`frl_engine.io.rows_as_written_hashes`: ``5``, ``5.0`` and ``"5"`` alike, ``?`` empty),
and the ``k`` smallest distinct hashes are kept (``SAMPLE_SIZE``), each as its low 32 bits,
with the largest kept hash as the threshold.  Every training row whose hash is at most the
threshold is in the sample, so for a new table

    share = (new rows at most the threshold whose low bits are in the sample)
            / (new rows at most the threshold)

estimates the share of its rows that are training rows, without bias, from about
``k * n_new / n_training`` of its rows (all of them when the training table has at most
``k`` rows).  A row from elsewhere matches by chance only if it is written exactly as a
training row (over every column) or with probability ``k / 2**32`` (about 5e-7) otherwise.

Rows that repeat one another cannot tell patients apart: in a table of a few yes/no columns
most new patients are written exactly as some training patient.  The sample is therefore kept
only when at most ``MOST_REPEATED`` of the training rows repeat another row; then a new
patient matches by chance about as often (at most about 2%), and a share from
``TRAINING_SHARE`` (10%) up says that the table holds training patients.

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
#: The fewest sampled rows (new rows at most the threshold) from which a share is estimated.
FEWEST_SAMPLED = 10
_LOW_BITS = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class TrainingOverlap:
    """The new table's rows that are training rows, estimated from the sample.

    ``sampled``: new rows at most the sample's threshold; ``matched``: those among them that are
    training rows; ``share``: ``matched / sampled``, the estimated share of the new table's rows
    that are training rows.
    """

    sampled: int
    matched: int

    @property
    def share(self) -> float:
        return self.matched / self.sampled if self.sampled else 0.0

    @property
    def holds_training_patients(self) -> bool:
        """Enough rows sampled, and a share of training rows beyond what chance gives (``TRAINING_SHARE``)."""
        return self.sampled >= FEWEST_SAMPLED and self.matched >= 3 and self.share >= TRAINING_SHARE


def sample_training_rows(frame: pd.DataFrame, columns, size: int = SAMPLE_SIZE,
                         hashes: np.ndarray | None = None) -> dict | None:
    """The bottom-``size`` sample of the training rows' hashes, as the model file keeps it (``training.rows_sample``).

    None when the rows cannot be hashed over ``columns``, or when more than ``MOST_REPEATED`` of them repeat
    another row (rows alike cannot tell patients apart).  ``threshold`` is the largest hash kept, in hexadecimal;
    ``low_bits`` the kept hashes' low 32 bits, 8 hexadecimal digits each, in the order of the hashes.  ``hashes``:
    the rows' hashes when computed already (:func:`frl_engine.io.rows_as_written_hashes`).
    """
    hashes = rows_as_written_hashes(frame, columns) if hashes is None else hashes
    if hashes is None or len(hashes) == 0:
        return None
    distinct, counts = np.unique(hashes, return_counts=True)
    repeated = float(counts[counts > 1].sum()) / len(hashes)   # rows with a twin, the twin included
    if repeated > MOST_REPEATED:
        return None
    kept = distinct[:size]
    threshold = int(kept[-1]) if len(distinct) > size else (1 << 64) - 1   # all of them: every new row is sampled
    return {"size": int(len(kept)), "threshold": f"{threshold:016x}", "repeated": round(repeated, 6),
            "low_bits": "".join(f"{int(v):08x}" for v in (kept & _LOW_BITS))}


def training_overlap(frame: pd.DataFrame, columns, sample) -> TrainingOverlap | None:
    """How many of ``frame``'s rows are training rows, from the model file's ``training.rows_sample``.

    None without a usable sample (an older model file, rows alike, a sample damaged by hand) or without the
    model's columns in ``frame``.
    """
    try:
        threshold = np.uint64(int(sample["threshold"], 16))
        text = sample["low_bits"]
        kept = np.array([int(text[i:i + 8], 16) for i in range(0, len(text), 8)], dtype=np.uint64)
    except (TypeError, KeyError, ValueError, OverflowError):
        return None
    if len(text) % 8 or len(kept) == 0:
        return None
    hashes = rows_as_written_hashes(frame, columns)
    if hashes is None:
        return None
    sampled = hashes[hashes <= threshold]
    matched = int(np.isin(sampled & _LOW_BITS, kept).sum())
    return TrainingOverlap(int(len(sampled)), matched)
