"""The ``frl`` command line: fit, show, predict (and card, sample, evaluate, reproduce).

Every user error prints one line ``frl: error: ...`` to stderr and exits with
status 2; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pandas as pd

from .errors import DataError, FRLError, MissingOutcomeError
from .io import (plain_repr, event_label, event_values, ambiguous_codes, default_event_reason, good_outcome_note, outcome_spellings, read_table,
                 save_model, split_target)
from .repeated_rows import repeated_records, without_repeated_records
from .search_report import copied_note  # noqa: F401 - said by frl fit; the dashboard reads it there too

# Sub-commands that live in their own modules, each with ``register(subparsers)``.
EXTRA_COMMANDS = ("frl_engine.cli_sample", "frl_engine.cli_evaluate", "frl_engine.cli_card", "frl_engine.cli_models",
                  "frl_engine.cli_validate", "frl_engine.cli_explore")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        self.exit(2, f"frl: error: {message}\n")


def _parse_thresholds(values) -> dict[str, list[float]] | None:
    if not values:
        return None
    thresholds = {}
    for text in values:
        column, sep, numbers = text.partition("=")
        if not sep or not column.strip():
            raise FRLError(f"--threshold takes COLUMN=V1,V2,...; got {text!r}")
        if column.strip() in thresholds:
            raise FRLError(f"--threshold names {column.strip()!r} twice: give all its thresholds once, e.g. "
                           f"--threshold {column.strip()}=45,60,70")
        try:
            thresholds[column.strip()] = [float(v) for v in numbers.split(",") if v.strip()]
        except ValueError:
            raise FRLError(f"--threshold {text!r}: thresholds must be numbers, e.g. Age=45,60") from None
        if not thresholds[column.strip()]:
            raise FRLError(f"--threshold {text!r} gives no numbers, e.g. Age=45,60")
    return thresholds


def _parse_kinds(values) -> dict[str, str] | None:
    """``["ward=categorical", "diag_1=code"]`` -> ``{"ward": "categorical", "diag_1": "code"}``."""
    if not values:
        return None
    from .columns import canonical_kind

    kinds = {}
    for text in values:
        column, sep, kind = text.partition("=")
        if not sep or not column.strip() or not kind.strip():
            raise FRLError(f"--kind takes COLUMN=KIND (numeric, categorical, boolean, code, nominal, code_list or identifier); got {text!r}")
        if column.strip() in kinds:
            raise FRLError(f"--kind names {column.strip()!r} twice: give each column one kind")
        kinds[column.strip()] = canonical_kind(kind, column.strip())
    return kinds


def add_sheet_argument(parser: argparse.ArgumentParser) -> None:
    """``--sheet``: the sheet of a workbook to read."""
    parser.add_argument("--sheet", metavar="NAME", default=None,
                        help="the sheet of an Excel or LibreOffice workbook to read, by name or number (default: the "
                             "sheet holding the outcome column, else the one with the most filled cells)")


def sheet_note(args, frame, stream=None) -> None:
    """Say that ``--sheet`` was not used: the file is no workbook (a CSV has no sheets)."""
    if getattr(args, "sheet", None) and not frame.attrs.get("sheets"):
        print(f"Note: --sheet {args.sheet} is for workbooks; {Path(args.data).name} is not one, and was read as it is.",
              file=stream or sys.stdout)


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The data and model options shared by ``fit``, ``sample`` and ``evaluate``."""
    from .cli_evaluate import annealing_steps  # cli_evaluate reads this module's helpers when it runs

    parser.add_argument("data", help="CSV, Excel (.xlsx), Parquet, SPSS, Stata or SAS table (also .csv.gz or .zip), one row per patient")
    parser.add_argument("--target", required=True, help="the outcome column")
    add_sheet_argument(parser)
    parser.add_argument("--positive", default=None, action="append", metavar="VALUE",
                        help="the outcome value that counts as the event (default: yes/true/1, else a value such as Died or Readmitted, else the larger value; the choice is printed); give it again for each further value that counts as the event (--positive '<30' --positive '>30': any readmission)")
    parser.add_argument("--codes-as-missing", action="store_true",
                        help="read numbers that look like codes for not known (999 among ages 18 to 94, -9 among "
                             "lab values; said as a warning otherwise) as missing; what was emptied is printed")
    parser.add_argument("--drop-missing-outcome", action="store_true",
                        help="leave out the patients whose outcome is empty (?, blank, NA: lost to follow-up) instead "
                             "of stopping; the number left out is printed")
    parser.add_argument("--drop-repeated-rows", action="store_true",
                        help="leave out the rows that repeat an earlier row in every column, record number included "
                             "(an encounter written twice by a join; warned about otherwise); the number left out is "
                             "printed")
    parser.add_argument("--lam", type=float, default=8.0, help="prior mean number of rules (default 8)")
    parser.add_argument("--min-support", type=float, default=0.05,
                        help="smallest fraction of patients a candidate rule must cover (default 0.05)")
    parser.add_argument("--max-conditions", type=int, default=2, help="most conditions per rule (default 2)")
    parser.add_argument("--max-rules", type=int, default=5000,
                        help="search at most this many candidate rules: when mining finds more, every one-condition "
                             "rule and the strongest AND rules are kept (default 5000)")
    parser.add_argument("--rule-prior", choices=("mined", "kept"), default="mined",
                        help="the rules the prior draws each rule of a list from: every rule mining found (default; "
                             "a rule picked from millions is charged as one of millions) or only the --max-rules kept")
    parser.add_argument("--n-thresholds", type=int, default=3, metavar="N",
                        help="quantile thresholds per numeric column, rounded to readable numbers (default 3)")
    parser.add_argument("--keep-unreached", action="store_true",
                        help="keep a rule of the MAP list that no training patient reaches (default: remove it and "
                             "say so; it changes no prediction on these patients)")
    parser.add_argument("--steps", type=annealing_steps, default=5000, help="annealing steps per chain (default 5000); fewer steps or chains seldom make a fit "
                        "faster: chains that end apart run more rounds, then walks")
    parser.add_argument("--chains", type=int, default=4, help="independent annealing restarts per round (default 4); up to 3 more rounds run "
                        "while the chains disagree or end at many different lists, then walks of the posterior "
                        "look for a better list (with thousands of candidate rules, one walk also checks chains that agree)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--exclude", action="append", default=[], metavar="COLUMN",
                        help="a column not to use (repeat for several)")
    parser.add_argument("--threshold", action="append", default=[], metavar="COLUMN=V1,V2",
                        help="your own thresholds for a numeric column, e.g. Age=45,60 (repeatable)")
    parser.add_argument("--kind", action="append", default=[], metavar="COLUMN=KIND",
                        help="how to read a column instead of the inferred kind: numeric, categorical, boolean, code "
                             "(ICD/ATC codes with groups), code_list (several codes in a cell: 428|250.01), "
                             "nominal (integer labels) or identifier (leave it out); repeatable")
    parser.add_argument("--explain-columns", action="store_true",
                        help="print how each column was read (kind, items, missing share, levels, why)")
    parser.add_argument("--no-mining", action="store_true",
                        help="use each (boolean) column as one candidate rule instead of mining rules")


