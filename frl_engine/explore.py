"""Hyperparameter exploration: a lam x min_support x max_conditions (x n_thresholds) grid, cross-validated.

:func:`explore` fits, for every cell of the grid,

* the MAP falling rule list on all rows (its length, its log posterior, its rules), and
* the same settings on each training fold of a stratified k-fold split, scored by the
  AUROC of the list's risks on the test fold (mean and sample standard deviation over folds),

and marks the **Pareto-best** cells (no other cell has a list as short or shorter and a higher
cross-validated AUROC) and the **recommended** cell: the shortest list whose mean AUROC is within
one standard error of the best cell's (the usual one-standard-error rule, with
``SE = sd / sqrt(k)`` of the best cell).

Sharing.  ``lam`` only changes the prior (paper section 2: ``L ~ Poisson(lam)``), not the data the
search runs on, so the cells that share ``(min_support, max_conditions, n_thresholds)`` share the binarised items
and the mined candidate rules of each fold: one task per (mining settings, fold) binarises and mines
once, then anneals once per ``lam``.  The composition is the estimator's own
(:class:`~frl_engine.binarize.Binarizer` -> :func:`~frl_engine.mining.mine_packed` ->
:class:`~frl_engine.model.PackedProblem` -> :func:`~frl_engine.anneal.anneal`), so a cell's full-data
list is exactly what ``FallingRuleListClassifier(lam=..., min_support=..., max_conditions=...,
random_state=seed).fit(X, y)`` (``frl fit --seed``) returns.

Randomness.  The fold split and each fold's search seed come from the user's seed through
:class:`numpy.random.SeedSequence` spawn keys (:func:`frl_engine.evaluate.split_seed` and
:func:`frl_engine.evaluate.method_seed`, the same as ``frl evaluate``), the full-data fit uses the
seed itself.  Every cell uses the same fold seeds (common random numbers: cells differ by their
settings, not by their luck), so the table depends neither on the number of workers, nor on the
order tasks finish in, nor on whether they ran locally (joblib) or on a ``dask.distributed`` cluster.

Where it runs.  Locally through :func:`frl_engine.stopping.run_tasks` (worker processes of the
process-wide cap :data:`~frl_engine.stopping.WORKER_SLOTS`, at a lower priority, killed at once on a
stop: the same mechanism as ``frl evaluate`` and the dashboard's other long jobs); with
``scheduler="tcp://host:8786"`` (or a ``distributed.Client``) on a Dask cluster: the table and the outcome are scattered to the workers
once, each (mining settings, fold) is one task of the module-level :func:`run_task`, and a task lost
with its worker is retried on another (``retries``).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import FRLError

__all__ = ["ExploreGrid", "ExploreResult", "explore", "run_task", "one_standard_error_choice", "pareto_mask",
           "TABLE_COLUMNS"]

#: The columns of :attr:`ExploreResult.table`, in order.
TABLE_COLUMNS = ("lam", "min_support", "max_conditions", "n_thresholds", "n_rules", "n_conditions", "log_posterior", "auroc_mean",
                 "auroc_sd", "auroc_se", "auroc_folds", "top_rule", "rules", "n_candidates", "fit_seconds",
                 "pareto", "recommended", "error")

#: The estimator's number of quantile thresholds per numeric column (the grid's when not given).
DEFAULT_N_THRESHOLDS = 3

#: Estimator settings :func:`explore` accepts in ``params`` (the grid sets lam, min_support, max_conditions and
#: n_thresholds; ``params["n_thresholds"]`` is the grid's one value when the grid does not give it).
SETTINGS = ("alpha", "beta", "alpha_K", "beta_K", "max_rules", "n_thresholds", "thresholds", "column_kinds", "exclude",
            "miner", "n_steps", "n_chains", "temperature", "cooling", "rule_prior")

DEFAULT_RETRIES = 3


# ---------------------------------------------------------------------------------------------- the grid
def _values(name: str, values, *, integer: bool = False) -> tuple:
    if values is None or isinstance(values, (str, bytes)):
        values = [values] if isinstance(values, (str, bytes)) else []
    if isinstance(values, numbers.Number):
        values = [values]
    values = list(values)
    if not values:
        raise FRLError(f"The grid is empty: give at least one value of {name}")
    out = []
    for value in values:
        kinds = (numbers.Integral,) if integer else (numbers.Real,)
        if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value):
            if integer and isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer():
                value = int(value)
            else:
                raise FRLError(f"{name} takes {'whole numbers' if integer else 'numbers'}, got {value!r}")
        out.append(int(value) if integer else float(value))
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class ExploreGrid:
    """The settings to try: every combination of the value lists.

    ``lam`` > 0 (prior mean list length), ``min_support`` in (0, 1) (fraction of patients a candidate
    rule must cover), ``max_conditions`` >= 1 (whole number), ``n_thresholds`` >= 1 (quantile
    thresholds per numeric column, :class:`~frl_engine.binarize.Binarizer`; whole number).  Values
    are sorted and de-duplicated.
    """

    lam: tuple[float, ...]
    min_support: tuple[float, ...]
    max_conditions: tuple[int, ...] = (2,)
    n_thresholds: tuple[int, ...] = (DEFAULT_N_THRESHOLDS,)

    def __post_init__(self):
        object.__setattr__(self, "lam", _values("lam", self.lam))
        object.__setattr__(self, "min_support", _values("min_support", self.min_support))
        object.__setattr__(self, "max_conditions", _values("max_conditions", self.max_conditions, integer=True))
        object.__setattr__(self, "n_thresholds", _values("n_thresholds", self.n_thresholds, integer=True))
        bad = [v for v in self.lam if v <= 0]
        if bad:
            raise FRLError(f"lam (the prior mean list length) must be positive, got {_number(bad[0])}")
        bad = [v for v in self.min_support if not 0 < v < 1]
        if bad:
            raise FRLError(f"min_support is a fraction of patients strictly between 0 and 1 (e.g. 0.05 for 5%), "
                           f"got {_number(bad[0])}")
        bad = [v for v in self.max_conditions if v < 1]
        if bad:
            raise FRLError(f"max_conditions must be at least 1, got {bad[0]}")
        bad = [v for v in self.n_thresholds if v < 1]
        if bad:
            raise FRLError(f"n_thresholds (thresholds per numeric column) must be at least 1, got {bad[0]}")

    @property
    def cells(self) -> list[tuple[float, float, int, int]]:
        """Every ``(lam, min_support, max_conditions, n_thresholds)``, in table order."""
        return [(lam, s, c, t) for t in self.n_thresholds for c in self.max_conditions for s in self.min_support
                for lam in self.lam]

    @property
    def mining_groups(self) -> list[tuple[float, int, int]]:
        """The distinct mining settings ``(min_support, max_conditions, n_thresholds)``; their cells share the
        binarised items and the mined rules."""
        return [(s, c, t) for t in self.n_thresholds for c in self.max_conditions for s in self.min_support]

    def __len__(self) -> int:
        return len(self.lam) * len(self.min_support) * len(self.max_conditions) * len(self.n_thresholds)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# ---------------------------------------------------------------------------------------------- pure choices
def pareto_mask(n_rules: Sequence[float], auroc: Sequence[float]) -> np.ndarray:
    """True for the cells no other cell beats: none has a list as short or shorter and a higher AUROC
    (or a strictly shorter list and an AUROC as high).  NaN AUROCs are never Pareto-best."""
    n = np.asarray(n_rules, dtype=float)
    a = np.asarray(auroc, dtype=float)
    ok = np.isfinite(a) & np.isfinite(n)
    mask = np.zeros(len(a), dtype=bool)
    for i in np.flatnonzero(ok):
        other = ok & (n <= n[i]) & (a >= a[i]) & ((n < n[i]) | (a > a[i]))
        mask[i] = not other.any()
    return mask


def one_standard_error_choice(n_rules, n_conditions, auroc_mean, auroc_se) -> int | None:
    """Index of the recommended cell by the one-standard-error rule, or None if no cell has an AUROC.

    Among the cells whose mean AUROC is at least ``best mean - best SE``, the one with the fewest
    rules; ties: fewest conditions, then the higher AUROC, then the first in table order.
    """
    a = np.asarray(auroc_mean, dtype=float)
    ok = np.isfinite(a)
    if not ok.any():
        return None
    best = int(np.nanargmax(np.where(ok, a, -np.inf)))
    se = float(np.asarray(auroc_se, dtype=float)[best])
    floor = a[best] - (se if math.isfinite(se) else 0.0) - 1e-12
    eligible = [i for i in np.flatnonzero(ok & (a >= floor))]
    n = np.asarray(n_rules, dtype=float)
    c = np.asarray(n_conditions, dtype=float)
    return int(min(eligible, key=lambda i: (n[i], c[i], -a[i], i)))


# ---------------------------------------------------------------------------------------------- one task
def _apply_list(rules, frame: pd.DataFrame) -> np.ndarray:
    """Which rule each row falls into, 0 = top ... L = ELSE (as ``FallingRuleListClassifier.apply``)."""
    position = np.full(len(frame), len(rules), dtype=np.int64)
    for index in range(len(rules) - 1, -1, -1):
        position[rules[index].evaluate(frame)] = index
    return position


def run_task(X: pd.DataFrame, y: np.ndarray, train, test, min_support: float, max_conditions: int,
             lams: Sequence[float], seed: int, params: dict, n_thresholds: int | None = None) -> dict:
    """Binarise and mine once on the training rows, then anneal once per ``lam``.

    Module-level (so a Dask worker imports it by name).  ``train`` None means every row (the
    full-data fit, no test fold); ``n_thresholds`` None: ``params``' or the estimator's.  Returns
    reaches ``min_support``) rather than raising, so one bad cell does not stop the grid; else
    ``{"lams": [...]}`` with, per ``lam``, the list (rule names, risks, log posterior) and, on a
    fold, the test AUROC.
    """
    from sklearn.metrics import roc_auc_score

    from .estimator import FallingRuleListClassifier

    try:
        started = time.perf_counter()
        X_train = X if train is None else X.iloc[train]
        y_train = y if train is None else y[train]
        settings = {k: v for k, v in params.items() if k in FallingRuleListClassifier().get_params()}
        settings.update(min_support=float(min_support), max_conditions=int(max_conditions), random_state=seed,
                        n_jobs=1)
        if n_thresholds is not None:
            settings["n_thresholds"] = int(n_thresholds)
        # Exactly FallingRuleListClassifier.fit: mine once, then search once per lam.
        _, candidates = FallingRuleListClassifier(**settings)._candidate_rules(X_train, np.asarray(y_train, bool))
        mining_seconds = time.perf_counter() - started
        out = []
        for lam in lams:
            started = time.perf_counter()
            estimator = FallingRuleListClassifier(**{**settings, "lam": lam})
            best = estimator._final_list(*estimator._search_list(candidates, np.asarray(y_train, bool)), candidates)[0]
            rules = [candidates.rules[i] for i in best.order]
            cell = {"lam": lam, "rules": [r.name for r in rules], "n_conditions": sum(len(r.conditions) for r in rules),
                    "probabilities": [float(p) for p in best.probabilities],
                    "log_posterior": float(best.log_posterior), "n_candidates": len(candidates.rules),
                    "fit_seconds": mining_seconds + time.perf_counter() - started}
            if test is not None:
                scores = np.asarray(best.probabilities, dtype=float)[_apply_list(rules, X.iloc[test])]
                cell["auroc"] = float(roc_auc_score(y[test], scores))
            out.append(cell)
        return {"lams": out}
    except FRLError as exc:
        return {"error": str(exc)}


# ---------------------------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class ExploreResult:
    """What :func:`explore` found.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per cell, columns :data:`TABLE_COLUMNS`, in grid order (``max_conditions``, then
        ``min_support``, then ``lam``).  ``n_rules``, ``n_conditions``, ``log_posterior``,
        ``top_rule``, ``rules`` (`` | ``-joined) and ``fit_seconds`` (mining + search) describe the
        list fitted on all rows; ``auroc_mean``, ``auroc_sd`` (sample SD, ddof=1), ``auroc_se``
        (``sd / sqrt(k)``) and ``auroc_folds`` the k folds.  ``error`` holds the message of a
        cell that could not be fitted (its numbers are NaN).
    grid : ExploreGrid
    n_folds, random_state : int
    params : dict
        The other estimator settings used.
    elapsed_seconds : float
    stopped : bool
        True when the run was stopped early; ``table`` then holds only the finished cells.
    where : str
        ``"local (N workers)"`` or ``"dask (scheduler address)"``.
    """

    table: pd.DataFrame = field(repr=False)
    grid: ExploreGrid
    n_folds: int
    random_state: int
    params: dict = field(default_factory=dict)
    elapsed_seconds: float = 0.0
    stopped: bool = False
    where: str = "local"

    @property
    def recommended(self) -> pd.Series | None:
        """The recommended cell's row (one-standard-error rule), or None."""
        rows = self.table[self.table["recommended"]]
        return None if rows.empty else rows.iloc[0]

    def sorted_table(self) -> pd.DataFrame:
        """The table sorted by mean AUROC, best first (shorter lists first among equals)."""
        return self.table.sort_values(["auroc_mean", "n_rules", "lam"], ascending=[False, True, True],
                                      na_position="last", kind="stable").reset_index(drop=True)

    def cell_settings(self, row) -> dict:
        """The estimator settings of one row (``FallingRuleListClassifier(**settings)``)."""
        return {**self.params, "lam": float(row["lam"]), "min_support": float(row["min_support"]),
                "max_conditions": int(row["max_conditions"]), "n_thresholds": int(row["n_thresholds"]),
                "random_state": self.random_state}

    def tuning_record(self, row) -> dict:
        """How one cell's settings were chosen, for the model file's ``training.tuning``.

        The grid, the folds and seed, whether the cell is the recommended one (the one-standard-error
        rule) or the user's pick, the chosen settings, and the cell's cross-validated AUROC, which was
        measured on the folds that chose it (slightly optimistic).
        """
        return {
            "grid": {"lam": [float(v) for v in self.grid.lam], "min_support": [float(v) for v in self.grid.min_support],
                     "max_conditions": [int(v) for v in self.grid.max_conditions],
                     "n_thresholds": [int(v) for v in self.grid.n_thresholds]},
            "folds": int(self.n_folds), "seed": int(self.random_state),
            "rule": "one standard error" if bool(row["recommended"]) else "chosen by the user",
            "chosen": {"lam": float(row["lam"]), "min_support": float(row["min_support"]),
                       "max_conditions": int(row["max_conditions"]), "n_thresholds": int(row["n_thresholds"])},
            "auroc_mean": float(row["auroc_mean"]), "auroc_sd": float(row["auroc_sd"]), "n_rules": int(row["n_rules"]),
            "note": "the AUROC of the chosen cell on the folds that chose it: slightly optimistic; --validate or an "
                    "external validation measures it afresh",
        }

    def format_table(self, limit: int | None = None) -> str:
        """The table as text, sorted by AUROC; ``*`` marks the recommended cell, ``+`` the Pareto-best."""
        table = self.sorted_table()
        if limit is not None:
            table = table.head(limit)
        head = (f"{'':2}{'lam':>6} {'support':>8} {'cond':>4} {'thr':>3} {'rules':>5} {'AUROC':>6} {'sd':>6} "
                f"{'log post':>10} {'time s':>7}  top rule")
        lines = [head]
        for _, r in table.iterrows():
            mark = ("*" if r["recommended"] else " ") + ("+" if r["pareto"] else " ")
            if isinstance(r["error"], str) and r["error"]:
                lines.append(f"{mark}{_number(r['lam']):>6} {r['min_support']:>8.3g} {r['max_conditions']:>4} "
                             f"{r['n_thresholds']:>3}  not fitted: {r['error']}")
                continue
            lines.append(f"{mark}{_number(r['lam']):>6} {r['min_support']:>8.3g} {int(r['max_conditions']):>4} "
                         f"{int(r['n_thresholds']):>3} {int(r['n_rules']):>5} {r['auroc_mean']:>6.3f} {r['auroc_sd']:>6.3f} "
                         f"{r['log_posterior']:>10.2f} {r['fit_seconds']:>7.2f}  {r['top_rule'] or '(none)'}")
        return "\n".join(lines)


