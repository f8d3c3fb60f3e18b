"""`python -m frl_engine.warmup` (run by make after installing) compiles the kernels and says so."""

import subprocess
import sys


def test_warmup_runs_every_compiled_path_and_reports():
    result = subprocess.run([sys.executable, "-m", "frl_engine.warmup"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "compiled kernels ready" in result.stdout
