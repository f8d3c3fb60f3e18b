"""What a cross-validation returns: per fold and method the scores, the ROC curve, the AUROC and,
for the falling rule list, its rules and their calibration on the test fold.

These frozen result objects sit *below* both the estimator
(:meth:`~frl_engine.estimator.FallingRuleListClassifier.cross_validate`, which returns an
:class:`EvaluationResult` of the list alone) and the evaluation layer
(:func:`frl_engine.validation.crossval.cross_validate_models`, the list against the baselines),
so that neither imports the other.  They are plain data: JSON round-trippable, no plotting
(:mod:`frl_engine.figures` draws them).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import FRLError
from .io import to_jsonable

__all__ = ["CalibrationBin", "FoldResult", "MethodSummary", "EvaluationResult", "CrossValidatedAUROC", "frl_fold_result",
           "METHOD_NAMES", "RESULT_FORMAT", "RESULT_FORMAT_VERSION", "CV_DESCRIPTION"]

#: The methods `frl evaluate` compares, and those of the paper's Table 3 (light: the command line's parser
#: names them without importing scikit-learn).
METHODS = ("frl", "svm", "logreg", "cart", "rf", "hgb")
PAPER_METHODS = ("frl", "svm", "logreg", "cart", "rf")
METHOD_NAMES = {"frl": "FRL", "svm": "SVM", "logreg": "LogReg", "cart": "CART", "rf": "RF", "hgb": "HGB"}
RESULT_FORMAT = "frl-evaluation"
RESULT_FORMAT_VERSION = 1
CV_DESCRIPTION = "{k}-fold stratified cross-validation"


@dataclass(frozen=True)
class CalibrationBin:
    """One rule of a fold's FRL list, scored on that fold's test rows.

    ``predicted`` is the risk the list learned on the training fold;
    ``count`` test rows fall into the rule, ``positives`` of them are events.
    """

    position: int      # 0 = top rule ... L = the default (ELSE) rule
    rule: str          # the rule's conditions ("" for the default rule)
    predicted: float
    count: int
    positives: int

    @property
    def observed(self) -> float | None:
        """The observed event rate on the test rows, or None when no test row falls into the rule."""
        return self.positives / self.count if self.count else None

    def to_dict(self) -> dict:
        return {"position": self.position, "rule": self.rule, "predicted": self.predicted, "count": self.count,
                "positives": self.positives, "observed": self.observed}

    @classmethod
    def from_dict(cls, d: dict) -> "CalibrationBin":
        return cls(int(d["position"]), str(d["rule"]), float(d["predicted"]), int(d["count"]), int(d["positives"]))


@dataclass(frozen=True)
class FoldResult:
    """One method on one test fold.

    Attributes
    ----------
    method : str
        ``"frl"``, ``"svm"``, ``"logreg"``, ``"cart"`` or ``"rf"``.
    fold : int
        0-based fold number.
    seed : int
        The seed this fit used (derived from the run's ``random_state``).
    test_index : tuple of int
        Rows (positions in the evaluated table) of the test fold.
    y_true : tuple of bool
        Their outcomes.
    scores : tuple of float
        The method's score for each test row (FRL: risk; SVM: decision
        function; others: predicted probability of the event).
    fpr, tpr : tuple of float
        The ROC curve (scikit-learn's ``roc_curve``).
    auroc : float
    fit_seconds, predict_seconds : float
        Wall time of fitting on the training fold (grid search included) and
        of scoring the test fold.
    list_length : int or None
        FRL: the number of rules in the list (default rule not counted).
    rules : tuple of str
        FRL: the list's rules, top first.
    n_candidates : int or None
        FRL: the number of rules mined on the training fold.
    calibration : tuple of CalibrationBin
        FRL: every rule of the list (default last) on the test fold; the
        counts add up to the test fold's size.
    best_params : dict
        SVM and LogReg: the grid point the inner cross-validation chose.
    """

    method: str
    fold: int
    seed: int
    test_index: tuple[int, ...] = field(repr=False)
    y_true: tuple[bool, ...] = field(repr=False)
    scores: tuple[float, ...] = field(repr=False)
    fpr: tuple[float, ...] = field(repr=False)
    tpr: tuple[float, ...] = field(repr=False)
    auroc: float
    fit_seconds: float
    predict_seconds: float
    list_length: int | None = None
    rules: tuple[str, ...] = field(default=(), repr=False)
    n_candidates: int | None = None
    calibration: tuple[CalibrationBin, ...] = field(default=(), repr=False)
    best_params: dict = field(default_factory=dict)

    @property
    def n_test(self) -> int:
        return len(self.test_index)

    def to_dict(self) -> dict:
        return {
            "method": self.method, "fold": self.fold, "seed": self.seed,
            "auroc": self.auroc, "fit_seconds": self.fit_seconds, "predict_seconds": self.predict_seconds,
            "list_length": self.list_length, "n_candidates": self.n_candidates, "rules": list(self.rules),
            "best_params": dict(self.best_params),
            "fpr": list(self.fpr), "tpr": list(self.tpr),
            "calibration": [c.to_dict() for c in self.calibration],
            "test_index": list(self.test_index), "y_true": list(self.y_true), "scores": list(self.scores),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "FoldResult":
        return cls(
            method=str(d["method"]), fold=int(d["fold"]), seed=int(d["seed"]),
            test_index=tuple(int(i) for i in d["test_index"]), y_true=tuple(bool(v) for v in d["y_true"]),
            scores=tuple(float(s) for s in d["scores"]), fpr=tuple(float(v) for v in d["fpr"]),
            tpr=tuple(float(v) for v in d["tpr"]), auroc=float(d["auroc"]), fit_seconds=float(d["fit_seconds"]),
            predict_seconds=float(d["predict_seconds"]),
            list_length=None if d.get("list_length") is None else int(d["list_length"]),
            rules=tuple(str(r) for r in d.get("rules", ())),
            n_candidates=None if d.get("n_candidates") is None else int(d["n_candidates"]),
            calibration=tuple(CalibrationBin.from_dict(c) for c in d.get("calibration", ())),
            best_params=dict(d.get("best_params") or {}),
        )


@dataclass(frozen=True)
class MethodSummary:
    """One method over all folds: AUROC mean and standard deviation (population, ddof=0), times, list lengths."""

    method: str
    aurocs: tuple[float, ...]
    auroc_mean: float
    auroc_std: float
    fit_seconds: tuple[float, ...]
    list_lengths: tuple[int, ...] | None

    @property
    def name(self) -> str:
        return METHOD_NAMES.get(self.method, self.method)

    @property
    def fit_seconds_mean(self) -> float:
        return float(np.mean(self.fit_seconds))

    def to_dict(self) -> dict:
        return {"method": self.method, "name": self.name, "auroc_mean": self.auroc_mean, "auroc_std": self.auroc_std,
                "aurocs": list(self.aurocs), "fit_seconds": list(self.fit_seconds),
                "fit_seconds_mean": self.fit_seconds_mean,
                "list_lengths": None if self.list_lengths is None else list(self.list_lengths)}


@dataclass(frozen=True)
class EvaluationResult:
    """Everything a cross-validation run produced; plain data, JSON round-trippable.

    Attributes
    ----------
    methods : tuple of str
        The methods evaluated, in the order asked for.
    n_folds : int
    random_state : int
        The seed everything was derived from (drawn once if None was given).
    n_rows, n_positive : int
        Size of the evaluated table and its number of events.
    folds : tuple of FoldResult
        Method-major: all folds of ``methods[0]``, then of ``methods[1]`` ...
    frl_params : dict
        The FRL settings (everything but the per-fold seed and ``n_jobs``).
    settings : dict
        Baseline grids, inner folds, forest size, preprocessing, the split seed.
    dataset : str or None
        A name for the data (file name or UCI data set).
    feature_names : tuple of str
    elapsed_seconds : float
        Wall time of the whole run.
    """

    methods: tuple[str, ...]
    n_folds: int
    random_state: int
    n_rows: int
    n_positive: int
    folds: tuple[FoldResult, ...] = field(repr=False)
    frl_params: dict = field(default_factory=dict, repr=False)
    settings: dict = field(default_factory=dict, repr=False)
    dataset: str | None = None
    feature_names: tuple[str, ...] = field(default=(), repr=False)
    elapsed_seconds: float = 0.0

    # ---- access
    def fold_results(self, method: str) -> tuple[FoldResult, ...]:
        """The fold results of one method, by fold."""
        if method not in self.methods:
            raise FRLError(f"Method {method!r} was not evaluated; this result has {', '.join(self.methods)}")
        return tuple(sorted((f for f in self.folds if f.method == method), key=lambda f: f.fold))

    def summary(self, method: str) -> MethodSummary:
        results = self.fold_results(method)
        aurocs = tuple(f.auroc for f in results)
        lengths = tuple(f.list_length for f in results) if method == "frl" else None
        return MethodSummary(method, aurocs, float(np.mean(aurocs)), float(np.std(aurocs)),
                             tuple(f.fit_seconds for f in results), lengths)

    def summaries(self) -> dict[str, MethodSummary]:
        return {m: self.summary(m) for m in self.methods}

    @property
    def description(self) -> str:
        grouped = (self.settings or {}).get("grouped_by")
        return CV_DESCRIPTION.format(k=self.n_folds) + (f", folds by {grouped}" if grouped else "")

    def validation_summary(self, method: str = "frl") -> dict:
        """The block a model file keeps under ``"validation"`` (see docs/model-format.md)."""
        s = self.summary(method)
        return {"method": self.description, "n_folds": self.n_folds, "auroc_mean": s.auroc_mean,
                "auroc_std": s.auroc_std}

    def auroc_table(self) -> pd.DataFrame:
        """One row per method: mean and std of the AUROC, each fold's AUROC, mean fit time, FRL list lengths."""
        rows = []
        for method in self.methods:
            s = self.summary(method)
            row = {"method": s.name, "auroc_mean": s.auroc_mean, "auroc_std": s.auroc_std}
            row.update({f"fold {i + 1}": a for i, a in enumerate(s.aurocs)})
            row["fit_seconds"] = s.fit_seconds_mean
            row["list_lengths"] = "" if s.list_lengths is None else " ".join(map(str, s.list_lengths))
            rows.append(row)
        return pd.DataFrame(rows)

    def format_table(self) -> str:
        """The AUROC table as text, like the paper's Table 3 with the folds spelled out."""
        head = f"{'Method':<8} {'AUROC (std)':<12} " + " ".join(f"{'fold ' + str(i + 1):>6}" for i in range(self.n_folds))
        head += f" {'fit s':>7}  list lengths"
        lines = [f"{self.description} of {self.n_rows} rows ({self.n_positive} events, "
                 f"{100 * self.n_positive / max(self.n_rows, 1):.1f}%), seed {self.random_state}", head]
        for method in self.methods:
            s = self.summary(method)
            cells = " ".join(f"{a:6.3f}" for a in s.aurocs)
            lengths = "" if s.list_lengths is None else " ".join(map(str, s.list_lengths))
            lines.append(f"{s.name:<8} {_fmt_auroc(s.auroc_mean, s.auroc_std):<12} {cells} "
                         f"{s.fit_seconds_mean:7.2f}  {lengths}")
        lines.extend(f"Note: {note}." for note in self.settings.get("scaling") or ())
        return "\n".join(lines)

    def calibration_table(self, method: str = "frl") -> pd.DataFrame:
        """Per fold and rule: predicted risk, observed rate, count and events on the test fold."""
        rows = []
        for f in self.fold_results(method):
            for c in f.calibration:
                rows.append({"fold": f.fold, "position": c.position, "rule": c.rule or "(default)",
                             "predicted": c.predicted, "observed": c.observed, "count": c.count,
                             "positives": c.positives})
        return pd.DataFrame(rows, columns=["fold", "position", "rule", "predicted", "observed", "count", "positives"])

    def without_timings(self) -> "EvaluationResult":
        """The same result with every wall-clock time set to 0 (for comparing runs)."""
        return replace(self, elapsed_seconds=0.0,
                       folds=tuple(replace(f, fit_seconds=0.0, predict_seconds=0.0) for f in self.folds))

    # ---- serialisation
    def to_dict(self) -> dict:
        return {
            "format": RESULT_FORMAT, "format_version": RESULT_FORMAT_VERSION,
            "description": self.description, "dataset": self.dataset,
            "methods": list(self.methods), "n_folds": self.n_folds, "random_state": self.random_state,
            "n_rows": self.n_rows, "n_positive": self.n_positive, "feature_names": list(self.feature_names),
            "elapsed_seconds": self.elapsed_seconds,
            "summary": {m: self.summary(m).to_dict() for m in self.methods},
            "frl_params": to_jsonable(self.frl_params), "settings": to_jsonable(self.settings),
            "folds": [f.to_dict() for f in self.folds],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "EvaluationResult":
        if not isinstance(d, dict) or d.get("format") != RESULT_FORMAT:
            raise FRLError(f"This is not an evaluation result (no \"format\": \"{RESULT_FORMAT}\"): "
                           "give a file written by `frl evaluate --out`")
        if d.get("format_version") != RESULT_FORMAT_VERSION:
            raise FRLError(f"Evaluation result format version {d.get('format_version')!r}; "
                           f"this frl reads version {RESULT_FORMAT_VERSION}")
        try:
            return cls(
                methods=tuple(d["methods"]), n_folds=int(d["n_folds"]), random_state=int(d["random_state"]),
                n_rows=int(d["n_rows"]), n_positive=int(d["n_positive"]),
                folds=tuple(FoldResult.from_dict(f) for f in d["folds"]),
                frl_params=to_jsonable(d.get("frl_params") or {}), settings=d.get("settings") or {},
                dataset=d.get("dataset"), feature_names=tuple(d.get("feature_names") or ()),
                elapsed_seconds=float(d.get("elapsed_seconds", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FRLError(f"The evaluation result is damaged or incomplete ({type(exc).__name__}: {exc})") from None

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "EvaluationResult":
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise FRLError(f"The evaluation result is not valid JSON ({exc.msg})") from None

    def save(self, path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> "EvaluationResult":
        path = Path(path)
        if not path.is_file():
            raise FRLError(f"Evaluation result not found: {path}")
        return cls.from_json(path.read_text(encoding="utf-8"))


def _fmt_auroc(mean: float, std: float) -> str:
    return f"{mean:.3f} ({std:.3f})"


def frl_fold_result(model, X_test, y_test, *, fold: int, seed: int, test_index, fit_seconds: float) -> FoldResult:
    """One fold of a fitted falling rule list: its risks on the test rows, ROC curve, AUROC and calibration.

    ``model`` is a fitted :class:`~frl_engine.estimator.FallingRuleListClassifier` (fitted on the
    training fold), ``y_test`` the test rows' events.  Each rule's calibration bin counts the
    test rows the list sends to it (the paper's capture, eq. 1) and their events.
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    started = time.perf_counter()
    position = model.apply(X_test)
    scores = model.probabilities_[position].astype(float)
    predict_seconds = time.perf_counter() - started
    y_test = np.asarray(y_test, dtype=bool)
    calibration = tuple(
        CalibrationBin(p, model.rules_[p] if p < len(model.rules_) else "", float(model.probabilities_[p]),
                       int((position == p).sum()), int(y_test[position == p].sum()))
        for p in range(len(model.rules_) + 1))
    fpr, tpr, _ = roc_curve(y_test, scores)
    return FoldResult(
        method="frl", fold=int(fold), seed=int(seed), test_index=tuple(int(i) for i in test_index),
        y_true=tuple(bool(v) for v in y_test), scores=tuple(float(s) for s in scores),
        fpr=tuple(float(v) for v in fpr), tpr=tuple(float(v) for v in tpr),
        auroc=float(roc_auc_score(y_test, scores)), fit_seconds=float(fit_seconds),
        predict_seconds=float(predict_seconds), list_length=len(model.rules_), rules=tuple(model.rules_),
        n_candidates=len(model.candidate_names_), calibration=calibration,
    )


@dataclass(frozen=True)
class CrossValidatedAUROC(EvaluationResult):
    """What :meth:`FallingRuleListClassifier.cross_validate` returns: an :class:`EvaluationResult`
    of the list alone (``methods == ("frl",)``), with its per-fold AUROCs at hand as ``aurocs``."""

    @property
    def aurocs(self) -> tuple[float, ...]:
        return self.summary("frl").aurocs