def estimator_from_args(args):
    """The estimator the fit arguments describe (imported here: `frl --help` and one-line errors need no
    scikit-learn or numba, and answer in a fraction of a second)."""
    from .estimator import FallingRuleListClassifier

    return FallingRuleListClassifier(
        lam=args.lam, min_support=args.min_support, max_conditions=args.max_conditions, max_rules=args.max_rules,
        n_thresholds=getattr(args, "n_thresholds", 3), drop_unreached=not getattr(args, "keep_unreached", False),
        n_steps=args.steps, n_chains=args.chains, random_state=args.seed, exclude=tuple(args.exclude),
        thresholds=_parse_thresholds(args.threshold), mine_rules=not args.no_mining,
        column_kinds=_parse_kinds(getattr(args, "kind", None)), rule_prior=getattr(args, "rule_prior", "mined"),
    )


def load_training_data(args):
    """Read ``args.data`` and split off ``args.target``: (features, event, positive value).

    Read once per command and kept on ``args`` (``fit --tune --validate`` asks three times), so the file
    is parsed and its reading said once.
    """
    if getattr(args, "_training_data", None) is not None:
        return args._training_data
    declared = _parse_kinds(getattr(args, "kind", None)) or {}
    frame = read_table(args.data, text_columns=[c for c, kind in declared.items() if kind in ("code", "categorical",
                                                                                             "nominal", "code list")],
                       sheet=getattr(args, "sheet", None), wanted_columns=[args.target])
    sheet_note(args, frame)
    if frame.attrs.get("read_as"):
        print(f"Read {Path(args.data).name} as {frame.attrs['read_as']}.")
    if frame.attrs.get("left_out"):
        print(f"Left out of {Path(args.data).name}: {frame.attrs['left_out']}.")
    if getattr(args, "codes_as_missing", False):
        frame = codes_as_missing(frame, [c for c in frame.columns if c != args.target and c not in declared])
    frame = repeated_rows_said(frame, getattr(args, "drop_repeated_rows", False))
    if frame.attrs.get("unnamed"):
        print(f"In {Path(args.data).name}, {frame.attrs['unnamed']}.")
    if frame.attrs.get("merged_spellings"):
        examples = frame.attrs.get("merged_examples", {})
        shown = ", ".join(f"{column} ({n}: {examples[column]}{' ...' if n > 1 else ''})" if column in examples
                          else f"{column} ({n})" for column, n in frame.attrs["merged_spellings"].items())
        print(f"Merged spellings that differ only in case: {shown}.")
    for flag, given in (("--kind", declared), ("--threshold", _parse_thresholds(getattr(args, "threshold", None)) or {})):
        if args.target in given:
            raise DataError(f"{flag} names the outcome column '{args.target}': the outcome is what the list predicts, "
                            f"never a condition; drop it from {flag}")
    if args.positive is None and args.target in frame.columns:
        codes = ambiguous_codes(list(outcome_spellings(frame[args.target]).values()))
        if codes:
            low, high = codes
            raise DataError(f"{args.target} is coded {low} and {high}, and nothing says which one is the event "
                            f"(some exports write {low} = yes, others {low} = no): give --positive {high} or "
                            f"--positive {low}.")
    try:
        features, event, positive = split_target(frame, args.target, args.positive,
                                                 drop_missing=getattr(args, "drop_missing_outcome", False))
    except MissingOutcomeError as exc:
        raise DataError(f"{exc}, or leave {'that patient' if exc.n_missing == 1 else f'those {exc.n_missing} patients'} "
                        "out with --drop-missing-outcome") from None
    if features.attrs.get("outcome_blank_as_no"):
        n_blank = features.attrs["outcome_blank_as_no"]
        print(f"{args.target} holds {plain_repr(positive)} and blanks: the {n_blank:,} blank cell{'s' if n_blank != 1 else ''} "
              "count as no event (a checkbox outcome).")
    if features.attrs.get("outcome_missing_left_out"):
        n_left = features.attrs["outcome_missing_left_out"]
        print(f"Left out {n_left} patient{'s' if n_left != 1 else ''} whose {args.target} is empty "
              "or not known (--drop-missing-outcome).")
    if args.target in (getattr(args, "exclude", None) or []):
        # The outcome is never a condition; naming it in --exclude is harmless, not an error.
        args.exclude = [c for c in args.exclude if c != args.target]
    if args.positive is None:
        reason = default_event_reason(list(outcome_spellings(frame[args.target]).values()))
        values = list(outcome_spellings(frame[args.target]).values())
        if reason != "it reads as yes":
            print(f"The event is {args.target} = {plain_repr(positive)} ({reason}); give --positive to choose another "
                  "value.")
        elif good_outcome_note(args.target, positive, values):
            print(good_outcome_note(args.target, positive, values))
    else:
        chosen = event_values(positive)
        others = [v for v in outcome_spellings(frame[args.target]).values() if v not in chosen]
        from .columns import is_number

        if all(is_number(v) for v in others):
            others.sort()   # codes in order (2, 3), not as the file first holds them (3, 2)
        if len(others) > 1 or len(chosen) > 1:  # on an outcome of 3 or more values: say what "not the event" holds
            shown = ", ".join(repr(v) for v in others[:6]) + (" ..." if len(others) > 6 else "")
            n_event = int(event.sum())
            print(f"The event is {args.target} = {plain_repr(positive)} ({n_event:,} "
                  f"{'patient' if n_event == 1 else 'patients'}); {shown} "
                  f"count{'s' if len(others) == 1 else ''} as not the event.")
    args._training_data = (features, event, positive)
    return args._training_data


