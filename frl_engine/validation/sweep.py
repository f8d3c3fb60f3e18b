"""Several FRL settings cross-validated on the same folds, mining each fold once (``frl evaluate --lam 2,8``).

:func:`cross_validate_settings` answers "which lam (or number of steps, or prior) holds up best?"
against the same baselines, at the cost of one binarisation and one rule mining per fold and
mining setting instead of one per fit:

* the baselines (SVM, LogReg, CART, RF, HGB) do not depend on the FRL settings: each is fitted
  once per fold and appears in every setting's result;
* the settings whose mining parameters (:data:`MINING_PARAMS`: which columns, thresholds,
  ``min_support``, ``max_conditions`` ...) are equal share, on each fold, the binarised items and
  the mined candidate rules: one task per (mining group, fold) mines once, then runs the MAP
  search once per setting.  ``lam`` and the other prior and search settings change only the
  search (paper section 2: ``L ~ Poisson(lam)`` is the prior; the data the search runs on is the
  same), which is why :mod:`frl_engine.explore` shares mining across ``lam`` too.

Each fit is the estimator's own: :meth:`FallingRuleListClassifier.fit` with its mining step
(``_candidate_rules``) answered from the fold's cache after the first setting of the group mined
it, with the same per-fold seed :func:`~frl_engine.validation.crossval.method_seed` gives every
setting (common random numbers).  So setting ``i``'s result equals
``cross_validate_models(X, y, frl_params=settings[i], ...)`` exactly (fit times aside; each FRL
fit's ``fit_seconds`` counts its fold's mining time in full, as a separate fit would).
"""

from __future__ import annotations

import json
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..cv_result import EvaluationResult, frl_fold_result
from ..errors import FRLError, quiet_possible_leak
from ..io import to_jsonable
from ..stopping import CancelToken, run_tasks
from . import crossval

__all__ = ["MINING_PARAMS", "SettingsEvaluation", "cross_validate_settings", "setting_label"]

#: The estimator settings that decide the binarised items and the mined candidate rules; FRL settings
#: that agree on all of them share each fold's mining.
MINING_PARAMS = ("mine_rules", "exclude", "n_thresholds", "thresholds", "column_kinds", "min_support",
                 "max_conditions", "max_rules", "miner")
#: The settings the baselines' columns depend on (``_baseline_frame``): equal in every setting of one run.
_BASELINE_PARAMS = ("exclude", "column_kinds")


def setting_label(params: dict, varying: Sequence[str]) -> str:
    """``"lam=2"``, ``"lam=2, n_steps=500"``: the settings that differ between the runs' FRL settings."""
    parts = []
    for name in varying:
        value = params.get(name)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        parts.append(f"{name}={value}")
    return ", ".join(parts) or "FRL"


@dataclass(frozen=True)
class SettingsEvaluation:
    """The cross-validation of several FRL settings against the same baselines on the same folds.

    Attributes
    ----------
    results : tuple of EvaluationResult
        One per setting, in the order given; each is what ``cross_validate_models`` returns for
        that setting (the baselines' fold results are the same objects in every one).
    settings : tuple of dict
        The FRL settings, as checked (defaults not filled in).
    labels : tuple of str
        What tells the settings apart, e.g. ``"lam=2"`` (:func:`setting_label`).
    n_minings : int
        How many times rules were mined (one per mining group and fold).
    n_frl_fits : int
        How many FRL lists were fitted (one per setting and fold).
    elapsed_seconds : float
    """

    results: tuple[EvaluationResult, ...] = field(repr=False)
    settings: tuple[dict, ...]
    labels: tuple[str, ...]
    n_minings: int
    n_frl_fits: int
    elapsed_seconds: float = 0.0

    def format_table(self) -> str:
        """One AUROC table: a row per FRL setting, then the baselines (as ``EvaluationResult.format_table``)."""
        first = self.results[0]
        k = first.n_folds
        head = f"{'Method':<16} {'AUROC (std)':<12} " + " ".join(f"{'fold ' + str(i + 1):>6}" for i in range(k))
        head += f" {'fit s':>7}  list lengths"
        lines = [f"{first.description} of {first.n_rows} rows ({first.n_positive} events, "
                 f"{100 * first.n_positive / max(first.n_rows, 1):.1f}%), seed {first.random_state}", head]

        def line(name, s):
            cells = " ".join(f"{a:6.3f}" for a in s.aurocs)
            lengths = "" if s.list_lengths is None else " ".join(map(str, s.list_lengths))
            return (f"{name:<16} {s.auroc_mean:.3f} ({s.auroc_std:.3f}) {cells} {s.fit_seconds_mean:7.2f}  "
                    f"{lengths}").rstrip()

        for method in first.methods:
            if method == "frl":
                lines.extend(line(f"FRL {label}", result.summary("frl")) for label, result in zip(self.labels, self.results))
            else:
                lines.append(line(first.summary(method).name, first.summary(method)))
        lines.extend(f"Note: {note}." for note in first.settings.get("scaling") or ())
        if "frl" in first.methods:
            lines.append(f"Note: {self.n_frl_fits} FRL fits shared {self.n_minings} rule minings "
                         f"(one per fold{' and mining setting' if self.n_minings > k else ''}).")
        return "\n".join(lines)


