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

import numpy as np

__all__ = ["split_seed", "fit_seed", "stratified_folds"]


def split_seed(random_state: int) -> int:
    """The seed of the fold split."""
    return int(np.random.SeedSequence(random_state, spawn_key=(0,)).generate_state(1)[0] & 0x7FFFFFFF)


def fit_seed(random_state: int, method_index: int, fold: int) -> int:
    """The seed of the method numbered ``method_index`` (0 = FRL) on ``fold``."""
    key = (1 + int(method_index), int(fold))
    return int(np.random.SeedSequence(random_state, spawn_key=key).generate_state(1)[0] & 0x7FFFFFFF)


def stratified_folds(y: np.ndarray, n_folds: int, random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` row positions of a shuffled stratified ``n_folds``-fold split of ``y``."""
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=split_seed(random_state))
    return list(splitter.split(np.zeros(len(y)), y))