#: A fit that has run this long says on a terminal what it is doing at each further stage.
SLOW_FIT_SECONDS = 2.0


class SlowFitProgress:
    """Tells the user at a terminal what a slow fit is doing: each stage that starts after ``after``
    seconds, with the time so far (``frl: 23 s: searching 5,000 candidate rules: chains 5 to 8 ...``).

    A fit that ends sooner prints nothing, and nothing is printed when ``stream`` (default stderr) is
    not a terminal unless ``always``: a script's captured output stays as it was.
    """

    def __init__(self, after: float = SLOW_FIT_SECONDS, stream=None, always: bool = False):
        self.started = time.monotonic()
        self.after = after
        self.stream = stream
        self.always = always

    def __call__(self, text: str) -> None:
        stream = self.stream or sys.stderr
        elapsed = time.monotonic() - self.started
        if elapsed >= self.after and (self.always or stream.isatty()):
            print(f"frl: {elapsed:.0f} s: {text} ...", file=stream, flush=True)


def fit_from_args(args):
    """Fit the model the options describe; returns ``(estimator, features frame)``."""
    features, event, positive = load_training_data(args)
    estimator = estimator_from_args(args)
    estimator.fit(features, event, progress=SlowFitProgress())
    estimator.target_name_ = args.target
    estimator.data_name_ = Path(args.data).name
    # Report the outcome in the user's own terms, not as True/False.
    estimator.event_label_ = positive
    return estimator, features


def _model_dict(estimator, args) -> dict:
    # --codes-as-missing: the estimator keeps the codes the table's attrs record (codes_read_as_missing_), and
    # its model file carries them, so new patients are read the same way
    return estimator.to_dict(target=args.target, data_name=Path(args.data).name)


def print_model(model: dict, stream=None) -> None:
    """Print a model dictionary as the paper's Table 1 prints a list."""
    stream = stream or sys.stdout
    from .io import check_model_dict

    check_model_dict(model)   # a registry entry too: counts written as text would stop the printing half-way
    outcome = model["outcome"]
    label = outcome.get("title") or f"{outcome.get('target') or 'event'} = {outcome.get('positive_class')} risk"
    from .estimator import FallingRuleListClassifier

    text = FallingRuleListClassifier.from_dict(model).format_list(label)
    intervals = credible_intervals(model)
    if intervals is not None:   # a column beside the risks, as the card prints them
        width = max(len(cell) for cell in intervals)
        lines = text.split("\n")
        text = "\n".join([f"{lines[0]}  {'95% CrI':>{width}}"]
                          + [f"{line}  {cell:>{width}}" for line, cell in zip(lines[1:], intervals)])
    print(text, file=stream)
    posterior = posterior_line(model)
    if posterior:
        print(posterior, file=stream)
    training = model.get("training") or {}
    if training.get("n_rows"):
        who = (f"{training['n_rows']:,} rows of {training['n_patients']:,} patients ({training['patient_column']})"
               if training.get("n_patients") else f"{training['n_rows']:,} patients")
        events, n_rules = training.get("n_positive"), training.get("n_candidate_rules")

        def count(value):   # 100,000 as the card writes it; a model file without the figure prints None
            return f"{value:,}" if isinstance(value, int) else value

        print(f"\n{who}, {count(events)} {'event' if events == 1 else 'events'} "
              f"({100 * training.get('positive_rate', 0):.1f}%); {count(n_rules)} candidate rules; "
              f"log posterior {model.get('parameters', {}).get('log_posterior', float('nan')):.3f}", file=stream)


def _usable_posterior(model: dict) -> dict | None:
    """The model's posterior block when it supports its credible intervals (the card's rule,
    :func:`frl_engine.card.intervals_refused`, and one interval per rule and the ELSE), else None."""
    from .card import intervals_refused

    posterior = model.get("posterior")
    if not isinstance(posterior, dict) or intervals_refused(posterior) is not None:
        return None
    lower, upper = posterior.get("risk_lower"), posterior.get("risk_upper")
    n_rows = len(model.get("rules") or []) + 1
    if not (isinstance(lower, list) and isinstance(upper, list) and len(lower) == len(upper) == n_rows
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in lower + upper)):
        return None
    return posterior


def credible_intervals(model: dict) -> list[str] | None:
    """Each row's 95% credible interval of the risk, ``"87.4% to 98.6%"``, top to ELSE; None when the model
    file holds no posterior sample that supports them (:func:`posterior_line` then says why)."""
    posterior = _usable_posterior(model)
    if posterior is None:
        return None
    return [f"{100 * lo:.1f}% to {100 * hi:.1f}%" for lo, hi in zip(posterior["risk_lower"], posterior["risk_upper"])]


