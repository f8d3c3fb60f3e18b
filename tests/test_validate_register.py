"""`frl validate --register` attaches the external validation to the registered model (the card's ID)."""

import os
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "readmission.csv"


def _frl(*args, env):
    frl = Path(sys.executable).parent / "frl"
    return subprocess.run([str(frl), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def test_validate_register_attaches_the_result_to_the_fitted_models_entry(tmp_path):
    env = dict(os.environ, FRL_REGISTRY=str(tmp_path / "registry.db"))
    fitted = _frl("fit", SAMPLE, "--target", "Readmitted30d", "--exclude", "PatientID", "--out", tmp_path / "m.json",
                  "--register", env=env)
    assert fitted.returncode == 0, fitted.stderr
    model_id = fitted.stdout.split("Registered as model ID ")[1].split()[0]
    done = _frl("validate", tmp_path / "m.json", SAMPLE, "--register", "--model-out", tmp_path / "v.json",
                "--note", "checked on 2025", env=env)
    assert done.returncode == 0, done.stderr
    # validated on its own training table: attached, and not called external
    assert f"Validation (not external: its training patients) attached to model ID {model_id}" in done.stdout
    shown = _frl("models", "show", model_id, env=env)
    assert shown.returncode == 0 and "readmission.csv" in shown.stdout
    assert "checked on 2025" in shown.stdout   # the note given with the validation is kept with the fitted model
    listed = _frl("models", "list", env=env).stdout
    validated_id = done.stdout.split("registered as model ID ")[1].split()[0]
    assert model_id in listed and validated_id in listed
    bad = _frl("validate", tmp_path / "m.json", SAMPLE, "--note", "x", env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("frl: error: --note is stored with the registered model")


def test_validating_a_retired_model_says_it_was_retired(tmp_path):
    env = dict(os.environ, FRL_REGISTRY=str(tmp_path / "registry.db"))
    fitted = _frl("fit", SAMPLE, "--target", "Readmitted30d", "--exclude", "PatientID", "--steps", "500",
                  "--out", tmp_path / "m.json", "--register", env=env)
    model_id = fitted.stdout.split("Registered as model ID ")[1].split()[0]
    assert _frl("models", "retire", model_id, "--reason", "withdrawn: unsafe", env=env).returncode == 0
    done = _frl("validate", tmp_path / "m.json", SAMPLE, "--register", env=env)
    assert done.returncode == 0, done.stderr
    assert f"Warning: model ID {model_id} was retired on " in done.stdout and f"frl models show {model_id}" in done.stdout


def test_a_validation_on_half_training_patients_is_no_external_auroc_in_the_registry(tmp_path):
    """Fitted on the first half of the table, validated on all of it: the registry keeps the result but shows no
    external AUROC, and says why."""
    import pandas as pd

    env = dict(os.environ, FRL_REGISTRY=str(tmp_path / "registry.db"))
    first_half = tmp_path / "first_half.csv"
    pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(1500).to_csv(first_half, index=False)
    fitted = _frl("fit", first_half, "--target", "Readmitted30d", "--exclude", "PatientID", "--steps", "500",
                  "--out", tmp_path / "m.json", "--register", env=env)
    assert fitted.returncode == 0, fitted.stderr
    model_id = fitted.stdout.split("Registered as model ID ")[1].split()[0]
    done = _frl("validate", tmp_path / "m.json", SAMPLE, "--register", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Not an external validation: about 50% of readmission.csv's rows are patients")
    assert f"Validation (not external: its training patients) attached to model ID {model_id}" in done.stdout
    shown = _frl("models", "show", model_id, env=env).stdout
    assert "(about 50% of them its training patients: not an external validation)" in shown, shown
    listed = [line for line in _frl("models", "list", env=env).stdout.splitlines() if line.startswith(model_id)]
    assert len(listed) == 1 and " ext" not in listed[0], listed