def _empty_table() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in TABLE_COLUMNS})


def _cell_row(cell, full: dict | None, folds: list[dict], n_folds: int) -> dict:
    lam, support, conditions, thresholds = cell
    row = {"lam": lam, "min_support": support, "max_conditions": conditions, "n_thresholds": thresholds}
    error = full.get("error") if full is not None else None
    error = error or next((f["error"] for f in folds if "error" in f), None)
    if error:
        return {**row, "n_rules": np.nan, "n_conditions": np.nan, "log_posterior": np.nan, "auroc_mean": np.nan,
                "auroc_sd": np.nan, "auroc_se": np.nan, "auroc_folds": "", "top_rule": "", "rules": "",
                "n_candidates": np.nan, "fit_seconds": np.nan, "error": error}
    aurocs = np.array([f["auroc"] for f in folds], dtype=float)
    sd = float(np.std(aurocs, ddof=1)) if len(aurocs) > 1 else float("nan")
    return {**row, "n_rules": len(full["rules"]), "n_conditions": full["n_conditions"],
            "log_posterior": full["log_posterior"], "auroc_mean": float(aurocs.mean()), "auroc_sd": sd,
            "auroc_se": sd / math.sqrt(len(aurocs)), "auroc_folds": " ".join(f"{a:.4f}" for a in aurocs),
            "top_rule": full["rules"][0] if full["rules"] else "", "rules": " | ".join(full["rules"]),
            "n_candidates": full["n_candidates"], "fit_seconds": full["fit_seconds"], "error": ""}


