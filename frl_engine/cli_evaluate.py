"""``frl evaluate`` and ``frl reproduce``: what a falling rule list costs in accuracy.

``frl evaluate DATA --target COL`` cross-validates FRL against SVM, logistic
regression, CART and random forest and prints the AUROC table; ``--out``
writes the full result as JSON, ``--html`` a self-contained report (plotly.js
inlined, works offline).

``frl reproduce --data-dir DIR`` runs the paper's section 5 on the raw UCI
files and prints Tables 3, 4 and 5 beside the paper's numbers;
``--simulation`` adds (or, without ``--data-dir``, runs only) the simulation
study of section 4.  ``--out DIR`` writes reproduction.json, reproduction.txt,
reproduction.html (and simulation.csv, simulation.html).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from .errors import FRLError
from .io import event_label
from .cv_result import METHODS, PAPER_METHODS


def _positive_int(text: str) -> int:
    """``--jobs``: a whole number other than 0 (-1: one process per core; -2: all cores but one, as joblib reads it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("0 processes cannot run anything: give 1, 2, ... or -1 for one per core")
    return value


def annealing_steps(text: str) -> int:
    """``--steps``: 1 or more annealing steps per chain, refused while the command line is read.  0 would leave the
    whole search to its posterior walks, about 20 times slower than the default (the API's ``n_steps=0`` still
    allows it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"give 1 or more annealing steps per chain (default 5000), got {value}: without annealing the search "
            "leans on its slow walks")
    return value


def jobs_per_chain(text: str) -> int:
    """``frl sample --jobs``: 1, 2, ... processes or -1 (one per core), refused before the fit rather than after."""
    value = _positive_int(text)
    if value < -1:
        raise argparse.ArgumentTypeError(f"give 1, 2, ... processes or -1 for one per core, got {value}")
    return value


def _write(path, text: str, what: str) -> None:
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise FRLError(f"Cannot write the {what} to {path}: folder {path.parent} does not exist")
    path.write_text(text, encoding="utf-8")


def held_out_leak_note(result, features, event, estimator) -> str | None:
    """A warning when the cross-validated figures look like a leak: a column used whose single best cut nearly is
    the outcome (Youden's J at least :data:`~frl_engine.estimator.PROXY_YOUDEN`: R's birthwt, where low is
    ``bwt < 2500``), or a method ranking the held-out patients almost perfectly (AUROC at least
    :data:`~frl_engine.search_report.LEAK_AUROC`).  ``frl fit`` says so of its list; ``frl evaluate`` said nothing,
    and reported AUROC .96 for a list that would fail on new patients."""
    from .estimator import PROXY_YOUDEN, _best_cut
    from .search_report import LEAK_AUROC

    event = np.asarray(event, dtype=bool)
    readings = estimator._column_reader().fit(features).readings_ if estimator.mine_rules else []
    used = [r.name for r in readings if r.used and r.kind == "numeric"] if readings else []
    cuts = [cut for cut in (_best_cut(features, column, event) for column in used)
            if cut is not None and cut["youden"] >= PROXY_YOUDEN]
    cuts.sort(key=lambda cut: -cut["youden"])
    best = max(((result.summary(m).auroc_mean, m) for m in result.methods), default=(0.0, None))
    if cuts:
        top = cuts[0]
        columns = list(dict.fromkeys(cut["column"] for cut in cuts))
        return (f"'{top['condition']}' alone tells the outcome almost perfectly (sensitivity + specificity - 1 = "
                f"{top['youden']:.2f}): check that {', '.join(repr(c) for c in columns)} "
                f"{'is' if len(columns) == 1 else 'are'} not recorded after the outcome or copied from it, or these "
                f"AUROCs will not hold on new patients. To leave {'it' if len(columns) == 1 else 'them'} out, rerun "
                "with " + " ".join(f"--exclude {shlex.quote(str(c))}" for c in columns))
    if best[0] >= LEAK_AUROC:
        return (f"{best[1].upper() if best[1] in ('frl', 'svm', 'rf', 'hgb') else best[1]} ranks the held-out "
                f"patients almost perfectly (AUROC {best[0]:.3f}): check that no column is recorded after the "
                "outcome or copied from it (--explain-columns lists them)")
    return None


def _progress_line(started: float):
    """A progress line on the terminal, rewritten after every finished (method, fold) fit."""
    def progress(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\r{done} of {total} fits done · {time.perf_counter() - started:.0f} s (Ctrl-C stops)", end=end,
              file=sys.stderr, flush=True)

    return progress


def cmd_evaluate(args) -> int:
    from .cli import estimator_from_args, load_training_data
    from .validation.crossval import check_methods, cross_validate_models
    from .figures import evaluation_report_html

    from .cli_explore import parse_list

    methods = check_methods(args.methods)  # fail fast, before reading the data
    if args.folds < 2:
        raise FRLError(f"Cross-validation needs at least 2 folds, got {args.folds}")
    lams = list(dict.fromkeys(parse_list(args.lam, "--lam")))
    args.lam = lams[0]
    started = time.perf_counter()
    features, event, positive = load_training_data(args)
    estimator = estimator_from_args(args)
    params = estimator.get_params()
    for name in ("random_state", "n_jobs", "positive_class"):
        params.pop(name, None)
    explain = getattr(args, "explain_columns", False) and estimator.mine_rules
    if explain or estimator.exclude or estimator.thresholds or estimator.column_kinds:
        # the columns read as every fold reads its training rows: a misspelt --exclude is refused before any fold,
        # whichever methods run (the baselines leave the excluded columns out too)
        reader = estimator._column_reader().fit(features)
        if explain:
            from .binarize import format_column_table

            print(format_column_table(reader.column_table()) + "\n")
    if len(lams) > 1:
        return _evaluate_settings(args, features, event, positive, methods, params, lams, started)
    result = cross_validate_models(features, event, n_folds=args.folds, methods=methods, frl_params=params,
                                   random_state=args.seed, n_jobs=args.jobs, dataset=Path(args.data).name,
                                   progress=_progress_line(started) if sys.stderr.isatty() else None)
    print(f"{Path(args.data).name}: event {args.target} = {event_label(positive)}")
    print(result.format_table())
    from .search_report import few_patients_text

    few = few_patients_text(len(event), int(np.sum(event)))
    if few:   # every fold trains on fewer still
        print(f"Warning: {few}")
    if "frl" in methods:
        for fold in result.fold_results("frl"):
            print(f"  FRL fold {fold.fold + 1}: {fold_line(fold)}")
    leak = held_out_leak_note(result, features, event, estimator)
    if leak:
        print(f"Warning: {leak}")
    if args.out:
        _write(args.out, result.to_json(indent=1) + "\n", "result")
        print(f"Result written to {args.out}")
    if args.html:
        page = evaluation_report_html(result, title=f"{Path(args.data).name}: {args.target} = {event_label(positive)}, "
                                                    "FRL against the baselines")
        _write(args.html, page, "report")
        print(f"Report written to {args.html}")
    print(f"Took {time.perf_counter() - started:.1f} s.")
    return 0


def fold_line(fold) -> str:
    """``2 rules from 4,254 mined: Age >= 60 | BedSores``, or ``no rule beats the overall risk (4,254 mined)``."""
    if not fold.list_length:
        return f"no rule beats the overall risk ({fold.n_candidates:,} mined)"
    rules = "rule" if fold.list_length == 1 else "rules"
    return f"{fold.list_length} {rules} from {fold.n_candidates:,} mined: " + " | ".join(fold.rules)


def _with_suffix(path, suffix: str) -> Path:
    path = Path(path)
    return path.with_name(f"{path.stem}-{suffix}{path.suffix}")


def _evaluate_settings(args, features, event, positive, methods, params, lams, started) -> int:
    """``frl evaluate --lam 2,8``: every lam on the same folds, each fold's rules mined once (validation.sweep)."""
    from .figures import evaluation_report_html
    from .validation.sweep import cross_validate_settings

    settings = [{**params, "lam": lam} for lam in lams]
    result = cross_validate_settings(features, event, settings, n_folds=args.folds, methods=methods,
                                     random_state=args.seed, n_jobs=args.jobs, dataset=Path(args.data).name,
                                     progress=_progress_line(started) if sys.stderr.isatty() else None)
    print(f"{Path(args.data).name}: event {args.target} = {event_label(positive)}")
    print(result.format_table())
    if "frl" in methods:
        for label, one in zip(result.labels, result.results):
            for fold in one.fold_results("frl"):
                print(f"  FRL {label} fold {fold.fold + 1}: {fold_line(fold)}")
    for lam, one in zip(lams, result.results):
        suffix = f"lam{lam:g}"
        if args.out:
            _write(_with_suffix(args.out, suffix), one.to_json(indent=1) + "\n", "result")
            print(f"Result for lam {lam:g} written to {_with_suffix(args.out, suffix)}")
        if args.html:
            page = evaluation_report_html(one, title=f"{Path(args.data).name}: {args.target} = {event_label(positive)}, "
                                                     f"FRL (lam {lam:g}) against the baselines")
            _write(_with_suffix(args.html, suffix), page, "report")
            print(f"Report for lam {lam:g} written to {_with_suffix(args.html, suffix)}")
    print(f"Took {time.perf_counter() - started:.1f} s.")
    return 0


def cmd_reproduce(args) -> int:
    from .figures import reproduction_report_html, simulation_figure
    from .reproduce import (format_reproduction, format_simulation, reproduce_experiments,
                            simulation_csv, simulation_study)

    if not args.data_dir and not args.simulation:
        raise FRLError("Nothing to reproduce: give --data-dir DIR (the raw UCI files) and/or --simulation")
    out = Path(args.out) if args.out else None
    if out is not None:
        if out.exists() and not out.is_dir():
            raise FRLError(f"--out {out} is a file: give a folder for the reports")
        out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    from .validation.crossval import check_methods

    methods = check_methods(args.methods)
    simulation = None
    result = None
    progress = (lambda line: print(line, flush=True))
    if args.data_dir:
        result = reproduce_experiments(args.data_dir, datasets=args.datasets, methods=methods, n_folds=args.folds,
                                       random_state=args.seed, n_jobs=args.jobs, progress=progress)
    if args.simulation:
        try:
            sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        except ValueError:
            raise FRLError(f"--sizes takes whole numbers separated by commas, e.g. 100,1000,10000; got {args.sizes!r}") from None
        simulation = simulation_study(sizes, args.replicates, n_steps=args.steps, random_state=args.seed,
                                      n_jobs=args.jobs)
        progress(f"Simulation study: {len(sizes)} sizes x {args.replicates} replicates in "
                 f"{simulation.elapsed_seconds:.1f} s")
    print()
    if result is not None:
        result = dataclasses.replace(result, simulation=simulation)
        text = format_reproduction(result)
    else:
        text = format_simulation(simulation)
    print(text)
    if out is not None:
        written = []
        if result is not None:
            (out / "reproduction.json").write_text(result.to_json(indent=1) + "\n", encoding="utf-8")
            (out / "reproduction.txt").write_text(text + "\n", encoding="utf-8")
            (out / "reproduction.html").write_text(reproduction_report_html(result), encoding="utf-8")
            written += ["reproduction.json", "reproduction.txt", "reproduction.html"]
        if simulation is not None:
            (out / "simulation.csv").write_text(simulation_csv(simulation), encoding="utf-8")
            fig = simulation_figure(simulation)
            (out / "simulation.html").write_text(fig.to_html(full_html=True, include_plotlyjs=True), encoding="utf-8")
            written += ["simulation.csv", "simulation.html"]
        print(f"Wrote {', '.join(written)} to {out}")
    print(f"Whole run: {time.perf_counter() - started:.1f} s.")
    return 0


def register(subparsers) -> None:
    from .cli import add_fit_arguments

    evaluate = subparsers.add_parser(
        "evaluate", conflict_handler="resolve",  # --lam below takes several values here
        help="cross-validate FRL against SVM, logistic regression, CART, random forest and gradient boosting",
        description="Stratified k-fold cross-validation of the falling rule list against the paper's baselines "
                    "(SVM RBF and L2 logistic regression tuned by nested grid search, CART, random forest). "
                    "Prints the AUROC per method and fold.")
    add_fit_arguments(evaluate)
    evaluate.add_argument("--lam", default="8", metavar="LAM[,LAM...]",
                          help="prior mean number of rules (default 8); several values separated by commas "
                               "(e.g. 2,4,8) are evaluated on the same folds, each fold's rules mined once, "
                               "and --out/--html then write one file per value (name-lam2.json ...)")
    evaluate.add_argument("--folds", type=_positive_int, default=5, help="number of folds (default 5)")
    evaluate.add_argument("--methods", default=",".join(METHODS),
                          help=f"comma-separated methods to compare (default {','.join(METHODS)})")
    evaluate.add_argument("--jobs", type=_positive_int, default=-1,
                          help="parallel workers over methods and folds (default -1: all cores; "
                               "results do not depend on it)")
    evaluate.add_argument("--out", "-o", help="write the full result (ROC points, predictions, lists) as JSON")
    evaluate.add_argument("--html", help="write a self-contained HTML report with the ROC and calibration figures")
    evaluate.set_defaults(handler=cmd_evaluate)

    reproduce = subparsers.add_parser(
        "reproduce", help="reproduce the paper's experiments (Tables 3-5, simulation study)",
        description="Run the paper's section 5 on the raw UCI files (spambase.data, mammographic_masses.data, "
                    "breast-cancer-wisconsin.data, car.data) and print Tables 3, 4 and 5 beside the paper's "
                    "numbers; --simulation runs the section 4 simulation study too.")
    reproduce.add_argument("--data-dir", help="folder holding the raw UCI files")
    reproduce.add_argument("--out", "-o", help="folder to write reproduction.json/.txt/.html (and simulation.csv/.html)")
    reproduce.add_argument("--datasets", default="spam,mammo,breast,cars",
                           help="comma-separated data sets (default spam,mammo,breast,cars)")
    reproduce.add_argument("--methods", default=",".join(PAPER_METHODS),
                           help=f"comma-separated methods (default {','.join(PAPER_METHODS)}; hgb also possible)")
    reproduce.add_argument("--folds", type=_positive_int, default=5, help="number of folds (default 5)")
    reproduce.add_argument("--seed", type=_positive_int, default=0, help="random seed (default 0)")
    reproduce.add_argument("--jobs", type=_positive_int, default=-1, help="parallel workers (default -1: all cores)")
    reproduce.add_argument("--simulation", action="store_true",
                           help="also run the simulation study of section 4 (alone if --data-dir is not given)")
    reproduce.add_argument("--replicates", type=_positive_int, default=100,
                           help="simulation replicates per N (default 100)")
    reproduce.add_argument("--sizes", default="100,250,500,1000,2500,5000,10000",
                           help="simulation sample sizes N (default 100,250,500,1000,2500,5000,10000)")
    reproduce.add_argument("--steps", type=_positive_int, default=5000,
                           help="annealing steps per simulation replicate (default 5000)")
    reproduce.set_defaults(handler=cmd_reproduce)


if __name__ == "__main__":  # pragma: no cover
    from .cli import main

    sys.exit(main(["evaluate", *sys.argv[1:]]))
