"""Speed of making and reading the synthetic raw export (sample_data/make_raw_export.py).

* ``make_raw_export(100_000, seed=0)``: the table in memory (target: a few seconds). Best of 3.
* Writing it as CSV (about 18 MB), and reading it back with ``frl_engine.io.read_table``
  (which first checks the file's bytes against its extension, ``frl_engine/sniff.py``).

Run: ``.venv/bin/python benchmarks/bench_raw_export.py [--rows N]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frl_engine.io import read_table  # noqa: E402
from frl_engine.sniff import check_content  # noqa: E402


def _generator():
    spec = importlib.util.spec_from_file_location("make_raw_export", ROOT / "sample_data" / "make_raw_export.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _best(function, repeats: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return min(times), result


def run(n_rows: int = 100_000) -> None:
    gen = _generator()
    seconds, frame = _best(lambda: gen.make_raw_export(n_rows, seed=0))
    print(f"make_raw_export({n_rows:,}): {seconds:.2f} s  ({frame.shape[0]:,} x {frame.shape[1]})")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "export.csv")
        seconds, _ = _best(lambda: frame.to_csv(path, index=False, lineterminator="\n"), repeats=1)
        size = os.path.getsize(path) / 1024 ** 2
        print(f"write CSV: {seconds:.2f} s  ({size:.1f} MB)")
        raw = Path(path).read_bytes()
        seconds, _ = _best(lambda: check_content(raw, "export.csv", ".csv"))
        print(f"check_content (sniffing the bytes): {1000 * seconds:.2f} ms")
        seconds, back = _best(lambda: read_table(path))
        print(f"read_table: {seconds:.2f} s  ({back.shape[0]:,} x {back.shape[1]})")
    rate = frame[gen.OUTCOME].eq(gen.EVENT).mean()
    print(f"event {gen.EVENT!r}: {rate:.1%} of rows")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    run(parser.parse_args().rows)
