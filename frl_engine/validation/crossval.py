"""What a falling rule list costs in accuracy: cross-validation against the paper's baselines.

:func:`cross_validate_models` runs stratified k-fold cross-validation (paper
section 5: 5 folds) of the FRL MAP list and of the paper's baselines from
scikit-learn:

* ``"frl"``  -- :class:`~frl_engine.estimator.FallingRuleListClassifier` on the
  raw table (it binarises and mines rules on the training fold itself);
* ``"svm"``  -- SVC with an RBF kernel, ``C`` x ``gamma`` tuned by grid search
  in an inner stratified 3-fold cross-validation on the training fold (AUROC);
* ``"logreg"`` -- L2-regularised logistic regression, ``C`` tuned the same way;
* ``"cart"`` -- a decision tree (scikit-learn defaults, grown fully);
* ``"rf"``   -- a random forest of 100 trees;
* ``"hgb"``  -- scikit-learn's histogram gradient boosting (its defaults, early
  stopping on a held-out tenth above 10,000 rows): the strong baseline an analyst
  would otherwise pick.

At real size (hospital exports of 10^4 - 10^5 rows) the baselines scale
honestly, and the result says how (``settings["scaling"]``, printed under the
table and in the report):

* above :data:`TUNE_MAX_ROWS` training rows the inner grid search of SVM and
  LogReg runs on a stratified random subsample of that many rows; the chosen
  setting is then refitted on the whole training fold;
* above :data:`SVM_EXACT_MAX_ROWS` training rows the SVM's RBF kernel is
  approximated by :class:`~sklearn.kernel_approximation.Nystroem` features
  (:data:`NYSTROEM_COMPONENTS` landmarks) feeding a linear SVM, tuned over the
  same C x gamma grid (an exact kernel SVM is quadratic to cubic in the rows);
* above :data:`RF_MAX_SAMPLES` training rows each tree of the random forest
  grows on a bootstrap sample of that many rows;
* categorical columns are one-hot encoded on their :data:`MAX_LEVELS` most
  frequent levels plus one "other" level (so an ICD code column does not turn
  into hundreds of columns).

Below these sizes nothing changes (the paper's data sets are all below them).

The baselines need numbers: numeric columns are imputed with the training
fold's median (and standardised for SVM and logistic regression), categorical
columns are imputed with the most frequent category and one-hot encoded -- all
inside a :class:`~sklearn.pipeline.Pipeline` fitted on the training fold only.

Everything the run produced is kept in a frozen :class:`EvaluationResult`:
per method and fold the test rows, their outcomes and scores, the ROC curve,
the AUROC, the fit time, the FRL list (length, rules, mined candidates) and
its per-rule calibration on the test fold.  It serialises to JSON
(:meth:`EvaluationResult.to_dict` / :meth:`EvaluationResult.from_dict`) and
knows nothing about plotting; :mod:`frl_engine.figures` draws it.

Randomness: the fold split and every (method, fold) fit get their own seed,
derived from ``random_state`` by :class:`numpy.random.SeedSequence` with a
spawn key naming the method and the fold.  No global state is used, so the
numbers do not depend on ``n_jobs``, on the order the tasks run in, or on
which other methods are evaluated alongside.
"""

from __future__ import annotations

import math
import numbers
import time
from collections import Counter

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from ..errors import FRLError, quiet_possible_leak
from ..folds import fit_seed, patient_groups, split_seed, stratified_folds
from ..io import to_jsonable
from ..stopping import CancelToken, run_tasks
from ..cv_result import (  # noqa: F401  (kept importable from here)
    CV_DESCRIPTION, METHOD_NAMES, METHODS, PAPER_METHODS, RESULT_FORMAT, RESULT_FORMAT_VERSION, CalibrationBin,
    EvaluationResult, FoldResult, MethodSummary, frl_fold_result)

