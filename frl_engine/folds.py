"""Fold splits and per-fit seeds shared by every cross-validation in the engine.

The estimator's own :meth:`~frl_engine.estimator.FallingRuleListClassifier.cross_validate`
and the evaluation layer (:mod:`frl_engine.validation.crossval`) both derive
their numbers from here, so a list's cross-validated AUROC is the same
whichever of the two computed it.

Seeds come from :class:`numpy.random.SeedSequence` with a spawn key: ``(0,)``
for the fold split, ``(1 + method index, fold)`` for one method's fit on one
fold.  No global random state is used.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .columns import PATIENT_NUMBER_WORDS

__all__ = ["split_seed", "fit_seed", "stratified_folds", "patient_groups"]

# A name that says "the patient" (not the encounter or the visit, which are one row each).
_PATIENT_WORDS = re.compile(r"(patient|subject|person|member|mrn|^pid$|^pat_?id|" + PATIENT_NUMBER_WORDS + ")",
                            re.IGNORECASE)
# A patient column's name that says "identifier" on its own (``pid``), where has_identifier_name would not.
_PATIENT_ID_NAME = re.compile(r"^(pid|patid|pat_id|patient)$", re.IGNORECASE)


def split_seed(random_state: int) -> int:
    """The seed of the fold split."""
    return int(np.random.SeedSequence(random_state, spawn_key=(0,)).generate_state(1)[0] & 0x7FFFFFFF)


def fit_seed(random_state: int, method_index: int, fold: int) -> int:
    """The seed of the method numbered ``method_index`` (0 = FRL) on ``fold``."""
    key = (1 + int(method_index), int(fold))
    return int(np.random.SeedSequence(random_state, spawn_key=key).generate_state(1)[0] & 0x7FFFFFFF)


def stratified_folds(y: np.ndarray, n_folds: int, random_state: int,
                     groups: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` row positions of a shuffled stratified ``n_folds``-fold split of ``y``.

    With ``groups`` (one label per row: the patient of each encounter, :func:`patient_groups`), all
    rows of a group fall in the same fold (scikit-learn's ``StratifiedGroupKFold``), so no patient is
    both fitted and tested: a readmitted patient's second encounter in the test fold would otherwise
    be predicted from their first, and the cross-validated AUROC would read too high.
    """
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    if groups is not None and len(np.unique(groups)) >= n_folds:
        splitter = StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=split_seed(random_state))
        return list(splitter.split(np.zeros(len(y)), y, groups))
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=split_seed(random_state))
    return list(splitter.split(np.zeros(len(y)), y))


@functools.lru_cache(maxsize=64)
def _patient_column_names(names: tuple) -> tuple:
    """The names among ``names`` that name a patient identifier (cached: a fit asks for every column's name)."""
    from .columns import has_identifier_name

    return tuple(name for name in names if (_PATIENT_WORDS.search(str(name)) and has_identifier_name(name))
                 or _PATIENT_ID_NAME.match(str(name).strip()))


def patient_groups(frame) -> tuple[str, np.ndarray] | None:
    """The column that numbers the patients of an encounter-level table, and each row's patient.

    A column named like a patient identifier (``patient_nbr``, ``PatientID``, ``MRN``, ``subject_id``)
    in which some patient has more than one row; missing cells are each a patient of their own.  Else a column
    named only ``id`` (``ID``, ``subjid``) that repeats, with at least 20 values and at most 20 rows each on
    average (R's colon, cgd, bladder: a patient's rows), not an ``id`` of a few sites.
    None for a table of one row per patient, or without such a column.
    """
    import pandas as pd

    from .columns import GENERIC_ID_NAME, has_identifier_name, missing_mask, repeated_generic_id

    if not isinstance(frame, pd.DataFrame):
        return None
    def repeated_patients(values):
        """Each row's patient when some patient has several rows (a blank number: a patient of its own)."""
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        missing = np.asarray(missing_mask(pd.Series(values)), dtype=bool) | (codes < 0)
        if not 1 < len(uniques) < int((~missing).sum()):
            return None
        groups = codes.astype(np.int64)
        groups[missing] = len(uniques) + np.arange(int(missing.sum()))
        return groups

    # the patient number as the index (df.set_index("MRN")), then as a column
    named = [(name, frame.index.get_level_values(level)) for level, name in enumerate(frame.index.names)
             if name is not None and _PATIENT_WORDS.search(str(name)) and has_identifier_name(name)]
    named += [(name, frame[name]) for name in _patient_column_names(tuple(frame.columns.tolist()))
              if not isinstance(frame[name], pd.DataFrame)]
    for name, values in named:
        groups = repeated_patients(values)
        if groups is not None:
            return str(name), groups
    # a column named only "id" that repeats, with a few rows per value (R's colon: each patient's recurrence and
    # death rows; cgd, bladder: a row per infection or visit): the reader calls it a repeated record number, and the
    # folds keep its rows together (a value shared by two sites' patients only makes a group coarser, never wrong)
    for name in frame.columns:
        if GENERIC_ID_NAME.match(str(name).strip()) and not isinstance(frame[name], pd.DataFrame):
            groups = repeated_patients(frame[name])
            if groups is not None and repeated_generic_id(name, len(np.unique(groups)), len(groups)):
                return str(name), groups
    return None
