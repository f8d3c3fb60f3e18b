"""``frl models``: the model registry on the command line, and ``--register`` for ``fit`` and ``sample``.

    frl fit DATA.csv --target COL ... --register [--note TEXT]
    frl models list [--all]
    frl models show ID            (the ID on the card; any unique prefix of 4+ hex digits)
    frl models export ID --out model.json
    frl models retire ID [--reason TEXT]

The registry is ``$FRL_REGISTRY`` (a file path or an SQLAlchemy URL), else
``registry.db`` in the per-user data folder (see docs/registry.md).  Errors
(a damaged or foreign registry file, an unknown or ambiguous ID, a server that
cannot be reached) are one ``frl: error:`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path

from .errors import FRLError
from .registry import ENV_VAR, DataFingerprint, Registry, RegistryEntry, open_registry
from .terminal import display_width, pad_left, pad_right

_EPILOG = f"""\
The registry is ${ENV_VAR} (a file path, or a URL such as postgresql+psycopg://user@host/db),
else registry.db in your data folder.  See docs/registry.md.

examples:
  frl fit data.csv --target Outcome --seed 3 --register --note "ward 7 pilot"
  frl models list
  frl models show 3fa2c1d9e0
  frl models export 3fa2c1 --out model.json
  frl models retire 3fa2c1d9e0 --reason "replaced by 81be0c"
"""


# ============================================================================ --register on fit / sample
def add_register_arguments(parser: argparse.ArgumentParser) -> None:
    """``--register`` and ``--note`` for a command that fits a model."""
    parser.add_argument("--register", action="store_true",
                        help=f"keep the model and its provenance in the model registry (${ENV_VAR})")
    parser.add_argument("--note", default=None, metavar="TEXT", help="a note stored with the registered model")


def registry_for(args) -> Registry | None:
    """The registry to register into (opened before the fit, so a bad registry fails at once), or None."""
    if not getattr(args, "register", False):
        if getattr(args, "note", None):
            raise FRLError("--note is stored with the registered model: add --register")
        return None
    registry = open_registry()
    try:
        registry.check_writable()   # a read-only registry fails now, not after the fit
    except BaseException:
        registry.close()
        raise
    return registry


def command_line(args) -> str | None:
    argv = getattr(args, "command_line", None)
    return None if argv is None else "frl " + shlex.join(str(a) for a in argv)


def register_fit(registry: Registry, args, estimator, features, model: dict) -> RegistryEntry:
    """Register the model ``frl fit``/``frl sample`` made from ``args.data``; prints its ID."""
    from .io import dumps_model, event_label

    raw = Path(args.data).read_bytes()
    event = getattr(estimator, "event_label_", None)
    data = DataFingerprint.of_bytes(raw, name=Path(args.data).name, n_rows=len(features),
                                    columns=[*map(str, features.columns), args.target], outcome=args.target,
                                    event=None if event is None else event_label(event))  # several: "<30 or >30"
    entry = registry.register(dumps_model(model) + "\n", data=data, hyperparameters=estimator.get_params(),
                              seed=args.seed, created_by="cli", command=command_line(args), note=args.note)
    print(f"Registered as model ID {entry.model_id} in {registry.location}")
    return entry


# ============================================================================ frl models
def register(subparsers) -> None:
    """Add the ``models`` sub-command group."""
    from .cli import _Parser

    parser = subparsers.add_parser(
        "models", help="the model registry: list, show, export, retire registered models",
        description="Every model fitted with --register (and every dashboard fit) is kept in the model registry "
                    "with its provenance: data fingerprint, settings, seed, software, validation. Find one from "
                    "the model ID printed on its card.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="models_command", metavar="ACTION", parser_class=_Parser)
    sub.required = True

    listing = sub.add_parser("list", help="list registered models, newest first",
                             description="ID, created, data, rules, AUROC (cv: cross-validated; ext: external; val: validated on a table not checked for the training patients) "
                                         "and note of each registered model, newest first.")
    listing.add_argument("--all", action="store_true", help="also list retired models")
    listing.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="everything the registry knows about one model",
                          description="Provenance, settings, validation, the rule list and the audit trail of "
                                      "one model.")
    show.add_argument("id", metavar="ID", help="the model ID on the card, or a unique prefix (4+ hex digits)")
    show.set_defaults(handler=cmd_show)

    export = sub.add_parser("export", help="write a registered model to a file (byte for byte as registered)",
                            description="Write the model file exactly as it was registered.")
    export.add_argument("id", metavar="ID", help="the model ID on the card, or a unique prefix")
    export.add_argument("--out", "-o", required=True, metavar="MODEL.json", help="where to write the model")
    export.set_defaults(handler=cmd_export)

    retire = sub.add_parser("retire", help="hide a model from lists (it is never deleted)",
                            description="Mark a model retired: `frl models list` no longer shows it (--all does); "
                                        "`show` and `export` still work, and the registry keeps who retired it, "
                                        "when and why.")
    retire.add_argument("id", metavar="ID", help="the model ID on the card, or a unique prefix")
    retire.add_argument("--reason", default=None, help="why, kept in the audit trail")
    retire.set_defaults(handler=cmd_retire)


def _short_time(iso: str | None) -> str:
    return "-" if not iso else iso.replace("T", " ")[:16]


def _cut(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def format_entries(entries: list[RegistryEntry]) -> str:
    """The table ``frl models list`` prints."""
    header = ("ID", "Created (UTC)", "By", "Data", "Rules", "AUROC", "Note")
    rows = [(e.model_id + (" (retired)" if e.retired else ""), _short_time(e.created_at),
             _cut(" ".join(x for x in (e.created_by, e.user_name) if x), 18), _cut(e.data_text(), 34),
             "-" if e.n_rules is None else str(e.n_rules), e.auroc_text(), _cut(e.note, 40)) for e in entries]
    widths = [max(display_width(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [pad_left(c, w) if i == 4 else pad_right(c, w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def missing_registry() -> str | None:
    """The registry file the read-only commands would open, when it does not exist yet (else None): they say so
    instead of creating it, so a misspelt FRL_REGISTRY does not leave an empty registry and folders behind."""
    from .registry import _is_url, default_location

    location = default_location()
    if _is_url(location):
        return None
    path = Path(location).expanduser()
    return None if path.exists() else str(path)


def _no_registry_text(path: str) -> str:
    if os.environ.get(ENV_VAR, "").strip():
        return (f"No model registry yet: {ENV_VAR} names {path!r}, which does not exist (check the spelling); "
                "`frl fit ... --register` creates it")
    return f"No models registered yet: `frl fit ... --register` keeps one (in {path})"


def _open_existing():
    absent = missing_registry()
    if absent:
        raise FRLError(_no_registry_text(absent))
    return open_registry()


def cmd_list(args) -> int:
    absent = missing_registry()
    if absent:
        print(_no_registry_text(absent) + ".")
        return 0
    registry = open_registry()
    entries = registry.entries(include_retired=args.all)
    in_use, retired = registry.count()
    if entries:
        print(format_entries(entries))
    else:
        print("No models registered yet: `frl fit ... --register` keeps one." if not retired
              else "No models in use.")
    hidden = "" if args.all or not retired else f"; {retired} retired not shown (--all)"
    shown = f" and {retired} retired" if args.all and retired else ""
    print(f"\n{in_use} model{'s' if in_use != 1 else ''} in use{shown} in {registry.location}{hidden}")
    return 0


def _settings_text(entry: RegistryEntry) -> str:
    hyper = entry.hyperparameters or {}
    keys = ("lam", "min_support", "max_conditions", "n_steps", "n_chains", "alpha", "beta", "alpha_K", "beta_K")
    parts = [f"{k} {hyper[k]}" for k in keys if k in hyper]
    extra = {k: v for k, v in hyper.items() if k in ("exclude", "thresholds", "column_kinds") and v}
    parts += [f"{k} {v}" for k, v in extra.items()]
    return ", ".join(parts) or "-"


def format_entry(entry: RegistryEntry, history=()) -> str:
    """Everything ``frl models show`` prints about one entry, before the rule list."""
    lines = [("Model ID", f"{entry.model_id}   (SHA-256 {entry.sha256})"),
             ("Status", f"retired {_short_time(entry.retired_at)} UTC" if entry.retired else "in use"),
             ("Created", f"{_short_time(entry.created_at)} UTC by {entry.created_by or '?'}"
                         + (f" ({entry.user_name}@{entry.host})" if entry.user_name else
                            (f" on {entry.host}" if entry.host else "")))]
    if entry.command:
        lines.append(("Command", entry.command))
    if entry.data is not None:
        d = entry.data
        lines.append(("Data", f"{d.name or '-'}: {d.n_rows:,} rows x {d.n_columns} columns, SHA-256 {d.sha256}"))
    outcome = entry.data.outcome if entry.data else None
    event = entry.data.event if entry.data else None
    if outcome:
        lines.append(("Outcome", f"{outcome} = {event}" if event is not None else outcome))
    lines.append(("Settings", _settings_text(entry)))
    lines.append(("Seed", "-" if entry.seed is None else str(entry.seed)))
    env = entry.environment or {}
    libs = ", ".join(f"{k} {v}" for k, v in env.items() if k != "platform")
    lines.append(("Software", f"{entry.software_version or '-'}" + (f" ({libs})" if libs else "")))
    cv = entry.cross_validation
    if cv:
        sd = f" (sd {cv['auroc_std']:.3f})" if isinstance(cv.get("auroc_std"), (int, float)) else ""
        method = cv.get("method", "cross-validation")
        lines.append(("Cross-valid.", f"{method}: AUROC {entry.cv_auroc:.3f}{sd}" if entry.cv_auroc is not None
                      else str(cv)))
    if entry.external_validation:
        ext = entry.external_validation
        share = ext.get("training_share")
        same = (" (its training patients: not an external validation)" if ext.get("same_as_training")
                else f" (about {100 * share:.0f}% of them its training patients: not an external validation)"
                if isinstance(share, (int, float))
                else " (not checked for its training patients)" if ext.get("training_unchecked") else "")
        auroc = ext.get("auroc") if same and isinstance(ext.get("auroc"), (int, float)) else entry.external_auroc
        if auroc is None and entry.unchecked_auroc is not None:
            auroc = entry.unchecked_auroc
        what = ext.get("data_name") or ext.get("data") or "new patients"
        counts = (f" on {ext['n']:,} patients ({ext['events']:,} events)"
                  if isinstance(ext.get("n"), int) and isinstance(ext.get("events"), int) else "")
        flagged = ext.get("flagged_rules") if isinstance(ext.get("flagged_rules"), list) else []
        flags = f"; rules flagged: {', '.join(map(str, flagged))}" if flagged else ""
        label = "Validation" if entry.validation_kind == "unchecked" else "External"
        lines.append((label, f"{what}: AUROC {auroc:.3f}{counts}{same}{flags}" if auroc is not None
                      else str(ext)[:200]))
    if entry.posterior:
        post = entry.posterior
        lines.append(("Posterior", f"{post.get('n_samples', '?')} samples"
                                   + (f", {post['n_chains']} chains" if post.get("n_chains") else "")
                                   + (f", R-hat {_rhat_text(post['rhat'])}" if post.get("rhat") else "")))
    if entry.parent_sha256:
        lines.append(("Extends", entry.parent_sha256[:10]))
    if entry.note:
        lines.append(("Note", entry.note))
    text = "\n".join(f"{k:<13s}{v}" for k, v in lines)
    if history:
        text += "\n\nHistory\n" + "\n".join(
            f"  {_short_time(h.at)}  {h.kind}" + (f" by {h.user_name}" if h.user_name else "")
            + (f": {h.detail['reason']}" if h.kind == "retired" and (h.detail or {}).get("reason") else "")
            + (f": {', '.join(h.detail['changed'])}" if h.kind == "results" and (h.detail or {}).get("changed") else "")
            for h in history)
    return text


def _rhat_text(rhat) -> str:
    """``1.004 (log posterior), 1.011 (list length)`` from the sample's ``{"log_posterior": ..., "length": ...}``."""
    if not isinstance(rhat, dict):
        return str(rhat)
    names = {"log_posterior": "log posterior", "length": "list length"}
    return ", ".join(f"{value:.3f} ({names.get(key, key)})" if isinstance(value, (int, float)) else f"{value} ({key})"
                     for key, value in rhat.items())


def cmd_show(args) -> int:
    from .cli import print_model

    registry = _open_existing()
    entry = registry.get(args.id)
    print(format_entry(entry, registry.history(entry.sha256)))
    print()
    print_model(entry.model)
    return 0


def cmd_export(args) -> int:
    registry = _open_existing()
    entry = registry.get(args.id)
    out = Path(args.out)
    if out.is_dir():
        raise FRLError(f"--out {str(out)!r} is a folder: give a file name such as model.json")
    try:
        out.write_bytes(entry.model_bytes)
    except OSError as exc:
        raise FRLError(f"Cannot write {str(out)!r}: {exc.strerror or exc}") from None
    print(f"Model ID {entry.model_id} written to {out}")
    return 0


def cmd_retire(args) -> int:
    registry = _open_existing()
    before = registry.get(args.id)
    entry = registry.retire(before.sha256, reason=args.reason)
    if before.retired:
        print(f"Model ID {entry.model_id} was already retired on {_short_time(entry.retired_at)} UTC")
    else:
        print(f"Model ID {entry.model_id} retired: hidden from `frl models list` (kept; `--all` shows it)")
    return 0