__all__ = [
    "METHODS", "METHOD_NAMES", "SVM_GRID", "LOGREG_GRID", "INNER_FOLDS", "RF_TREES", "RESULT_FORMAT",
    "CalibrationBin", "FoldResult", "MethodSummary", "EvaluationResult", "cross_validate_models",
    "check_methods", "method_seed", "split_seed", "mean_roc_curve", "PAPER_METHODS", "TUNE_MAX_ROWS",
    "SVM_EXACT_MAX_ROWS", "NYSTROEM_COMPONENTS", "RF_MAX_SAMPLES", "MAX_LEVELS",
]

METHOD_DESCRIPTIONS = {
    "frl": "falling rule list (MAP by simulated annealing) on the raw table",
    "svm": "SVM, RBF kernel; C x gamma by grid search in nested 3-fold CV",
    "logreg": "L2 logistic regression; C by grid search in nested 3-fold CV",
    "cart": "CART decision tree (scikit-learn defaults)",
    "rf": "random forest, 100 trees",
    "hgb": "histogram gradient boosting (scikit-learn defaults)",
}
SVM_GRID = {"C": (0.1, 1.0, 10.0), "gamma": ("scale", 0.01, 0.1)}
LOGREG_GRID = {"C": (0.01, 0.1, 1.0, 10.0, 100.0)}
#: CART's smallest leaf, tuned as SVM and LogReg are: a fully grown tree (scikit-learn's default) overfits a noisy
#: clinical outcome (AUROC .54 on the raw export) and made FRL's comparison flatter it; R's rpart, which the
#: paper's CART was, stops at leaves of 7 and prunes.
CART_GRID = {"min_samples_leaf": (1, 5, 20, 50, 100)}
INNER_FOLDS = 3
RF_TREES = 100
TUNE_MAX_ROWS = 5_000
SVM_EXACT_MAX_ROWS = 10_000
NYSTROEM_COMPONENTS = 300
RF_MAX_SAMPLES = 10_000
MAX_LEVELS = 20
MISSING_LEVEL = "(missing)"  # a missing category is a level of its own for the baselines
#: A column of code lists gives the baselines a yes/no column for each of this many of its most frequent codes.
BASELINE_LIST_CODES = 50
#: Cell values that mean "missing" in hospital exports (besides empty cells), compared after stripping blanks.
BASELINE_PREPROCESSING = ("columns read as the falling rule list reads them (missing markers, kinds; identifiers "
                          "and near-constant columns left out); numeric columns: median imputation (+ standardisation for SVM and LogReg; HGB keeps "
                          "missing values as such); categorical columns: missing as a level of its own + one-hot of the "
                          f"{MAX_LEVELS} most frequent levels (the rest as one 'other' level); a column of code "
                          f"lists: a yes/no column for each of its {BASELINE_LIST_CODES} most frequent codes; fitted "
                          "on each training fold only")


