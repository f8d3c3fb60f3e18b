"""``FallingRuleListClassifier``: the scikit-learn face of the engine.

``fit`` turns a raw clinical table into readable items (:mod:`.binarize`),
mines candidate rules (:mod:`.rules`), packs them (:mod:`.bits`) and searches
for the MAP falling rule list by simulated annealing (:mod:`.anneal`) with the
exact inner maximisation of :mod:`.model`.  The estimator is the one mutable
object; everything it returns is plain data.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .anneal import COOLING_SCHEDULES, anneal
from .binarize import Binarizer, ColumnSpec
from .columns import empty_recorded_codes, recorded_codes
from .cv_result import CrossValidatedAUROC, frl_fold_result
from .errors import DataError, FRLError, ModelFileError, quiet_possible_leak
from .io import (MODEL_FORMAT, MODEL_FORMAT_VERSION, check_model_dict, default_positive, dumps_model, load_model_dict,
                 rows_as_written_hashes, rows_fingerprint, rows_text_fingerprint, save_model, to_jsonable)
from .io import event_label as event_text, event_values
from .training_rows import finding_columns, rows_alike, sample_training_rows
from .model import Hyperparameters, PackedProblem, drop_unreached_rules, fit_list
from .mining import mine_packed, rules_from_boolean_columns
from .rules import Rule
from .seeds import check_seed, fixed_seed
from .siblings import condition_ids
from .terminal import display_width, pad_right
from .wording import simplest_wording


def _check_number(name, value, *, low=None, high=None, integer=False, low_open=False):
    kinds = (numbers.Integral,) if integer else (numbers.Real,)
    if isinstance(value, bool) or not isinstance(value, kinds) or not np.isfinite(value):
        raise FRLError(f"{name} must be {'a whole number' if integer else 'a number'}, got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise FRLError(f"{name} must be {'greater than' if low_open else 'at least'} {low}, got {value!r}")
    if high is not None and value > high:
        raise FRLError(f"{name} must be at most {high}, got {value!r}")


#: A condition of the list that alone tells the training outcome this well (sensitivity + specificity - 1,
#: Youden's J) is reported as a possible copy of the outcome.  No condition of the UCI sets reaches 0.82
#: (breast cancer's cell size: 0.81); a follow-up code recorded after readmission reaches 0.93.
PROXY_YOUDEN = 0.9


def outcome_proxies(frame: pd.DataFrame, event: np.ndarray, rules) -> list[dict]:
    """The list's conditions that alone nearly are the outcome on the training rows: Youden's J at least
    :data:`PROXY_YOUDEN`, as ``{"condition", "column", "youden"}``, strongest first.

    A list can still separate the outcome imperfectly when it uses such a column, so the AUROC test of
    :func:`frl_engine.search_report.leakage_note` misses it; this names it.
    """
    event = np.asarray(event, dtype=bool)
    if event.all() or not event.any():
        return []
    found = {}
    for rule in rules:
        for condition in rule.conditions:
            if condition.name in found:
                continue
            try:
                hits = np.asarray(condition.evaluate(frame), dtype=bool)
            except (DataError, KeyError, ValueError):
                continue
            youden = float(hits[event].mean() + (~hits[~event]).mean() - 1)
            found[condition.name] = {"condition": condition.name, "column": condition.column,
                                     "youden": round(abs(youden), 3)}
    # Whether a column has a value at all can be the leak: a lab drawn only once the patient is dying, a
    # follow-up field filled in only after readmission (the list's conditions on its values can each fall short).
    from .columns import missing_mask

    for column in dict.fromkeys(c.column for rule in rules for c in rule.conditions):
        if column not in frame.columns or isinstance(frame[column], pd.DataFrame):
            continue
        recorded = ~np.asarray(missing_mask(frame[column]), dtype=bool)
        if recorded.all() or not recorded.any():
            continue
        youden = float(recorded[event].mean() + (~recorded[~event]).mean() - 1)
        name = f"{column} has a value"
        found[name] = {"condition": name, "column": column, "youden": round(abs(youden), 3)}
    # A number the outcome was cut from (R's birthwt: low is bwt < 2500) shows the leak at its own cut, which the
    # rounded cuts of the list straddle (bwt < 2400, bwt < 3000: neither alone reaches the bar).  A cut no better
    # than "has a value" is that finding again (a lab drawn only for the dying: any value is above its lowest).
    for column in dict.fromkeys(c.column for rule in rules for c in rule.conditions if c.op in (">=", "<")):
        best = _best_cut(frame, column, event)
        recorded = found.get(f"{column} has a value", {}).get("youden", -1.0)
        if best is not None and best["youden"] > recorded + 0.02:
            found.setdefault(best["condition"], best)
    return sorted((p for p in found.values() if p["youden"] >= PROXY_YOUDEN), key=lambda p: -p["youden"])


def _best_cut(frame: pd.DataFrame, column, event: np.ndarray) -> dict | None:
    """The single cut of a numeric ``column`` that best tells ``event`` (largest Youden's J over every threshold of
    its values, either direction; a missing value meets neither side), as an :func:`outcome_proxies` entry, or None
    when the column cannot be read as numbers here."""
    from sklearn.metrics import roc_curve

    from .columns import numeric_values
    from .rules import format_number

    if column not in frame.columns or isinstance(frame[column], pd.DataFrame):
        return None
    try:
        values = numeric_values(frame[column], str(column))
    except (DataError, ValueError, TypeError):
        return None
    present = ~np.isnan(values)
    if present.sum() < 2 or not event[present].any() or event[present].all():
        return None
    fpr, tpr, thresholds = roc_curve(event[present], values[present])
    # as shares of all the events and non-events, so a cut that only the recorded rows meet counts for those
    tpr = tpr * event[present].sum() / event.sum()
    fpr = fpr * (~event[present]).sum() / (~event).sum()
    low_tpr = event[present].sum() / event.sum() - tpr   # value < threshold: the complement among recorded rows
    low_fpr = (~event[present]).sum() / (~event).sum() - fpr
    finite = np.isfinite(thresholds)
    above = np.where(finite, tpr - fpr, -np.inf)
    below = np.where(finite, low_tpr - low_fpr, -np.inf)
    i, j = int(np.argmax(above)), int(np.argmax(below))
    youden, op, cut = (above[i], ">=", thresholds[i]) if above[i] >= below[j] else (below[j], "<", thresholds[j])
    below_cut = values[present & (values < cut)]
    name = f"{column} {op} {format_number(_roundest_cut(float(below_cut.max()) if below_cut.size else None, float(cut)))}"
    return {"condition": name, "column": column, "youden": round(float(youden), 3)}


def _roundest_cut(low: float | None, cut: float) -> float:
    """The roundest number in ``(low, cut]``: a cut that splits the values as ``cut`` does (no value lies between),
    written as a reader would (Epi's births: ``gestwks < 37``, not ``gestwks < 37.0400009155``, a float32 value)."""
    if low is None or not math.isfinite(cut):
        return cut
    for decimals in range(-6, 10):
        scale = 10.0 ** decimals
        candidate = math.floor(cut * scale) / scale
        if low < candidate <= cut:
            return candidate
    return cut


#: Outcome cells that always mean "not known" (compared trimmed and without case); an outcome of two classes may
#: hold other missing markers as a real class ("None" / "Severe").
UNKNOWN_OUTCOME_MARKERS = frozenset({"", "?", "na", "n/a", "nan", "null", "#n/a"})


class FallingRuleListClassifier(ClassifierMixin, BaseEstimator):
    """A falling rule list (Wang & Rudin 2015) fitted by MAP search.

    Parameters
    ----------
    lam : float, default 8
        Prior mean number of rules in the list (``L ~ Poisson(lam)``).
    alpha, beta : float, default 1, 0.1
        Prior ``gamma_l ~ Gamma_1(alpha, beta)`` (shape, rate; truncated to [1, inf)).
    alpha_K, beta_K : float, default 1, 0.1
        Prior ``K ~ Gamma(alpha_K, beta_K)`` (shape, rate).
    min_support : float, default 0.05
        Smallest fraction of rows a mined rule must cover.
    max_conditions : int, default 2
        Most conditions joined by AND in one rule.
    max_rules : int, default 5000
        Most candidate rules searched; when mining finds more, every one-condition
        rule is kept and conjunctions are screened by their evidence for a higher
        risk (:mod:`frl_engine.mining`; ``screening_note_`` says so).
    n_thresholds : int, default 3
        Quantile thresholds per numeric column (rounded to readable numbers).
    thresholds : dict, optional
        Your own thresholds per numeric column, e.g. ``{"Age": [45, 60]}``.
    column_kinds : dict, optional
        Override the inferred kind of a column (:mod:`frl_engine.columns`): "numeric",
        "categorical", "boolean", "code", "nominal", "code list", or "identifier" to leave it out.
    exclude : sequence of str
        Columns not to use.
    mine_rules : bool, default True
        If False, every column of X must be boolean and is one candidate rule as
        is (the paper's simulation setting).
    miner : {"bitset", "fpgrowth"}, default "bitset"
        How rules are mined: our bit-vector intersection (fast), or mlxtend's
        FP-Growth (the reference; the same rules, much slower on dense data).
    rule_weights : array-like, optional
        Prior weight of each candidate rule (eq. pc); equal when None.
    rule_prior : {"mined", "kept"}, default "mined"
        Which set the prior draws each rule from (eq. pc's ``B``) when mining finds more than
        ``max_rules`` rules and screening keeps the strongest.  ``"mined"``: every rule mining found, so a
        rule of the list is one of them a priori (``log |B|`` nats each at equal weights, e.g. log 28,657
        on UCI Spambase, log 3 million on a wide table of labs), and the posterior is the paper's over ``B``
        restricted to the kept rules; ``max_rules`` then only bounds the search's work.  ``"kept"``: the
        kept rules only (``log max_rules`` nats each: what fits did before 2026-11-26, and a rule picked as the
        strongest of millions was charged as one of 5,000).  The same when nothing is screened out.
    n_steps : int, default 5000
        Annealing steps per chain (paper: 5000).
    n_chains : int, default 4
        Independent annealing restarts; the best list wins.
    temperature : float, default 1
        Annealing temperature (paper: constant 1).
    cooling : {"constant", "geometric"}
        Temperature schedule.
    search : {"restarts", "paper"}, default "restarts"
        ``"restarts"``: greedy start, every chain's list polished to a local maximum over its
        whole neighbourhood and improved by basin hopping (tail re-growth), rounds of ``n_chains``
        chains until two agree on the best list and at most a fifth of further chains would be expected to
        end at a list not found yet (at most ``4 * n_chains``, at least 4; docs/search.md).  ``"paper"``: the
        paper's plain annealing, the ``n_chains`` chains asked for and nothing more.
    negate_levels : bool, default True
        Give categorical and nominal columns of 3 to 10 levels "is not" items as well
        (``safety is not low``; :class:`~frl_engine.binarize.Binarizer`).  False: one item per
        level only, as in the paper's experiments (``frl reproduce`` uses False).
    drop_unreached : bool, default True
        Remove from the MAP list any rule that no training patient reaches (support 0: every
        row it covers is caught higher up) and re-fit the risks
        (:func:`~frl_engine.model.drop_unreached_rules`); ``unreached_rules_`` names them.  Such
        a rule changes no prediction on the training patients; the prior of the risks alone
        keeps it.  False: the MAP list as found (``frl reproduce`` uses False).
    random_state : int, numpy Generator, RandomState or None
        Seed; the same seed gives the same list whatever ``n_jobs`` (:func:`frl_engine.seeds.generator`).
        A Generator or a legacy RandomState is drawn from once; the model file then records no seed.
    n_jobs : int or None
        Threads for the chains.

    Attributes
    ----------
    rules_ : list of str
        The list's rules, top first (default excluded); each the candidate with the fewest conditions that
        catches the same training rows at its place (:func:`frl_engine.wording.simplest_wording`), so seeds
        that find the same list print the same rules.
    rule_objects_ : list of Rule
        The same rules as conditions that can be evaluated on new data.
    probabilities_ : ndarray, shape (L+1,)
        Fitted risk of each rule, default last; non-increasing.
    supports_ : ndarray of int, shape (L+1,)
        Training rows each rule captures, default last.
    positives_ : ndarray of int, shape (L+1,)
        Events among them.
    log_posterior_ : float
        The objective of the list (exact maximum over K and the gammas).
    unreached_rules_ : list of str
        Rules of the MAP list that no training patient reached, removed (``drop_unreached``).
    K_, gammas_ : float, ndarray
        MAP parameters.
    classes_ : ndarray
        The two outcome values; ``positive_class_`` is the event.
    codes_read_as_missing_ : dict
        The numbers read as not known in the training table, per column (``{"age": [999.0]}``): those
        :func:`frl_engine.columns.empty_number_codes` emptied before the fit (it records them in the table's
        ``attrs``).  :meth:`apply` and :meth:`predict_proba` read them as not known in new patients too, and the
        model file keeps them (``training.codes_read_as_missing``); ``{}`` when there were none.
    """

    def __init__(self, *, lam=8.0, alpha=1.0, beta=0.1, alpha_K=1.0, beta_K=0.1, min_support=0.05,
                 max_conditions=2, max_rules=5000, n_thresholds=3, thresholds=None, column_kinds=None, exclude=(),
                 mine_rules=True, miner="bitset", rule_weights=None, n_steps=5000, n_chains=4, temperature=1.0, cooling="constant",
                 positive_class=None, random_state=None, n_jobs=None, search="restarts", negate_levels=True,
                 drop_unreached=True, rule_prior="mined"):
        self.lam = lam
        self.alpha = alpha
        self.beta = beta
        self.alpha_K = alpha_K
        self.beta_K = beta_K
        self.min_support = min_support
        self.max_conditions = max_conditions
        self.max_rules = max_rules
        self.n_thresholds = n_thresholds
        self.thresholds = thresholds
        self.column_kinds = column_kinds
        self.exclude = exclude
        self.mine_rules = mine_rules
        self.miner = miner
        self.rule_weights = rule_weights
        self.rule_prior = rule_prior
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.temperature = temperature
        self.cooling = cooling
        self.positive_class = positive_class
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.search = search
        self.negate_levels = negate_levels
        self.drop_unreached = drop_unreached

    # ------------------------------------------------------------------ sklearn plumbing
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags

    def _hyperparameters(self) -> Hyperparameters:
        return Hyperparameters(lam=self.lam, alpha=self.alpha, beta=self.beta, alpha_K=self.alpha_K, beta_K=self.beta_K)

    def _validate_params(self) -> None:
        check_seed(self.random_state)
        _check_number("min_support", self.min_support, low=0, high=1, low_open=True)
        _check_number("max_conditions", self.max_conditions, low=1, integer=True)
        _check_number("max_rules", self.max_rules, low=1, integer=True)
        _check_number("n_steps", self.n_steps, low=0, integer=True)
        _check_number("n_chains", self.n_chains, low=1, integer=True)
        _check_number("n_thresholds", self.n_thresholds, low=1, integer=True)
        _check_number("temperature", self.temperature, low=0, low_open=True)
        if self.rule_prior not in ("mined", "kept"):
            raise FRLError(f"rule_prior must be 'mined' or 'kept', got {self.rule_prior!r}")
        if self.search not in ("restarts", "paper"):
            raise FRLError(f"search must be 'restarts' or 'paper', got {self.search!r}")
        if not isinstance(self.negate_levels, (bool, np.bool_)):
            raise FRLError(f"negate_levels must be True or False, got {self.negate_levels!r}")
        if not isinstance(self.drop_unreached, (bool, np.bool_)):
            raise FRLError(f"drop_unreached must be True or False, got {self.drop_unreached!r}")
        if self.cooling not in COOLING_SCHEDULES:
            raise FRLError(f"cooling must be one of {', '.join(COOLING_SCHEDULES)}, got {self.cooling!r}")

    def _as_frame(self, X, *, fitting: bool) -> pd.DataFrame:
        """X as a DataFrame with string column names; arrays get names x0, x1, ..."""
        if isinstance(X, pd.DataFrame):
            # Text names already (the usual case): the frame as it is; else a renamed view (copy-on-write).
            frame = X if X.columns.inferred_type in ("string", "empty") else X.rename(columns=str)
        else:
            if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
                raise TypeError("Sparse input is not supported: pass a dense array or a DataFrame")
            array = np.asarray(X)
            if array.ndim != 2:
                raise ValueError(
                    f"Expected a 2D array, got {array.ndim}D array instead. Reshape your data "
                    "(array.reshape(-1, 1) for one feature, array.reshape(1, -1) for one sample)"
                )
            if array.dtype.kind == "c":
                raise ValueError("Complex data not supported")
            if array.dtype.kind in "mM":
                raise ValueError(f"Unsupported array dtype {array.dtype}")
            if array.dtype.kind == "O":
                for value in array.ravel():
                    if not isinstance(value, (str, numbers.Number, type(None), np.bool_)):
                        raise TypeError(f"argument must be a string or a real number, not {type(value).__name__}")
            elif array.dtype.kind in "fi" and np.isinf(array).any():
                raise ValueError("Input X contains infinity: replace it with a finite value or leave the cell empty")
            names = getattr(self, "feature_names_in_", None) if not fitting else None
            if names is None or len(names) != array.shape[1]:
                names = [f"x{i}" for i in range(array.shape[1])]
            frame = pd.DataFrame(array.copy(), columns=names)
        if frame.shape[0] == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape={frame.shape}) while a minimum of 1 is required.")
        if frame.shape[1] == 0:
            raise ValueError(f"Found array with 0 feature(s) (shape={frame.shape}) while a minimum of 1 is required.")
        if not fitting:
            if frame.shape[1] != self.n_features_in_ and not isinstance(X, pd.DataFrame):
                raise ValueError(f"X has {frame.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input.")
            if isinstance(X, pd.DataFrame):
                missing = [c for c in self.used_columns_ if c not in frame.columns]
                positional = [f"x{i}" for i in range(self.n_features_in_)]
                fitted_names = getattr(self, "feature_names_in_", None)
                if missing and frame.shape[1] == self.n_features_in_ and (
                        fitted_names is None or list(fitted_names) == positional):
                    # fitted on an array: its columns are read by position, as scikit-learn does (with a warning)
                    warnings.warn(f"X's column names are not the model's (x0, x1, ...: it was fitted on an array): "
                                  "the columns are read by position (x0 is the first)", UserWarning, stacklevel=3)
                    frame = frame.set_axis(positional, axis=1)
                    missing = []
                if missing:   # the same names with accents written another way (NFD, from macOS): the same columns
                    import unicodedata

                    spelled = {unicodedata.normalize("NFC", c): c for c in self.used_columns_}
                    renamed = {c: spelled[unicodedata.normalize("NFC", c)] for c in frame.columns
                               if c not in self.used_columns_ and unicodedata.normalize("NFC", c) in spelled}
                    if renamed:
                        frame = frame.rename(columns=renamed)
                        missing = [c for c in self.used_columns_ if c not in frame.columns]
                if missing:
                    raise DataError(f"The data lacks column(s) the model uses: {', '.join(map(repr, missing))}: add them (with these names; extra columns are ignored)")
            # numbers that were codes for not known at fit time (codes_read_as_missing_) are read so again
            recorded = {column: codes for column, codes in (getattr(self, "codes_read_as_missing_", None) or {}).items()
                        if column in self.used_columns_}
            if recorded:
                frame, _ = empty_recorded_codes(frame, recorded)
        return frame

    # ------------------------------------------------------------------ fitting
    def _read_outcome(self, y, n_rows: int):
        """``(y as an array, its two classes, the event class)``, or a clear error.

        The event is ``positive_class`` (text matched without case or surrounding spaces, as the
        command line reads it) or, by default, a yes/true/1-like value or else the larger value.
        An outcome cell that is a missing marker (``?``, ``NA``) is refused as missing, not read as
        a third class; text mixed with numbers (``"Died"`` and ``0``) is refused by name.
        """
        from .columns import is_missing_marker

        y_array = np.asarray(y)
        if y_array.ndim != 1:
            y_array = column_or_1d(y_array, warn=True)
        if len(y_array) != n_rows:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n_rows}, {len(y_array)}]")
        if y_array.dtype.kind in "OUS":
            values = pd.unique(pd.Series(y_array, dtype=object))
            marked = [v for v in values if isinstance(v, str) and is_missing_marker(v)]
            # "?", "NA", blank always mean not known; "None", "-" may be a real class ("None" / "Severe")
            # and are refused only when they would be a third class
            if marked and len(values) <= 2:
                marked = [v for v in marked if v.strip().casefold() in UNKNOWN_OUTCOME_MARKERS]
            if marked:
                n = int(pd.Series(y_array, dtype=object).isin(marked).sum())
                raise ValueError(f"Input y holds {', '.join(map(repr, marked))} ({n:,} row{'s' if n != 1 else ''}), "
                                 "a marker of a missing outcome: remove the rows whose outcome is missing")
            texts = [v for v in values if isinstance(v, str)]
            others = [v for v in values if not isinstance(v, str) and not pd.isna(v)]
            if texts and others:
                raise ValueError(f"Input y mixes text and numbers ({_plain(texts[0])!r} and {_plain(others[0])!r}): "
                                 "give the outcome as one type, e.g. y.astype(str)")
        if (y_array.dtype.kind == "f" and np.isnan(y_array).any()) or (
                y_array.dtype.kind not in "biuf" and pd.isna(pd.Series(y_array, dtype=object)).any()):
            raise ValueError("Input y contains NaN: remove the rows whose outcome is missing")
        target_type = "binary" if y_array.dtype == bool else type_of_target(y_array)
        if target_type in ("continuous", "continuous-multioutput", "multilabel-indicator", "multiclass-multioutput"):
            raise ValueError(f"Unknown label type: {target_type}. A falling rule list needs a two-valued outcome.")
        if y_array.dtype == bool:  # no sort for the common case of an event vector
            classes = np.array([False, True])[[not y_array.all(), bool(y_array.any())]]
        else:
            classes = np.unique(y_array)
        if len(classes) < 2:
            raise ValueError(f"The outcome has only one class ({classes[0]!r}); a falling rule list needs two classes.")
        if len(classes) > 2 and self.positive_class is not None:
            return self._event_against_the_rest(y_array, classes)
        if len(classes) > 2:
            shown = ", ".join(repr(_plain(c)) for c in classes[:2])
            raise ValueError(f"The outcome has {len(classes)} classes; a falling rule list needs exactly two: "
                             f"name the event, FallingRuleListClassifier(positive_class={shown.split(', ')[0]}) (that "
                             f"value against all others; a list of values for an event of any of them), or binarise "
                             f"it, e.g. numpy.isin(y, [{shown}]). Only binary classification is supported.")
        positive = self.positive_class if self.positive_class is not None else default_positive(classes)
        if positive not in list(classes):
            # "yes" for an outcome written "Yes": the same value, as split_target and the command line read it
            same = [c for c in classes if isinstance(c, str) and isinstance(positive, str)
                    and c.strip().casefold() == positive.strip().casefold()]
            if len(same) != 1:
                raise DataError(f"positive_class {positive!r} is not one of the outcome values {list(classes)!r}")
            positive = same[0]
        return y_array, classes, positive

    def _event_against_the_rest(self, y_array, classes):
        """An outcome of three or more values, read as ``positive_class`` against all the others.

        ``positive_class`` is one value or a list of values (any of them is the event), each matched
        as :func:`~frl_engine.io.split_target` and the command line's ``--positive`` match it: the
        same value, the same text trimmed and without case, or the same number.  The two classes are
        then ``["not <event>", "<event>"]`` (``"<30 or >30"`` for several values), as the model file
        written by ``frl fit --positive`` names them.
        """
        from .io import _matching_value

        wanted = event_values(self.positive_class)
        values = list(classes)
        found = [_matching_value(values, v) for v in wanted]
        missing = [v for v, k in zip(wanted, found) if k is None]
        if missing:
            raise DataError(f"positive_class {' and '.join(repr(_plain(v)) for v in missing)} is not one of the "
                            f"outcome values {[_plain(c) for c in values]!r}")
        matches = list(dict.fromkeys(found))
        event = pd.Series(y_array, dtype=object).isin(matches).to_numpy()
        if event.all():
            raise DataError(f"Every row's outcome is one of {[_plain(c) for c in matches]!r}: with all of them as "
                            "the event no patient is without it; leave one out of positive_class")
        label = _plain(matches[0]) if len(matches) == 1 else event_text([_plain(c) for c in matches])
        rest = f"not {label}"
        return (np.where(event, np.array(label, dtype=object), np.array(rest, dtype=object)).astype(object),
                np.array([rest, label], dtype=object), label)

    def fit(self, X, y, *, progress=None):
        """Find the MAP falling rule list for outcome ``y`` on table ``X``.

        Parameters
        ----------
        X : DataFrame or array-like, shape (n_samples, n_features)
            Raw columns (numeric, categorical, boolean); missing values allowed.
        y : array-like, shape (n_samples,)
            Two-valued outcome; the event is ``positive_class`` or, by default,
            a yes/true/1-like value or else the larger of the two values.  An outcome of
            three or more values (``Alive`` / ``Dead`` / ``Transplant``) needs
            ``positive_class``: that value (or any of a list of values) against all others,
            with ``classes_`` then ``["not Dead", "Dead"]``.
        progress : callable or None
            Told one line of text as each stage starts (reading the columns, each round of search
            chains, each walk of the posterior); it never changes the result.
        """
        self._validate_params()
        frame = self._as_frame(X, fitting=True)
        self._warn_repeated_records(X)
        y_array, classes, positive = self._read_outcome(y, len(frame))
        self.classes_ = classes
        if (isinstance(X, pd.DataFrame) and isinstance(y, pd.Series) and not y.index.equals(X.index)
                and len(y.index) == len(X.index) and y.index.sort_values().equals(X.index.sort_values())):
            warnings.warn("y's index holds the same labels as X's in another order; rows are paired by position, "
                          "as in scikit-learn, not by label: pass y.loc[X.index] if the labels should decide",
                          UserWarning, stacklevel=2)
        self.positive_class_ = positive
        # the outcome's name, as a pandas Series carries it (y = frame.pop("died")): the model file, the card and
        # format_list then say "died = Yes" (the command line and the dashboard set their --target after fit)
        # A name that is one of X's columns came from a finding (y = rng.random(n) < 0.3 + 0.4 * (X["Age"] >= 70)).
        self.target_name_ = (str(y.name) if isinstance(y, pd.Series) and isinstance(y.name, str) and y.name
                             and y.name not in set(map(str, frame.columns)) else None)
        event = y_array == positive
        from .search_report import few_patients_text

        few = few_patients_text(len(event), int(event.sum()))
        if few:   # fitted all the same: the posterior is defined, and the user is told what it is worth
            from .errors import FewPatientsWarning

            warnings.warn(few, FewPatientsWarning, stacklevel=2)

        if progress is not None:
            progress(f"reading {frame.shape[1]:,} columns of {len(frame):,} rows and mining candidate rules")
        binarizer, candidates = self._candidate_rules(frame, event)
        self.binarizer_ = binarizer
        self.screening_note_ = candidates.note + (
            f"; the prior counts each rule of the list as one of all {candidates.n_mined:,} mined"
            if candidates.note and self.rule_prior == "mined" else "")
        self.n_mined_rules_ = candidates.n_mined
        problem, result = self._search_list(candidates, event, progress)
        best, dropped = self._final_list(problem, result, candidates)

        self.n_features_in_ = frame.shape[1]
        self.codes_read_as_missing_ = _recorded_codes(X)
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.candidate_names_ = list(candidates.names)
        self.candidate_conditions_ = condition_ids(candidates.rules)   # the sampler's sibling rules
        # the columns some candidate rule tests: a usable column outside them makes no rule at this support
        self.candidate_columns_ = list(dict.fromkeys(c.column for rule in candidates.rules for c in rule.conditions))
        # ... or its items hold the same patients as another column's (a copy, or a recoding: sex F/M beside gender)
        self.copied_columns_ = _copied_columns(binarizer, frame, self.candidate_columns_)
        self.problem_ = problem
        self.map_fit_ = best
        self.anneal_result_ = result
        self.search_report_ = result.report
        self.unreached_rules_ = [candidates.names[i] for i in dropped]
        self._set_list([candidates.rules[i] for i in best.order], best.probabilities, best.supports, best.positives)
        self.log_posterior_ = best.log_posterior
        self.outcome_proxies_ = outcome_proxies(frame, event, self.rule_objects_)
        self.rows_sha256_ = rows_fingerprint(frame, frame.columns) if isinstance(X, pd.DataFrame) else None
        # and as written, for the same rows saved in another format; only for a table with text columns (an
        # export), whose cells a spreadsheet may turn to text or back: a table of numbers or flags keeps its speed
        written = rows_as_written_hashes(frame, frame.columns) if isinstance(X, pd.DataFrame) else None
        self.rows_text_sha256_ = (rows_text_fingerprint(frame, frame.columns, written) if written is not None
                                  and any(not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))
                                          for t in frame.dtypes) else None)
        # a sample of those rows' hashes: a new table holding some training rows is told apart from new patients
        # over the columns read as findings: a row counter would make every row unique, and match another export's
        self.rows_sample_ = (sample_training_rows(frame, finding_columns(self, frame))
                             if isinstance(X, pd.DataFrame) else None)
        # rows too alike for a sample (a few yes/no columns): a validation then says it could not check
        self.rows_alike_ = (rows_alike(frame, finding_columns(self, frame))
                            if isinstance(X, pd.DataFrame) and self.rows_sample_ is None else None)
        self.K_ = best.K
        self.gammas_ = np.asarray(best.gammas)
        self.n_rows_ = int(len(frame))
        self.n_events_ = int(event.sum())
        # An encounter-level table: how many patients its rows are (the card says rows of patients)
        from .folds import patient_groups

        grouped = patient_groups(X) if isinstance(X, pd.DataFrame) else None
        self.patients_ = None if grouped is None else (grouped[0], int(len(np.unique(grouped[1]))))
        self.fitted_at_ = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self.posterior_summary_ = None
        self.validation_summary_ = None
        self._warn_possible_leak()
        self._warn_outcome_in_x(frame, event)
        return self

    def _warn_outcome_in_x(self, frame: pd.DataFrame, event: np.ndarray) -> None:
        """A :class:`~frl_engine.errors.PossibleLeakWarning` when a column of X left out as a second outcome
        (:data:`frl_engine.columns.LATER_OUTCOME_REASON`) is y itself, written the same way on every row: the outcome
        left in X (``X.assign(readmitted=y)``), which the list does not use, but which the user should take out."""
        from .columns import LATER_OUTCOME_REASON
        from .errors import PossibleLeakWarning

        readings = getattr(getattr(self, "binarizer_", None), "readings_", None) or []
        for reading in readings:
            if reading.reason != LATER_OUTCOME_REASON or reading.name not in frame.columns:
                continue
            codes, _ = pd.factorize(frame[reading.name], use_na_sentinel=True)
            pairs = set(zip(codes.tolist(), np.asarray(event, dtype=bool).tolist()))
            if len(pairs) == 2 and len({c for c, _ in pairs}) == 2 and -1 not in {c for c, _ in pairs}:
                warnings.warn(f"Column '{reading.name}' of X is the outcome y, written the same way on every row: it "
                              f"is left out (named like an outcome), so the list does not use it; pass X without it, "
                              f"or exclude=['{reading.name}']", PossibleLeakWarning, stacklevel=3)

    @staticmethod
    def _warn_repeated_records(X) -> None:
        """A :class:`~frl_engine.errors.RepeatedRecordsWarning` when ``X`` repeats records: rows equal to an earlier
        one in every column, record number included (:func:`frl_engine.repeated_rows.repeated_records`)."""
        from .errors import RepeatedRecordsWarning
        from .repeated_rows import repeated_records

        found = repeated_records(X) if isinstance(X, pd.DataFrame) else None
        if found is not None:
            warnings.warn(found.note("api"), RepeatedRecordsWarning, stacklevel=3)

    def _warn_possible_leak(self) -> None:
        """A :class:`~frl_engine.errors.PossibleLeakWarning` when the list separates its training outcome almost
        perfectly (:func:`frl_engine.search_report.leakage_note`): the outcome left in X, or a column copied from it."""
        from .errors import PossibleLeakWarning
        from .search_report import leakage_note

        # only what the note reads (the whole model dictionary costs as much as a tenth of a small fit)
        note = leakage_note({"rules": self._rule_dicts(),
                             "default": self._default_dict(),
                             "training": {"outcome_proxies": list(getattr(self, "outcome_proxies_", []) or [])},
                             "outcome": {"target": getattr(self, "target_name_", None)}}, "api")
        if note:
            warnings.warn(note, PossibleLeakWarning, stacklevel=3)

    def _candidate_rules(self, frame: pd.DataFrame, event: np.ndarray):
        """``(binarizer or None, CandidateRules)``: the items and mined rules ``fit`` searches over.

        The first half of :meth:`fit`, on its own so that a grid of settings (:mod:`frl_engine.explore`)
        can mine once and search once per ``lam`` exactly as ``fit`` would.
        """
        if not self.mine_rules:
            dropped = [c for c in self.exclude if c in frame.columns]
            used = frame.drop(columns=dropped) if dropped else frame
            return None, rules_from_boolean_columns(used)
        binarizer = self._column_reader()
        binarizer.fit(frame)
        candidates = mine_packed(binarizer.transform_packed(frame), len(frame), binarizer.conditions_,
                                 min_support=self.min_support, max_conditions=self.max_conditions,
                                 max_rules=self.max_rules, method=self.miner, event=event)
        return binarizer, candidates

    def _column_reader(self) -> Binarizer:
        """The binarizer ``fit`` reads the columns with, at these settings (not yet fitted)."""
        return Binarizer(n_thresholds=self.n_thresholds, thresholds=self.thresholds, column_kinds=self.column_kinds,
                         exclude=self.exclude, min_support=float(self.min_support),
                         negate_levels=bool(self.negate_levels))

    def _search_list(self, candidates, event: np.ndarray, progress=None):
        """``(PackedProblem, AnnealResult)``: the MAP search of :meth:`fit` over these candidate rules."""
        self._validate_params()
        screened = candidates.n_mined - len(candidates.rules) if self.rule_prior == "mined" else 0
        problem = PackedProblem.from_packed(candidates.packed, candidates.n_rows, event, self._hyperparameters(),
                                            self.rule_weights, screened_rules=screened)
        result = anneal(problem, n_steps=int(self.n_steps), n_chains=int(self.n_chains), temperature=self.temperature,
                        cooling=self.cooling, random_state=self.random_state, n_jobs=self.n_jobs,
                        polish=self.search == "restarts", progress=progress)
        return problem, result

    def _final_list(self, problem, result, candidates):
        """``(ListFit, dropped rule indices)``: the search's best list, without the rules no training
        row reaches when ``drop_unreached`` (:func:`~frl_engine.model.drop_unreached_rules`), each rule
        written as the simplest candidate that catches the same rows at its place
        (:func:`~frl_engine.wording.simplest_wording`): one card for every seed that finds the MAP."""
        best, dropped = (drop_unreached_rules(problem, result.best) if self.drop_unreached else (result.best, ()))
        return simplest_wording(problem, best, [len(rule.conditions) for rule in candidates.rules]), dropped

    def _set_list(self, rules, probabilities, supports, positives) -> None:
        self.rule_objects_ = list(rules)
        self.rules_ = [rule.name for rule in self.rule_objects_]
        self.probabilities_ = np.asarray(probabilities, dtype=float)
        self.supports_ = np.asarray(supports, dtype=np.int64)
        self.positives_ = np.asarray(positives, dtype=np.int64)
        used = []
        for rule in self.rule_objects_:
            for condition in rule.conditions:
                if condition.column not in used:
                    used.append(condition.column)
        self.used_columns_ = used
        if np.any(np.diff(self.probabilities_) > 1e-12):
            raise FRLError("internal error: the fitted risks do not fall down the list")

    # ------------------------------------------------------------------ prediction
    def apply(self, X) -> np.ndarray:
        """Which rule each row falls into: 0 for the top rule ... L for the default (ELSE)."""
        check_is_fitted(self, "rule_objects_")
        frame = self._as_frame(X, fitting=False)
        position = np.full(len(frame), len(self.rule_objects_), dtype=np.int64)
        for index in range(len(self.rule_objects_) - 1, -1, -1):
            position[self.rule_objects_[index].evaluate(frame)] = index
        return position

    def predict_proba(self, X) -> np.ndarray:
        """Risk of the event for each row: the probability of the rule it falls into.

        Returns an array (n_samples, 2), columns in the order of ``classes_``.
        """
        check_is_fitted(self, "rule_objects_")
        risk = self.probabilities_[self.apply(X)]
        proba = np.empty((len(risk), 2))
        event_column = list(self.classes_).index(self.positive_class_)
        proba[:, event_column] = risk
        proba[:, 1 - event_column] = 1.0 - risk
        return proba

    def predict(self, X) -> np.ndarray:
        """The event where its risk is at least 1/2, otherwise the other class."""
        check_is_fitted(self, "rule_objects_")
        event_column = list(self.classes_).index(self.positive_class_)
        risk = self.predict_proba(X)[:, event_column]
        return self.classes_[np.where(risk >= 0.5, event_column, 1 - event_column)]  # a tie is the event

    def decision_function(self, X) -> np.ndarray:
        """Log-odds of the event (monotone in the risk), for ROC analysis."""
        check_is_fitted(self, "rule_objects_")
        risk = np.clip(self.predict_proba(X)[:, list(self.classes_).index(self.positive_class_)], 1e-15, 1 - 1e-15)
        score = np.log(risk) - np.log1p(-risk)
        # a risk of exactly 1/2 is the event, as in predict: the smallest score on the event's side, not 0
        score = np.where(risk == 0.5, np.nextafter(0.0, 1.0), score)
        return score if self.classes_[1] == self.positive_class_ else -score

    # ------------------------------------------------------------------ posterior
    def sample_posterior(self, n_samples=1000, *, n_chains=4, burn_in=None, thin=1, random_state=None, n_jobs=None,
                         extend=True, temperatures=None, temper_prior=False, progress=None):
        """Sample the posterior over lists (paper section 3.2), chains starting at the MAP list.

        See :func:`frl_engine.sampler.sample_posterior`.  The MAP list's risk
        credible intervals are kept on the estimator (``posterior_summary_``) and
        written to the model file and the card.  With ``extend`` (default) a sample that has not
        converged is drawn again longer (the same number of kept samples): see ``temperatures``;
        with ``temperatures`` given, 4, then 16 times the burn-in and thinning
        (:func:`frl_engine.sampler.sample_posterior_until_converged`).
        ``temperatures``: replicas per chain for parallel tempering (1 turns it off), or the inverse
        temperatures themselves.  ``None`` (default): the plain sampler; with ``extend``, while it has
        not converged, the same chains continued 2, 4 and 8 times longer, then with 4 replicas that temper
        the list prior and the likelihood together (beta 1 down to 0.8) at 2, 4, 8, ... times, within a work
        budget of about a minute on 2 cores
        (:func:`frl_engine.sampler.sample_posterior_continued_until_converged`).
        ``temper_prior``: with ``temperatures``, the replicas temper the list prior with the likelihood
        (:func:`frl_engine.sampler.sample_posterior`'s ``temper_prior``); the default schedule's replicas
        always do.
        ``progress``: a callable told one line of text as the sample starts and as each longer attempt of the
        default schedule starts (what ``frl sample`` prints at a terminal when sampling is slow, and the
        dashboard's progress bar shows); it never changes the sample.
        """
        if not hasattr(self, "problem_"):
            if hasattr(self, "rule_objects_"):
                raise FRLError("This model was loaded from a file without its training data: fit it again to sample the posterior")
            raise FRLError("The model is not fitted yet: call fit(X, y) before sample_posterior")
        from functools import partial

        from .sampler import (dispersed_starts, focus_rules, sample_posterior, sample_posterior_continued_until_converged,
                              sample_posterior_until_converged)

        # Chains start from the MAP list and from the other lists the search chains ended in, so that
        # R-hat sees chains that do not meet; the list move proposes the rules of those lists more often, and
        # jumps between them (frl_engine.jumps); a rule is also replaced by its siblings (frl_engine.siblings).
        # Only the first round's chains count: later rounds run when the search has not converged (up to 16
        # chains on UCI Spambase), and the rules of all their lists made the focus set too large for the
        # list move to propose each one often (Spambase, sampler seeds 0 and 1: worst R-hat 1.348 and 1.184,
        # against 1.178 and 1.066 with the first round's; docs/search.md section 4).
        search = getattr(self, "anneal_result_", None)
        chain_orders = () if search is None else search.chain_orders[:search.round_size or None]
        run = sample_posterior_until_converged if extend else sample_posterior
        if not isinstance(temper_prior, (bool, np.bool_)):
            raise FRLError(f"temper_prior must be True or False, got {temper_prior!r}")
        if temper_prior and temperatures is None:
            raise FRLError("temper_prior tempers the replicas asked for with temperatures: give temperatures too "
                           "(the default sample's replicas already temper the list prior)")
        if temperatures is not None:
            run = partial(run, temperatures=temperatures, temper_prior=bool(temper_prior))
        elif extend:   # the default schedule tells each of its attempts
            run = partial(sample_posterior_continued_until_converged, progress=progress)
        if progress is not None and not (extend and temperatures is None):
            progress(f"sampling: {n_samples:,} draws a chain")
        result = run(self.problem_, n_samples=n_samples, n_chains=n_chains, burn_in=burn_in, thin=thin,
                     starts=dispersed_starts(self.map_fit_.order, self._as_printed(chain_orders), n_chains),
                     random_state=fixed_seed(random_state), n_jobs=n_jobs, rule_names=self.candidate_names_,
                     focus=focus_rules(self.problem_, (self.map_fit_.order, *chain_orders)),
                     jumps=(self.map_fit_.order, *chain_orders),
                     siblings=getattr(self, "candidate_conditions_", None))
        self.posterior_summary_ = result.map_risk_summary()
        return result

    def _as_printed(self, orders) -> list[tuple[int, ...]]:
        """The search's lists ``orders``, each written as the MAP list is (:func:`~frl_engine.wording.simplest_wording`),
        so that a chain that ended at the MAP list in other words takes no dispersed start of its own."""
        conditions = getattr(self, "candidate_conditions_", None)
        if conditions is None:
            return [tuple(order) for order in orders]
        sizes = [len(c) for c in conditions]
        return [simplest_wording(self.problem_, fit_list(self.problem_, order), sizes).order for order in orders]

    # ------------------------------------------------------------------ validation
    def cross_validate(self, X, y, *, n_folds: int = 5, random_state=0, n_jobs=None, cancel=None, groups=None):
        """Cross-validated AUROC of this configuration on (X, y); kept for the model file and the card.

        Stratified ``n_folds``-fold cross-validation of the FRL MAP list with these
        settings, on the same folds and per-fold seeds as
        :func:`frl_engine.validation.crossval.cross_validate_models` (so the numbers
        are the same), without importing that evaluation layer.  Stores the summary in
        ``validation_summary_`` and returns the full result of the list alone: a
        :class:`~frl_engine.cv_result.CrossValidatedAUROC`, an
        :class:`~frl_engine.cv_result.EvaluationResult` with ``methods == ("frl",)``
        (per fold: scores, ROC curve, AUROC, rules, calibration; ``.aurocs`` at hand).
        Use ``cross_validate_models`` to add the baselines.  ``cancel`` is a
        :class:`frl_engine.stopping.CancelToken`.

        ``groups`` (one label per row, e.g. the patient of each encounter) keeps every row of a group
        in one fold.  Without it, a column (or the index) named like a patient number that repeats
        (``patient_nbr``, ``MRN``, ``PatientID``) is used (:func:`frl_engine.folds.patient_groups`);
        the result's ``settings["grouped_by"]`` names what grouped the folds.
        """
        import time

        from sklearn.base import clone

        from .folds import fit_seed, patient_groups, split_seed, stratified_folds
        from .stopping import run_tasks

        started = time.perf_counter()
        y_array, _, positive = self._read_outcome(y, len(X))  # as fit reads it: "died" is the event "Died"
        event = y_array == positive
        frame = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else X
        self._warn_repeated_records(X)   # once for the table: the folds' fits do not repeat it
        if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral) or n_folds < 2:
            raise FRLError(f"Cross-validation needs a whole number of at least 2 folds, got {n_folds!r}")
        if n_folds > min(int(event.sum()), int((~event).sum())):
            raise FRLError(f"{n_folds} folds need at least {n_folds} events and {n_folds} non-events")
        if random_state is None:
            random_state = int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
            raise FRLError("cross_validate's random_state must be a whole number >= 0 or None (the result records "
                           f"the seed of each fold), got {random_state!r}")
        if groups is not None:
            labels = np.asarray(groups)
            if labels.shape != (len(event),):
                raise FRLError(f"groups must hold one label per row ({len(event)}), got shape {labels.shape}")
            grouped = ("groups", pd.factorize(labels)[0])
        else:
            grouped = patient_groups(X if isinstance(X, pd.DataFrame) else frame)  # a patient's rows in one fold
        splits = stratified_folds(event, n_folds, int(random_state), None if grouped is None else grouped[1])
        seeds = [fit_seed(random_state, 0, k) for k in range(len(splits))]
        tasks = [(clone(self).set_params(n_jobs=1, positive_class=True, random_state=seeds[k]), k, seeds[k],
                  train, test) for k, (train, test) in enumerate(splits)]
        folds = tuple(run_tasks(_fold_result, tasks, shared=(frame, event), n_jobs=n_jobs, token=cancel))
        params = {k: v for k, v in self.get_params().items() if k not in ("random_state", "n_jobs", "positive_class")}
        names = tuple(str(c) for c in X.columns) if isinstance(X, pd.DataFrame) else ()
        result = CrossValidatedAUROC(
            methods=("frl",), n_folds=int(n_folds), random_state=int(random_state), n_rows=int(len(event)),
            n_positive=int(event.sum()), folds=folds, frl_params=to_jsonable(params),
            settings={"split_seed": split_seed(int(random_state)),
                      **({"grouped_by": grouped[0]} if grouped is not None else {})}, feature_names=names,
            elapsed_seconds=float(time.perf_counter() - started))
        self.validation_summary_ = result.validation_summary()
        return result

    # ------------------------------------------------------------------ presentation
    def column_table(self) -> pd.DataFrame:
        """How each column of the training table was read: kind, items, why (:mod:`frl_engine.columns`).

        Columns ``column``, ``kind``, ``used``, ``items``, ``reason``, ``missing_share``, ``levels``,
        ``top_share``, ``examples``, ``declared``; one row per column, in table order.
        """
        check_is_fitted(self, "rule_objects_")
        binarizer = getattr(self, "binarizer_", None)
        if binarizer is None or not hasattr(binarizer, "readings_"):
            raise FRLError("The column table exists for a model fitted here with rule mining (not loaded from a file)")
        return binarizer.column_table()

    def rule_table(self) -> pd.DataFrame:
        """The list as the paper's Table 1: IF / ELSE IF / ELSE, conditions, risk, support."""
        check_is_fitted(self, "rule_objects_")
        n_rules = len(self.rules_)
        rows = []
        for position in range(n_rules + 1):
            keyword = "IF" if position == 0 else ("ELSE IF" if position < n_rules else "ELSE")
            if n_rules == 0:
                keyword = "ALWAYS"
            rows.append({
                "rule": position + 1,
                "": keyword,
                "conditions": self.rules_[position] if position < n_rules else "",
                "risk": float(self.probabilities_[position]),
                "support": int(self.supports_[position]),
                "events": int(self.positives_[position]),
            })
        return pd.DataFrame(rows)

    def format_list(self, outcome: str | None = None) -> str:
        """The list as text, laid out like the paper's Table 1 (IF / ELSE IF / ELSE, risk, support)."""
        table = self.rule_table()
        if outcome is None:
            target = getattr(self, "target_name_", None)
            outcome = f"{target} = {self.positive_class_} risk" if target else "risk"
        then = f"THEN {outcome} is"
        width = max([display_width(c) for c in table["conditions"]] + [len("Conditions")])
        lines = [f"{'':8}{'Conditions':<{width}}  {'':<{display_width(then)}} {'Risk':>7}  {'Support':>7}"]
        for _, row in table.iterrows():
            conditions = pad_right(row["conditions"], width)
            lines.append(f"{row['']:<8}{conditions}  {then} {100 * row['risk']:6.2f}%  {row['support']:>7}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ model files
    def _rule_dicts(self) -> list[dict]:
        """The list's rules as the model file writes them (docs/model-format.md), top first."""
        return [
            {"name": rule.name, "conditions": [c.to_dict() for c in rule.conditions],
             "probability": float(self.probabilities_[i]), "support": int(self.supports_[i]),
             "n_positive": int(self.positives_[i])}
            for i, rule in enumerate(self.rule_objects_)
        ]

    def _default_dict(self) -> dict:
        """The ELSE rule as the model file writes it."""
        return {"probability": float(self.probabilities_[-1]), "support": int(self.supports_[-1]),
                "n_positive": int(self.positives_[-1])}

    def to_dict(self, *, target: str | None = None, data_name: str | None = None, title: str | None = None,
                event_label=None) -> dict:
        """The fitted model as a JSON-safe dictionary (docs/model-format.md).

        ``event_label`` (default: the attribute ``event_label_`` when set): the outcome value
        the 0/1 event was derived from (``frl fit`` and the dashboard fit on the event
        indicator of ``split_target``); the file then states the outcome in the user's
        terms, classes ``["not <event>", <event>]``, instead of False/True.  Several values
        (a tuple, ``("<30", ">30")``) are written ``positive_class: "<30 or >30"`` with
        ``event_values: ["<30", ">30"]``, which validation on new patients reads.
        """
        check_is_fitted(self, "rule_objects_")
        target = target if target is not None else getattr(self, "target_name_", None)
        event = event_label if event_label is not None else getattr(self, "event_label_", None)
        values = [_plain(v) for v in event_values(event)]
        event = values[0] if len(values) == 1 else (event_text(values) if values else None)
        if event is None:
            positive, classes = _plain(self.positive_class_), [_plain(c) for c in self.classes_]
        else:
            positive, classes = event, [f"not {event}", event]
        rules = self._rule_dicts()
        hyper = {name: getattr(self, name) for name in ("lam", "alpha", "beta", "alpha_K", "beta_K", "min_support",
                                                         "max_conditions", "n_thresholds", "n_steps", "n_chains", "temperature",
                                                         "cooling", "mine_rules", "random_state", "search",
                                                         "negate_levels", "drop_unreached", "rule_prior")}
        if not isinstance(self.random_state, numbers.Integral) or isinstance(self.random_state, bool):
            hyper["random_state"] = None  # a Generator or RandomState: no number to write (the fit is not repeatable from the file)
        binarizer = getattr(self, "binarizer_", None)
        return {
            "format": MODEL_FORMAT,
            "format_version": MODEL_FORMAT_VERSION,
            "created_at": self.fitted_at_,
            "outcome": {"target": target, "positive_class": positive, "classes": classes, "title": title,
                        **({"event_values": values} if len(values) > 1 else {})},
            "hyperparameters": {k: (v if isinstance(v, (str, bool, int, float, type(None))) else str(v))
                                for k, v in to_jsonable(hyper).items()},
            "training": {"n_rows": self.n_rows_, "n_positive": self.n_events_,
                         "positive_rate": self.n_events_ / self.n_rows_ if self.n_rows_ else None,
                         "n_candidate_rules": len(getattr(self, "candidate_names_", [])) or getattr(self, "n_candidates_", None),
                         "n_mined_rules": getattr(self, "n_mined_rules_", None),
                         "data_name": data_name if data_name is not None else getattr(self, "data_name_", None),
                         "unreached_rules_removed": list(getattr(self, "unreached_rules_", []) or []),
                         **({"patient_column": self.patients_[0], "n_patients": self.patients_[1]}
                            if getattr(self, "patients_", None) else {}),
                         **({"outcome_proxies": list(self.outcome_proxies_)}
                            if getattr(self, "outcome_proxies_", None) else {}),
                         **({"rows_sha256": self.rows_sha256_} if getattr(self, "rows_sha256_", None) else {}),
                         **({"rows_text_sha256": self.rows_text_sha256_}
                            if getattr(self, "rows_text_sha256_", None) else {}),
                         **({"rows_sample": dict(self.rows_sample_)} if getattr(self, "rows_sample_", None) else {}),
                         **({"rows_alike": dict(self.rows_alike_)} if getattr(self, "rows_alike_", None) else {}),
                         **({"copied_columns": {str(c): str(o) for c, o in self.copied_columns_.items()}}
                            if getattr(self, "copied_columns_", None) else {}),
                         **({"codes_read_as_missing": {c: list(v) for c, v in self.codes_read_as_missing_.items()}}
                            if getattr(self, "codes_read_as_missing_", None) else {})},
            "rules": rules,
            "default": self._default_dict(),
            "parameters": {"K": float(self.K_), "gammas": [float(g) for g in self.gammas_],
                           "log_posterior": float(self.log_posterior_)},
            "binarizer": None if binarizer is None else {"columns": [spec.to_dict() for spec in binarizer.specs_]},
            "feature_names": [str(c) for c in getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])],
            "n_features": int(self.n_features_in_),
            "posterior": self.posterior_summary_,
            "validation": self.validation_summary_,
            "search": None if getattr(self, "search_report_", None) is None else self.search_report_.to_dict(),
        }

    def to_json(self, **kwargs) -> str:
        return dumps_model(self.to_dict(**kwargs))

    def save(self, path, **kwargs) -> None:
        """Write the model to a JSON file (never pickle)."""
        save_model(self.to_dict(**kwargs), path)

    @classmethod
    def from_dict(cls, model: dict) -> "FallingRuleListClassifier":
        """Rebuild a fitted classifier from a model dictionary; it predicts as the original did."""
        check_model_dict(model)
        try:
            hyper = model.get("hyperparameters", {})
            params = {k: hyper[k] for k in cls().get_params() if k in hyper}
            params.setdefault("rule_prior", "kept")  # written before the prior drew from every mined rule
            estimator = cls(**params)
            rules = [Rule.from_dict(r) for r in model["rules"]]
            probabilities = [float(r["probability"]) for r in model["rules"]] + [float(model["default"]["probability"])]
            supports = [int(r["support"]) for r in model["rules"]] + [int(model["default"]["support"])]
            positives = [int(r.get("n_positive", 0)) for r in model["rules"]] + [int(model["default"].get("n_positive", 0))]
            outcome = model["outcome"]
            estimator.classes_ = np.asarray(outcome["classes"])
            estimator.positive_class_ = estimator.classes_[[str(c) for c in outcome["classes"]].index(str(outcome["positive_class"]))]
            estimator.target_name_ = outcome.get("target")
            estimator._set_list(rules, probabilities, supports, positives)
            params_block = model.get("parameters", {})
            estimator.K_ = float(params_block.get("K", np.nan))
            estimator.gammas_ = np.asarray(params_block.get("gammas", []), dtype=float)
            estimator.log_posterior_ = float(params_block.get("log_posterior", np.nan))
            names = model.get("feature_names") or []
            estimator.n_features_in_ = int(model.get("n_features", len(names)))
            if names and not all(n == f"x{i}" for i, n in enumerate(names)):
                estimator.feature_names_in_ = np.asarray(names, dtype=object)
            training = model.get("training", {})
            estimator.n_rows_ = int(training.get("n_rows") or sum(supports))
            estimator.n_events_ = int(training.get("n_positive") or sum(positives))
            estimator.n_candidates_ = training.get("n_candidate_rules")
            estimator.n_mined_rules_ = training.get("n_mined_rules")
            estimator.data_name_ = training.get("data_name")
            estimator.rows_sha256_ = training.get("rows_sha256")
            estimator.rows_text_sha256_ = training.get("rows_text_sha256")
            sample = training.get("rows_sample")
            estimator.rows_sample_ = sample if isinstance(sample, dict) else None
            alike = training.get("rows_alike")
            estimator.rows_alike_ = alike if isinstance(alike, dict) else None
            copies = training.get("copied_columns")
            estimator.copied_columns_ = ({str(c): str(o) for c, o in copies.items()} if isinstance(copies, dict)
                                         else {})
            estimator.codes_read_as_missing_ = recorded_codes(training.get("codes_read_as_missing"))
            estimator.unreached_rules_ = list(training.get("unreached_rules_removed") or [])
            estimator.outcome_proxies_ = [dict(p) for p in training.get("outcome_proxies") or [] if isinstance(p, dict)]
            estimator.patients_ = ((str(training["patient_column"]), int(training["n_patients"]))
                                   if training.get("patient_column") and training.get("n_patients") else None)
            estimator.fitted_at_ = model.get("created_at")
            binarizer = model.get("binarizer")
            estimator.column_specs_ = [ColumnSpec.from_dict(c) for c in binarizer["columns"]] if binarizer else None
            estimator.posterior_summary_ = model.get("posterior")
            estimator.validation_summary_ = model.get("validation")
            from .search_report import SearchReport

            estimator.search_report_ = SearchReport.from_dict(model["search"]) if model.get("search") else None
        except ModelFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ModelFileError(f"The model file is damaged or incomplete ({type(exc).__name__}: {exc})") from None
        return estimator

    @classmethod
    def load(cls, path) -> "FallingRuleListClassifier":
        """Read a model written by :meth:`save` (or ``frl fit --out``)."""
        return cls.from_dict(load_model_dict(path))