def posterior_line(model: dict) -> str | None:
    """The line under a sampled model's list: how many draws, and the sample's verdict; when the sample did not
    converge (or its risk draws are too few), that the intervals are left out, as on the card.  None without a
    posterior block."""
    posterior = model.get("posterior")
    if not isinstance(posterior, dict):
        return None
    n_samples, n_chains = posterior.get("n_samples"), posterior.get("n_chains")
    draws = (f"{n_samples:,} draws" if isinstance(n_samples, int) and not isinstance(n_samples, bool) else "draws")
    if isinstance(n_chains, int) and not isinstance(n_chains, bool):
        draws += f" from {n_chains} chain{'s' if n_chains != 1 else ''}"
    verdict = posterior.get("verdict")
    verdict = f" {verdict}" if isinstance(verdict, str) and verdict else ""
    if _usable_posterior(model) is not None:
        return f"Posterior sample: {draws}.{verdict}"
    from .card import intervals_refused

    refusal = intervals_refused(posterior)
    why = ("" if refusal == "unconverged" else
           f" (the draws of the risks hold too few independent ones: ESS {posterior['risk_ess']:.0f})"
           if refusal == "few draws" else " (the file's intervals are incomplete)")
    return f"Posterior sample: {draws}.{verdict} No credible intervals are printed{why}: the risks are point estimates."


def unreached_note(names) -> str:
    """The line saying which rules of the MAP list were removed because no training patient reached them."""
    quoted = "; ".join(f"`{name}`" for name in names)
    return (f"Removed {len(names)} rule{'s' if len(names) != 1 else ''} of the MAP list that no training patient "
            f"reaches (everyone {'they cover' if len(names) != 1 else 'it covers'} is caught higher up): {quoted}. "
            "No prediction on these patients changes; --keep-unreached keeps the MAP list as found.")


def identifier_note(table) -> str | None:
    """The line naming the columns left out as identifiers by their values (not by the user), else None.

    A measurement recorded in whole numbers with a different value in nearly every row and an even
    spread (an income, a charge) reads like a record number; the line says how to use it instead.
    """
    if table is None or not len(table):
        return None
    left_out = table[(table["kind"] == "identifier") & ~table["declared"].astype(bool)
                     & (table["reason"] != "excluded by you")]
    if left_out.empty:
        return None
    names = [str(name) for name in left_out["column"]]
    shown = ", ".join(f"'{name}'" for name in names)
    first = shlex.quote(f"{names[0]}=numeric")
    return (f"Left out as identifiers (a different value in nearly every row, or a patient number): {shown}. "
            f"If one is a measurement, refit with --kind {first}; --explain-columns shows why.")


def unusable_note(table) -> str | None:
    """The line naming the columns left out because, as written, they cannot make a rule (numbers in
    different units, dates, times of day), with what to do; None when there are none."""
    if table is None or not len(table):
        return None
    from .columns import FOLLOW_UP_REASON, LATER_OUTCOME_REASON

    left_out = table[(table["kind"] == "unsupported") & ~table["declared"].astype(bool)]
    follow_up = left_out["reason"] == FOLLOW_UP_REASON
    later = left_out["reason"] == LATER_OUTCOME_REASON
    lines = []
    for mask, what, why, kind in (
            (follow_up, "a follow-up time (until the outcome or the end of follow-up)",
             "It is known only afterwards, so a rule on it could not be used when a patient is seen", "numeric"),
            (later, "a second outcome", "An event such as a relapse or a death is known only after the patient is "
                                        "seen, so a rule on it could not be used then", "categorical")):
        if mask.any():
            names = [str(name) for name in left_out.loc[mask, "column"]]
            lines.append(f"Left out, named like {what}: {', '.join(repr(name) for name in names)}. {why}; if it is "
                         f"known then, refit with --kind {shlex.quote(names[0] + '=' + kind)}.")
    written = left_out[~follow_up & ~later]
    if not written.empty:
        shown = "; ".join(f"'{name}': {reason}" for name, reason in zip(written["column"], written["reason"]))
        lines.append(f"Left out, as written they make no rule: {shown}.")
    return "\n".join(lines) or None


def ruleless_note(table, candidate_columns, min_support: float, said=(), units=None) -> str | None:
    """The line naming the columns read as usable that no candidate rule tests, because none of their values reaches
    the minimum support (a diagnosis written as 205 values, none on 5% of the patients; a finding on 2% of them),
    with what to do; None when there are none.  Without it such a column is silently absent from every rule.
    ``said``: columns already named for another reason (the user's thresholds outside their values); ``units``:
    column -> a unit its numbers are written with that is not read (``ColumnReading.unknown_unit``), whose advice
    is to write plain numbers, not to group rare values."""
    if table is None or not len(table) or candidate_columns is None:
        return None
    used = {str(column) for column in candidate_columns} | {str(column) for column in said}
    usable = table["kind"].isin(["categorical", "code", "nominal", "boolean", "numeric", "code list"])
    idle = table[usable & ~table["column"].astype(str).isin(used)]
    if idle.empty:
        return None
    def what(levels, missing_share):  # a flag (X or blank) by its share of patients, other columns by their values
        return f"on {100 * (1 - missing_share):.1f}% of patients" if levels == 1 else f"{levels:,} values"

    units = {str(column): unit for column, unit in (units or {}).items() if unit}
    in_units = idle["column"].astype(str).isin(units)
    lines = []
    if (~in_units).any():
        shown = ", ".join(f"'{name}' ({what(levels, missing)})" for name, levels, missing
                          in zip(idle["column"][~in_units], idle["levels"][~in_units].astype(int),
                                 idle["missing_share"][~in_units].astype(float)))
        lines.append(f"In no candidate rule, as none of their values reaches the minimum support "
                     f"({100 * min_support:g}% of patients): {shown}. Group rare values into broader ones in the "
                     "table, or lower --min-support.")
    for name in idle["column"][in_units]:   # "7.2 widgets/L": measurements, not rare values
        lines.append(f"In no candidate rule: '{name}', numbers written with the unit {units[str(name)]!r}, which is "
                     "not read here, so each number is a value of its own: write the column as plain numbers in one "
                     "unit.")
    return " ".join(lines)


def text_missing_note(readings) -> str | None:
    """The line naming the numeric columns whose text cells (``pending``, ``TNP``) were read as missing, else None."""
    found = [f"'{r.name}' ({r.text_as_missing})" for r in readings if r.kind == "numeric" and r.text_as_missing]
    return f"Read as missing, in columns of numbers: {'; '.join(found)}." if found else None


