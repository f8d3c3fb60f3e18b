"""The model registry: every fit kept with its provenance, found again from the ID on its card.

A printed card lives for years on a ward.  Its back carries a model ID, the first
10 hex digits of the SHA-256 of the model file (:func:`frl_engine.card.model_identifier`);
the registry keeps, under that hash, the model file byte for byte and everything
needed to answer "which model is this, fitted on what, validated how?":

* the model JSON exactly as written (``frl models export`` gives the same bytes back);
* when and by what it was made (the CLI or the dashboard, the user and host);
* the data fingerprint: SHA-256 of the table file's (or upload's) bytes, rows,
  columns, the outcome column and the event value;
* the hyperparameters, the seed, the software versions;
* cross-validation, external-validation and posterior results when present
  (attached later with :meth:`Registry.attach_results`), and a free-text note;
* an audit trail of events (registered, results attached, retired).  Nothing is
  ever deleted: ``retire`` only hides an entry from lists.

Storage is SQLAlchemy Core.  ``FRL_REGISTRY`` names the store: a file path (an
SQLite database; the default is ``registry.db`` in the per-user data folder,
e.g. ``~/.local/share/frl``) or any SQLAlchemy URL, e.g.
``postgresql+psycopg://frl@db.hospital/frl`` for a shared server.

Concurrency: SQLite runs in WAL mode, every write is one ``BEGIN IMMEDIATE``
transaction, and a busy database is waited for (``busy_timeout``) and retried,
so registrations from several processes at once all land.  On a server each
write is one transaction, retried on serialization failures and deadlocks.

Schema: ``frl_registry_schema`` holds the version; :data:`MIGRATIONS` upgrades a
store from any earlier version (from the first on) in one transaction, under a
lock, so two processes never migrate at once.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import json
import math
import os
import platform
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Callable, Iterator

import sqlalchemy as sa
from sqlalchemy import event as sa_event

from .errors import FRLError

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "DataFingerprint",
    "Registry",
    "RegistryEntry",
    "RegistryError",
    "RegistryEvent",
    "attach_results",
    "default_location",
    "open_registry",
]

ENV_VAR = "FRL_REGISTRY"
SCHEMA_VERSION = 2
MIN_PREFIX = 4  # hex digits a model ID prefix needs at least
BUSY_SECONDS = 60.0  # how long a write waits for a busy database before giving up
_SQLITE_MAGIC = b"SQLite format 3\x00"
_PG_LOCK_KEY = 0x4652_4C52_4547  # "FRLREG": advisory lock taken while migrating a server


class RegistryError(FRLError):
    """The registry cannot be opened or used as asked (bad file, unreachable server, unknown ID...)."""


# ============================================================================ tables
metadata = sa.MetaData()

schema_table = sa.Table(
    "frl_registry_schema", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)


def _model_columns_v1() -> list[sa.Column]:
    """The columns of ``frl_models`` in schema version 1 (later versions add columns by migrations)."""
    return [
        sa.Column("sha256", sa.String(64), primary_key=True),  # full SHA-256 of the canonical model JSON
        sa.Column("model_id", sa.String(16), nullable=False, index=True),  # as printed on the card
        sa.Column("model_json", sa.Text, nullable=False),  # the model file, exactly as written
        sa.Column("created_at", sa.String(40), nullable=False),  # ISO 8601, UTC
        sa.Column("created_by", sa.String(64)),  # "cli", "dashboard", ...
        sa.Column("command", sa.Text),  # e.g. "frl fit readmission.csv --target ... --seed 3"
        sa.Column("user_name", sa.String(255)),
        sa.Column("host", sa.String(255)),
        sa.Column("data_sha256", sa.String(64), index=True),
        sa.Column("data_name", sa.Text),
        sa.Column("data_rows", sa.Integer),
        sa.Column("data_columns", sa.JSON),  # column names (outcome included)
        sa.Column("outcome", sa.Text),
        sa.Column("event", sa.Text),
        sa.Column("hyperparameters", sa.JSON),
        sa.Column("seed", sa.BigInteger),
        sa.Column("software_version", sa.String(64)),
        sa.Column("environment", sa.JSON),  # python, numpy, scikit-learn ... versions
        sa.Column("n_rules", sa.Integer),
        sa.Column("cross_validation", sa.JSON),
        sa.Column("external_validation", sa.JSON),
        sa.Column("posterior", sa.JSON),
        sa.Column("note", sa.Text),
        sa.Column("parent_sha256", sa.String(64)),  # the entry this model extends (e.g. the same fit + posterior)
        sa.Column("retired_at", sa.String(40)),
    ]


models_table = sa.Table("frl_models", metadata, *_model_columns_v1())


def _event_columns_v2() -> list[sa.Column]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sha256", sa.String(64), nullable=False, index=True),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),  # registered | results | retired | note
        sa.Column("user_name", sa.String(255)),
        sa.Column("detail", sa.JSON),
    ]


events_table = sa.Table("frl_model_events", metadata, *_event_columns_v2())


# ---------------------------------------------------------------------------- migrations
def _migrate_to_1(conn: sa.Connection) -> None:
    """The first schema: the version table and ``frl_models``."""
    tables = sa.MetaData()
    sa.Table("frl_registry_schema", tables, sa.Column("version", sa.Integer, nullable=False))
    sa.Table("frl_models", tables, *_model_columns_v1())
    tables.create_all(conn)


def _migrate_to_2(conn: sa.Connection) -> None:
    """Version 2 adds the audit trail ``frl_model_events`` and writes one event per existing entry."""
    tables = sa.MetaData()
    events = sa.Table("frl_model_events", tables, *_event_columns_v2())
    events.create(conn)
    rows = conn.execute(sa.select(models_table.c.sha256, models_table.c.created_at, models_table.c.user_name,
                                  models_table.c.retired_at)).all()
    backfill = [{"sha256": r.sha256, "at": r.created_at, "kind": "registered", "user_name": r.user_name,
                 "detail": {"migrated": True}} for r in rows]
    backfill += [{"sha256": r.sha256, "at": r.retired_at, "kind": "retired", "user_name": None,
                  "detail": {"migrated": True}} for r in rows if r.retired_at]
    if backfill:
        conn.execute(sa.insert(events), backfill)


#: ``MIGRATIONS[v]`` brings a store from version ``v - 1`` to ``v`` (0 = empty).  Add, never change.
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {1: _migrate_to_1, 2: _migrate_to_2}


# ============================================================================ values
@dataclass(frozen=True)
class DataFingerprint:
    """What a model was fitted on: the SHA-256 of the table's bytes, its size, the outcome and the event."""

    sha256: str
    name: str | None
    n_rows: int
    columns: tuple[str, ...]
    outcome: str | None
    event: str | None

    @classmethod
    def of_bytes(cls, raw: bytes, *, name: str | None, n_rows: int, columns, outcome: str | None,
                 event: Any) -> DataFingerprint:
        """The fingerprint of a table read from ``raw`` (the file's or the upload's bytes)."""
        import hashlib

        return cls(hashlib.sha256(raw).hexdigest(), name, int(n_rows), tuple(str(c) for c in columns), outcome,
                   None if event is None else str(event))

    @property
    def n_columns(self) -> int:
        return len(self.columns)


