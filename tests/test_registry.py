"""The model registry: fits kept with their provenance, found from the ID on the card, never lost or damaged.

SQLite files in temporary folders, several real processes writing at once, the first schema migrated,
damaged and foreign files refused untouched, and the same store on a real PostgreSQL server started here
(Debian's ``postgresql`` package, installed by ``make test``).
"""

import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from frl_engine import registry as reg
from frl_engine.card import model_identifier, model_sha256
from frl_engine.cli import main
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import dumps_model, read_table
from frl_engine.registry import DataFingerprint, Registry, RegistryError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "readmission.csv"
FRL = Path(sys.executable).parent / "frl"


def small_table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"Age": rng.integers(20, 95, size=n),
                          "BedSores": np.where(rng.random(n) < 0.3, "yes", "no")})
    risk = np.where((frame.Age >= 70) & (frame.BedSores == "yes"), 0.7, 0.1)
    frame["Readmitted"] = np.where(rng.random(n) < risk, "yes", "no")
    return frame


@pytest.fixture(scope="module")
def model():
    frame = small_table()
    y = frame.pop("Readmitted")
    fitted = FallingRuleListClassifier(n_steps=300, n_chains=1, random_state=0).fit(frame, y)
    return json.loads(fitted.to_json(target="Readmitted", data_name="patients.csv"))


def variant(model, i):
    """A distinct model (another hash): the same list with another creation time."""
    other = json.loads(json.dumps(model))
    other["created_at"] = f"2026-01-01T00:00:{i:02d}+00:00"
    return other


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "registry.db"
    monkeypatch.setenv("FRL_REGISTRY", str(path))
    registry = Registry()
    yield registry
    registry.close()