def text_among_numbers_note(readings) -> str | None:
    """The line naming the columns read as text labels although most of their cells are numbers
    (``ColumnReading.text_among_numbers``): their numbers meet no threshold. None when there are none."""
    found = [f"'{r.name}' ({r.text_among_numbers})" for r in readings if r.text_among_numbers and not r.declared]
    its = "Its" if len(found) == 1 else "Their"
    return (f"Read as text labels, not numbers, as too many cells hold text: {'; '.join(found)}. {its} numbers meet "
            "no threshold; correct or empty those cells in the export to compare with thresholds.") if found else None


def outside_thresholds_note(readings) -> str | None:
    """The warning naming the user's thresholds (``--threshold``) outside their column's values, else None."""
    found = [f"'{r.name}' {r.outside_thresholds}" for r in readings if r.outside_thresholds]
    return (f"Warning: thresholds outside the column's values, whose items hold every patient or none and so make "
            f"no rule: {'; '.join(found)}. Check them for a typo (600 for 60).") if found else None


def repeated_rows_said(frame, drop: bool, again: str = "refit with"):
    """The table without its repeated records when ``drop`` (``--drop-repeated-rows``), with a line saying how many
    were left out; otherwise the table as it is, with a warning when it repeats records
    (:mod:`frl_engine.repeated_rows`).  ``again`` is the warning's remedy verb (``frl validate``: "validate again
    with")."""
    if drop:
        frame, found = without_repeated_records(frame)
        print(f"Left out {found.n_copies:,} row{'s' if found.n_copies != 1 else ''} that repeat an earlier row in every "
              f"column, {found.record_column} included (--drop-repeated-rows)." if found else
              "--drop-repeated-rows: no row repeats an earlier one in every column; nothing was left out.")
        return frame
    found = repeated_records(frame)
    if found is not None:
        print("Warning: " + found.note("cli").replace("refit with", again))
    return frame


def codes_as_missing(frame, columns, stream=None):
    """``--codes-as-missing``: the table with the number codes for not known emptied in ``columns``, said on
    ``stream`` (default standard output)."""
    from .columns import empty_number_codes

    frame, done = empty_number_codes(frame, columns)
    print(f"Read as not known (--codes-as-missing): {'; '.join(done)}." if done else
          "--codes-as-missing: no number looks like a code for not known; nothing was emptied.", file=stream)
    return frame


def number_code_note(readings) -> str | None:
    """The warning naming the numeric columns holding numbers that look like codes for not known (``age`` 999
    among ages 18 to 94), which thresholds would read as values, else None."""
    found = [f"'{r.name}' ({r.number_codes})" for r in readings if r.kind == "numeric" and r.number_codes]
    if not found:
        return None
    return (f"Warning: numbers that look like codes for not known: {'; '.join(found)}. They are read as numbers "
            "(999 counts as a large value in a rule such as >= 75, 0 as a small one in a rule such as < 25): if they "
            "mean not known, fit again with "
            "--codes-as-missing, or empty those cells (or write ?) in the file.")


def search_warning(estimator) -> str | None:
    """The one line to print when the MAP search's chains did not agree on the best list (else None)."""
    report = getattr(estimator, "search_report_", None)
    if report is None or report.converged:
        return None
    return f"Warning: {report.message()}"


def cmd_fit(args) -> int:
    from .cli_models import register_fit, registry_for

    registry = registry_for(args)  # before the fit: a bad registry fails at once
    started = time.perf_counter()
    if getattr(args, "tune", False):  # frl fit --tune: choose the settings by cross-validation first
        from .cli_explore import apply_tuning

        apply_tuning(args)
    estimator, features = fit_from_args(args)
    if args.validate:
        features, event, _ = load_training_data(args)
        result = estimator.cross_validate(features, event, n_folds=args.validate, random_state=args.seed, n_jobs=-1)
        summary = result.summary("frl")
        grouped = result.settings.get("grouped_by")
        print(f"Cross-validated AUROC ({args.validate} folds{f', folds by {grouped}' if grouped else ''}): "
              f"{summary.auroc_mean:.3f} (sd {summary.auroc_std:.3f})")
    if getattr(args, "explain_columns", False) and estimator.binarizer_ is not None:
        from .binarize import format_column_table

        print(format_column_table(estimator.column_table()) + "\n")
    if estimator.screening_note_:
        print(estimator.screening_note_ + ".")
    if getattr(estimator, "unreached_rules_", None):
        print(unreached_note(estimator.unreached_rules_))
    model = _model_dict(estimator, args)
    if getattr(args, "tuning", None):  # frl fit --tune: how the settings were chosen travels with the model
        model["training"]["tuning"] = args.tuning
    if args.out:  # written before anything is printed: `frl fit ... --out m.json | head` still leaves the model
        save_model(model, args.out)
    print_model(model)
    from .search_report import empty_list_note, few_patients_note, leakage_note, sensitive_columns_note

    few = few_patients_note(model)
    if few:
        print(f"Warning: {few}")
    if not model["rules"]:
        print(empty_list_note(model))
    outside = outside_thresholds_note(estimator.binarizer_.readings_) if estimator.binarizer_ is not None else None
    if outside:
        print(outside)
    if not getattr(args, "explain_columns", False) and estimator.binarizer_ is not None:  # None: --no-mining
        table = estimator.column_table()
        copies = getattr(estimator, "copied_columns_", {})
        for note in (text_missing_note(estimator.binarizer_.readings_), number_code_note(estimator.binarizer_.readings_),
                     text_among_numbers_note(estimator.binarizer_.readings_),
                     unusable_note(table), identifier_note(table),
                     # on a handful of patients every column holds "the same patients" as another: the warning says why
                     None if few else copied_note(copies),
                     ruleless_note(table, getattr(estimator, "candidate_columns_", None), estimator.min_support,
                                   [r.name for r in estimator.binarizer_.readings_ if r.outside_thresholds]
                                   + list(copies),
                                   {r.name: r.unknown_unit for r in estimator.binarizer_.readings_})):
            if note:
                print(note)
    if sensitive_columns_note(model):
        print(sensitive_columns_note(model))
    if leakage_note(model):
        print(f"Warning: {leakage_note(model)}")
    if search_warning(estimator):
        print(search_warning(estimator))
    print(f"Fitted in {time.perf_counter() - started:.2f} s.")
    if args.out:
        print(f"Model written to {args.out}")
    if registry is not None:
        register_fit(registry, args, estimator, features, model)
    return 0


