"""Test-wide settings.

The model registry (frl_engine/registry.py) defaults to the user's data folder, and the CLI and the
dashboard register fits there.  Tests must never write to it: ``FRL_REGISTRY`` points at a throw-away
file for the whole session (subprocesses and the dashboard's test server inherit it); a test that
needs a fresh registry of its own sets the variable again with ``monkeypatch``.
"""

import os
import shutil
import tempfile


def pytest_configure(config):
    folder = tempfile.mkdtemp(prefix="frl-test-registry-")
    config._frl_registry_folder = folder
    os.environ["FRL_REGISTRY"] = os.path.join(folder, "registry.db")


def pytest_unconfigure(config):
    folder = getattr(config, "_frl_registry_folder", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
