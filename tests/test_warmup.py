"""`python -m frl_engine.warmup` (run by make after installing) compiles the kernels and says so."""

import subprocess
import sys


def test_warmup_runs_every_compiled_path_and_reports():
    result = subprocess.run([sys.executable, "-m", "frl_engine.warmup"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "compiled kernels ready" in result.stdout


# A fit of more rows than row_order.MIN_ROWS (the search re-packs the rows), then the posterior of the model
# after a pickle round trip (the dashboard's worker sends it back pickled), in a fresh process; it prints each
# kernel's argument types as numba dispatched them in that process.
_KERNEL_TYPES = r"""
import pickle, sys
import numpy as np, pandas as pd
import frl_engine.row_order as row_order
from frl_engine import FallingRuleListClassifier
rng = np.random.default_rng(0)
n = 600
X = pd.DataFrame({"age": rng.integers(18, 95, n), "ward": rng.choice(list("ABCDE"), n), "flag": rng.random(n) < 0.3})
y = (X["ward"].eq("C") & (rng.random(n) < 0.7)) | (rng.random(n) < 0.15)
row_order.MIN_ROWS = 256   # the re-packed path of a large export, on a small table
model = FallingRuleListClassifier(random_state=0, n_chains=2).fit(X, y)
small = FallingRuleListClassifier(random_state=0, n_chains=2).fit(X.iloc[:200], y[:200])
pickle.loads(pickle.dumps(model)).sample_posterior(100, n_chains=2, random_state=0, extend=False)
small.sample_posterior(100, n_chains=2, random_state=0, extend=False)
import numba
from numba.core.registry import CPUDispatcher
import frl_engine
for name, module in sorted(sys.modules.items()):
    if not name.startswith("frl_engine"):
        continue
    for attr, value in sorted(vars(module).items()):
        if isinstance(value, CPUDispatcher) and value.__module__ == name:
            for signature in value.signatures:
                print(f"{name}.{attr}|" + ";".join(str(t) for t in signature))
"""


def test_a_large_fit_and_an_unpickled_model_use_the_warmed_up_kernels():
    # numba compiles a kernel once per argument type, and a read-only array is another type than a
    # writable one: the re-packed rows of a table above row_order.MIN_ROWS used to be writable where the
    # warm-up's were read-only, so a user's first fit of a real export compiled 16 kernels again (66 s
    # instead of 1.7 s on 12,000 rows).  So: no kernel may be called with the same arrays read-only in
    # one place and writable in another.
    result = subprocess.run([sys.executable, "-c", _KERNEL_TYPES], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    seen = {}
    for line in result.stdout.splitlines():
        kernel, types = line.split("|")
        seen.setdefault(kernel, set()).add(types.replace("readonly ", ""))
        seen.setdefault(kernel + " as called", []).append(types)
    kernels = [k for k in seen if not k.endswith(" as called")]
    assert "frl_engine.anneal.anneal_chain" in kernels and "frl_engine.sampler.run_ladder" in kernels
    assert "frl_engine.row_order.permute_bits" in kernels   # the re-packed path ran
    for kernel in kernels:
        called = seen[kernel + " as called"]
        # as many distinct signatures with the read-only flags ignored as with them: no array type twice
        assert len(seen[kernel]) == len(called), f"{kernel} was compiled for read-only and writable arrays:\n" + \
            "\n".join(called)