def _mining_key(params: dict) -> str:
    from ..estimator import FallingRuleListClassifier

    full = FallingRuleListClassifier(**params).get_params()
    return json.dumps(to_jsonable({name: full.get(name) for name in MINING_PARAMS}), sort_keys=True)


def _run_frl_group(shared, fold: int, seed: int, group: tuple[dict, ...]) -> tuple[list, int]:
    """FRL with each setting of ``group`` on ``fold``, mining once: ``([(index, FoldResult)...], minings)``."""
    from ..estimator import FallingRuleListClassifier

    X, _, _, _, y, splits = shared
    train, test = splits[fold]
    mined: list = []  # (the estimator's (binarizer, candidate rules), seconds it took)
    out = []
    for index, params in group:
        model = FallingRuleListClassifier(**params, random_state=seed, n_jobs=1, positive_class=True)
        mine = model._candidate_rules

        def candidate_rules(frame, event, mine=mine):
            if not mined:
                started = time.perf_counter()
                found = mine(frame, event)
                mined.append((found, time.perf_counter() - started))
            return mined[0][0]

        reused = bool(mined)
        model._candidate_rules = candidate_rules  # this fit only: the fold's mining, done once
        started = time.perf_counter()
        with quiet_possible_leak():
            model.fit(X.iloc[train], y[train])
        fit_seconds = time.perf_counter() - started + (mined[0][1] if reused else 0.0)  # as if it had mined alone
        out.append((index, frl_fold_result(model, X.iloc[test], y[test], fold=fold, seed=seed, test_index=test,
                                           fit_seconds=fit_seconds)))
    return out, len(mined)


def _run_task(shared, kind: str, *args):
    if kind == "frl":
        return _run_frl_group(shared, *args)
    return crossval._run_fold(shared, *args)