def mean_roc_curve(fold_results, n_points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The mean ROC curve over folds: TPR averaged on a common FPR grid.

    Each fold's curve is read right-continuously (at an FPR where the curve
    rises vertically, the top of the rise) and linearly between its points;
    the mean curve starts at (0, 0).  Returns ``(fpr, tpr)``.
    """
    grid = np.linspace(0.0, 1.0, n_points)
    curves = []
    for f in fold_results:
        fpr, tpr = np.asarray(f.fpr, dtype=float), np.asarray(f.tpr, dtype=float)
        i = np.clip(np.searchsorted(fpr, grid, side="right") - 1, 0, len(fpr) - 1)
        j = np.minimum(i + 1, len(fpr) - 1)
        span = fpr[j] - fpr[i]
        weight = np.where(span > 0, (grid - fpr[i]) / np.where(span > 0, span, 1.0), 0.0)
        curves.append(tpr[i] + weight * (tpr[j] - tpr[i]))
    if not curves:
        return np.array([0.0, 1.0]), np.array([0.0, 1.0])
    mean = np.mean(curves, axis=0)
    return np.concatenate([[0.0], grid]), np.concatenate([[0.0], mean])


# ---------------------------------------------------------------------------------------------- checks and seeds
def check_methods(methods) -> tuple[str, ...]:
    """Methods as a tuple of known names; accepts ``"frl,svm"`` or a sequence.  Unknown names -> FRLError."""
    if isinstance(methods, str):
        methods = [m for m in methods.split(",")]
    try:
        names = [str(m).strip().lower() for m in methods]
    except TypeError:
        raise FRLError(f"methods must be a list of names from {', '.join(METHODS)}, got {methods!r}") from None
    names = [m for m in names if m]
    if not names:
        raise FRLError(f"No method to evaluate: choose from {', '.join(METHODS)}")
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise FRLError(f"Unknown method{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: "
                       f"choose from {', '.join(METHODS)}")
    return tuple(dict.fromkeys(names))


def _check_random_state(random_state) -> int:
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise FRLError(f"random_state must be a whole number >= 0 (or None), got {random_state!r}")
    return int(random_state)


def method_seed(random_state: int, method: str, fold: int) -> int:
    """The seed of ``method`` on ``fold``: independent of the other methods, folds and of ``n_jobs``."""
    return fit_seed(random_state, METHODS.index(method), fold)


def _check_y(y_event, n_rows: int) -> np.ndarray:
    y = np.asarray(y_event)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise FRLError(f"y_event must be one value per row, got an array of shape {y.shape}")
    if len(y) != n_rows:
        raise FRLError(f"y_event has {len(y)} values but X has {n_rows} rows: they must match")
    if y.dtype != bool:
        values = set(pd.unique(pd.Series(y, dtype=object)).tolist())
        if not values <= {0, 1, True, False} or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
            shown = ", ".join(sorted(map(repr, values))[:6])
            raise FRLError(f"y_event must be true/false (the event) for each row, got values {shown}: "
                           "turn the outcome into an event with frl_engine.io.split_target")
        y = y.astype(bool)
    return y


def _check_folds(n_folds, y: np.ndarray) -> int:
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral):
        raise FRLError(f"The number of folds must be a whole number, got {n_folds!r}")
    if n_folds < 2:
        raise FRLError(f"Cross-validation needs at least 2 folds, got {n_folds}")
    n_events, n_rest = int(y.sum()), int((~y).sum())
    minority = min(n_events, n_rest)
    if n_folds > minority:
        which = ("event" if n_events <= n_rest else "non-event") + ("s" if minority != 1 else "")
        raise FRLError(f"{n_folds} folds need at least {n_folds} events and {n_folds} non-events, but the data has "
                       f"only {minority} {which}: use at most {minority} folds" if minority >= 2 else
                       f"{n_folds} folds need at least {n_folds} events and {n_folds} non-events, but the data has "
                       f"only {minority} {which}: cross-validation is impossible")
    return int(n_folds)


def _frl_params(frl_params) -> dict:
    from ..estimator import FallingRuleListClassifier

    params = dict(frl_params or {})
    known = set(FallingRuleListClassifier().get_params())
    unknown = sorted(set(params) - known)
    if unknown:
        raise FRLError(f"Unknown FRL setting{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: "
                       f"use FallingRuleListClassifier's parameters ({', '.join(sorted(known))})")
    for name in ("random_state", "n_jobs", "positive_class"):
        params.pop(name, None)  # set per fold / fixed: the event is y_event == True
    return params


# ---------------------------------------------------------------------------------------------- models
def _baseline_frame(X: pd.DataFrame, column_kinds: dict | None = None,
                    exclude=()) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The columns the baselines use: float (numeric, yes/no; NaN if missing) or integer level labels (categories).

    Each column is read as the falling rule list reads it (:func:`frl_engine.columns.read_columns`,
    with the same ``column_kinds`` and ``exclude``): missing markers such as ``?`` are missing, age
    bands are numbers, integer codes are labels (missing is a level of its own); identifiers,
    (near-)constant, empty and date columns are left out.  A type conversion only; nothing is learned from the data here.
    """
    from ..columns import boolean_values, listed_codes, missing_mask, numeric_values, read_columns

    out = {}
    numeric, categorical = [], []
    for reading, column in zip(read_columns(X, column_kinds=column_kinds, exclude=exclude), X.columns):
        series = X[column]
        name = str(column)
        if reading.kind == "numeric":
            out[name] = numeric_values(series, name)
            numeric.append(name)
        elif reading.kind == "boolean":
            values = boolean_values(series, name).astype(float)
            values[missing_mask(series)] = np.nan
            out[name] = values
            numeric.append(name)
        elif reading.kind == "code list":
            # A list is no level (few patients share one whole list): a yes/no column per frequent code instead,
            # the codes chosen by how many patients have them (the outcome is not looked at).
            missing = missing_mask(series)
            lists = [() if gone else listed_codes(v) for v, gone in zip(series, missing)]
            counts = Counter(code for codes in lists for code in codes)
            for code, _ in counts.most_common(BASELINE_LIST_CODES):
                column_name = f"{name} includes {code}"
                out[column_name] = np.array([code in codes for codes in lists], dtype=float)
                out[column_name][missing] = np.nan
                numeric.append(column_name)
        elif reading.kind in ("categorical", "code", "nominal"):
            missing = missing_mask(series)
            labels = series.astype(str).str.strip().astype(object)
            labels[missing] = MISSING_LEVEL
            # Integer labels of the levels (a renaming, nothing learned): one-hot encoding integers is many
            # times faster than encoding text, and the encoder still learns the frequent levels per fold.
            out[name] = pd.factorize(labels)[0]
            categorical.append(name)
    return pd.DataFrame(out, index=X.index), numeric, categorical