def run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ============================================================================ the store
def test_an_entry_keeps_the_model_byte_for_byte_under_the_cards_id(store, model):
    text = dumps_model(model) + "\n"
    data = DataFingerprint.of_bytes(b"Age,BedSores,Readmitted\n1,yes,no\n", name="patients.csv", n_rows=1,
                                    columns=["Age", "BedSores", "Readmitted"], outcome="Readmitted", event="yes")
    entry = store.register(text, data=data, note="ward 7 pilot", command="frl fit patients.csv")
    assert entry.model_id == model_identifier(json.loads(text)) and len(entry.model_id) == 10
    assert entry.sha256 == model_sha256(json.loads(text)) == hashlib.sha256(
        json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    assert entry.model_bytes == text.encode("utf-8")
    assert entry.data.sha256 == hashlib.sha256(b"Age,BedSores,Readmitted\n1,yes,no\n").hexdigest()
    assert (entry.data.n_rows, entry.data.n_columns, entry.data.outcome, entry.data.event) == (
        1, 3, "Readmitted", "yes")
    assert entry.hyperparameters == model["hyperparameters"] and entry.seed == 0
    assert entry.n_rules == len(model["rules"]) and entry.note == "ward 7 pilot"
    assert entry.software_version.startswith("frl_engine ") and "numpy" in entry.environment
    # Found again from the card's ID, from a shorter prefix, and in upper case.
    assert store.get(entry.model_id).sha256 == entry.sha256
    assert store.get(entry.model_id[:4].upper()).sha256 == entry.sha256
    assert [e.sha256 for e in store.entries()] == [entry.sha256]
    assert [h.kind for h in store.history(entry.model_id)] == ["registered"]


def test_registering_the_same_model_twice_keeps_one_entry(store, model):
    first = store.register(model)
    again = store.register(dumps_model(model) + "\n", note="second time")
    assert again.sha256 == first.sha256 and len(store.entries()) == 1
    assert again.note == "second time"  # what the second call brought is attached, not lost


def test_unknown_and_malformed_ids(store, model):
    entries = [store.register(variant(model, i)) for i in range(20)]
    absent = next(f"{d:x}" * 4 for d in range(16) if not any(e.sha256.startswith(f"{d:x}" * 4) for e in entries))
    with pytest.raises(RegistryError, match="No model with ID"):
        store.get(absent)
    assert store.find(absent) is None
    for bad in ("", "abc", "not-hex!", "g" * 10, "a" * 65):
        with pytest.raises(RegistryError, match="not a model ID"):
            store.get(bad)


def test_ambiguous_prefix_is_refused(store, model):
    # Find two variants sharing their first 4 hex digits (a birthday search over creation times).
    seen = {}
    for i in range(3000):
        other = variant(model, i % 60)
        other["created_at"] = f"2026-01-{1 + i // 3600:02d}T00:{(i // 60) % 60:02d}:{i % 60:02d}+00:00"
        prefix = model_sha256(other)[:4]
        if prefix in seen:
            a, b = seen[prefix], other
            break
        seen[prefix] = other
    else:  # pragma: no cover - 3000 draws among 65536 prefixes collide with probability > 0.9999
        pytest.fail("no shared prefix found")
    store.register(a)
    store.register(b)
    with pytest.raises(RegistryError, match="ambiguous: 2 models"):
        store.get(prefix)
    assert store.get(model_identifier(a)).sha256 == model_sha256(a)


def test_results_attach_and_retire_hides_but_never_deletes(store, model):
    entry = store.register(model)
    cv = {"method": "5-fold stratified cross-validation", "n_folds": 5, "auroc_mean": 0.81, "auroc_std": 0.02}
    store.attach_results(entry.model_id, cross_validation=cv)
    store.attach_results(entry.model_id, external_validation={"data_name": "2025.csv", "auroc": 0.78},
                         posterior={"n_samples": 1000})
    updated = store.get(entry.model_id)
    assert updated.cross_validation == cv and updated.external_auroc == 0.78 and updated.cv_auroc == 0.81
    assert updated.auroc_text() == "0.810 cv, 0.780 ext" and updated.posterior == {"n_samples": 1000}
    assert updated.model_json == entry.model_json  # results sit beside the model, never in it
    retired = store.retire(entry.model_id, reason="replaced")
    assert retired.retired and store.entries() == [] and store.count() == (0, 1)
    assert [e.sha256 for e in store.entries(include_retired=True)] == [entry.sha256]
    assert store.get(entry.model_id).model_json == entry.model_json
    assert [h.kind for h in store.history(entry.model_id)] == ["registered", "results", "results", "retired"]
    assert store.history(entry.model_id)[-1].detail == {"reason": "replaced"}
    assert store.retire(entry.model_id).retired_at == retired.retired_at  # twice: unchanged


def test_a_model_file_with_an_external_validation_block_keeps_it_as_its_result(store, model):
    block = {"data_name": "2025.csv", "n": 1000, "events": 120, "auroc": 0.77, "auroc_ci": [0.73, 0.81]}
    validated = dict(model, external_validation=block)
    original = store.register(model)
    entry = store.register(validated, parent=original.model_id)
    assert entry.external_validation == block and entry.external_auroc == 0.77
    assert entry.parent_sha256 == original.sha256 and store.get(original.model_id).external_validation is None


def test_a_validation_not_checked_for_the_training_patients_is_listed_as_val_not_ext(store, model):
    """The new table lacked columns of the training-row sample: `frl models list` tagged its AUROC "ext"."""
    block = {"data_name": "cut.csv", "n": 1000, "events": 120, "auroc": 0.805, "training_unchecked": ["bmi"]}
    entry = store.register(dict(model, external_validation=block))
    assert entry.external_auroc is None and entry.unchecked_auroc == 0.805 and entry.auroc_text() == "0.805 val"
    checked = store.register(dict(model, external_validation={k: v for k, v in block.items()
                                                              if k != "training_unchecked"}))
    assert checked.auroc_text() == "0.805 ext" and checked.unchecked_auroc is None


def test_module_level_attach_results_uses_the_default_registry(store, model):
    entry = store.register(model)
    reg.attach_results(entry.model_id, external_validation={"auroc": 0.7})
    assert store.get(entry.model_id).external_auroc == 0.7


def test_a_parent_links_the_same_fit_with_its_posterior(store, model):
    first = store.register(model)
    with_posterior = dict(model, posterior={"n_samples": 10, "risk_lower": [0.1] * (len(model["rules"]) + 1)})
    child = store.register(with_posterior, parent=first.model_id, created_by="dashboard")
    assert child.parent_sha256 == first.sha256 and child.posterior["n_samples"] == 10
    assert child.user_name is None  # the dashboard does not know its user unless told


def test_the_default_location_is_the_per_user_data_folder(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.delenv("FRL_REGISTRY", raising=False)
    assert reg.default_location() == str(Path(platformdirs.user_data_dir("frl", appauthor=False)) / "registry.db")
    monkeypatch.setenv("FRL_REGISTRY", str(tmp_path / "x.db"))
    assert reg.default_location() == str(tmp_path / "x.db")


# ============================================================================ migrations
def make_v1_store(path, rows):
    """A registry exactly as schema version 1 made it, holding ``rows``."""
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        reg.MIGRATIONS[1](conn)
        conn.execute(sa.insert(reg.schema_table).values(version=1))
        conn.execute(sa.insert(sa.Table("frl_models", sa.MetaData(), autoload_with=conn)), rows)
    engine.dispose()


def v1_row(model, retired_at=None):
    text = dumps_model(model) + "\n"
    return {"sha256": model_sha256(model), "model_id": model_identifier(model), "model_json": text,
            "created_at": "2026-01-02T03:04:05.000+00:00", "created_by": "cli", "user_name": "ana",
            "n_rules": len(model["rules"]), "retired_at": retired_at, "note": "from version 1"}


def test_a_version_1_store_is_migrated_and_keeps_every_entry(tmp_path, model):
    path = tmp_path / "v1.db"
    old = [v1_row(variant(model, 1)), v1_row(variant(model, 2), retired_at="2026-02-01T00:00:00.000+00:00")]
    make_v1_store(path, old)
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM frl_registry_schema").fetchall() == [(1,)]
        assert "frl_model_events" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    store = Registry(path)
    assert store.schema_version() == reg.SCHEMA_VERSION == 2
    for row in old:
        entry = store.get(row["model_id"])
        assert entry.model_json == row["model_json"] and entry.note == "from version 1"
        assert [h.kind for h in store.history(row["model_id"])] == (
            ["registered", "retired"] if row["retired_at"] else ["registered"])
    assert [e.model_id for e in store.entries()] == [old[0]["model_id"]]
    store.register(variant(model, 3))  # and it works as a current store
    assert len(store.entries()) == 2
    store.close()
    assert Registry(path).schema_version() == 2  # opening again migrates nothing


def test_a_store_from_a_newer_frl_is_refused_untouched(tmp_path, model):
    path = tmp_path / "new.db"
    Registry(path).register(model)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE frl_registry_schema SET version = 99")
    before = digest(path)
    with pytest.raises(RegistryError, match="schema version 99, made by a newer frl"):
        Registry(path)
    assert digest(path) == before


# ============================================================================ bad files, one line each
def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database " * 100)
    with pytest.raises(RegistryError, match="is not an SQLite database"):
        Registry(path)
    assert path.read_bytes() == b"this is not a database " * 100


def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path):
    path = tmp_path / "hospital.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE patients (id INTEGER, name TEXT)")
        raw.execute("INSERT INTO patients VALUES (1, 'A')")
    before = digest(path)
    with pytest.raises(RegistryError, match="not a model registry .* tables patients"):
        Registry(path)
    assert digest(path) == before
    assert not Path(str(path) + "-wal").exists()