@dataclass(frozen=True)
class RegistryEvent:
    """One line of an entry's audit trail."""

    at: str
    kind: str
    user_name: str | None
    detail: dict | None


@dataclass(frozen=True)
class RegistryEntry:
    """One registered model and its provenance (plain data, read from the store)."""

    model_id: str
    sha256: str
    model_json: str = field(repr=False)
    created_at: str
    created_by: str | None
    command: str | None
    user_name: str | None
    host: str | None
    data: DataFingerprint | None
    hyperparameters: dict | None = field(repr=False)
    seed: int | None
    software_version: str | None
    environment: dict | None = field(repr=False)
    n_rules: int | None
    cross_validation: dict | None = field(repr=False)
    external_validation: dict | None = field(repr=False)
    posterior: dict | None = field(repr=False)
    note: str | None
    parent_sha256: str | None
    retired_at: str | None

    @property
    def model(self) -> dict:
        """The model dictionary (parsed from the stored JSON)."""
        return json.loads(self.model_json)

    @property
    def model_bytes(self) -> bytes:
        """The model file exactly as it was registered."""
        return self.model_json.encode("utf-8")

    @property
    def retired(self) -> bool:
        return self.retired_at is not None

    @property
    def cv_auroc(self) -> float | None:
        return _auroc_of(self.cross_validation)

    @property
    def external_auroc(self) -> float | None:
        """The AUROC of the attached external validation; None when there is none, or when it was measured on the
        model's own training patients (``same_as_training``, or ``training_share``: many of them): no external
        validation."""
        return _auroc_of(self.external_validation) if self.validation_kind == "external" else None

    @property
    def unchecked_auroc(self) -> float | None:
        """The AUROC of an attached validation on a table that could not be checked for the training patients (it
        lacked columns of the model's sample of training rows, ``training_unchecked``); None otherwise."""
        return _auroc_of(self.external_validation) if self.validation_kind == "unchecked" else None

    @property
    def validation_kind(self) -> str | None:
        """What the attached validation's patients were: ``"training"`` (its training patients, or many of them:
        ``same_as_training``, ``training_share``), ``"unchecked"`` (``training_unchecked``), ``"external"``, or
        None when there is none."""
        ext = self.external_validation
        if not isinstance(ext, dict):
            return None
        if ext.get("same_as_training") or ext.get("training_share"):
            return "training"
        return "unchecked" if ext.get("training_unchecked") else "external"

    def auroc_text(self) -> str:
        """``"0.830 cv"``, ``"0.812 ext"`` (``"0.812 val"``: validated on a table not checked for the training
        patients), both, or ``"-"``."""
        parts = [f"{value:.3f} {label}" for value, label in ((self.cv_auroc, "cv"), (self.external_auroc, "ext"),
                                                             (self.unchecked_auroc, "val")) if value is not None]
        return ", ".join(parts) or "-"

    def data_text(self) -> str:
        if self.data is None:
            return "-"
        return f"{self.data.name or 'data'} ({self.data.n_rows:,} rows)"


