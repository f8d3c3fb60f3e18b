"""``frl explore`` (and ``frl fit --tune``): cross-validate a grid of settings, recommend one.

``frl explore DATA --target COL --lam 2,4,8 --min-support 0.05,0.1 [--max-conditions 1,2] [--n-thresholds 3,5]
[--folds 5] [--seed 0] [--scheduler ADDRESS] --out table.csv [--html report.html]`` prints a line per finished
cell, then the table sorted by AUROC with the recommended cell (``*``, one-standard-error rule) and
the Pareto-best cells (``+``) marked.  ``--scheduler tcp://host:8786`` runs the same tasks on a
``dask.distributed`` cluster and gives the same table.  Ctrl-C (or SIGTERM) stops it: one line,
exit status 130, the worker processes are shut down.

``frl fit --tune`` runs the same exploration (grid from ``--tune-lam``, ``--tune-min-support``,
``--tune-max-conditions``, ``--tune-n-thresholds``, ``--tune-folds``) and then fits the recommended cell's list.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from pathlib import Path

from .cli_evaluate import _positive_int, annealing_steps
from .errors import FRLError
from .io import event_label

#: ``frl fit --tune``'s grid when none is given.
DEFAULT_TUNE_LAM = "2,4,8"
DEFAULT_TUNE_MIN_SUPPORT = "0.02,0.05,0.1"
DEFAULT_TUNE_MAX_CONDITIONS = "1,2"
DEFAULT_TUNE_FOLDS = 5


def parse_list(text: str, option: str, *, integer: bool = False) -> list:
    """``"2,4,8"`` -> ``[2.0, 4.0, 8.0]``; a one-line FRLError naming ``option`` otherwise."""
    parts = [p.strip() for p in str(text).split(",")]
    if not any(parts):
        raise FRLError(f"{option} is empty: give values separated by commas, e.g. {option} 2,4,8")
    values = []
    for part in parts:
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise FRLError(f"{option} takes numbers separated by commas, e.g. {option} 2,4,8; got {part!r}") from None
        if integer:
            if not value.is_integer():
                raise FRLError(f"{option} takes whole numbers, e.g. {option} 1,2; got {part!r}")
            value = int(value)
        values.append(value)
    return values


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM stops the run the way Ctrl-C does (KeyboardInterrupt), so the worker processes are ended."""
    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_check(path, what: str) -> None:
    if path and not Path(path).resolve().parent.exists():
        raise FRLError(f"Cannot write the {what} to {path}: folder {Path(path).parent} does not exist")


def run_exploration(args, features, event, *, lam, min_support, max_conditions, folds, params, quiet=False,
                    n_thresholds=(3,)):
    """Run :func:`frl_engine.explore.explore` with a progress line per finished cell; KeyboardInterrupt passes."""
    from .explore import ExploreGrid, explore
    from .explore_figures import cell_label

    grid = ExploreGrid(lam, min_support, max_conditions, n_thresholds)
    total = len(grid)
    finished = [0]
    started = time.perf_counter()

    def progress(done, n_tasks, rows):
        for row in rows:
            finished[0] += 1
            if row["error"]:
                text = f"not fitted: {row['error']}"
            else:
                n_rules = int(row["n_rules"])
                text = (f"AUROC {row['auroc_mean']:.3f} (sd {row['auroc_sd']:.3f}), {n_rules} "
                        f"rule{'s' if n_rules != 1 else ''}, log posterior {row['log_posterior']:.2f}")
            print(f"[{finished[0]}/{total}] {cell_label(row)}: {text} · {time.perf_counter() - started:.1f} s",
                  flush=True)

    where = f"on the Dask cluster at {args.scheduler}" if args.scheduler else "locally"
    print(f"Exploring {total} cell{'s' if total != 1 else ''} x {folds} folds {where}...", flush=True)
    try:
        return explore(features, event, lam=grid, n_folds=folds, random_state=args.seed, params=params,
                       n_jobs=args.jobs, scheduler=args.scheduler or None, progress=progress)
    except KeyboardInterrupt:
        raise _Interrupted(finished[0], total) from None


class _Interrupted(Exception):
    def __init__(self, done: int, total: int):
        super().__init__(f"{done} of {total} cells")
        self.done, self.total = done, total


def _params_from_args(args) -> dict:
    from .cli import _parse_thresholds

    params = {"exclude": tuple(args.exclude), "n_steps": args.steps, "n_chains": args.chains,
              "max_rules": args.max_rules, "rule_prior": getattr(args, "rule_prior", "mined")}
    thresholds = _parse_thresholds(args.threshold)
    if thresholds:
        params["thresholds"] = thresholds
    return params