class RBFFeatures(TransformerMixin, BaseEstimator):
    """Nystroem features of an RBF kernel whose ``gamma`` may be ``"scale"`` (as SVC's: 1 / (n_features * var))."""

    def __init__(self, gamma="scale", n_components=NYSTROEM_COMPONENTS, random_state=None):
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X, y=None):  # noqa: ARG002
        from sklearn.kernel_approximation import Nystroem

        X = np.asarray(X, dtype=float)
        gamma = self.gamma
        if isinstance(gamma, str):
            variance = float(X.var())
            gamma = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
        self.gamma_ = float(gamma)
        self.nystroem_ = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=min(self.n_components, len(X)),
                                  random_state=self.random_state).fit(X)
        return self

    def transform(self, X):
        return self.nystroem_.transform(np.asarray(X, dtype=float))

    def fit_transform(self, X, y=None):
        return self.fit(X, y).transform(X)


def scaling_notes(methods, n_train: int) -> list[str]:
    """What the baselines do differently at this training-fold size (empty below every threshold)."""
    notes = []
    if n_train > TUNE_MAX_ROWS and any(m in methods for m in ("svm", "logreg")):
        notes.append(f"SVM and LogReg settings chosen by the inner grid search on a stratified random subsample of "
                     f"{TUNE_MAX_ROWS:,} of the {n_train:,} training rows, then refitted on all of them")
    if n_train > SVM_EXACT_MAX_ROWS and "svm" in methods:
        notes.append(f"SVM: RBF kernel approximated by {NYSTROEM_COMPONENTS} Nystroem features + a linear SVM "
                     f"(an exact kernel SVM does not scale beyond about {SVM_EXACT_MAX_ROWS:,} rows)")
    if n_train > RF_MAX_SAMPLES and "rf" in methods:
        notes.append(f"RF: each tree grown on a bootstrap sample of {RF_MAX_SAMPLES:,} rows")
    return notes