def _auroc_of(block) -> float | None:
    """The AUROC of a validation block: ``auroc_mean`` (cross-validation), else ``auroc`` (number or ``{"estimate"}``)."""
    if not isinstance(block, dict):
        return None
    value = block.get("auroc_mean", block.get("auroc"))
    if isinstance(value, dict):
        value = value.get("estimate", value.get("value"))
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _jsonable(value):
    """Plain JSON values (NaN -> None, numpy -> Python, unknown objects -> text)."""
    if value is None:
        return None
    from .io import to_jsonable

    return json.loads(json.dumps(to_jsonable(value, strict=True), default=str, allow_nan=False))


def _user_name() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        return None


def software_version() -> str:
    from . import __version__

    return f"frl_engine {__version__}"


@functools.lru_cache(maxsize=1)
def _versions() -> tuple:
    versions = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for name in ("numpy", "pandas", "scipy", "scikit-learn", "numba", "sqlalchemy"):
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            pass
    return tuple(versions.items())


def environment() -> dict:
    """Versions of Python and of the libraries a fit depends on."""
    return dict(_versions())


# ============================================================================ where the store is
def default_location() -> str:
    """``$FRL_REGISTRY`` if set, else ``registry.db`` in the per-user data folder."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        return value
    import platformdirs

    return str(Path(platformdirs.user_data_dir("frl", appauthor=False)) / "registry.db")


def _is_url(location: str) -> bool:
    return "://" in location


def _describe(url: sa.URL) -> str:
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return url.render_as_string(hide_password=True)


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0].strip() if text else type(orig).__name__


def _is_retryable(exc: sa.exc.DBAPIError) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    if "database is locked" in text or "database is busy" in text or "database table is locked" in text:
        return True
    code = getattr(getattr(exc, "orig", None), "sqlstate", None) or getattr(getattr(exc, "orig", None), "pgcode", None)
    return code in ("40001", "40P01")  # serialization failure, deadlock


# ============================================================================ the store
class Registry:
    """A model registry at ``location`` (a file path or an SQLAlchemy URL; default :func:`default_location`).

    Opening checks the store: a file that is not an SQLite database, an SQLite
    database that is not a registry, a store made by a newer ``frl``, or a
    server that cannot be reached raise :class:`RegistryError` with one line,
    and nothing in the store is changed.  An empty or new store is created and
    an older one migrated to :data:`SCHEMA_VERSION`.
    """

    def __init__(self, location: str | os.PathLike | None = None, *, busy_seconds: float = BUSY_SECONDS):
        location = str(location) if location is not None else default_location()
        self.busy_seconds = float(busy_seconds)
        self.url = self._url(location)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        self.location = _describe(self.url)
        with self._translate("open"):
            if self.is_sqlite:
                self._check_sqlite_file()
                self.engine = sa.create_engine(self.url)  # pooled: closing the last connection checkpoints the WAL
                self._sqlite_events()
            else:
                self.engine = sa.create_engine(self.url, pool_pre_ping=True)
        try:
            self._ensure_schema()
        except BaseException:
            self.engine.dispose()
            raise

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _url(location: str) -> sa.URL:
        if not _is_url(location):
            path = Path(location).expanduser()
            return sa.URL.create("sqlite", database=str(path))
        try:
            url = sa.make_url(location)
        except sa.exc.ArgumentError:
            raise RegistryError(f"{ENV_VAR}={location!r} is neither a file path nor a database URL "
                                "(e.g. postgresql+psycopg://user@host/db)") from None
        if url.drivername in ("postgresql", "postgres"):  # the driver this package installs: psycopg 3
            url = url.set(drivername="postgresql+psycopg")
        return url

    def _check_sqlite_file(self) -> None:
        database = self.url.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return
        path = Path(database)
        if path.is_dir():
            raise RegistryError(f"The model registry {str(path)!r} is a folder: set {ENV_VAR} to a file such as "
                                f"{str(path / 'registry.db')!r}")
        if path.exists():
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
            if head and head != _SQLITE_MAGIC:
                raise RegistryError(f"The model registry {str(path)!r} is not an SQLite database (damaged, or another "
                                    f"kind of file): point {ENV_VAR} at a registry file or a new file name")
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise RegistryError(f"Cannot create the folder of the model registry {str(path)!r}: "
                                    f"{exc.strerror or exc}") from None

    def _sqlite_events(self) -> None:
        busy_ms = int(self.busy_seconds * 1000)

        @sa_event.listens_for(self.engine, "connect")
        def _connect(dbapi_connection, _record):
            dbapi_connection.isolation_level = None  # the "begin" listener below emits BEGIN itself
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
            cursor.close()

        @sa_event.listens_for(self.engine, "begin")
        def _begin(conn):
            # A write takes the write lock at once (no lock upgrade half way, which SQLite cannot wait for).
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("frl_write") else "BEGIN")

    @contextlib.contextmanager
    def _translate(self, what: str) -> Iterator[None]:
        """Database errors as one-line RegistryErrors."""
        try:
            yield
        except RegistryError:
            raise
        except ModuleNotFoundError as exc:
            raise RegistryError(f"The registry {self.location} needs the database driver {exc.name!r}: pip install "
                                "'frl-engine[postgres]' (PostgreSQL) or the driver for your database") from None
        except sa.exc.NoSuchModuleError:
            raise RegistryError(f"{ENV_VAR}: unknown database kind in {self.location!r}") from None
        except sa.exc.DatabaseError as exc:
            detail = _first_line(exc)
            if self.is_sqlite and ("not a database" in detail or "malformed" in detail or "disk image" in detail):
                raise RegistryError(f"The model registry {self.location!r} is damaged or not a registry "
                                    f"({detail}); nothing was changed") from None
            if isinstance(exc, sa.exc.OperationalError) and not self.is_sqlite and what == "open":
                raise RegistryError(f"Cannot reach the model registry {self.location} ({detail})") from None
            raise RegistryError(f"The model registry {self.location} failed to {what} ({detail})") from None
        except sa.exc.SQLAlchemyError as exc:
            raise RegistryError(f"The model registry {self.location} failed to {what} ({_first_line(exc)})") from None
        except OSError as exc:
            raise RegistryError(f"Cannot use the model registry {self.location}: {exc.strerror or exc}") from None

    def _read(self, work: Callable[[sa.Connection], Any], what: str = "read"):
        with self._translate(what), self.engine.connect() as conn, conn.begin():
            return work(conn)

    def _write(self, work: Callable[[sa.Connection], Any], what: str = "write"):
        """Run ``work(conn)`` in one write transaction; retried while the database is busy."""
        deadline = time.monotonic() + self.busy_seconds
        delay = 0.02
        with self._translate(what):
            while True:
                try:
                    with self.engine.connect() as conn:
                        conn.execution_options(frl_write=True)
                        with conn.begin():
                            if not self.is_sqlite and self.url.get_backend_name() == "postgresql" and what == "migrate":
                                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
                            return work(conn)
                except sa.exc.DBAPIError as exc:
                    if not _is_retryable(exc) or time.monotonic() > deadline:
                        raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _ensure_schema(self) -> None:
        version = self._read(self._version, "open")
        if version is not None and version > SCHEMA_VERSION:
            raise RegistryError(f"The model registry {self.location} has schema version {version}, made by a newer "
                                f"frl; this frl reads up to version {SCHEMA_VERSION}: upgrade frl-engine")
        if version != SCHEMA_VERSION:
            self._write(self._migrate, "migrate")
        if self.is_sqlite:
            self._wal()

    def _wal(self) -> None:
        """Write-ahead logging (persistent in the file): readers never block the one writer, nor it them."""
        with self._translate("open"), self.engine.connect() as conn:
            raw = conn.connection.dbapi_connection  # outside any transaction, as SQLite requires
            try:
                if raw.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    raw.execute("PRAGMA journal_mode = WAL")
            except sqlite3.Error:  # busy, or a read-only file: still correct (writes lock the file), only slower
                pass

    def _version(self, conn: sa.Connection) -> int | None:
        """The schema version; None for an empty store; RegistryError for a foreign SQLite database."""
        names = set(sa.inspect(conn).get_table_names())
        if schema_table.name not in names:
            if self.is_sqlite and names:
                shown = ", ".join(sorted(names)[:5])
                raise RegistryError(f"{self.location!r} is an SQLite database but not a model registry (it holds "
                                    f"tables {shown}); nothing was changed: point {ENV_VAR} at another file")
            return None
        rows = conn.execute(sa.select(schema_table.c.version)).scalars().all()
        if len(rows) != 1:
            raise RegistryError(f"The model registry {self.location} is damaged (its schema table has {len(rows)} "
                                "rows instead of one)")
        return int(rows[0])

    def _migrate(self, conn: sa.Connection) -> None:
        version = self._version(conn) or 0  # again, inside the write lock: another process may have done it
        if version >= SCHEMA_VERSION:
            return
        for target in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[target](conn)
        conn.execute(sa.delete(schema_table))
        conn.execute(sa.insert(schema_table).values(version=SCHEMA_VERSION))

    def schema_version(self) -> int | None:
        return self._read(self._version)

    # ------------------------------------------------------------------ writing
    def check_writable(self) -> None:
        """Raise :class:`RegistryError` now when this registry cannot be written: a read-only URL
        (``sqlite:///file:reg.db?mode=ro&uri=true``), a file or a database user without write rights.

        Opening only reads, so without this a ``--register`` found out after the fit.  The check
        writes the schema version over itself, in one transaction: nothing changes.
        """
        try:
            self._write(lambda conn: conn.execute(sa.update(schema_table).values(version=schema_table.c.version)),
                        "write")
        except RegistryError as exc:
            raise RegistryError(f"{exc}: this registry cannot be written, so nothing was done; "
                                f"fix its permissions, or point {ENV_VAR} at a registry you can write") from None

    def register(self, model, *, data: DataFingerprint | None = None, hyperparameters: dict | None = None,
                 seed: int | None = None, created_by: str = "cli", command: str | None = None,
                 user_name: str | None = None, note: str | None = None, parent: str | None = None,
                 cross_validation: dict | None = None, external_validation: dict | None = None,
                 posterior: dict | None = None) -> RegistryEntry:
        """Keep a model with its provenance; returns its entry.

        Parameters
        ----------
        model : str or dict
            The model file's text exactly as written (``dumps_model(model) + "\\n"``, as
            ``frl fit --out`` writes it), or the model dictionary (then serialised that way).
        data : DataFingerprint, optional
        hyperparameters : dict, optional
            The estimator's parameters (default: the model's ``hyperparameters`` block).
        seed : int, optional
            Default: ``hyperparameters["random_state"]``.
        created_by, command, user_name : str
            What made the model (``"cli"``, ``"dashboard"``), the command line, the user
            (default: the login name for the CLI).
        note : str, optional
        parent : str, optional
            Model ID (or prefix) of the entry this model extends (the same fit before its
            posterior or validation was added).
        cross_validation, external_validation, posterior : dict, optional
            Results; they default to the model's own ``validation``,
            ``external_validation`` and ``posterior`` blocks.

        A model registered again (same SHA-256) is not duplicated: results and a
        note given now are attached to the existing entry.
        """
        from .card import model_identifier, model_sha256
        from .io import check_model_dict, dumps_model

        if isinstance(model, dict):
            text = dumps_model(model) + "\n"
        else:
            text = str(model)
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RegistryError(f"Cannot register: the model is not valid JSON ({exc.msg})") from None
        check_model_dict(parsed, "the model to register")
        sha, model_id = model_sha256(parsed), model_identifier(parsed)
        hyper = _jsonable(hyperparameters if hyperparameters is not None else parsed.get("hyperparameters"))
        if seed is None and isinstance(hyper, dict) and isinstance(hyper.get("random_state"), int):
            seed = hyper["random_state"]
        user_name = user_name if user_name is not None else (_user_name() if created_by == "cli" else None)
        cv = _jsonable(cross_validation if cross_validation is not None else parsed.get("validation"))
        post = _jsonable(posterior if posterior is not None else parsed.get("posterior"))
        ext = _jsonable(external_validation if external_validation is not None else parsed.get("external_validation"))
        parent_entry = self.find(parent) if parent else None  # a parent that never got registered is no link
        parent_sha = parent_entry.sha256 if parent_entry is not None else None
        now = _now()
        row = {
            "sha256": sha, "model_id": model_id, "model_json": text, "created_at": now, "created_by": created_by,
            "command": command, "user_name": user_name, "host": _host(),
            "data_sha256": data.sha256 if data else None, "data_name": data.name if data else None,
            "data_rows": data.n_rows if data else None, "data_columns": list(data.columns) if data else None,
            "outcome": data.outcome if data else (parsed.get("outcome") or {}).get("target"),
            "event": data.event if data else _text((parsed.get("outcome") or {}).get("positive_class")),
            "hyperparameters": hyper, "seed": seed, "software_version": software_version(),
            "environment": environment(), "n_rules": len(parsed.get("rules") or []),
            "cross_validation": cv, "external_validation": ext, "posterior": post, "note": note or None,
            "parent_sha256": parent_sha if parent_sha != sha else None, "retired_at": None,
        }

        def work(conn: sa.Connection) -> bool:
            exists = conn.execute(sa.select(models_table.c.sha256).where(models_table.c.sha256 == sha)).first()
            if exists is None:
                conn.execute(sa.insert(models_table).values(**row))
                conn.execute(sa.insert(events_table).values(
                    sha256=sha, at=now, kind="registered", user_name=user_name,
                    detail={"created_by": created_by, "command": command}))
                return True
            return False

        try:
            created = self._write(work, "register the model")
        except RegistryError as exc:
            if "UNIQUE" not in str(exc).upper() and "duplicate key" not in str(exc):
                raise
            created = False  # another process registered the same model at the same moment
        if not created:
            extra = {k: v for k, v in (("cross_validation", cross_validation),
                                       ("external_validation", external_validation),
                                       ("posterior", posterior)) if v is not None}
            if extra or note:
                return self.attach_results(sha, **extra, note=note)
        return self.get(sha)

    def attach_results(self, model_id: str, *, cross_validation: dict | None = None,
                       external_validation: dict | None = None, posterior: dict | None = None,
                       note: str | None = None, user_name: str | None = None) -> RegistryEntry:
        """Attach validation or posterior results (and/or a note) to a registered model.

        ``model_id`` is the ID on the card, or any unique prefix of the model's SHA-256.
        Each result replaces the entry's earlier one of the same kind; the previous
        value is kept in the audit trail.  ``frl validate --register`` should call
        ``attach_results(model_identifier(model), external_validation=report)``
        where ``report`` is a JSON-safe dict with the AUROC under ``"auroc"``.
        """
        entry = self.get(model_id)
        changes = {k: _jsonable(v) for k, v in (("cross_validation", cross_validation),
                                                 ("external_validation", external_validation),
                                                 ("posterior", posterior)) if v is not None}
        if note:
            changes["note"] = note
        if not changes:
            return entry
        user_name = user_name if user_name is not None else _user_name()

        def work(conn: sa.Connection) -> None:
            old = conn.execute(sa.select(*[models_table.c[k] for k in changes])
                               .where(models_table.c.sha256 == entry.sha256)).one()
            conn.execute(sa.update(models_table).where(models_table.c.sha256 == entry.sha256).values(**changes))
            conn.execute(sa.insert(events_table).values(
                sha256=entry.sha256, at=_now(), kind="note" if list(changes) == ["note"] else "results",
                user_name=user_name, detail={"changed": sorted(changes), "previous": _jsonable(dict(old._mapping))}))

        self._write(work, "attach results")
        return self.get(entry.sha256)

    def retire(self, model_id: str, *, reason: str | None = None, user_name: str | None = None) -> RegistryEntry:
        """Hide an entry from lists (never delete it); returns the entry.  Retiring twice changes nothing."""
        entry = self.get(model_id)
        if entry.retired:
            return entry
        user_name = user_name if user_name is not None else _user_name()
        now = _now()

        def work(conn: sa.Connection) -> None:
            conn.execute(sa.update(models_table).where(models_table.c.sha256 == entry.sha256)
                         .where(models_table.c.retired_at.is_(None)).values(retired_at=now))
            conn.execute(sa.insert(events_table).values(sha256=entry.sha256, at=now, kind="retired",
                                                        user_name=user_name, detail={"reason": reason}))

        self._write(work, "retire the model")
        return self.get(entry.sha256)

    # ------------------------------------------------------------------ reading
    def get(self, model_id: str) -> RegistryEntry:
        """The entry whose SHA-256 starts with ``model_id`` (the card's ID, or any unique prefix of 4+ hex digits)."""
        prefix = _check_prefix(model_id)

        def work(conn: sa.Connection):
            return conn.execute(sa.select(models_table).where(models_table.c.sha256.like(prefix + "%"))
                                .order_by(models_table.c.created_at).limit(11)).all()

        rows = self._read(work)
        if not rows:
            raise RegistryError(f"No model with ID {model_id.strip()!r} in the registry {self.location} "
                                "(`frl models list --all` shows every ID)")
        if len(rows) > 1:
            shown = ", ".join(r.model_id for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
            raise RegistryError(f"Model ID {model_id.strip()!r} is ambiguous: {len(rows)} models start with it "
                                f"({shown}); give more digits")
        return _entry(rows[0])

    def find(self, model_id: str) -> RegistryEntry | None:
        """Like :meth:`get`, but None when no entry matches (still an error when ambiguous)."""
        try:
            return self.get(model_id)
        except RegistryError as exc:
            if str(exc).startswith("No model with ID"):
                return None
            raise

    def entries(self, *, include_retired: bool = False, limit: int | None = None) -> list[RegistryEntry]:
        """Entries, newest first; retired ones only with ``include_retired``."""
        query = sa.select(models_table).order_by(models_table.c.created_at.desc(), models_table.c.sha256)
        if not include_retired:
            query = query.where(models_table.c.retired_at.is_(None))
        if limit:
            query = query.limit(limit)
        return [_entry(r) for r in self._read(lambda conn: conn.execute(query).all())]

    def count(self) -> tuple[int, int]:
        """(entries in use, retired entries)."""
        def work(conn):
            total = conn.execute(sa.select(sa.func.count()).select_from(models_table)).scalar_one()
            retired = conn.execute(sa.select(sa.func.count()).select_from(models_table)
                                   .where(models_table.c.retired_at.is_not(None))).scalar_one()
            return int(total - retired), int(retired)

        return self._read(work)

    def history(self, model_id: str) -> list[RegistryEvent]:
        """The entry's audit trail, oldest first."""
        entry = self.get(model_id)
        rows = self._read(lambda conn: conn.execute(
            sa.select(events_table).where(events_table.c.sha256 == entry.sha256).order_by(events_table.c.id)).all())
        return [RegistryEvent(r.at, r.kind, r.user_name, r.detail) for r in rows]

    def close(self) -> None:
        self.engine.dispose()


def _host() -> str | None:
    try:
        return socket.gethostname() or None
    except OSError:
        return None


def _text(value) -> str | None:
    return None if value is None else str(value)


def _check_prefix(model_id) -> str:
    prefix = str(model_id or "").strip().lower()
    if len(prefix) < MIN_PREFIX or len(prefix) > 64 or any(c not in "0123456789abcdef" for c in prefix):
        raise RegistryError(f"{str(model_id).strip()!r} is not a model ID: give the hex ID printed on the card "
                            f"(at least {MIN_PREFIX} digits)")
    return prefix


def _entry(row) -> RegistryEntry:
    m = row._mapping
    data = None
    if m["data_sha256"]:
        data = DataFingerprint(m["data_sha256"], m["data_name"], int(m["data_rows"] or 0),
                               tuple(m["data_columns"] or ()), m["outcome"], m["event"])
    return RegistryEntry(
        model_id=m["model_id"], sha256=m["sha256"], model_json=m["model_json"], created_at=m["created_at"],
        created_by=m["created_by"], command=m["command"], user_name=m["user_name"], host=m["host"], data=data,
        hyperparameters=m["hyperparameters"], seed=m["seed"], software_version=m["software_version"],
        environment=m["environment"], n_rules=m["n_rules"], cross_validation=m["cross_validation"],
        external_validation=m["external_validation"], posterior=m["posterior"], note=m["note"],
        parent_sha256=m["parent_sha256"], retired_at=m["retired_at"],
    )


# ============================================================================ conveniences
def open_registry(location: str | os.PathLike | None = None) -> Registry:
    """The registry at ``location`` (default: ``$FRL_REGISTRY``, else the per-user data folder)."""
    return Registry(location)


def attach_results(model_id: str, *, cross_validation: dict | None = None, external_validation: dict | None = None,
                   posterior: dict | None = None, note: str | None = None,
                   location: str | os.PathLike | None = None) -> RegistryEntry:
    """Attach results to a registered model in the default registry (see :meth:`Registry.attach_results`)."""
    registry = open_registry(location)
    try:
        return registry.attach_results(model_id, cross_validation=cross_validation,
                                       external_validation=external_validation, posterior=posterior, note=note)
    finally:
        registry.close()
