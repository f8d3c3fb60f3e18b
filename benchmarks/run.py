"""Print every speed and memory figure the README quotes.

    python benchmarks/run.py            # engine, mining, sampler (about a minute)
    python benchmarks/run.py --all      # also the paper's reproduction, the 100k raw export and `frl evaluate`
                                        # on 70,000 raw rows with every default method (several minutes)
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SECTIONS = ("bench_engine", "bench_mining", "bench_sampler", "bench_raw_export", "bench_explore:run_speed",
            "bench_search")
SLOW_SECTIONS = ("bench_reproduce", "bench_real_export", "bench_explore:run_accuracy")
SLOW_SECTIONS += ("bench_validate",)  # frl validate at 100,000 patients and on a later period of the raw export
SLOW_SECTIONS += ("bench_evaluate",)  # frl evaluate, every default method, 70,000 raw rows
SLOW_SECTIONS += ("bench_tempering",)  # the default posterior sample with and without parallel tempering
SLOW_SECTIONS += ("bench_rule_prior",)  # the rule prior over every mined rule or the kept ones, on noise labs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="also run the slow benchmarks (paper reproduction)")
    args = parser.parse_args(argv)
    for name in SECTIONS + (SLOW_SECTIONS if args.all else ()):
        print(f"\n=== {name} ===")
        started = time.perf_counter()
        module, _, function = name.partition(":")  # "module:function", default run()
        getattr(importlib.import_module(module), function or "run")()
        print(f"({name} took {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