def cmd_explore(args) -> int:
    from .cli import load_training_data
    from .explore import ExploreGrid
    from .explore_figures import explore_report_html

    grid = ExploreGrid(parse_list(args.lam, "--lam"), parse_list(args.min_support, "--min-support"),
                       parse_list(args.max_conditions, "--max-conditions", integer=True),
                       parse_list(args.n_thresholds, "--n-thresholds", integer=True))
    if args.folds < 2:
        raise FRLError(f"Cross-validation needs at least 2 folds, got {args.folds}")
    _write_check(args.out, "table")
    _write_check(args.html, "report")
    features, event, positive = load_training_data(args)
    print(f"{Path(args.data).name}: event {args.target} = {event_label(positive)}; {len(features):,} rows, {int(event.sum()):,} events")
    with _sigterm_as_interrupt():
        try:
            result = run_exploration(args, features, event, lam=grid.lam, min_support=grid.min_support,
                                     max_conditions=grid.max_conditions, n_thresholds=grid.n_thresholds,
                                     folds=args.folds,
                                     params=_params_from_args(args))
        except _Interrupted as stop:
            print(f"frl: explore stopped: {stop.done} of {stop.total} cells had finished; nothing was written",
                  file=sys.stderr)
            return 130
    print()
    print(result.format_table())
    print("* recommended (the shortest list within one standard error of the best AUROC)  + Pareto-best")
    rec = result.recommended
    if rec is not None:
        print(f"Recommended: --lam {rec['lam']:g} --min-support {rec['min_support']:g} "
              f"--max-conditions {int(rec['max_conditions'])} --n-thresholds {int(rec['n_thresholds'])} "
              f"({int(rec['n_rules'])} rule{'s' if int(rec['n_rules']) != 1 else ''}, AUROC "
              f"{rec['auroc_mean']:.3f}); fit it with `frl fit ... --tune` or these options.")
        if float(result.table["n_rules"].max()) == 0:   # every cell fitted the empty list: nothing to recommend by
            print("Warning: no setting found a rule that beats the overall risk (every cell's list is empty, its "
                  "AUROC 0.5): the recommendation only names the simplest cell. Try a lower --min-support, a larger "
                  "--lam, or more patients.")
    if args.out:
        result.table.to_csv(args.out, index=False)
        print(f"Table written to {args.out}")
    if args.html:
        Path(args.html).write_text(explore_report_html(result, title=f"{Path(args.data).name}: {args.target} = "
                                                                       f"{event_label(positive)}, settings explored"),
                                   encoding="utf-8")
        print(f"Report written to {args.html}")
    print(f"Took {result.elapsed_seconds:.1f} s ({result.where}).")
    return 0


def apply_tuning(args) -> None:
    """``frl fit --tune``: explore the tuning grid, print it, and set args.lam/min_support/max_conditions
    to the recommended cell so the fit that follows fits that cell's list."""
    from .cli import load_training_data

    lam = parse_list(args.tune_lam, "--tune-lam")
    support = parse_list(args.tune_min_support, "--tune-min-support")
    conditions = parse_list(args.tune_max_conditions, "--tune-max-conditions", integer=True)
    thresholds = (parse_list(args.tune_n_thresholds, "--tune-n-thresholds", integer=True)
                  if args.tune_n_thresholds is not None else [args.n_thresholds])
    if args.tune_folds < 2:
        raise FRLError(f"Cross-validation needs at least 2 folds, got --tune-folds {args.tune_folds}")
    features, event, _ = load_training_data(args)
    args.folds = args.tune_folds
    with _sigterm_as_interrupt():
        try:
            result = run_exploration(args, features, event, lam=lam, min_support=support, max_conditions=conditions,
                                     n_thresholds=thresholds, folds=args.tune_folds, params=_params_from_args(args))
        except _Interrupted as stop:
            raise KeyboardInterrupt from None
    print(result.format_table())
    rec = result.recommended
    if rec is None:
        raise FRLError("No cell of the tuning grid could be fitted: see the messages above")
    args.lam, args.min_support, args.max_conditions = float(rec["lam"]), float(rec["min_support"]), int(rec["max_conditions"])
    args.n_thresholds = int(rec["n_thresholds"])
    args.tuning = result.tuning_record(rec)  # written to the model file's training.tuning by `frl fit`
    print(f"Tuned (one-standard-error rule): --lam {args.lam:g} --min-support {args.min_support:g} "
          f"--max-conditions {args.max_conditions} --n-thresholds {args.n_thresholds}: {int(rec['n_rules'])} rule{'s' if int(rec['n_rules']) != 1 else ''}, cross-validated AUROC "
          f"{rec['auroc_mean']:.3f} (sd {rec['auroc_sd']:.3f}, {args.tune_folds} folds)\n")