def cmd_show(args) -> int:
    from .io import load_model_dict

    model = load_model_dict(args.model)
    print_model(model)
    for line in model_warnings(model):
        print(line)
    return 0


def model_warnings(model: dict) -> list[str]:
    """What ``frl fit`` warned of a model that the model file alone still shows (too few patients, a condition that
    is nearly the outcome, a column such as race), for ``frl show`` and ``frl card``: a card printed from a file
    should not lose the fit's warnings on the way."""
    from .search_report import few_patients_note, leakage_note, sensitive_columns_note

    few, leak, sensitive = few_patients_note(model), leakage_note(model), sensitive_columns_note(model)
    return [line for line in (few and f"Warning: {few}", sensitive, leak and f"Warning: {leak}") if line]


#: Endings of files that are not tables: ``frl predict --out scored.json`` is refused, not written as CSV text.
NOT_A_TABLE = frozenset({".json", ".pdf", ".html", ".htm", ".xml", ".doc", ".docx", ".xls", ".png", ".jpg", ".md",
                         ".py", ".db", ".sqlite", ".pkl", ".pickle"})


def cmd_predict(args) -> int:
    from .io import load_model_dict

    from .estimator import FallingRuleListClassifier
    from .sniff import STAT_SUFFIXES
    from .stat_files import check_writable, write_stat_file

    model = load_model_dict(args.model)
    estimator = FallingRuleListClassifier.from_dict(model)
    if args.out and Path(args.out).resolve() == Path(args.data).resolve():
        raise FRLError(f"--out {args.out} is the table being scored: write the scores to another file, so your "
                       "export stays as it is")
    if args.out and Path(args.out).suffix.lower() in STAT_SUFFIXES:
        check_writable(args.out)  # before the scoring, not after
    if args.out and Path(args.out).suffix.lower() in NOT_A_TABLE:   # a scored.json would hold CSV text
        raise FRLError(f"--out {args.out}: a file ending in '{Path(args.out).suffix}' would not hold a table: name "
                       "it .csv, .xlsx, .parquet, .sav, .dta or .xpt")
    from .io import rule_columns

    used = rule_columns(model)   # a workbook's sheet holding them is the one to score
    frame = read_table(args.data, sheet=args.sheet, wanted_columns=used)  # read as fit reads
    # the same rows, every cell as written
    original = read_table(args.data, tidy=False, as_written=True, sheet=args.sheet, wanted_columns=used)
    sheet_note(args, frame, sys.stderr)
    if frame.attrs.get("read_as"):   # the sheet read, a decimal comma, Excel's percentages: on stderr, as the
        print(f"Read {Path(args.data).name} as {frame.attrs['read_as']}.", file=sys.stderr)   # scores may be stdout
    if frame.attrs.get("left_out"):
        print(f"Left out of {Path(args.data).name}: {frame.attrs['left_out']}.", file=sys.stderr)
    features = frame.drop(columns=[c for c in [model["outcome"].get("target")] if c in frame.columns])
    recorded = (model.get("training") or {}).get("codes_read_as_missing")
    if recorded:  # the model was fitted with these codes read as missing: these patients are read the same way
        from .columns import empty_recorded_codes

        features, done = empty_recorded_codes(features, recorded)
        if done:
            print(f"Read as not known, as at fit time: {'; '.join(done)}.", file=sys.stderr)
    if args.codes_as_missing:  # said on stderr: standard output may be the scored table
        features = codes_as_missing(features, list(features.columns), stream=sys.stderr)
    try:
        rule_number = estimator.apply(features)
    except FRLError as exc:
        raise FRLError(f"{Path(args.data).name}: {exc}") from None
    _warn_recoded_columns(model, features, Path(args.data).name, rule_number)
    risk = estimator.probabilities_[rule_number]
    risk_column = "risk" if "risk" not in frame.columns else "frl_risk"
    rule_column = "rule" if "rule" not in frame.columns else "frl_rule"
    scored = original.copy()
    scored[risk_column] = risk
    scored[rule_column] = rule_number + 1  # 1 = top rule; L+1 = the ELSE rule
    # written the way the input was (a semicolon file with decimal commas stays one, for its Excel)
    style = {"sep": frame.attrs.get("delimiter", ","), "decimal": frame.attrs.get("decimal", ".")}
    if args.out:
        suffix = Path(args.out).suffix.lower()
        if suffix == ".tsv":   # the name says tab-separated, whatever the input's delimiter
            style["sep"] = "\t"
        if (suffix in STAT_SUFFIXES or suffix in (".xlsx", ".parquet")) and frame.attrs.get("delimiter"):
            # a text file into a typed one: numbers as numbers
            from .io import numbers_as_numbers

            scored = numbers_as_numbers(scored, frame)
        # written beside it, then moved into place: a failed write never leaves an earlier file there emptied
        partial = Path(args.out).with_name(f".{Path(args.out).name}.partial{Path(args.out).suffix}")
        try:
            if suffix == ".xlsx":
                scored.to_excel(partial, index=False)
            elif suffix == ".parquet":
                scored.to_parquet(partial, index=False)
            elif suffix in STAT_SUFFIXES:  # an SPSS, Stata or SAS user gets the file their package opens
                renamed = write_stat_file(scored, partial, shown=args.out)
                if renamed:
                    print(f"Column names a {suffix} file cannot hold, written as: "
                          + ", ".join(f"{old!r} as {new!r}" for old, new in renamed.items()) + ".", file=sys.stderr)
            else:  # in the input's encoding too (Latin-1, UTF-16, UTF-8 with Excel's mark), so accents survive
                scored.to_csv(partial, index=False, encoding=frame.attrs.get("encoding", "utf-8"), errors="replace",
                              **style)
            os.replace(partial, args.out)
        finally:
            partial.unlink(missing_ok=True)
        counts = pd.Series(rule_number + 1).value_counts().sort_index()
        print(f"Scored {len(scored):,} row{'s' if len(scored) != 1 else ''} into {args.out} (columns {risk_column!r}, "
              f"{rule_column!r}; rows per rule: {', '.join(f'{k}: {v}' for k, v in counts.items())})")
    else:
        scored.to_csv(sys.stdout, index=False, **style)
    return 0