def _fold_result(shared, model, fold, seed, train, test):
    """Fit ``model`` on the training rows and score the test rows (one cross-validation fold)."""
    import time

    frame, event = shared
    rows = (lambda idx: frame.iloc[idx]) if isinstance(frame, pd.DataFrame) else (lambda idx: np.asarray(frame)[idx])
    started = time.perf_counter()
    with quiet_possible_leak():
        model.fit(rows(train), event[train])
    return frl_fold_result(model, rows(test), event[test], fold=fold, seed=seed, test_index=test,
                           fit_seconds=time.perf_counter() - started)


def _copied_columns(binarizer, frame: pd.DataFrame, candidate_columns) -> dict:
    """``{column: other column}`` for each column that has items but is in no candidate rule because every item of it
    holds exactly the patients of an item of ``other`` (mining keeps one rule per set of patients, the first column's):
    a column exported twice, or recoded (``sex`` F / M beside ``gender`` Female / Male).  Empty when there is none,
    the usual case, which costs nothing more; otherwise only the items of the columns concerned are packed again."""
    if binarizer is None:
        return {}
    used = {str(column) for column in candidate_columns}
    idle = [spec for spec in binarizer.specs_ if str(spec.name) not in used and spec.conditions()]
    if not idle:
        return {}
    from .bits import pack_columns

    def coverages(spec, least=0):
        items = spec.item_matrix(frame[spec.name])
        return [bits.tobytes() for bits in pack_columns(items[:, items.sum(axis=0) >= least])]

    # a yes/no column keeps its item below the support (a finding on 2% of patients): rare, so it copies no rule
    least = max(1, math.ceil(round(float(binarizer.min_support) * len(frame), 6)))
    unmatched = {spec.name: set(found) for spec in idle if (found := coverages(spec, least))}
    if not unmatched:
        return {}
    first_match = {}
    for spec in binarizer.specs_:
        if str(spec.name) not in used or not any(unmatched.values()):
            continue
        held = set(coverages(spec))
        for name, items in unmatched.items():
            if items & held:
                first_match.setdefault(name, spec.name)
                items -= held
    return {str(name): str(first_match[name]) for name, items in unmatched.items() if not items}


def _recorded_codes(X) -> dict:
    """The codes for not known emptied in the training table before the fit, per column (``{"age": [999.0]}``).

    :func:`frl_engine.columns.empty_number_codes` records them in the table's ``attrs``, as ``frl fit
    --codes-as-missing`` and the dashboard's Data page do; ``{}`` when none were (or ``X`` is not a DataFrame).
    """
    return recorded_codes(X.attrs.get("codes_read_as_missing") if isinstance(X, pd.DataFrame) else None)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value