def cross_validate_settings(X, y_event, frl_settings: Sequence[dict], *, n_folds: int = 5, methods=crossval.METHODS,
                            random_state: int | None = 0, n_jobs: int | None = None, dataset: str | None = None,
                            progress: Callable[[int, int], None] | None = None,
                            cancel: CancelToken | None = None) -> SettingsEvaluation:
    """Cross-validate several FRL settings and the baselines on the same folds, mining each fold once.

    Parameters
    ----------
    X, y_event, n_folds, methods, random_state, n_jobs, dataset, cancel
        As :func:`~frl_engine.validation.crossval.cross_validate_models`.
    frl_settings : sequence of dict
        The FRL settings to compare (each as ``frl_params`` there), e.g. ``[{"lam": 2}, {"lam": 8}]``.
        They must agree on ``exclude`` and ``column_kinds`` when baselines are evaluated (the
        baselines read the columns the same way and are fitted once).
    progress : callable, optional
        ``progress(done, total)`` after each finished fit (a baseline on a fold, or one FRL setting
        on a fold), counted in fits, not tasks.

    Returns
    -------
    SettingsEvaluation
        ``results[i]`` equals ``cross_validate_models(..., frl_params=frl_settings[i])``, fit times aside.
    """
    started = time.perf_counter()
    if isinstance(frl_settings, dict) or not isinstance(frl_settings, Sequence) or not frl_settings:
        raise FRLError("frl_settings must be a non-empty list of FRL settings (dicts), e.g. [{'lam': 2}, {'lam': 8}]")
    methods = crossval.check_methods(methods)
    X = crossval.check_table(X, "cross-validation")
    y = crossval._check_y(y_event, len(X))
    n_folds = crossval._check_folds(n_folds, y)
    settings = tuple(crossval._frl_params(s) for s in frl_settings)
    random_state = crossval._check_random_state(random_state)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise FRLError(f"n_jobs must be a whole number other than 0 (-1: all cores), got {n_jobs!r}")
    for name in _BASELINE_PARAMS:
        values = {json.dumps(to_jsonable(s.get(name)), sort_keys=True) for s in settings}
        if len(values) > 1 and any(m != "frl" for m in methods):
            raise FRLError(f"The FRL settings differ in {name}: the baselines read the columns once, so every "
                           f"setting must use the same {name}")
    if "frl" in methods:
        from ..estimator import FallingRuleListClassifier

        for s in settings:
            FallingRuleListClassifier(**s)._validate_params()  # a bad setting is one message, before any work

    splits, grouped_by = crossval.patient_folds(X, y, n_folds, random_state)
    needs_baseline = any(m != "frl" for m in methods)
    first = settings[0]
    X_numeric, numeric, categorical = (crossval._baseline_frame(X, first.get("column_kinds"), first.get("exclude") or ())
                                       if needs_baseline else (None, [], []))
    if needs_baseline and not numeric and not categorical:
        raise FRLError("X has no usable column for the baselines")

    groups: dict[str, list] = {}
    for index, s in enumerate(settings):
        groups.setdefault(_mining_key(s), []).append((index, s))
    tasks, weights = [], []
    for method in methods:
        for k in range(n_folds):
            if method == "frl":
                for group in groups.values():
                    tasks.append((crossval._COST["frl"], k, ("frl", k, crossval.method_seed(random_state, "frl", k),
                                                            tuple(group))))
                    weights.append(len(group))
            else:
                tasks.append((crossval._COST[method], k, (method, method, k,
                                                         crossval.method_seed(random_state, method, k), first)))
                weights.append(1)
    order = sorted(range(len(tasks)), key=lambda i: tasks[i][:2])
    total = sum(weights)
    done = [0]

    def on_result(position: int, _result) -> None:
        done[0] += weights[order[position]]
        if progress is not None:
            progress(done[0], total)

    outputs = run_tasks(_run_task, [tasks[i][2] for i in order], shared=(X, X_numeric, numeric, categorical, y, splits),
                        n_jobs=n_jobs, token=cancel, on_result=on_result)
    baseline: dict = {}
    frl: dict = {}
    minings = 0
    for output in outputs:
        if isinstance(output, tuple):
            fits, mined = output
            minings += mined
            for index, fold_result in fits:
                frl[(index, fold_result.fold)] = fold_result
        else:
            baseline[(output.method, output.fold)] = output
    run_settings = crossval._run_settings(methods, splits, random_state, numeric, categorical, grouped_by)
    elapsed = float(time.perf_counter() - started)
    results = []
    for index, s in enumerate(settings):
        folds = tuple(frl[(index, k)] if m == "frl" else baseline[(m, k)] for m in methods for k in range(n_folds))
        results.append(EvaluationResult(
            methods=methods, n_folds=n_folds, random_state=random_state, n_rows=int(len(y)), n_positive=int(y.sum()),
            folds=folds, frl_params=to_jsonable(s), settings=run_settings, dataset=dataset,
            feature_names=tuple(X.columns), elapsed_seconds=elapsed))
    from ..estimator import FallingRuleListClassifier

    full = [FallingRuleListClassifier(**s).get_params() for s in settings]  # defaults filled in, to compare
    varying = [name for name in full[0]
               if len({json.dumps(to_jsonable(f.get(name)), sort_keys=True) for f in full}) > 1]
    labels = tuple(setting_label(f, varying) if len(settings) > 1 else "FRL" for f in full)
    n_fits = len(settings) * n_folds if "frl" in methods else 0
    return SettingsEvaluation(tuple(results), settings, labels, minings, n_fits, elapsed)