def _finish_table(rows: list[dict], grid: ExploreGrid) -> pd.DataFrame:
    if not rows:
        return _empty_table()
    order = {cell: i for i, cell in enumerate(grid.cells)}
    table = pd.DataFrame(sorted(rows, key=lambda r: order[(r["lam"], r["min_support"], r["max_conditions"],
                                                             r["n_thresholds"])]))
    table["pareto"] = pareto_mask(table["n_rules"], table["auroc_mean"])
    choice = one_standard_error_choice(table["n_rules"], table["n_conditions"], table["auroc_mean"], table["auroc_se"])
    table["recommended"] = False
    if choice is not None:
        table.loc[choice, "recommended"] = True
    for column in ("max_conditions", "n_thresholds"):
        table[column] = table[column].astype(int)
    for column in ("n_rules", "n_conditions"):  # counts stay whole numbers when a cell could not be fitted
        table[column] = table[column].astype("Int64")
    return table[list(TABLE_COLUMNS)]


# ---------------------------------------------------------------------------------------------- running
def _check_params(params) -> dict:
    params = dict(params or {})
    unknown = sorted(set(params) - set(SETTINGS))
    if unknown:
        raise FRLError(f"explore cannot vary or take {', '.join(map(repr, unknown))}: the grid sets lam, "
                       f"min_support, max_conditions and n_thresholds; other settings are {', '.join(SETTINGS)}")
    if "exclude" in params:
        params["exclude"] = tuple(params["exclude"] or ())
    # The estimator checks the rest the same way it does for a fit.
    from .estimator import FallingRuleListClassifier

    FallingRuleListClassifier(**params)._validate_params()
    return params


