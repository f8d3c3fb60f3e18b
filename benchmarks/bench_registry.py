"""Speed of the model registry (SQLite file in a temporary folder).

* Opening a registry (schema check) and registering one model, one after the other: time per entry.
* Looking a model up by the 10-digit ID on its card, and listing, with 1,000 entries in the store.
* Six processes registering 50 models each into one new file at the same moment: wall time, and that
  every one of the 300 entries landed.

Run: ``.venv/bin/python benchmarks/bench_registry.py``  (not part of ``run.py``'s default sections)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from frl_engine.estimator import FallingRuleListClassifier  # noqa: E402
from frl_engine.io import dumps_model  # noqa: E402
from frl_engine.registry import Registry  # noqa: E402

WRITER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from frl_engine.registry import Registry
    location, model_path, worker, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    model = json.loads(Path(model_path).read_text())
    while not go.exists():
        time.sleep(0.002)
    store = Registry(location)
    for i in range(n):
        model["created_at"] = f"2026-04-{1 + worker:02d}T{i // 60:02d}:{i % 60:02d}:00+00:00"
        store.register(model, note=f"w{worker}-{i}")
""")


def _model() -> dict:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"Age": rng.integers(20, 95, 500), "BedSores": rng.random(500) < 0.3})
    y = (frame.Age > 70) & frame.BedSores | (rng.random(500) < 0.1)
    fitted = FallingRuleListClassifier(n_steps=200, n_chains=1, random_state=0).fit(frame, y)
    return json.loads(fitted.to_json(target="y"))


def run() -> None:
    model = _model()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        store = Registry(tmp / "bench.db")
        n = 1000
        started = time.perf_counter()
        last = None
        for i in range(n):
            model["created_at"] = f"2026-05-01T{i // 3600:02d}:{(i // 60) % 60:02d}:{i % 60:02d}+00:00"
            last = store.register(model)
        per = (time.perf_counter() - started) / n
        print(f"register one model (one process, WAL, one transaction each): {1000 * per:.1f} ms per entry")
        started = time.perf_counter()
        for _ in range(100):
            store.get(last.model_id)
        print(f"find a model by its card ID among {n:,} entries: {1000 * (time.perf_counter() - started) / 100:.1f} ms")
        started = time.perf_counter()
        listed = store.entries()
        print(f"list {len(listed):,} entries: {time.perf_counter() - started:.3f} s")
        started = time.perf_counter()
        Registry(tmp / "bench.db")
        print(f"open an existing registry (schema check): {1000 * (time.perf_counter() - started):.1f} ms")
        store.close()

        workers, each = 6, 50
        model_path = tmp / "model.json"
        model_path.write_text(dumps_model(model))
        go = tmp / "go"
        location = str(tmp / "race.db")
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        procs = [subprocess.Popen([sys.executable, "-c", WRITER, location, str(model_path), str(w), str(each), str(go)],
                                  env=env) for w in range(workers)]
        time.sleep(3.0)  # every process imported and waiting at the start line
        started = time.perf_counter()
        go.touch()
        codes = [p.wait() for p in procs]
        wall = time.perf_counter() - started
        landed = len(Registry(location).entries())
        print(f"{workers} processes x {each} registrations at once into one new file: {wall:.2f} s wall, "
              f"{landed} of {workers * each} entries landed, exit codes {sorted(set(codes))}")


if __name__ == "__main__":
    run()