def _warn_recoded_columns(model: dict, features, data_name: str, rule_number) -> None:
    """Say on stderr what external validation would refuse: a rule column recoded since the fit (ICD-10 codes
    for a model fitted on ICD-9, wards renamed) or empty, whose rules then catch nobody; and what it would note:
    text read as missing, empty cells, bands, new categories, rules catching a very different share
    (:func:`frl_engine.validation.external.table_notes`).  The scores are still written."""
    from .validation.external import check_columns, table_notes

    try:
        check_columns(model, features, data_name)
    except FRLError as exc:
        print(f"frl: warning: {exc}. The scores are written, but patients those rules should catch fall to lower "
              "rules.", file=sys.stderr)
    for note in table_notes(model, features, rule_number):
        print(f"frl: warning: {data_name}: {note}.", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="frl", description="Falling rule lists: monotone, interpretable risk models "
                                             "(Wang & Rudin, AISTATS 2015).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    fit = sub.add_parser("fit", help="fit a falling rule list to a table and print it",
                         description="Fit the MAP falling rule list and print it as IF / ELSE IF / ELSE.")
    add_fit_arguments(fit)
    fit.add_argument("--out", "-o", help="write the model to this JSON file")
    fit.add_argument("--validate", type=int, metavar="FOLDS", default=0,
                     help="also cross-validate the AUROC with this many folds; stored in the model and printed on the card")
    from .cli_models import add_register_arguments

    add_register_arguments(fit)
    fit.set_defaults(handler=cmd_fit)
    from .cli_explore import add_tune_arguments

    add_tune_arguments(fit)

    show = sub.add_parser("show", help="print a saved model", description="Print a saved model's rule list.")
    show.add_argument("model", help="model JSON file written by `frl fit --out`")
    show.set_defaults(handler=cmd_show)

    predict = sub.add_parser("predict", help="score a table with a saved model",
                             description="Add a risk column and the number of the rule each row falls into "
                                         "(1 = top rule; the last number is the ELSE rule).")
    predict.add_argument("model", help="model JSON file")
    predict.add_argument("data", help="CSV, Excel, Parquet, SPSS, Stata or SAS table to score")
    add_sheet_argument(predict)
    predict.add_argument("--codes-as-missing", action="store_true",
                         help="read numbers that look like codes for not known (999 among ages 18 to 94) as missing, "
                              "as `frl fit --codes-as-missing` does; said on standard error")
    predict.add_argument("--out", "-o", help="write the scored table here: CSV in the input's delimiter and decimal mark, or Excel (.xlsx), Parquet, SPSS (.sav), Stata (.dta) or SAS transport (.xpt) by the name; never the input itself; default: standard output")
    predict.set_defaults(handler=cmd_predict)

    for module_name in EXTRA_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(sub)
    return parser


# The files a command reads (positional arguments) and the options that name a file it writes.
_INPUTS = {"data": "the table being read", "model": "the model file being read"}
_OUTPUTS = ("out", "model_out", "html")


# What each command writes to each output, by the suffixes that name it; a name with another of KNOWN_SUFFIXES
# (``--out card.png`` for the card, ``--out model.csv`` for a model) would hold something its name does not say.
_FORMATS = {"JSON": (".json", ".txt"), "PDF": (".pdf",), "HTML": (".html", ".htm"), "CSV": (".csv", ".txt")}
_OUTPUT_FORMATS = {("fit", "out"): "JSON", ("card", "out"): "PDF", ("evaluate", "out"): "JSON",
                   ("evaluate", "html"): "HTML", ("explore", "out"): "CSV", ("explore", "html"): "HTML",
                   ("export", "out"): "JSON", ("sample", "out"): "JSON", ("sample", "model_out"): "JSON",
                   ("validate", "out"): "JSON", ("validate", "html"): "HTML", ("validate", "model_out"): "JSON"}
KNOWN_SUFFIXES = frozenset({".json", ".pdf", ".html", ".htm", ".csv", ".tsv", ".txt", ".xlsx", ".xls", ".ods",
                            ".parquet", ".sav", ".dta", ".xpt", ".sas7bdat", ".png", ".jpg", ".jpeg", ".svg", ".zip",
                            ".gz", ".md", ".docx", ".doc", ".xml", ".yaml", ".yml"})