def _prepare(X, y_event, n_folds, random_state):
    from .validation.crossval import _check_folds, _check_random_state, _check_y, check_table

    X = check_table(X, "exploring")
    y = _check_y(y_event, len(X))
    return X, y, _check_folds(n_folds, y), _check_random_state(random_state)


def _tasks(grid: ExploreGrid, n_folds: int, random_state: int, splits):
    """(group, fold) tasks; fold None = the full-data fit.  Costliest first: many conditions, low support,
    many thresholds."""
    from .evaluate import method_seed

    tasks = []
    for group in grid.mining_groups:
        tasks.append((group, None, None, None, random_state))
        for k, (train, test) in enumerate(splits):
            tasks.append((group, k, train, test, method_seed(random_state, "frl", k)))
    return sorted(tasks, key=lambda t: (-t[0][1], t[0][0], -t[0][2], -1 if t[1] is None else t[1]))


def _local_task(shared, index, train, test, min_support, max_conditions, seed, n_thresholds):
    """:func:`explore_task` for :func:`frl_engine.stopping.run_tasks`: ``shared = (X, y, lams, params)``."""
    X, y, lams, params = shared
    return explore_task(index, X, y, train, test, min_support, max_conditions, lams, seed, params, n_thresholds)


def _run_local(X, y, tasks, grid, params, n_workers, record, should_stop, on_wait) -> bool:
    """The tasks through :func:`frl_engine.stopping.run_tasks`: the process-wide worker cap
    (:data:`~frl_engine.stopping.WORKER_SLOTS`), workers at a lower priority, killed at once on a stop.

    ``record(index, output)`` is called for each finished task until a stop is asked for;
    ``should_stop`` is polled every 0.1 s.  Returns True if the run was stopped before the end.
    """
    from .stopping import PROCESS_TOKEN, CancelToken, Interrupted, Stopped, run_tasks

    token = CancelToken(poll=should_stop)
    finished = [0]

    def on_result(_position, output) -> None:
        if not token.cancelled:  # after a stop, a task that finished meanwhile is not reported
            finished[0] += 1
            record(*output)

    try:
        run_tasks(_local_task, [(i, t[2], t[3], t[0][0], t[0][1], t[4], t[0][2]) for i, t in enumerate(tasks)],
                  shared=(X, y, tuple(grid.lam), params), n_jobs=n_workers, token=token, on_result=on_result,
                  on_wait=on_wait)
    except Stopped as exc:
        if PROCESS_TOKEN.cancelled:  # Ctrl-C / SIGTERM of the command line: not a stop that keeps cells
            raise Interrupted(exc.reason, exc.signum) from None
        return finished[0] < len(tasks)
    return False