def test_a_damaged_registry_is_one_line_and_its_entries_survive_elsewhere(tmp_path, model, monkeypatch):
    path = tmp_path / "registry.db"
    store = Registry(path)
    for i in range(30):
        store.register(variant(model, i))
    store.close()
    raw = path.read_bytes()
    damaged = tmp_path / "damaged.db"  # a registry whose pages after the header are overwritten
    damaged.write_bytes(raw[:100] + b"\xff" * (len(raw) - 100))
    monkeypatch.setenv("FRL_REGISTRY", str(damaged))
    before = digest(damaged)
    result = subprocess.run([str(FRL), "models", "list"], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("frl: error: ")
    assert digest(damaged) == before


@pytest.mark.parametrize("content", [b"this is not a database " * 100, b"\x00" * 4096, b"{\"format\": \"frl-model\"}"])
def test_the_cli_says_one_line_for_a_file_that_is_not_a_registry(tmp_path, content, monkeypatch, capsys):
    path = tmp_path / "models.db"
    path.write_bytes(content)
    monkeypatch.setenv("FRL_REGISTRY", str(path))
    result = subprocess.run([str(FRL), "models", "list"], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "registry" in result.stderr
    for argv in (["models", "show", "abcdef"], ["models", "export", "abcdef", "--out", tmp_path / "x.json"],
                 ["models", "retire", "abcdef"]):
        status, out, err = run(argv, capsys)
        assert status == 2 and len(err.strip().splitlines()) == 1 and "registry" in err
    assert path.read_bytes() == content and not (tmp_path / "x.json").exists()


def test_a_folder_and_an_unreachable_server_are_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FRL_REGISTRY", str(tmp_path))
    status, _, err = run(["models", "list"], capsys)
    assert status == 2 and "is a folder" in err and len(err.strip().splitlines()) == 1
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FRL_REGISTRY", f"postgresql+psycopg://frl:secret@127.0.0.1:{port}/frl")
    status, _, err = run(["models", "list"], capsys)
    assert status == 2 and "Cannot reach the model registry" in err and "secret" not in err
    assert len(err.strip().splitlines()) == 1
    monkeypatch.setenv("FRL_REGISTRY", "nosuchdb://x/y")
    status, _, err = run(["models", "list"], capsys)
    assert status == 2 and "unknown database kind" in err


# ============================================================================ the CLI
def test_fit_register_list_show_export_retire(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FRL_REGISTRY", str(tmp_path / "registry.db"))
    table = tmp_path / "patients.csv"
    small_table().to_csv(table, index=False)
    out = tmp_path / "model.json"
    status, text, err = run(["fit", table, "--target", "Readmitted", "--steps", "300", "--chains", "1", "--seed", "5",
                             "--out", out, "--register", "--note", "ward 7 pilot"], capsys)
    assert status == 0, err
    model_id = model_identifier(json.loads(out.read_text()))
    assert f"Registered as model ID {model_id}" in text
    status, listed, _ = run(["models", "list"], capsys)
    assert status == 0 and model_id in listed and "patients.csv (400 rows)" in listed and "ward 7 pilot" in listed
    status, shown, _ = run(["models", "show", model_id[:6]], capsys)
    assert status == 0 and f"Model ID     {model_id}" in shown
    assert hashlib.sha256(table.read_bytes()).hexdigest() in shown and "Readmitted = yes" in shown
    assert "Seed         5" in shown and "--note 'ward 7 pilot'" in shown and "IF " in shown
    status, _, _ = run(["models", "export", model_id, "--out", tmp_path / "exported.json"], capsys)
    assert status == 0 and (tmp_path / "exported.json").read_bytes() == out.read_bytes()
    status, _, _ = run(["models", "retire", model_id, "--reason", "pilot over"], capsys)
    status, listed, _ = run(["models", "list"], capsys)
    assert model_id not in listed and "1 retired not shown" in listed
    status, listed, _ = run(["models", "list", "--all"], capsys)
    assert f"{model_id} (retired)" in listed and "0 models in use and 1 retired in" in listed
    status, shown, _ = run(["models", "show", model_id], capsys)
    assert "retired" in shown and "pilot over" in shown


def test_note_without_register_and_a_bad_registry_fail_before_the_fit(tmp_path, monkeypatch, capsys):
    table = tmp_path / "patients.csv"
    small_table().to_csv(table, index=False)
    status, out, err = run(["fit", table, "--target", "Readmitted", "--note", "x"], capsys)
    assert status == 2 and "--register" in err and out == ""
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"junk" * 100)
    monkeypatch.setenv("FRL_REGISTRY", str(bad))
    status, out, err = run(["fit", table, "--target", "Readmitted", "--register"], capsys)
    assert status == 2 and "not an SQLite database" in err and out == ""  # nothing fitted, nothing printed


def test_sample_register_keeps_the_model_with_its_intervals(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FRL_REGISTRY", str(tmp_path / "registry.db"))
    table = tmp_path / "patients.csv"
    small_table().to_csv(table, index=False)
    status, _, err = run(["sample", table, "--target", "Readmitted", "--steps", "300", "--chains", "2",
                          "--samples", "200", "--jobs", "1", "--model-out", tmp_path / "m.json", "--register"], capsys)
    assert status == 0, err
    entry = Registry().get(model_identifier(json.loads((tmp_path / "m.json").read_text())))
    assert entry.model_bytes == (tmp_path / "m.json").read_bytes()
    assert entry.posterior["n_samples"] > 0
    assert entry.posterior == json.loads((tmp_path / "m.json").read_text())["posterior"]
    status, shown, _ = run(["models", "show", entry.model_id], capsys)   # R-hat in words, not a Python dict
    assert status == 0 and re.search(r"R-hat \d\.\d{3} \(log posterior\), \d\.\d{3} \(list length\)", shown), shown
    assert "{'" not in shown


@pytest.mark.skipif(not SAMPLE.is_file(), reason="sample_data/readmission.csv is not generated yet")
def test_four_fits_registered_at_once_all_land_under_their_card_ids(tmp_path, monkeypatch, capsys):
    env = dict(os.environ, FRL_REGISTRY=str(tmp_path / "models.db"))  # a fresh file: created by the racers
    procs = [subprocess.Popen([str(FRL), "fit", str(SAMPLE), "--target", "Readmitted30d", "--exclude", "PatientID",
                               "--seed", str(s), "--register",  # the defaults: fewer chains would walk longer
                               "--out", str(tmp_path / f"m{s}.json")], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [o[1][-300:] for o in outs]
    monkeypatch.setenv("FRL_REGISTRY", env["FRL_REGISTRY"])
    _, listed, _ = run(["models", "list"], capsys)
    card_ids = []
    for s in range(4):  # the ID `frl card` prints
        _, printed, _ = run(["card", tmp_path / f"m{s}.json", "--out", tmp_path / f"c{s}.pdf"], capsys)
        card_ids.append(printed.rsplit("model ID ", 1)[1].strip())
    assert len(set(card_ids)) == 4 and all(i in listed for i in card_ids)
    assert "4 models in" in listed
    # The exported model predicts exactly as the fitted one.
    assert run(["models", "export", card_ids[2], "--out", tmp_path / "e.json"], capsys)[0] == 0
    assert (tmp_path / "e.json").read_bytes() == (tmp_path / "m2.json").read_bytes()
    frame = read_table(SAMPLE)
    fitted = FallingRuleListClassifier.load(tmp_path / "m2.json")
    exported = FallingRuleListClassifier.load(tmp_path / "e.json")
    np.testing.assert_array_equal(exported.predict_proba(frame), fitted.predict_proba(frame))
    np.testing.assert_array_equal(exported.apply(frame), fitted.apply(frame))


# ============================================================================ no lost writes
WRITER = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from frl_engine.registry import Registry
    location, model_path, worker, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    model = json.loads(Path(model_path).read_text())
    while not go.exists():
        time.sleep(0.005)
    store = Registry(location)
    for i in range(n):
        model["created_at"] = f"2026-03-{1 + worker:02d}T00:00:{i:02d}+00:00"
        store.register(model, note=f"worker {worker} #{i}")
    print("ok")
""")


def race(location, model, tmp_path, workers=6, each=10):
    model_path = tmp_path / "model.json"
    model_path.write_text(dumps_model(model))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, location, str(model_path), str(w), str(each), str(go)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(workers)]
    time.sleep(1.0)  # let every process import and wait at the start line
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * workers, [o[1][-400:] for o in outs]
    return {f"worker {w} #{i}" for w in range(workers) for i in range(each)}


def test_many_processes_registering_into_one_new_sqlite_file_lose_nothing(tmp_path, model):
    path = tmp_path / "race.db"
    expected = race(str(path), model, tmp_path)
    store = Registry(path)
    notes = [e.note for e in store.entries()]
    assert len(notes) == len(expected) and set(notes) == expected
    assert len({e.sha256 for e in store.entries()}) == len(expected)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("SELECT count(*) FROM frl_model_events").fetchone()[0] == len(expected)


# ============================================================================ PostgreSQL
def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@pytest.fixture(scope="module")
def postgres_url():
    """A throw-away PostgreSQL cluster in a temporary folder on a free port of 127.0.0.1; removed afterwards."""
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian package postgresql; `make test` installs it)")
    pytest.importorskip("psycopg", reason="the PostgreSQL driver psycopg is not installed (pip install -e '.[test]')")
    folder = Path(tempfile.mkdtemp(prefix="frl-pg-"))
    data, sockets = folder / "data", folder / "sockets"
    data.mkdir()
    sockets.mkdir()
    prefix = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as the unprivileged postgres user
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as an unprivileged user")
        folder.chmod(0o755)
        shutil.chown(data, "postgres", "postgres")
        shutil.chown(sockets, "postgres", "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    made = subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "frl", "-A", "trust", "--no-sync",
                           "-E", "UTF8"], capture_output=True, text=True)
    if made.returncode != 0:  # pragma: no cover - report why
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"initdb failed: {made.stderr.strip()[-500:]}")
    options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off"
    started = subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                              str(sockets / "log"), "-w", "-t", "60", "start"], capture_output=True, text=True)
    if started.returncode != 0:  # pragma: no cover - report why
        log = (sockets / "log").read_text() if (sockets / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stderr} {log[-500:]}")
    try:
        yield f"postgresql+psycopg://frl@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _drop_all(url):
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for name in ("frl_model_events", "frl_models", "frl_registry_schema", "other_app"):
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {name}"))
    engine.dispose()


def test_postgresql_keeps_entries_attaches_results_and_retires(postgres_url, model):
    _drop_all(postgres_url)
    engine = sa.create_engine(postgres_url)  # another application's table in the same database is left alone
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE other_app (x integer)"))
    engine.dispose()
    store = Registry(postgres_url)
    assert store.schema_version() == reg.SCHEMA_VERSION and store.location == postgres_url
    text = dumps_model(model) + "\n"
    entry = store.register(text, data=DataFingerprint.of_bytes(b"x", name="p.csv", n_rows=3, columns=["a", "b"],
                                                               outcome="b", event="yes"), note="server")
    assert store.get(entry.model_id[:5]).model_bytes == text.encode("utf-8")
    assert store.get(entry.model_id).hyperparameters == model["hyperparameters"]
    store.attach_results(entry.model_id, external_validation={"auroc": 0.75})
    store.retire(entry.model_id)
    assert store.entries() == [] and store.get(entry.model_id).external_auroc == 0.75
    assert [h.kind for h in store.history(entry.model_id)] == ["registered", "results", "retired"]
    store.close()


def test_a_plain_postgresql_url_uses_psycopg_3(postgres_url, model):
    store = Registry(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    assert store.url.drivername == "postgresql+psycopg" and store.schema_version() == reg.SCHEMA_VERSION
    store.close()


def test_postgresql_many_processes_at_once_lose_nothing(postgres_url, model, tmp_path):
    _drop_all(postgres_url)  # the racers also race to create the schema
    expected = race(postgres_url, model, tmp_path, workers=5, each=8)
    store = Registry(postgres_url)
    assert {e.note for e in store.entries()} == expected and len(store.entries()) == len(expected)
    store.close()


def test_postgresql_migrates_a_version_1_store(postgres_url, model):
    _drop_all(postgres_url)
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        reg.MIGRATIONS[1](conn)
        conn.execute(sa.insert(reg.schema_table).values(version=1))
        conn.execute(sa.insert(sa.Table("frl_models", sa.MetaData(), autoload_with=conn)), [v1_row(model)])
    engine.dispose()
    store = Registry(postgres_url)
    assert store.schema_version() == 2
    assert store.get(model_identifier(model)).model_json == dumps_model(model) + "\n"
    assert [h.kind for h in store.history(model_identifier(model))] == ["registered"]
    store.close()


def test_reading_a_registry_that_does_not_exist_says_so_and_creates_nothing(tmp_path, monkeypatch, capsys):
    """A misspelt FRL_REGISTRY: list, show, export and retire say the registry does not exist (list exits 0: nothing
    is registered there) and leave no empty registry or folders behind; a register then creates it."""
    typo = tmp_path / "typo" / "folder" / "regsitry.db"
    monkeypatch.setenv("FRL_REGISTRY", str(typo))
    status, out, err = run(["models", "list"], capsys)
    assert status == 0 and f"FRL_REGISTRY names '{typo}', which does not exist (check the spelling)" in out
    for argv in (["models", "show", "abcdef"], ["models", "export", "abcdef", "--out", tmp_path / "x.json"],
                 ["models", "retire", "abcdef"]):
        status, out, err = run(argv, capsys)
        assert status == 2 and "which does not exist" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists() and not (tmp_path / "x.json").exists()
    Registry(typo).close()   # what a register does first
    status, out, _ = run(["models", "list"], capsys)
    assert status == 0 and "No models registered yet" in out


def test_a_read_only_registry_is_refused_before_the_fit_and_read_as_before(tmp_path, model, monkeypatch, capsys):
    """A read-only registry URL opened (opening only reads) and `--register` failed only after the whole fit.
    Now `fit`, `sample` and `validate` refuse it first, in one line; `models list` still reads it."""
    path = tmp_path / "registry.db"
    store = Registry(path)
    store.register(model)
    store.close()
    before = digest(path)
    table = tmp_path / "patients.csv"
    small_table().to_csv(table, index=False)
    model_file = tmp_path / "model.json"
    model_file.write_text(json.dumps(model))
    monkeypatch.setenv("FRL_REGISTRY", f"sqlite:///file:{path}?mode=ro&uri=true")
    for argv in (["fit", table, "--target", "Readmitted", "--register", "--out", tmp_path / "m.json"],
                 ["sample", table, "--target", "Readmitted", "--samples", "100", "--register"],
                 ["validate", model_file, table, "--register"]):
        status, out, err = run(argv, capsys)
        assert status == 2 and "cannot be written, so nothing was done" in err, (argv[0], err)
        assert "readonly database" in err and len(err.strip().splitlines()) == 1, err
        assert "Fitted in" not in out and "IF " not in out and "AUROC" not in out, (argv[0], out)
    assert not (tmp_path / "m.json").exists() and digest(path) == before
    status, out, err = run(["models", "list"], capsys)
    assert status == 0 and "1 model in use" in out, err
