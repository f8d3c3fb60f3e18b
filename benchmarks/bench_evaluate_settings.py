"""Several FRL settings in one cross-validation: each fold's rules mined once (``frl evaluate --lam 2,4,8``).

Cross-validates FRL alone with ``--lam`` values on the same folds two ways and prints both wall times:

* shared: :func:`frl_engine.validation.sweep.cross_validate_settings` (one binarisation and mining
  per fold, one search per lam);
* separate: :func:`frl_engine.validation.crossval.cross_validate_models` once per lam (mines every time);

and checks that the AUROCs are the same.  Data: the generated raw export (``--rows``, default 20,000;
49 raw columns) or the bundled sample (``--sample``).  Run:
``.venv/bin/python benchmarks/bench_evaluate_settings.py [--rows N] [--lam 2,4,8] [--jobs 2]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))


def main(argv=None) -> int:
    from frl_engine.io import read_table, split_target
    from frl_engine.validation.crossval import cross_validate_models
    from frl_engine.validation.sweep import cross_validate_settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sample", action="store_true", help="the bundled 3,000-patient sample instead")
    parser.add_argument("--lam", default="2,4,8")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args(argv)
    lams = [float(v) for v in args.lam.split(",")]

    if args.sample:
        X, y, _ = split_target(read_table(ROOT / "sample_data" / "readmission.csv"), "Readmitted30d", None)
        base, name = {"exclude": ("PatientID",)}, "sample (3,000 rows)"
    else:
        from make_raw_export import make_raw_export

        X, y, _ = split_target(make_raw_export(args.rows, seed=0), "readmitted", "<30")
        base, name = {}, f"raw export ({args.rows:,} rows, {X.shape[1]} columns)"
    settings = [{**base, "lam": lam, "n_steps": args.steps} for lam in lams]
    print(f"{name}: FRL with lam {', '.join(f'{v:g}' for v in lams)}, {args.folds} folds, n_jobs={args.jobs}",
          flush=True)

    started = time.perf_counter()
    shared = cross_validate_settings(X, y, settings, n_folds=args.folds, methods=("frl",), n_jobs=args.jobs)
    shared_seconds = time.perf_counter() - started
    print(f"shared mining:   {shared_seconds:6.1f} s ({shared.n_frl_fits} fits, {shared.n_minings} minings)", flush=True)

    started = time.perf_counter()
    separate = [cross_validate_models(X, y, n_folds=args.folds, methods=("frl",), frl_params=s, n_jobs=args.jobs)
                for s in settings]
    separate_seconds = time.perf_counter() - started
    print(f"separate runs:   {separate_seconds:6.1f} s ({len(settings) * args.folds} fits, "
          f"{len(settings) * args.folds} minings)", flush=True)
    same = all(a.without_timings() == b.without_timings() for a, b in zip(shared.results, separate))
    print(f"same results: {same}; saved {separate_seconds - shared_seconds:.1f} s "
          f"({100 * (1 - shared_seconds / separate_seconds):.0f}%)")
    for label, result in zip(shared.labels, shared.results):
        s = result.summary("frl")
        print(f"  FRL {label}: AUROC {s.auroc_mean:.3f} ({s.auroc_std:.3f}), lists {' '.join(map(str, s.list_lengths))}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