def explore_task(index, *args):
    """:func:`run_task` tagged with its index (the unit of work sent to a joblib or Dask worker)."""
    return index, run_task(*args)


def _client(scheduler):
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - a dependency of the project
        raise FRLError("Running on a cluster needs dask.distributed: pip install 'dask[distributed]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(str(scheduler), timeout="10s", set_as_default=False), True
    except (OSError, TimeoutError) as exc:
        raise FRLError(f"Cannot reach the Dask scheduler at {scheduler}: {exc}. Start one with `dask scheduler` "
                       "and workers with `dask worker ADDRESS` (docs/explore.md), or leave out --scheduler") from None


def _run_dask(client, X, y, tasks, grid, params, retries):
    from distributed import as_completed

    X_future, y_future = client.scatter([X, y], broadcast=False, hash=True)
    futures = {}
    for i, t in enumerate(tasks):
        future = client.submit(explore_task, i, X_future, y_future, t[2], t[3], t[0][0], t[0][1], grid.lam, t[4], params,
                               t[0][2], pure=False, retries=retries)
        futures[future] = i
    iterator = as_completed(list(futures), loop=client.loop)

    def results():
        try:
            for future in iterator:
                yield future.result()
        finally:
            pending = [f for f in futures if not f.done()]
            if pending:
                client.cancel(pending)
    return results()


def explore(X, y_event, *, lam=(2.0, 4.0, 8.0), min_support=(0.05, 0.1), max_conditions=(2,), n_thresholds=None,
            n_folds: int = 5,
            random_state: int | None = 0, params: dict | None = None, n_jobs: int | None = -1, scheduler=None,
            retries: int = DEFAULT_RETRIES, progress: Callable | None = None,
            should_stop: Callable[[], bool] | None = None, on_wait: Callable[[], object] | None = None) -> ExploreResult:
    """Cross-validate every cell of a lam x min_support x max_conditions grid.

    Parameters
    ----------
    X : DataFrame, shape (n_rows, n_columns)
        The raw table (as for :meth:`FallingRuleListClassifier.fit`).
    y_event : array of bool, shape (n_rows,)
        The event for each row (e.g. from :func:`frl_engine.io.split_target`).
    lam, min_support, max_conditions : sequence of numbers
        The grid: lam > 0, min_support in (0, 1), max_conditions >= 1.  ``lam`` may instead be an
        :class:`ExploreGrid` (the other three are then ignored).
    n_thresholds : sequence of int, optional
        Quantile thresholds per numeric column to try (each >= 1).  None: the one value of
        ``params["n_thresholds"]``, else the estimator's default (3).
    n_folds : int, default 5
        Stratified folds (at least 2, at most the number of rows of the rarer outcome).
    random_state : int, default 0
        Seed of the split and of every search (see the module docstring).
    params : dict, optional
        Other estimator settings (:data:`SETTINGS`), e.g. ``{"exclude": ["PatientID"], "n_steps": 5000}``.
    n_jobs : int, default -1
        Local worker processes (joblib; -1 all cores).  Ignored with ``scheduler``.  The table does not
        depend on it.
    scheduler : str or distributed.Client, optional
        Run on this Dask cluster instead ("tcp://host:8786").
    retries : int
        How often Dask re-runs a task whose worker was lost.
    progress : callable, optional
        ``progress(done_tasks, total_tasks, finished_rows)`` after each task; ``finished_rows`` are
        the table rows (dicts) of the cells that task completed (often none).
    should_stop : callable, optional
        Polled after each task (and locally every 0.1 s while tasks run); when it returns True the
        run stops, the remaining tasks are cancelled (local workers are killed at once) and the
        result holds the finished cells (``stopped=True``).
    on_wait : callable, optional
        Locally: called once if the run has to wait for a free worker (all of the process's
        :data:`~frl_engine.stopping.WORKER_SLOTS` are busy, e.g. with another dashboard user's job); a
        callable it returns is called when the workers are free.

    Returns
    -------
    ExploreResult
    """
    started = time.perf_counter()
    params = _check_params(params)
    if not isinstance(lam, ExploreGrid):
        if n_thresholds is None:
            n_thresholds = (params.get("n_thresholds", DEFAULT_N_THRESHOLDS),)
        lam = ExploreGrid(lam, min_support, max_conditions, n_thresholds)
    grid = lam
    params.pop("n_thresholds", None)  # the grid's, per cell
    X, y, n_folds, random_state = _prepare(X, y_event, n_folds, random_state)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise FRLError(f"n_jobs must be a whole number other than 0 (-1: all cores), got {n_jobs!r}")
    from .validation.crossval import patient_folds

    splits, _ = patient_folds(X, y, n_folds, random_state)  # a patient's encounters stay in one fold
    tasks = _tasks(grid, n_folds, random_state, splits)

    outputs: dict[tuple, dict] = {}
    remaining = {group: n_folds + 1 for group in grid.mining_groups}
    rows: list[dict] = []
    done = [0]

    def record(index: int, output: dict) -> None:
        group, fold = tasks[index][0], tasks[index][1]
        outputs[(group, fold)] = output
        remaining[group] -= 1
        finished = []
        if remaining[group] == 0:
            finished = _group_rows(group, outputs, grid, n_folds)
            rows.extend(finished)
        done[0] += 1
        if progress is not None:
            progress(done[0], len(tasks), finished)

    stopped = False
    if scheduler is not None and scheduler != "":
        client, own_client = _client(scheduler)
        where = f"dask ({client.scheduler.address})"
        try:
            stream = _run_dask(client, X, y, tasks, grid, params, retries)
            try:
                for index, output in stream:
                    record(index, output)
                    if should_stop is not None and should_stop() and done[0] < len(tasks):
                        stopped = True
                        break
            finally:
                stream.close()  # cancels Dask's futures still under way
        finally:
            if own_client:
                client.close()
    else:
        import os

        cores = os.cpu_count() or 1
        workers = 1 if n_jobs is None else (n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs))
        where = f"local ({workers} worker{'s' if workers != 1 else ''})"
        stopped = _run_local(X, y, tasks, grid, params, workers, record, should_stop or (lambda: False), on_wait)
    if rows and all(r["error"] for r in rows) and not stopped:
        raise FRLError(f"No cell of the grid could be fitted: {rows[0]['error']}")
    return ExploreResult(table=_finish_table(rows, grid), grid=grid, n_folds=n_folds, random_state=random_state,
                         params=params, elapsed_seconds=time.perf_counter() - started, stopped=stopped, where=where)


def _group_rows(group, outputs, grid: ExploreGrid, n_folds: int) -> list[dict]:
    support, conditions, thresholds = group
    full = outputs[(group, None)]
    folds = [outputs[(group, k)] for k in range(n_folds)]
    rows = []
    for j, lam in enumerate(grid.lam):
        cell_full = full if "error" in full else full["lams"][j]
        cell_folds = [f if "error" in f else f["lams"][j] for f in folds]
        rows.append(_cell_row((lam, support, conditions, thresholds), cell_full, cell_folds, n_folds))
    return rows
