"""The whole `frl fit` at the defaults on an export whose outcome is logistic, not a planted list.

Generates sample_data/make_logistic_export.py's export (36 columns) at each size and prints the wall
time and peak resident memory of the `frl fit` process, the number of candidate rules, and the
search's verdict line.  On such data the search's chains disagree, so it runs a second round and
walks of the posterior: the figures show what that costs (README, "Measured figures").

usage: python benchmarks/bench_logistic_export.py [--rows 20000,100000] [--seed 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sample_data"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_real_export import peak_rss_of  # noqa: E402
from make_logistic_export import TARGET, make_logistic_export  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="20000", help="comma-separated sizes (default 20000)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    frl = str(Path(sys.executable).with_name("frl"))
    for n_rows in (int(v) for v in args.rows.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "logistic_export.csv"
            make_logistic_export(n_rows, args.seed).to_csv(path, index=False)
            wall, peak, out = peak_rss_of([frl, "fit", str(path), "--target", TARGET])
        summary = next((line for line in out.splitlines() if "candidate rules;" in line), "")
        verdict = next((line for line in out.splitlines() if line.startswith("Warning: Search")), "search converged")
        print(f"{n_rows:,} rows: frl fit {wall:.1f} s wall, peak RSS {peak:.0f} MiB")
        print(f"  {summary}")
        print(f"  {verdict[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
