"""How long reading an export takes, by format (what a clinician waits for after an upload).

Writes the synthetic raw export (sample_data/make_raw_export.py: encounters x 50 columns, '?' markers, ICD-9
codes, a three-valued outcome) as CSV, gzip-compressed CSV, an Excel workbook, Parquet, SPSS (.sav) and
Stata (.dta), then times ``frl_engine.io.read_table`` on each (the reader ``frl`` and the dashboard use, from
the file's bytes), the peak memory of reading the CSV in a fresh process, and, for the workbook, pandas' openpyxl reader for comparison (the engine read_table used
before calamine). Writing the workbook takes a while (openpyxl writes about 1,000 rows a second).

usage: python benchmarks/bench_read.py [--rows 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))

from make_raw_export import make_raw_export  # noqa: E402

from frl_engine.io import read_table  # noqa: E402


# VmHWM, the process's own peak (ru_maxrss would carry this parent's peak over the fork).
PEAK_OF_READING = ("import re, sys; from frl_engine.io import read_table; read_table(sys.argv[1]); "
                   "print(round(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) / 1024))")


def _timed(read, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import pyreadstat

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        csv_path = folder / "export.csv"
        make_raw_export(args.rows, seed=0).to_csv(csv_path, index=False)
        table = read_table(csv_path)
        files = {"export.csv": csv_path.read_bytes()}
        files["export.csv.gz"] = gzip.compress(files["export.csv"])
        started = time.perf_counter()
        table.to_excel(folder / "export.xlsx", index=False)
        print(f"(wrote the workbook in {time.perf_counter() - started:.1f} s)")
        files["export.xlsx"] = (folder / "export.xlsx").read_bytes()
        table.to_parquet(folder / "export.parquet", index=False)
        files["export.parquet"] = (folder / "export.parquet").read_bytes()
        named = table.rename(columns=lambda name: re.sub(r"\W", "_", name)[:32])  # SPSS and Stata names: no '-'
        pyreadstat.write_sav(named, str(folder / "export.sav"))
        files["export.sav"] = (folder / "export.sav").read_bytes()
        pyreadstat.write_dta(named, str(folder / "export.dta"))
        files["export.dta"] = (folder / "export.dta").read_bytes()

        print(f"Reading the raw export ({args.rows:,} rows x {table.shape[1]} columns), median of {args.repeats}:")
        print(f"{'file':<16} {'MB':>7} {'read_table s':>13}")
        for name, raw in files.items():
            seconds = _timed(lambda: read_table(raw, name), args.repeats)
            print(f"{name:<16} {len(raw) / 1e6:>7.1f} {seconds:>13.2f}")
        peak = subprocess.run([sys.executable, "-c", PEAK_OF_READING, str(csv_path)], capture_output=True, text=True,
                              check=True, cwd=ROOT).stdout.strip()
        print(f"export.csv read in a fresh process: peak resident memory {peak} MiB "
              f"(the file {len(files['export.csv']) / 2**20:.0f} MiB, the table {table.memory_usage(deep=True).sum() / 2**20:.0f} MiB)")
        book = files["export.xlsx"]
        openpyxl = _timed(lambda: pd.read_excel(io.BytesIO(book), sheet_name=None, header=None, engine="openpyxl"), 1)
        calamine = _timed(lambda: pd.read_excel(io.BytesIO(book), sheet_name=None, header=None, engine="calamine"),
                          args.repeats)
        print(f"the workbook's cells alone: openpyxl {openpyxl:.1f} s, calamine {calamine:.1f} s "
              f"({openpyxl / calamine:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