def add_tune_arguments(fit_parser) -> None:
    """``--tune`` and its grid options on ``frl fit``."""
    group = fit_parser.add_argument_group("tuning (--tune)")
    group.add_argument("--tune", action="store_true",
                       help="choose lam, min support, max conditions (and thresholds, with --tune-n-thresholds) by cross-validation first (the shortest list "
                            "within one standard error of the best AUROC), then fit that list; overrides --lam, "
                            "--min-support and --max-conditions")
    group.add_argument("--tune-lam", default=DEFAULT_TUNE_LAM, metavar="V1,V2",
                       help=f"lam values to try (default {DEFAULT_TUNE_LAM})")
    group.add_argument("--tune-min-support", default=DEFAULT_TUNE_MIN_SUPPORT, metavar="V1,V2",
                       help=f"min support values to try (default {DEFAULT_TUNE_MIN_SUPPORT})")
    group.add_argument("--tune-max-conditions", default=DEFAULT_TUNE_MAX_CONDITIONS, metavar="V1,V2",
                       help=f"max conditions values to try (default {DEFAULT_TUNE_MAX_CONDITIONS})")
    group.add_argument("--tune-n-thresholds", default=None, metavar="V1,V2",
                       help="thresholds per numeric column to try (default: --n-thresholds, i.e. 3)")
    group.add_argument("--tune-folds", type=int, default=DEFAULT_TUNE_FOLDS,
                       help=f"cross-validation folds (default {DEFAULT_TUNE_FOLDS})")
    group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run the tuning on this dask.distributed scheduler (tcp://host:8786)")
    group.add_argument("--jobs", type=_positive_int, default=-1, help="local worker processes for tuning (default -1: all cores)")


def register(subparsers) -> None:
    explore = subparsers.add_parser(
        "explore", help="cross-validate a grid of lam x min support x max conditions (x thresholds); recommend a cell",
        description="Fit the list of every combination of the given settings on all rows and cross-validate it "
                    "(stratified folds, AUROC); print the table sorted by AUROC with the recommended cell (the "
                    "shortest list within one standard error of the best) and the Pareto-best cells marked. "
                    "--scheduler runs it on a dask.distributed cluster; the table is the same.")
    explore.add_argument("data", help="CSV, Excel (.xlsx), Parquet, SPSS, Stata or SAS table, one row per patient")
    explore.add_argument("--target", required=True, help="the outcome column")
    from .cli import add_sheet_argument

    add_sheet_argument(explore)
    explore.add_argument("--positive", default=None, action="append", metavar="VALUE",
                         help="the outcome value that counts as the event (default: yes/true/1, else a value such as Died or Readmitted, else the larger value; the choice is printed); give it again for each further value that counts as the event")
    explore.add_argument("--codes-as-missing", action="store_true",
                         help="read numbers that look like codes for not known (999 among ages 18 to 94) as missing, "
                              "as `frl fit --codes-as-missing` does")
    explore.add_argument("--drop-repeated-rows", action="store_true",
                         help="leave out the rows that repeat an earlier row in every column, record number included, "
                              "as `frl fit --drop-repeated-rows` does")
    explore.add_argument("--exclude", action="append", default=[], metavar="COLUMN",
                         help="a column not to use (repeat for several)")
    explore.add_argument("--threshold", action="append", default=[], metavar="COLUMN=V1,V2",
                         help="your own thresholds for a numeric column, e.g. Age=45,60 (repeatable)")
    explore.add_argument("--lam", default="2,4,8", metavar="V1,V2", help="prior list lengths to try (default 2,4,8)")
    explore.add_argument("--min-support", default="0.05,0.1", metavar="V1,V2",
                         help="minimum supports to try, fractions in (0, 1) (default 0.05,0.1)")
    explore.add_argument("--max-conditions", default="2", metavar="V1,V2",
                         help="most conditions per rule to try (default 2)")
    explore.add_argument("--n-thresholds", default="3", metavar="V1,V2",
                         help="quantile thresholds per numeric column to try (default 3)")
    explore.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    explore.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    explore.add_argument("--steps", type=annealing_steps, default=5000, help="annealing steps per chain (default 5000)")
    explore.add_argument("--chains", type=int, default=4, help="annealing restarts (default 4)")
    explore.add_argument("--max-rules", type=int, default=5000,
                         help="search at most this many candidate rules, the strongest when mining finds more (default 5000)")
    explore.add_argument("--rule-prior", choices=("mined", "kept"), default="mined",
                         help="the prior draws each rule from every rule mined (default) or only the --max-rules kept")
    explore.add_argument("--scheduler", default=None, metavar="ADDRESS",
                         help="run on this dask.distributed scheduler (e.g. tcp://10.0.0.5:8786) instead of locally")
    explore.add_argument("--jobs", type=_positive_int, default=-1,
                         help="local worker processes (default -1: all cores; the table does not depend on it)")
    explore.add_argument("--out", "-o", help="write the table here (CSV)")
    explore.add_argument("--html", help="write a self-contained HTML report (table, heatmap, frontier)")
    explore.set_defaults(handler=cmd_explore)


if __name__ == "__main__":  # pragma: no cover
    from .cli import main

    sys.exit(main(["explore", *sys.argv[1:]]))