def _check_output_file(flag: str, value: str, fmt: str | None) -> None:
    """One output named on the command line: its folder exists and can be written, it is not a folder, and its name
    does not say another format (checked before any work, not after a long fit)."""
    path = Path(value).expanduser()
    folder = path.resolve().parent
    if not folder.is_dir():
        raise FRLError(f"{flag} {value}: the folder {folder} does not exist; create it or write the file elsewhere")
    if path.is_dir():
        example = {"PDF": "card.pdf", "HTML": "report.html", "CSV": "table.csv"}.get(fmt, "model.json")
        raise FRLError(f"{flag} {value} is a folder: give a file name in it (for example {path / example})")
    suffix = path.suffix.lower()
    if fmt and suffix in KNOWN_SUFFIXES and suffix not in _FORMATS[fmt]:
        stem = Path(path.stem)   # m.json.gz: name it m.json, not m.json.json
        shown = stem.name if stem.suffix.lower() in _FORMATS[fmt] else path.with_suffix(_FORMATS[fmt][0]).name
        raise FRLError(f"{flag} {value}: this is written as {fmt}, and a {suffix} name would say otherwise; name it "
                       f"{shown}")
    if (path.exists() and not os.access(path, os.W_OK)) or not _can_create_in(folder):
        raise FRLError(f"{flag} {value}: {'that file' if path.exists() else 'the folder ' + str(folder)} cannot be "
                       "written (read-only, or not yours); write the file elsewhere")


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be made in ``folder``: a hidden empty file is made there and removed at once (a read-only
    disk, or a folder such as /proc, refuses it where ``os.access`` would not say so for the superuser)."""
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".frl-", suffix=".check"):
            return True
    except OSError:
        return False


def _check_outputs(args) -> None:
    """Refuse an output in a folder that does not exist or cannot be written, a folder given as a file, or a name
    that says another format, before any work, not after a long fit; and refuse an output that is one of the
    command's own inputs (the export or the model would be written over, and lost) or that two outputs share (the
    second would replace the first)."""
    outputs = [(name, getattr(args, name, None)) for name in _OUTPUTS]
    folder_out = getattr(args, "out", None) if args.command == "reproduce" else None
    if isinstance(folder_out, str) and folder_out:   # reproduce's --out is a folder it makes: in a place it can write
        parent = Path(folder_out).expanduser().resolve().parent
        if not parent.is_dir() or (not Path(folder_out).expanduser().exists() and not _can_create_in(parent)):
            raise FRLError(f"--out {folder_out}: the folder {parent} does not exist or cannot be written; give a "
                           "folder elsewhere")
    outputs = [(name, value) for name, value in outputs
               if isinstance(value, str) and value and not (name == "out" and args.command == "reproduce")]
    command = getattr(args, "models_command", None) if args.command == "models" else args.command
    formats = [_OUTPUT_FORMATS.get((command, name)) for name, _ in outputs]
    outputs = [(f"--{name.replace('_', '-')}", value) for name, value in outputs]
    inputs = [("the table being scored" if name == "data" and args.command == "predict" else what,
               getattr(args, name, None)) for name, what in _INPUTS.items()]
    inputs = [(what, value) for what, value in inputs if isinstance(value, str) and value]
    seen = {}
    for flag, value in outputs:
        where = Path(value).expanduser().resolve()
        for what, path in inputs:
            if where == Path(path).expanduser().resolve():
                raise FRLError(f"{flag} {value} is {what} ({path}): it would be written over and lost; write "
                               "the output to another file")
        if where in seen:
            raise FRLError(f"{seen[where]} and {flag} both name {value}: the second would replace the first; give "
                           "each its own file")
        seen[where] = flag
    for (flag, value), fmt in zip(outputs, formats):
        _check_output_file(flag, value, fmt)


# The estimator's settings by the command line's options: a message that opens with a setting names the option.
_SETTING_FLAGS = {"n_thresholds": "--n-thresholds", "min_support": "--min-support", "lam": "--lam",
                  "max_conditions": "--max-conditions", "n_chains": "--chains", "n_steps": "--steps",
                  "max_rules": "--max-rules", "exclude (--exclude)": "--exclude",
                  "thresholds (--threshold)": "--threshold", "column_kinds (--kind)": "--kind"}


def _in_flags(message: str, typed=()) -> str:
    """``n_thresholds must be at least 1`` as the command line's user typed it: ``--n-thresholds must be ...``,
    when that option is among ``typed`` (the command line's words; ``--tune-n-thresholds`` keeps the name)."""
    for setting, flag in _SETTING_FLAGS.items():
        if message.startswith(setting + " ") and any(word == flag or word.startswith(flag + "=") for word in typed):
            return flag + message[len(setting):]
    return message


def main(argv=None) -> int:
    """Run one ``frl`` command; on a terminal, characters it would obey instead of print (a right-to-left override
    in a category value) are written visibly (``terminal.visible_controls``); a reader that stops reading its
    output does not stop the command (``terminal.CommandLineWriter``)."""
    from .terminal import CommandLineWriter

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (CommandLineWriter(stream, visible=_is_terminal(stream)) for stream in streams)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):   # a closed or unusual stream: written to as it is
        return False


def _main(argv=None) -> int:
    from .stopping import PROCESS_TOKEN, REPORTED, Stopped, kill_children, stop_on_signals

    import warnings

    from .errors import FewPatientsWarning, PossibleLeakWarning, RepeatedRecordsWarning

    warnings.simplefilter("ignore", PossibleLeakWarning)  # the command line prints its own note (leakage_note)
    warnings.simplefilter("ignore", RepeatedRecordsWarning)  # and its own line on repeated records
    warnings.simplefilter("ignore", FewPatientsWarning)  # and on too few patients
    parser = build_parser()
    args = parser.parse_args(argv)
    args.command_line = list(sys.argv[1:] if argv is None else argv)  # kept by `--register`
    if isinstance(getattr(args, "positive", None), list):  # --positive given once: the value; several times: a tuple
        args.positive = args.positive[0] if len(args.positive) == 1 else tuple(args.positive)
    try:
        _check_outputs(args)
        with stop_on_signals():
            return int(args.handler(args) or 0)
    except (Stopped, KeyboardInterrupt) as exc:  # Ctrl-C or SIGTERM: no worker is left behind, one line, 130 / 143
        kill_children()
        print("frl: stopped", file=sys.stderr, flush=True)
        REPORTED.set()
        return 128 + (getattr(exc, "signum", None) or PROCESS_TOKEN.signum or signal.SIGINT)
    except FRLError as exc:
        print(f"frl: error: {_in_flags(str(exc), args.command_line)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `frl predict ... | head`: the reader stopped reading, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"frl: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2



if __name__ == "__main__":
    sys.exit(main())