def _baseline_model(method: str, numeric: list[str], categorical: list[str], seed: int, n_train: int = 0):
    """The (unfitted) pipeline of a baseline and its tuning grid (None when it has none)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
    from sklearn.svm import SVC, LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    transformers = []
    if method == "hgb":  # missing values and categories handled natively
        if numeric:
            transformers.append(("numeric", "passthrough", numeric))
        if categorical:
            transformers.append(("categorical", OrdinalEncoder(
                handle_unknown="use_encoded_value", unknown_value=np.nan, max_categories=250), categorical))
        prepare = ColumnTransformer(transformers, remainder="drop")
        n_numeric = len(numeric)
        model = HistGradientBoostingClassifier(
            categorical_features=[n_numeric + i for i in range(len(categorical))] or None, random_state=seed)
        return Pipeline([("prepare", prepare), ("model", model)]), None
    scale = method in ("svm", "logreg")
    numeric_steps = [("impute", SimpleImputer(strategy="median"))] + ([("scale", StandardScaler())] if scale else [])
    if numeric:
        transformers.append(("numeric", Pipeline(numeric_steps), numeric))
    if categorical:
        transformers.append(("categorical", OneHotEncoder(handle_unknown="infrequent_if_exist",
                                                          max_categories=MAX_LEVELS + 1, sparse_output=False),
                             categorical))
    prepare = ColumnTransformer(transformers, remainder="drop")
    if method == "svm" and n_train > SVM_EXACT_MAX_ROWS:
        steps = [("prepare", prepare), ("rbf", RBFFeatures(random_state=seed)),
                 ("model", LinearSVC(C=1.0, dual=False, random_state=seed, max_iter=5000))]
        grid = {"model__C": list(SVM_GRID["C"]), "rbf__gamma": list(SVM_GRID["gamma"])}
        return Pipeline(steps), grid
    if method == "svm":
        model = SVC(kernel="rbf", random_state=seed)
        grid = {f"model__{k}": list(v) for k, v in SVM_GRID.items()}
    elif method == "logreg":
        model = LogisticRegression(C=1.0, max_iter=5000, random_state=seed)
        grid = {f"model__{k}": list(v) for k, v in LOGREG_GRID.items()}
    elif method == "cart":
        model = DecisionTreeClassifier(random_state=seed)
        grid = {f"model__{k}": list(v) for k, v in CART_GRID.items()}
    elif method == "rf":
        model, grid = RandomForestClassifier(n_estimators=RF_TREES, random_state=seed, n_jobs=1,
                                             max_samples=RF_MAX_SAMPLES if n_train > RF_MAX_SAMPLES else None), None
    else:  # pragma: no cover - checked before
        raise FRLError(f"Unknown method {method!r}")
    return Pipeline([("prepare", prepare), ("model", model)]), grid


def _fit_baseline(method: str, numeric, categorical, seed: int, X: pd.DataFrame, y: np.ndarray):
    """Fit a baseline on a training fold (tuning its grid by inner CV); returns ``(model, best_params)``."""
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

    import tempfile

    from joblib import Memory

    pipeline, grid = _baseline_model(method, numeric, categorical, seed, len(y))
    # the inner folds are stratified: a training fold with 2 events tunes on 2 inner folds, with 1 not at all (its
    # grid's defaults), where GridSearchCV stopped the whole evaluation with a traceback
    rows = np.arange(len(y))
    if grid is not None and len(y) > TUNE_MAX_ROWS:
        rows = np.sort(train_test_split(rows, train_size=TUNE_MAX_ROWS, stratify=y, random_state=seed)[0])
    fewest = int(min(np.sum(y[rows]), len(rows) - np.sum(y[rows])))
    if grid is None or fewest < 2:
        return pipeline.fit(X, y), {}
    inner = StratifiedKFold(min(INNER_FOLDS, fewest), shuffle=True, random_state=seed)
    with tempfile.TemporaryDirectory(prefix="frl-grid-") as cache:
        # The grid points of one inner fold share its preprocessing (fitted once, on that fold only).
        cached = clone(pipeline).set_params(memory=Memory(cache, verbose=0))
        search = GridSearchCV(cached, grid, scoring="roc_auc", cv=inner, n_jobs=1, refit=False, error_score="raise")
        search.fit(X.iloc[rows], y[rows])
    best = dict(search.best_params_)
    model = clone(pipeline).set_params(**best).fit(X, y)
    return model, best


def _scores(model, X) -> np.ndarray:
    classes = list(model.classes_)
    return np.asarray(model.predict_proba(X)[:, classes.index(True)], dtype=float)


def _run_fold(shared, method: str, fold: int, seed: int, frl_params: dict) -> FoldResult:
    """One method on one fold; ``shared`` = (X, X_numeric, numeric, categorical, y, splits), sent once per worker."""
    import warnings

    from sklearn.metrics import roc_auc_score, roc_curve

    X, X_numeric, numeric, categorical, y, splits = shared
    train, test = splits[fold]
    if method == "frl":
        from ..estimator import FallingRuleListClassifier

        model = FallingRuleListClassifier(**frl_params, random_state=seed, n_jobs=1, positive_class=True)
        started = time.perf_counter()
        with quiet_possible_leak():
            model.fit(X.iloc[train], y[train])
        return frl_fold_result(model, X.iloc[test], y[test], fold=fold, seed=seed, test_index=test,
                               fit_seconds=time.perf_counter() - started)
    extra = {}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # e.g. all-missing column dropped by the imputer
        warnings.simplefilter("ignore", category=FutureWarning)
        model, best = _fit_baseline(method, numeric, categorical, seed, X_numeric.iloc[train], y[train])
    fit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    if method == "svm":
        scores = np.asarray(model.decision_function(X_numeric.iloc[test]), dtype=float)
    else:
        scores = _scores(model, X_numeric.iloc[test])
    predict_seconds = time.perf_counter() - started
    if best:
        extra["best_params"] = {k.split("__", 1)[1]: to_jsonable(v) for k, v in best.items()}
    y_test = y[test]
    fpr, tpr, _ = roc_curve(y_test, scores)
    return FoldResult(
        method=method, fold=fold, seed=seed, test_index=tuple(int(i) for i in test),
        y_true=tuple(bool(v) for v in y_test), scores=tuple(float(s) for s in scores),
        fpr=tuple(float(v) for v in fpr), tpr=tuple(float(v) for v in tpr),
        auroc=float(roc_auc_score(y_test, scores)), fit_seconds=float(fit_seconds),
        predict_seconds=float(predict_seconds), **extra,
    )


# Rough relative cost, so the slow tasks start first and two workers stay busy.
_COST = {"svm": 0, "rf": 1, "frl": 2, "logreg": 3, "cart": 4, "hgb": 5}


def check_table(X, purpose: str) -> pd.DataFrame:
    """X as a DataFrame with a fresh 0..n-1 index and text column names (arrays get x0, x1, ...)."""
    if not isinstance(X, pd.DataFrame):
        array = np.asarray(X)
        if array.ndim != 2:
            raise FRLError(f"X must be a table (rows x columns), got an array of shape {array.shape}")
        X = pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise FRLError(f"X has {X.shape[0]} rows and {X.shape[1]} columns: {purpose} needs both")
    X = X.reset_index(drop=True)
    X.columns = [str(c) for c in X.columns]
    return X


def patient_folds(X: pd.DataFrame, y: np.ndarray, n_folds: int, random_state: int):
    """``(splits, grouped_by)``: the stratified folds, with every encounter of one patient in one fold when
    ``X`` numbers its patients (:func:`frl_engine.folds.patient_groups`; ``grouped_by`` names that column)."""
    grouped = patient_groups(X)
    splits = stratified_folds(y, n_folds, random_state, None if grouped is None else grouped[1])
    return splits, (None if grouped is None else grouped[0])


def _run_settings(methods, splits, random_state: int, numeric, categorical, grouped_by: str | None = None) -> dict:
    """The ``settings`` block of an :class:`EvaluationResult`: grids, sizes, scaling notes, the split seed."""
    return {
        "split_seed": split_seed(random_state),
        **({"grouped_by": grouped_by} if grouped_by else {}),
        "svm_grid": {k: list(v) for k, v in SVM_GRID.items()},
        "logreg_grid": {k: list(v) for k, v in LOGREG_GRID.items()},
        "cart_grid": {k: list(v) for k, v in CART_GRID.items()},
        "inner_folds": INNER_FOLDS, "inner_scoring": "roc_auc", "rf_trees": RF_TREES,
        "baseline_preprocessing": BASELINE_PREPROCESSING,
        "numeric_columns": numeric, "categorical_columns": categorical,
        "scaling": scaling_notes(methods, max(len(train) for train, _ in splits)),
        "tune_max_rows": TUNE_MAX_ROWS, "svm_exact_max_rows": SVM_EXACT_MAX_ROWS,
        "nystroem_components": NYSTROEM_COMPONENTS, "rf_max_samples": RF_MAX_SAMPLES, "max_levels": MAX_LEVELS,
    }


def cross_validate_models(X, y_event, *, n_folds: int = 5, methods=METHODS, frl_params: dict | None = None,
                          random_state: int | None = 0, n_jobs: int | None = None,
                          dataset: str | None = None, progress=None,
                          cancel: CancelToken | None = None) -> EvaluationResult:
    """Stratified k-fold cross-validation of FRL and the paper's baselines.

    Parameters
    ----------
    X : DataFrame
        The raw features (FRL uses them as they are; the baselines get an
        imputed, one-hot encoded and, for SVM/LogReg, standardised copy,
        prepared on each training fold).  An array is given names x0, x1, ...
    y_event : array of bool
        The event for each row (e.g. from :func:`frl_engine.io.split_target`).
    n_folds : int, default 5
        At least 2 and at most the number of rows of the rarer outcome.
    methods : sequence of str or "frl,svm,..."
        Any of ``"frl"``, ``"svm"``, ``"logreg"``, ``"cart"``, ``"rf"``, ``"hgb"``.
    frl_params : dict, optional
        Settings of :class:`~frl_engine.estimator.FallingRuleListClassifier`
        (e.g. ``{"n_steps": 5000, "thresholds": {"Age": [45, 60]}}``); the seed
        is set per fold.
    random_state : int or None, default 0
        Seed of the fold split and of every fit (None: drawn once and recorded).
    n_jobs : int or None
        Worker processes over (method, fold) tasks (None = 1, in this process;
        -1 = all cores).  The numbers do not depend on it.
    dataset : str, optional
        A name for the data, kept in the result.
    progress : callable, optional
        ``progress(done, total)`` is called in this process each time a
        (method, fold) fit finishes, for a progress bar.  It does not change the numbers.
    cancel : CancelToken, optional
        Stops the run between fits and kills its workers when cancelled
        (:mod:`frl_engine.stopping`); :class:`~frl_engine.stopping.Stopped` is raised.

    Returns
    -------
    EvaluationResult
    """

    started = time.perf_counter()
    methods = check_methods(methods)
    X = check_table(X, "cross-validation")
    y = _check_y(y_event, len(X))
    n_folds = _check_folds(n_folds, y)
    from ..estimator import FallingRuleListClassifier

    FallingRuleListClassifier._warn_repeated_records(X)   # once for the table: the folds' fits do not repeat it
    params = _frl_params(frl_params) if "frl" in methods else to_jsonable(dict(frl_params or {}))
    random_state = _check_random_state(random_state)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise FRLError(f"n_jobs must be a whole number other than 0 (-1: all cores), got {n_jobs!r}")

    splits, grouped_by = patient_folds(X, y, n_folds, random_state)
    needs_baseline = any(m != "frl" for m in methods)
    X_numeric, numeric, categorical = (_baseline_frame(X, params.get("column_kinds"), params.get("exclude") or ())
                                       if needs_baseline else (None, [], []))
    if needs_baseline and not numeric and not categorical:
        raise FRLError("X has no usable column for the baselines")

    tasks = [(m, k) for m in methods for k in range(n_folds)]
    ordered = sorted(tasks, key=lambda t: (_COST[t[0]], t[1]))
    outputs = run_tasks(_run_fold, [(m, k, method_seed(random_state, m, k), params) for m, k in ordered],
                        shared=(X, X_numeric, numeric, categorical, y, splits), n_jobs=n_jobs, token=cancel,
                        on_done=progress)
    by_task = {(f.method, f.fold): f for f in outputs}
    folds = tuple(by_task[t] for t in tasks)
    settings = _run_settings(methods, splits, random_state, numeric, categorical, grouped_by)
    return EvaluationResult(
        methods=methods, n_folds=n_folds, random_state=random_state, n_rows=int(len(y)), n_positive=int(y.sum()),
        folds=folds, frl_params=to_jsonable(params), settings=settings, dataset=dataset,
        feature_names=tuple(X.columns), elapsed_seconds=float(time.perf_counter() - started),
    )

