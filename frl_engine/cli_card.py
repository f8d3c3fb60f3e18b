"""``frl card``: print a fitted model as a laminated risk card (PDF).

    frl card model.json --out card.pdf [--size pocket|index|a6] [--title "..."]

The main CLI (frl_engine/cli.py) calls ``register(subparsers)``; the handler
returns the exit status and raises ``FRLError`` subclasses for bad input, which
the main CLI prints as one line before exiting with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .card import CARD_SIZES, layout_card, missing_glyphs_note, render_layout
from .errors import FRLError, ModelFileError
from .io import check_model_dict, check_model_numbers

_DESCRIPTION = """\
Render a fitted falling rule list (model.json, written by `frl fit`) as a
printable two-sided risk card (PDF): the front lists the rules top to bottom
(IF / ELSE IF / ELSE) with risk, 95% credible interval when the model has a
posterior sample, and patients per rule; the back says where the model comes
from (data, date, validation, settings) and carries a model ID, the first 10
hex digits of the SHA-256 of the model, so a printed card can be traced back to
its file.  Print at 100% (actual size) and cut on the crop marks.  A list too
long for the chosen size moves up a size (pocket -> index -> a6) and, beyond
A6, continues on a second card."""

_EPILOG = """\
sizes: pocket = 85.6 x 54 mm (bank card), index = 5 x 3 in, a6 = 148 x 105 mm

example:
  frl card model.json --out card.pdf --size index --title "30-day readmission risk"
"""


def register(subparsers) -> None:
    """Add the ``card`` sub-command to an argparse ``subparsers`` object."""
    parser = subparsers.add_parser(
        "card",
        help="print a model as a laminated risk card (PDF)",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", metavar="MODEL.json", help="model file written by `frl fit`")
    parser.add_argument("--out", "-o", required=True, metavar="CARD.pdf", help="where to write the PDF")
    parser.add_argument(
        "--size",
        choices=list(CARD_SIZES),
        default="pocket",
        help="card size (default: pocket); a list that does not fit moves up a size",
    )
    parser.add_argument(
        "--title",
        default=None,
        help="title printed on the card (default: the model's outcome title, "
        "or 'Risk of <target> = <positive class>')",
    )
    parser.set_defaults(handler=run_card)


def read_model_file(path: str | os.PathLike) -> dict:
    """Read a model file as UTF-8 JSON; ``ModelFileError`` with a one-line message if that fails."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ModelFileError(f"Model file {str(p)!r} not found") from None
    except IsADirectoryError:
        raise ModelFileError(f"{str(p)!r} is a directory, not a model file") from None
    except OSError as exc:
        raise ModelFileError(f"Cannot read model file {str(p)!r}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFileError(f"{str(p)!r} is not a model file: it is not UTF-8 text") from None
    try:
        model = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFileError(
            f"{str(p)!r} is not a model file: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ModelFileError(f"{str(p)!r} is not a model file: JSON nested too deeply") from None
    if not isinstance(model, dict) or model.get("format") != "frl-model":
        raise ModelFileError(f"{str(p)!r} is not a falling rule list model file (no \"format\": \"frl-model\")")
    check_model_numbers(model, str(p))
    if isinstance(model.get("rules"), list) and isinstance(model.get("default"), dict) and "outcome" in model:
        # the checks `frl show` makes: a rule whose name is not its conditions would print a rule the model never
        # applies; the card's own checks (layout_card) name what else is missing
        from .estimator import FallingRuleListClassifier

        check_model_dict(model, str(p))
        FallingRuleListClassifier.from_dict(model)
    return model


def run_card(args: argparse.Namespace) -> int:
    """Handler of ``frl card``: read the model, lay the card out, write the PDF to --out."""
    model_path = Path(args.model)
    out = Path(args.out)
    model = read_model_file(model_path)
    if out.exists() and out.resolve() == model_path.resolve():
        raise FRLError("--out is the model file itself: choose another name for the PDF")
    if out.is_dir():
        raise FRLError(f"--out {str(out)!r} is a directory: give a file name such as card.pdf")
    if out.suffix.lower() != ".pdf" and out.exists() and out.read_bytes()[:1] in (b"{", b"["):
        # `-o other_model.json`: a PDF written over another model file (or any JSON) would lose it
        raise FRLError(f"--out {str(out)!r} holds a JSON file (a model?) that the card would overwrite: name the "
                       "card .pdf")
    layout = layout_card(model, size=args.size, title=args.title)
    pdf = render_layout(layout)  # everything is rendered before the output file is touched
    try:
        out.write_bytes(pdf)
    except OSError as exc:
        raise FRLError(f"Cannot write {str(out)!r}: {exc.strerror or exc}") from None
    note = ""
    if layout.size != layout.requested_size:
        note = f" (the list does not fit a {layout.requested_size} card)"
    print(f"Wrote {out}: {layout.describe()}{note}, model ID {layout.model_id}", file=sys.stdout)
    glyphs = missing_glyphs_note(model, args.title)
    if glyphs:
        print(f"Warning: {glyphs}", file=sys.stdout)
    from .cli import model_warnings

    for line in model_warnings(model):   # the fit's warnings, before the card goes to the ward
        print(line, file=sys.stdout)
    return 0
