"""``frl validate MODEL.json NEW.csv``: how a saved list holds up on patients it never saw.

Prints the AUROC with its DeLong 95% interval, the Brier score, the calibration
intercept and slope, each rule's observed rate next to the model's risk (with
flags), and the decision curve's useful range; ``--by COLUMN`` adds the same per
subgroup.  ``--out`` writes the full result as JSON, ``--html`` a self-contained
report with the calibration plot and the decision curve, ``--model-out`` a copy
of the model file with an ``external_validation`` block (printed on the card).
``--drop-missing-outcome`` leaves out the patients whose outcome is empty, and says so.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from .errors import DataError, FRLError, MissingOutcomeError


def _writable(path, what: str) -> Path:
    path = Path(path)
    if not path.parent.exists():
        raise FRLError(f"Cannot write the {what} to {path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise FRLError(f"Cannot write the {what} to {path}: it is a folder")
    return path


def cmd_validate(args) -> int:
    from .io import load_model_dict, read_table, save_model
    from .validation.external import attach_to_model, validate_model

    started = time.perf_counter()
    outputs = {name: _writable(getattr(args, name), what) for name, what in
               (("out", "result"), ("html", "report"), ("model_out", "model")) if getattr(args, name)}
    from .cli_models import command_line, registry_for

    registry = registry_for(args)  # opened first: a registry that cannot be used fails before the work
    model = load_model_dict(args.model)
    target = args.target or (model.get("outcome") or {}).get("target")
    frame = read_table(args.data, sheet=args.sheet, wanted_columns=[target])
    from .cli import sheet_note

    sheet_note(args, frame)
    name = Path(args.data).name
    if args.codes_as_missing:
        from .cli import codes_as_missing

        frame = codes_as_missing(frame, [c for c in frame.columns if c != target])
    if args.drop_missing_outcome and target in frame.columns:
        from .io import outcome_missing_mask

        empty = outcome_missing_mask(frame[target])
        if empty.any() and not empty.all():
            frame = frame.loc[~empty].reset_index(drop=True)
            print(f"Left out {int(empty.sum())} patient{'s' if empty.sum() != 1 else ''} whose {target} is empty "
                  "or not known (--drop-missing-outcome).")
    from .cli import repeated_rows_said

    frame = repeated_rows_said(frame, args.drop_repeated_rows, again="validate again with")
    try:
        result = validate_model(model, frame, data_name=name, by=args.by, target=args.target,
                                positive=args.positive)
    except MissingOutcomeError as exc:
        raise DataError(f"{exc}, or leave {'that patient' if exc.n_missing == 1 else f'those {exc.n_missing} patients'} "
                        "out with --drop-missing-outcome") from None
    print(result.format_text())
    if "out" in outputs:
        outputs["out"].write_text(result.to_json(indent=1) + "\n", encoding="utf-8")
        print(f"\nResult written to {outputs['out']}")
    if "html" in outputs:
        from .validation.report import validation_report_html

        outputs["html"].write_text(validation_report_html(result, model=model), encoding="utf-8")
        print(f"Report written to {outputs['html']}")
    if "model_out" in outputs:
        save_model(attach_to_model(model, result), outputs["model_out"])
        print(f"Model with its external validation written to {outputs['model_out']} "
              "(`frl card` prints it on the back)")
    if registry is not None:
        from .io import dumps_model

        found = registry.find(result.model_id)
        known = found is not None
        if known and found.retired:   # validating a withdrawn model is allowed (to check it), never silent
            print(f"Warning: model ID {result.model_id} was retired on {str(found.retired_at)[:10]}: the validation is "
                  f"kept with it; before using it, or a validated copy of it, read why (`frl models show "
                  f"{result.model_id}`).")
        if not known:  # a model file never registered: keep it now
            registry.register(Path(args.model).read_text(encoding="utf-8"), created_by="cli",
                              command=command_line(args), note=args.note or "registered by frl validate")
        # a note given for a model registered before is kept with it, as re-registering the same bytes keeps one
        registry.attach_results(result.model_id, external_validation=result.model_block(),
                                note=args.note if known else None)
        what = ("Validation (not checked for training patients)" if result.external and result.training_unchecked
                else "External validation" if result.external else "Validation (not external: its training patients)")
        print(f"{what} attached to model ID {result.model_id} in {registry.location}")
        if "model_out" in outputs:
            entry = registry.register(dumps_model(attach_to_model(model, result)) + "\n", created_by="cli",
                                      command=command_line(args), parent=result.model_id, note=args.note)
            print(f"The validated model file is registered as model ID {entry.model_id}")
    print(f"Took {time.perf_counter() - started:.1f} s.")
    return 0


def register(subparsers) -> None:
    validate = subparsers.add_parser(
        "validate", help="externally validate a saved model on a new table (a later period, another hospital)",
        description="Score a saved model on a new table holding the model's columns and its outcome, and report "
                    "the AUROC (95% CI, DeLong), Brier score, calibration intercept and slope, each rule's "
                    "observed rate against the model's risk, and the decision curve. Extra columns are ignored.")
    validate.add_argument("model", help="model JSON file written by `frl fit --out`")
    validate.add_argument("data", help="the new patients: CSV, Excel (.xlsx), Parquet, SPSS, Stata or SAS, with the outcome column")
    validate.add_argument("--target", metavar="COLUMN", default=None,
                          help="the new table's outcome column, when it is named differently from the training data's")
    from .cli import add_sheet_argument

    add_sheet_argument(validate)
    validate.add_argument("--positive", metavar="VALUE", default=None, action="append",
                          help="the new table's event value, when it is written differently from the training data's "
                               "(e.g. Yes for a model fitted on <30); give it again for each further value that counts "
                               "as the event")
    validate.add_argument("--codes-as-missing", action="store_true",
                          help="read numbers that look like codes for not known (999 among ages 18 to 94) as "
                               "missing, as `frl fit --codes-as-missing` does; what was emptied is printed")
    validate.add_argument("--drop-missing-outcome", action="store_true",
                          help="leave out the patients whose outcome is empty (said), as `frl fit` does")
    validate.add_argument("--drop-repeated-rows", action="store_true",
                          help="leave out the rows that repeat an earlier row in every column, record number included "
                               "(an encounter written twice by a join; warned about otherwise)")
    validate.add_argument("--by", metavar="COLUMN", help="also report each subgroup of this column (e.g. sex, age band)")
    validate.add_argument("--out", "-o", help="write the full result as JSON")
    validate.add_argument("--html", help="write a self-contained HTML report with the calibration plot and decision curve")
    validate.add_argument("--model-out", dest="model_out",
                          help="write a copy of the model with this validation in it (the card prints it)")
    from .cli_models import add_register_arguments

    add_register_arguments(validate)
    validate.set_defaults(handler=cmd_validate)


if __name__ == "__main__":  # pragma: no cover
    from .cli import main

    sys.exit(main(["validate", *sys.argv[1:]]))
