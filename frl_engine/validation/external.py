"""External validation: a saved falling rule list scored on patients it never saw.

:func:`validate_model` takes a model dictionary (a model file) and a new table
(a later period, another hospital) holding the model's columns and its outcome,
and returns a frozen :class:`ExternalValidation`:

* ``n``, ``events``; ``auroc`` with its DeLong 95% interval ``auroc_ci``; ``brier``;
* ``calibration_intercept`` (calibration-in-the-large) and ``calibration_slope``
  (logistic recalibration of the outcome on logit(risk)), each with a Wald 95% interval;
* ``rules``: per rule of the list, the patients it captures in the new table, their
  observed event rate with a Wilson 95% interval next to the model's risk (and its
  credible interval when the model file has one), and plain flags:

  - ``"rises"``: the observed rate is above the observed rate of the nearest rule
    above it that captured patients by more than chance explains (one-sided
    Fisher exact test, p < 0.05): the risks no longer fall down the list;
  - ``"outside"``: the observed rate disagrees with the model: its 95% interval
    excludes the model's risk, or, when the model has a credible interval, the events
    are more or fewer than that uncertain risk explains (two-sided beta-binomial test,
    p < 0.05);
  - ``"empty"``: no patient of the new table falls into the rule;

* ``net_benefit``: a decision curve -- the model's net benefit against treating
  everyone and treating no one (0) over a range of risk thresholds;
* with ``by=COLUMN``, the same for each subgroup (each value of the column; a
  numeric column with many values is cut into four bands at rounded quartiles).

The outcome is mapped to event / no event exactly as at fit time: the model
file names the outcome column and the event value (``outcome.target``,
``outcome.positive_class``); every other value of the column is "no event", so a
three-valued outcome (NO / >30 / <30) is read as the model was trained.

Problems with the new table are one :class:`~frl_engine.errors.DataError` line
each: the outcome column missing or with empty cells, a single row, no events
(or only events), columns the rules need that are missing, and columns whose type
changed since the fit (text where the model compares numbers, a yes/no column
that no longer reads yes/no, categories none of which the model knows).
Extra columns are ignored.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import DataError, FRLError, MissingOutcomeError
from ..io import check_model_dict, event_label, rows_fingerprint, rows_text_fingerprint, to_jsonable
from ..training_rows import training_overlap
from ..terminal import display_width, pad_right
from ..search_report import FEW_PATIENTS
from . import metrics

__all__ = [
    "RESULT_FORMAT", "RuleCheck", "DecisionCurve", "PopulationMetrics", "Subgroup", "ExternalValidation",
    "validate_model", "outcome_events", "outcome_reading_note", "check_columns", "subgroup_labels", "FLAG_TEXT",
]

RESULT_FORMAT = "frl-external-validation"
RESULT_FORMAT_VERSION = 1
RISE_ALPHA = 0.05  # a rule's rate "rises" when a one-sided Fisher exact test against the rule above gives p < this
OUTSIDE_ALPHA = 0.05  # a rule is "outside" when the model's risk, with its credible interval, explains its events only at p < this
MAX_GROUPS = 12  # a --by column with more distinct values than this is cut into 4 bands (numeric) or refused
FLAG_TEXT = {
    "rises": "observed rate is clearly higher than the rule above: the risks no longer fall here",
    "outside": "observed rate disagrees with the model's risk",
    "empty": "no patient in the new table falls into this rule",
}


def _nan(value) -> float:
    return float("nan") if value is None else float(value)


def _pair(values) -> tuple[float, float]:
    if values is None:
        return float("nan"), float("nan")
    return _nan(values[0]), _nan(values[1])


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class RuleCheck:
    """One rule of the list (``position`` 0 = top; the last is ELSE) on the new patients."""

    position: int
    rule: str  # "" for the ELSE rule
    model_risk: float
    model_lower: float | None
    model_upper: float | None
    n: int
    events: int
    observed: float  # NaN when n == 0
    lower: float
    upper: float
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"position": self.position, "rule": self.rule, "model_risk": self.model_risk,
                "model_lower": self.model_lower, "model_upper": self.model_upper, "n": self.n,
                "events": self.events, "observed": self.observed, "observed_ci": [self.lower, self.upper],
                "flags": list(self.flags)}

    @classmethod
    def from_dict(cls, d: dict) -> "RuleCheck":
        lower, upper = _pair(d.get("observed_ci"))
        return cls(int(d["position"]), str(d["rule"]), float(d["model_risk"]),
                   None if d.get("model_lower") is None else float(d["model_lower"]),
                   None if d.get("model_upper") is None else float(d["model_upper"]),
                   int(d["n"]), int(d["events"]), _nan(d.get("observed")), lower, upper, tuple(d.get("flags", ())))


@dataclass(frozen=True)
class DecisionCurve:
    """Net benefit of the model, of treating everyone, and (always 0) of treating no one, per threshold."""

    thresholds: tuple[float, ...]
    model: tuple[float, ...]
    treat_all: tuple[float, ...]

    def to_dict(self) -> dict:
        return {"thresholds": list(self.thresholds), "model": list(self.model), "treat_all": list(self.treat_all),
                "treat_none": [0.0] * len(self.thresholds)}

    @classmethod
    def from_dict(cls, d: dict) -> "DecisionCurve":
        return cls(tuple(map(float, d["thresholds"])), tuple(map(float, d["model"])),
                   tuple(map(float, d["treat_all"])))

    def useful_range(self) -> tuple[float, float] | None:
        """The lowest and highest threshold where the model beats both treating all and treating none (the
        thresholds between them may hold some where it does not: :meth:`useful_intervals`)."""
        better = [t for t, m, a in zip(self.thresholds, self.model, self.treat_all) if m > max(a, 0.0) + 1e-12]
        return (min(better), max(better)) if better else None

    def useful_intervals(self) -> list[tuple[float, float]]:
        """Each run of consecutive thresholds where the model beats both treating all and treating none, as
        ``(first, last)``: ``[(0.04, 0.17), (0.29, 0.38)]`` when between 18% and 28% the list does worse than
        treating no one."""
        runs: list[tuple[float, float]] = []
        start = last = None
        for t, m, a in zip(self.thresholds, self.model, self.treat_all):
            if m > max(a, 0.0) + 1e-12:
                start = t if start is None else start
                last = t
            elif start is not None:
                runs.append((start, last))
                start = None
        if start is not None:
            runs.append((start, last))
        return runs

    def useful_text(self, percent=lambda x: f"{100 * x:.0f}%") -> str | None:
        """Where the list helps decide, in words: ``thresholds 4% to 17% and 29% to 38%``, ``the threshold 12%
        only``; None where it never does.  ``percent`` writes one threshold."""
        parts = []
        for first, last in self.useful_intervals():
            low, high = percent(first), percent(last)
            parts.append(low if low == high else f"{low} to {high}")
        if not parts:
            return None
        if len(parts) == 1 and " to " not in parts[0]:
            return f"the threshold {parts[0]} only"
        return f"threshold{'s' if len(parts) > 1 or ' to ' in parts[0] else ''} " + (
            parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


@dataclass(frozen=True)
class PopulationMetrics:
    """Everything measured on one set of patients (the whole new table or one subgroup)."""

    n: int
    events: int
    mean_risk: float
    auroc: float
    auroc_ci: tuple[float, float]
    auroc_se: float
    brier: float
    calibration_intercept: float
    calibration_intercept_ci: tuple[float, float]
    calibration_slope: float
    calibration_slope_ci: tuple[float, float]
    recalibration_intercept: float  # a of logit P = a + b logit(p), for drawing the recalibration curve
    rules: tuple[RuleCheck, ...]
    net_benefit: DecisionCurve
    notes: tuple[str, ...] = ()

    @property
    def event_rate(self) -> float:
        return self.events / self.n if self.n else float("nan")

    @property
    def too_few_to_judge(self) -> bool:
        """Fewer than :data:`~frl_engine.search_report.FEW_PATIENTS` patients with the event, or without it (and
        at least one of each): the figures are computed, and say little about the list."""
        return 0 < min(self.events, self.n - self.events) < FEW_PATIENTS

    @property
    def flagged(self) -> tuple[RuleCheck, ...]:
        """The rules whose observed rate rises above the rule above or disagrees with the model."""
        return tuple(r for r in self.rules if set(r.flags) & {"rises", "outside"})

    def overall_calibration_note(self) -> str | None:
        """When the calibration intercept's 95% interval leaves out 0, the list's risks are too high (or too low)
        for these patients as a whole, even when each rule on its own is within chance of its printed risk:
        ``"but overall its risks are too high for these patients (calibration intercept -0.20, 95% CI -0.34 to
        -0.06; 0 is ideal)"``; else None (or when there is no interval)."""
        low, high = self.calibration_intercept_ci
        if not (math.isfinite(low) and math.isfinite(high)) or low <= 0.0 <= high:
            return None
        way = "high" if high < 0 else "low"
        return (f"but overall its risks are too {way} for these patients (calibration intercept "
                f"{self.calibration_intercept:.2f}, 95% CI {low:.2f} to {high:.2f}; 0 is ideal)")

    def to_dict(self) -> dict:
        return {
            "n": self.n, "events": self.events, "event_rate": self.event_rate, "mean_risk": self.mean_risk,
            "auroc": self.auroc, "auroc_ci": list(self.auroc_ci), "auroc_se": self.auroc_se, "brier": self.brier,
            "calibration_intercept": self.calibration_intercept,
            "calibration_intercept_ci": list(self.calibration_intercept_ci),
            "calibration_slope": self.calibration_slope, "calibration_slope_ci": list(self.calibration_slope_ci),
            "recalibration_intercept": self.recalibration_intercept,
            "rules": [r.to_dict() for r in self.rules], "net_benefit": self.net_benefit.to_dict(),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "PopulationMetrics":
        return cls(int(d["n"]), int(d["events"]), _nan(d.get("mean_risk")), _nan(d.get("auroc")),
                   _pair(d.get("auroc_ci")), _nan(d.get("auroc_se")), _nan(d.get("brier")),
                   _nan(d.get("calibration_intercept")), _pair(d.get("calibration_intercept_ci")),
                   _nan(d.get("calibration_slope")), _pair(d.get("calibration_slope_ci")),
                   _nan(d.get("recalibration_intercept")), tuple(RuleCheck.from_dict(r) for r in d["rules"]),
                   DecisionCurve.from_dict(d["net_benefit"]), tuple(d.get("notes", ())))


@dataclass(frozen=True)
class Subgroup:
    """The metrics of the patients whose ``by`` column has one value (or lies in one band)."""

    label: str
    metrics: PopulationMetrics


@dataclass(frozen=True)
class ExternalValidation:
    """A saved model on a new table: overall metrics, and per subgroup with ``by``.

    The overall metrics are reachable directly (``result.auroc``, ``result.n`` ...)
    as well as through ``result.overall``.  ``model_id`` is the card's model ID of
    the model file without any ``external_validation`` block, so validating a file
    before or after a validation was attached to it names the same model.
    """

    data_name: str
    target: str
    event: object
    model_id: str
    model_created_at: str | None
    overall: PopulationMetrics
    by: str | None = None
    subgroups: tuple[Subgroup, ...] = ()
    validated_at: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    #: The new table holds exactly the rows the model was fitted on (``training.rows_sha256``): the figures measure
    #: the fit, not new patients, and the card does not call them an external validation.
    same_as_training: bool = False
    #: The estimated share of the new table's rows that are training rows, when it is
    #: ``training_rows.TRAINING_SHARE`` or more but the table is not the training table itself (training patients
    #: mixed with new ones, or the training export with cells edited): not an external validation either.
    training_share: float | None = None
    #: ``(column, number of patients)`` when the new table repeats patients in the model's patient column
    #: (``training.patient_column``, such as ``patient_nbr``): its rows are encounters, fewer patients than rows.
    patients: tuple[str, int] | None = None
    #: The columns of the model file's sample of training rows (``training.rows_sample``) that the new table lacks:
    #: whether it holds training patients could not be checked, so the card does not call it "externally validated"
    #: (it says "validated, not checked for training patients").  Empty when the check was made, or could not be made
    #: for want of a sample; all the columns of the fit's findings when its training rows were too alike to keep a
    #: sample (``training.rows_alike``: a few yes/no columns, many patients written the same).
    training_unchecked: tuple[str, ...] = ()

    def __getattr__(self, name):  # result.auroc, result.n ... are the overall metrics
        if name.startswith("_") or name == "overall":
            raise AttributeError(name)
        return getattr(self.overall, name)

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        return to_jsonable({
            "format": RESULT_FORMAT, "format_version": RESULT_FORMAT_VERSION,
            "data_name": self.data_name, "target": self.target, "event": self.event, "model_id": self.model_id,
            "model_created_at": self.model_created_at, "validated_at": self.validated_at,
            **self.overall.to_dict(),
            "by": self.by,
            "subgroups": [{"group": s.label, **s.metrics.to_dict()} for s in self.subgroups],
            **({"same_as_training": True} if self.same_as_training else {}),
            **({"training_share": self.training_share} if self.training_share is not None else {}),
            **({"patient_column": self.patients[0], "n_patients": self.patients[1]} if self.patients else {}),
            **({"training_unchecked": list(self.training_unchecked)} if self.training_unchecked else {}),
        }, strict=True)

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, **kwargs)

    @classmethod
    def from_dict(cls, d: dict) -> "ExternalValidation":
        if not isinstance(d, dict) or d.get("format") != RESULT_FORMAT:
            raise FRLError(f"Not an external validation result (no \"format\": \"{RESULT_FORMAT}\")")
        return cls(str(d["data_name"]), str(d["target"]), d["event"], str(d["model_id"]), d.get("model_created_at"),
                   PopulationMetrics.from_dict(d), d.get("by"),
                   tuple(Subgroup(str(s["group"]), PopulationMetrics.from_dict(s)) for s in d.get("subgroups", ())),
                   d.get("validated_at") or "", bool(d.get("same_as_training", False)),
                   float(d["training_share"]) if d.get("training_share") is not None else None,
                   (str(d["patient_column"]), int(d["n_patients"])) if d.get("n_patients") is not None else None,
                   tuple(str(c) for c in d.get("training_unchecked") or ()))

    @classmethod
    def from_json(cls, text: str) -> "ExternalValidation":
        return cls.from_dict(json.loads(text))

    # ------------------------------------------------------------------ for the model file and the card
    def model_block(self) -> dict:
        """The summary a model file keeps under ``external_validation`` (printed on the card)."""
        o = self.overall
        return to_jsonable({
            "data_name": self.data_name, "validated_at": self.validated_at, "n": o.n, "events": o.events,
            "auroc": o.auroc, "auroc_ci": list(o.auroc_ci), "brier": o.brier,
            "calibration_intercept": o.calibration_intercept, "calibration_slope": o.calibration_slope,
            "flagged_rules": [r.position + 1 for r in o.flagged],
            **({"same_as_training": True} if self.same_as_training else {}),
            **({"training_share": self.training_share} if self.training_share is not None else {}),
            **({"n_patients": self.patients[1]} if self.patients else {}),
            **({"training_unchecked": list(self.training_unchecked)} if self.training_unchecked else {}),
        }, strict=True)

    @property
    def external(self) -> bool:
        """Whether these are new patients: not the training table (``same_as_training``), nor a table holding many
        of its rows (``training_share``)."""
        return not self.same_as_training and self.training_share is None

    def headline(self) -> str:
        """``AUROC 0.78 (95% CI 0.74-0.81) on 5,000 patients (600 events)``."""
        o = self.overall
        rows = (f"{o.n:,} rows of {self.patients[1]:,} patients" if self.patients
                else f"{o.n:,} patient{'' if o.n == 1 else 's'}")
        who = f"{rows} ({o.events:,} event{'' if o.events == 1 else 's'})"
        if math.isnan(o.auroc):
            return f"AUROC not available on {who}"
        interval = "" if math.isnan(o.auroc_ci[0]) else f" (95% CI {o.auroc_ci[0]:.2f}-{o.auroc_ci[1]:.2f})"
        return f"AUROC {o.auroc:.2f}{interval} on {who}"

    def format_text(self) -> str:
        """The result as the CLI prints it: headline numbers, the per-rule table, subgroups."""
        return format_validation(self)


# ---------------------------------------------------------------------------------------------- the new table
def event_matches(values: pd.Series, positive) -> np.ndarray:
    """The outcome cells that equal the model's event value: as text trimmed and without case ("YES" matches
    "Yes", as at fit time: :func:`frl_engine.io.split_target`), or as numbers (1 matches 1.0).  With several
    event values (a list: the model file's ``outcome.event_values``), the cells that equal any of them."""
    if isinstance(positive, (list, tuple)):
        event = np.zeros(len(values), dtype=bool)
        for value in positive:
            event |= event_matches(values, value)
        return event
    text = values.map(lambda v: str(v).strip().casefold())
    event = (text == str(positive).strip().casefold()).to_numpy()
    if not event.any():
        try:
            number = float(positive)
            event = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float) == number
        except (TypeError, ValueError):
            pass
    if not event.any() and isinstance(positive, bool):  # a model fitted on True/False read against yes/no
        from ..columns import _as_truth

        event = values.map(lambda v: _as_truth(v) is positive).to_numpy(dtype=bool)
    if not event.any() and isinstance(positive, str):
        # a model fitted on Yes/No read against Y/N or 1/0: when every value reads as yes or no, yes is the event
        from ..columns import _as_truth

        truth = values.map(_as_truth)
        if _as_truth(positive) is True and truth.notna().all():
            event = truth.to_numpy(dtype=bool)
    return np.asarray(event, dtype=bool)


def outcome_reading_note(values: pd.Series, target: str, positive) -> tuple[str, ...]:
    """A note when the new table writes the model's event another way (``yes`` for ``Y``, ``1.0`` for ``1``).

    :func:`event_matches` reads the event as a number or as yes/no when no cell holds it as written; the figures
    then rest on that reading, so the report names it: which of the table's values were read as the event."""
    if isinstance(positive, (list, tuple)):
        return ()
    text = values.map(lambda v: str(v).strip().casefold())
    if (text == str(positive).strip().casefold()).any():
        return ()
    event = event_matches(values, positive)
    if not event.any():
        return ()
    read = sorted({str(v).strip() for v in values[event]})
    shown = ", ".join(repr(v) for v in read[:4]) + (" ..." if len(read) > 4 else "")
    return (f"no cell of {target!r} holds the model's event {str(positive).strip()!r} as written: {shown} "
            f"{'was' if len(read) == 1 else 'were'} read as the event; if that is not the event in this table, name "
            f"it (--positive)",)


def checkbox_blanks(outcome: pd.Series, positive) -> int:
    """How many blank cells a checkbox outcome has whose one value is the model's event (``X`` where the event
    happened, blank elsewhere, as at fit time with ``--positive X``: :func:`frl_engine.io.split_target`); 0 when the
    outcome is not such a column.  Its blanks are then no event; ``?``, ``NA`` or ``Unknown`` never are."""
    from ..io import flag_outcome_value, outcome_missing_mask

    value = flag_outcome_value(outcome)
    if value is None or isinstance(positive, (list, tuple)) or not event_matches(pd.Series([value]), positive).all():
        return 0
    return int(np.asarray(outcome_missing_mask(outcome), dtype=bool).sum())


def outcome_events(frame: pd.DataFrame, target: str, positive, data_name: str = "the new table") -> np.ndarray:
    """The new table's outcome as event (True) / no event, mapped as at fit time; DataError when unusable."""
    if target not in frame.columns:
        shown = ", ".join(map(repr, list(frame.columns)[:10])) + (" ..." if frame.shape[1] > 10 else "")
        raise DataError(f"{data_name} has no outcome column {target!r} (the model's outcome): add it, or name the "
                        f"new table's outcome column (--target); its columns are {shown}")
    outcome = frame[target]
    from ..io import outcome_missing_mask

    missing = int(outcome_missing_mask(outcome).sum())
    if missing and missing == len(outcome):
        raise DataError(f"{data_name}: outcome column {target!r} is empty on all {missing:,} rows: check that it is "
                        "the outcome column and that the export filled it in")
    if missing and checkbox_blanks(outcome, positive):  # X where the event happened, blank elsewhere: no event
        return np.asarray(~outcome_missing_mask(outcome), dtype=bool)
    if missing:
        raise MissingOutcomeError(f"{data_name}: outcome column {target!r} has {missing} empty cells: "
                                  "remove those patients or fill in their outcome", missing)
    event = event_matches(outcome, positive)
    if not event.any():
        values = ", ".join(sorted(map(str, pd.unique(outcome)))[:8])
        raise DataError(f"{data_name} has no events: no patient has {target} = {event_label(positive)} (values: {values}); "
                        "discrimination and calibration need patients with and without the event. If the event is "
                        "written differently in this table, name its value (--positive)")
    if event.all():
        raise DataError(f"{data_name}: every patient has {target} = {event_label(positive)}; discrimination and calibration "
                        "need patients without the event too")
    return event


def _model_categories(model: dict) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per column, the category labels and the code prefixes the model knows (binarizer and rules)."""
    known: dict[str, set[str]] = {}
    prefixes: dict[str, set[str]] = {}
    binarizer = model.get("binarizer") or {}
    for spec in binarizer.get("columns") or []:
        if isinstance(spec, dict) and (spec.get("categories") or spec.get("prefixes")):
            name = str(spec.get("name"))
            known.setdefault(name, set()).update(map(str, spec.get("categories") or ()))
            prefixes.setdefault(name, set()).update(str(p).upper() for p in spec.get("prefixes") or ())
    for rule in model["rules"]:
        for c in rule.get("conditions", []):
            if c.get("op") in ("==", "!=", "includes"):
                known.setdefault(c["column"], set()).add(str(c["value"]))
            elif c.get("op") in ("starts with", "includes code starting with"):
                known.setdefault(c["column"], set())
                prefixes.setdefault(c["column"], set()).add(str(c["value"]).upper())
    return known, prefixes


#: A column of codes holding none of the model's codes or code groups is called recoded only when so many
#: patients would all miss them by chance with at most this probability.
RECODED_CHANCE = 1e-3


def _min_support(model: dict) -> float:
    """The model's ``min_support``: every category or code group it has an item for held at least this
    share of the training rows (0.05, the default, when the file does not say)."""
    support = (model.get("hyperparameters") or {}).get("min_support", 0.05)
    return float(support) if isinstance(support, (int, float)) and 0 < support < 1 else 0.05


def _binarizer_columns(model: dict) -> list[dict]:
    """The model file's record of each column read at fit time (``binarizer.columns``; none for boolean input)."""
    return [spec for spec in (model.get("binarizer") or {}).get("columns") or [] if isinstance(spec, dict)]


def _column_kinds(model: dict) -> dict[str, str]:
    """Each binarized column's kind as the model file records it (``code``, ``categorical``, ``nominal`` ...)."""
    return {str(spec.get("name")): str(spec.get("kind")) for spec in _binarizer_columns(model)}


def _too_many_to_miss_by_chance(n_present: int, model: dict) -> bool:
    """Whether ``n_present`` patients of the training population would all miss every category the model
    knows with probability at most :data:`RECODED_CHANCE`.

    Every category or code group the model knows made an item, so it held at least ``min_support`` of the
    training rows, and the chance that ``n`` patients all miss it is at most ``(1 - min_support) ** n``:
    at the default 5%, a batch of 40 patients with other diagnosis codes is ordinary (13%), 135 are not.
    """
    return n_present * math.log1p(-_min_support(model)) <= math.log(RECODED_CHANCE)


def _shown(values, limit=3) -> str:
    return ", ".join(f"'{v}'" for v in list(values)[:limit])


def check_columns_present(model: dict, frame: pd.DataFrame, data_name: str = "the new table") -> None:
    """Raise one DataError line if a column the rules use is not in ``frame`` (a near spelling is offered)."""
    conditions = [c for rule in model["rules"] for c in rule.get("conditions", [])]
    used = list(dict.fromkeys(c["column"] for c in conditions))
    missing = [c for c in used if c not in frame.columns]
    if missing:
        # 'Age' for the model's 'age': the same column renamed in case or spacing, to be named as at fit time
        by_key = {" ".join(str(name).split()).casefold(): name for name in frame.columns}
        similar = [(c, by_key[" ".join(c.split()).casefold()]) for c in missing
                   if " ".join(c.split()).casefold() in by_key]
        if not similar:   # 'n_chronic' for the model's 'chronic': a renamed column, offered by its spelling
            import difflib

            others = [str(name) for name in frame.columns]
            similar = [(c, close[0]) for c in missing
                       for close in [difflib.get_close_matches(c, others, n=1, cutoff=0.75)] if close]
        hint = ("; did you mean " + ", ".join(f"{found!r} for {wanted!r}" for wanted, found in similar)
                + f"? Rename {'it' if len(similar) == 1 else 'them'} as at fit time") if similar else ""
        raise DataError(f"{data_name} lacks the column{'s' if len(missing) > 1 else ''} the model uses: "
                        f"{', '.join(map(repr, missing))}; add {'them' if len(missing) > 1 else 'it'} "
                        f"(extra columns are ignored){hint}")


def check_columns(model: dict, frame: pd.DataFrame, data_name: str = "the new table") -> None:
    """Raise one DataError line if a column the rules use is missing or no longer reads as it did at fit time."""
    from ..columns import _as_truth, category_label, listed_codes, missing_mask, unreadable_mask
    from ..rules import LIST_OPS, TEXT_OPS, Condition

    check_columns_present(model, frame, data_name)
    conditions = [c for rule in model["rules"] for c in rule.get("conditions", [])]
    used = list(dict.fromkeys(c["column"] for c in conditions))
    categories, prefix_sets = _model_categories(model)
    # Codes are an open set (thousands of diagnoses): the model knows only the frequent ones, so a few
    # patients may all have others by chance.  A category column's levels are the ones it had.
    kinds = _column_kinds(model)
    code_columns = {name for name, kind in kinds.items() if kind in ("code", "code list")}
    problems = []
    for column in used:
        series = frame[column]
        if isinstance(series, pd.DataFrame):
            problems.append(f"column {column!r} appears {series.shape[1]} times")
            continue
        present = series[~missing_mask(series)]
        own = [c for c in conditions if c["column"] == column]
        if present.empty:
            if not any(c["op"] == "is missing" for c in own):
                problems.append(f"column {column!r} is empty in all {len(series):,} rows: its rules would catch "
                                "nobody; fill it in as at fit time")
            continue
        failed = None
        for c in own:  # the engine's own reading of the column decides (missing markers included)
            try:
                Condition.from_dict(c).evaluate(frame[[column]])
            except DataError as exc:
                failed = (c, exc)
                break
        if failed is not None:
            c, exc = failed
            if c["op"] in (">=", "<"):
                uniques = np.asarray(pd.unique(present), dtype=object)
                bad = uniques[unreadable_mask(uniques)]
                problems.append(f"column {column!r} holds text such as {_shown(bad)} where the model compares "
                                f"numbers ({Condition.from_dict(c).name}): its type has changed, give numbers as "
                                "at fit time" if len(bad) else f"column {column!r}: {exc}")
            elif c["op"] == "is true":
                bad = [v for v in pd.unique(present) if _as_truth(v) is None]
                problems.append(f"column {column!r} holds {_shown(bad)} where the model reads yes/no ({column}): "
                                "give yes/no (or 1/0) as at fit time" if bad else f"column {column!r}: {exc}")
            else:
                problems.append(f"column {column!r}: {exc}")
            continue
        if (any(c["op"] in TEXT_OPS for c in own) and column in categories
                and (column not in code_columns or _too_many_to_miss_by_chance(len(present), model))):
            levels, prefixes = categories[column], prefix_sets.get(column, set())
            labels = ({code for v in pd.unique(present) for code in listed_codes(v)}
                      if kinds.get(column) == "code list" or any(c["op"] in LIST_OPS for c in own)
                      else {category_label(v) for v in pd.unique(present)})
            folded = {label.casefold() for label in labels}  # "icu" is the model's "ICU", as a rule matches it
            if not ({level.casefold() for level in levels} & folded
                    or any(label.upper().startswith(p) for label in labels for p in prefixes)):
                known = sorted(levels) + [f"{p}..." for p in sorted(prefixes)]
                problems.append(f"column {column!r} has none of the categories the model knows "
                                f"({', '.join(known[:5])}); it holds {_shown(sorted(labels))}: "
                                "recode it as at fit time")
    if problems:
        raise DataError(f"{data_name}: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------- subgroups
def _round2(x: float) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.2g}")


def subgroup_labels(series: pd.Series, column: str) -> tuple[np.ndarray, list[str]]:
    """A label per patient for ``--by``, and the labels in display order.

    A column with at most ``MAX_GROUPS`` distinct values gives one group per value
    (numbers in numeric order).  A numeric column with more is cut into four bands
    at its quartiles rounded to 2 significant figures (``Age < 45``,
    ``45 <= Age < 60`` ...); a text column with more is refused (DataError).
    Missing cells form the group ``"<column> missing"``, shown last.
    """
    from ..columns import category_label, missing_mask, numeric_values

    missing = missing_mask(series)
    labels = np.empty(len(series), dtype=object)
    present = series[~missing]
    n_distinct = int(present.nunique())
    values = None
    if n_distinct > MAX_GROUPS:
        if not pd.api.types.is_bool_dtype(series):
            try:
                values = numeric_values(series, column)
            except DataError:
                values = None
        if values is None:
            raise DataError(f"--by column {column!r} has {n_distinct:,} different values: choose a column with a "
                            "few groups (sex, a ward, an age band) or a numeric one (it is cut into four bands)")
        missing = missing | np.isnan(values)
    labels[missing] = f"{column} missing"
    if values is not None:
        from ..columns import format_number

        cuts = sorted({_round2(q) for q in np.quantile(values[~missing], [0.25, 0.5, 0.75])})
        cuts = [c for c in cuts if values[~missing].min() < c <= values[~missing].max()]
        edges = [-np.inf, *cuts, np.inf]
        order = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            if lo == -np.inf:
                label = f"{column} < {format_number(hi)}"
            elif hi == np.inf:
                label = f"{column} >= {format_number(lo)}"
            else:
                label = f"{format_number(lo)} <= {column} < {format_number(hi)}"
            inside = ~missing & (values >= lo) & (values < hi)
            labels[inside] = label
            order.append(label)
    else:
        present = series[~missing]
        text = np.array([category_label(v) for v in present], dtype=object)
        labels[~missing] = text
        try:  # numbers in numeric order, text alphabetically
            order = [category_label(v) for v in sorted(pd.unique(present))]
        except TypeError:
            order = sorted(set(text), key=str)
        order = list(dict.fromkeys(order))
    if missing.any():
        order.append(f"{column} missing")
    order = [label for label in order if (labels == label).any()]
    return labels, order


# ---------------------------------------------------------------------------------------------- the computation
def _rises(events: int, n: int, events_above: int, n_above: int) -> bool:
    """Whether a rule's event rate is higher than the rule above's by more than chance explains.

    One-sided Fisher exact test at the 5% level (the odds of the event are higher in
    the lower rule).
    """
    table = [[events, n - events], [events_above, n_above - events_above]]
    return bool(stats.fisher_exact(table, alternative="greater").pvalue < RISE_ALPHA)


def _disagrees_with_interval(events: int, n: int, risk: float, lower: float, upper: float) -> bool:
    """Whether ``events`` of ``n`` patients are more, or fewer, than a risk known to within its 95% credible
    interval ``[lower, upper]`` explains (two-sided, 5%).

    The model's risk is read as a Beta distribution with mean ``risk`` (kept inside the interval) and standard
    deviation ``(upper - lower) / 3.92``; the count of events among ``n`` new patients is then beta-binomial,
    and the two-sided p-value is twice its smaller tail at ``events``.  Both uncertainties count: two intervals
    that overlap a little can still disagree (6.0%, credible interval 4.8 to 7.2%, against 85 events in 977
    patients, 8.7%: p = 0.01), which a test of overlap would miss.
    """
    sd = (upper - lower) / (2 * 1.959964)
    mean = min(max(risk, lower), upper)
    if not (0 < mean < 1) or not sd > 0:
        lo, hi = metrics.wilson_interval(events, n)
        return not (lo <= risk <= hi)
    concentration = max(mean * (1 - mean) / sd**2 - 1, 2.0)
    a, b = mean * concentration, (1 - mean) * concentration
    tail = min(stats.betabinom.cdf(events, n, a, b), stats.betabinom.sf(events - 1, n, a, b))
    return bool(2 * tail < OUTSIDE_ALPHA)


def _rule_checks(model: dict, rule_index: np.ndarray, event: np.ndarray) -> tuple[RuleCheck, ...]:
    names = [r["name"] for r in model["rules"]] + [""]
    risks = [float(r["probability"]) for r in model["rules"]] + [float(model["default"]["probability"])]
    posterior = model.get("posterior") or {}
    lower, upper = posterior.get("risk_lower"), posterior.get("risk_upper")
    if not (isinstance(lower, list) and isinstance(upper, list) and len(lower) == len(upper) == len(risks)):
        lower = upper = None
    n = np.bincount(rule_index, minlength=len(risks))
    k = np.bincount(rule_index, weights=event.astype(float), minlength=len(risks)).astype(int)
    checks, above = [], None
    for position, (name, risk) in enumerate(zip(names, risks)):
        count, events = int(n[position]), int(k[position])
        observed = events / count if count else float("nan")
        lo, hi = metrics.wilson_interval(events, count)
        m_lo = None if lower is None else float(lower[position])
        m_hi = None if upper is None else float(upper[position])
        flags = []
        if count == 0:
            flags.append("empty")
        else:
            if above is not None and observed > above[0] / above[1] and _rises(events, count, *above):
                flags.append("rises")
            if m_lo is not None:
                outside = _disagrees_with_interval(events, count, risk, m_lo, m_hi)
            else:
                outside = not (lo <= risk <= hi)
            if outside:
                flags.append("outside")
            above = (events, count)
        checks.append(RuleCheck(position, name, risk, m_lo, m_hi, count, events, observed, lo, hi, tuple(flags)))
    return tuple(checks)


def population_metrics(model: dict, rule_index: np.ndarray, event: np.ndarray, thresholds=None) -> PopulationMetrics:
    """Every metric of :class:`PopulationMetrics` for these patients (rule each falls into, and outcome).

    A group with no events, or only events, gets the counts, the Brier score, the
    per-rule table and the decision curve; the AUROC and calibration are NaN with a note.
    """
    risks = np.asarray([float(r["probability"]) for r in model["rules"]] + [float(model["default"]["probability"])])
    p = risks[rule_index]
    n, events = int(len(event)), int(event.sum())
    nan2 = (float("nan"), float("nan"))
    notes = []
    auroc, auroc_ci, auroc_se = float("nan"), nan2, float("nan")
    intercept, intercept_ci, slope, slope_ci, recal = float("nan"), nan2, float("nan"), nan2, float("nan")
    if 0 < events < n:
        estimate = metrics.delong_auroc(event, p)
        auroc, auroc_ci, auroc_se = estimate.auroc, (estimate.lower, estimate.upper), estimate.se
        fit_a = metrics.calibration_intercept(event, p)
        fit_b = metrics.calibration_slope(event, p)
        intercept, intercept_ci = fit_a.estimate, (fit_a.lower, fit_a.upper)
        slope, slope_ci, recal = fit_b.estimate, (fit_b.lower, fit_b.upper), fit_b.intercept
        if len(np.unique(p)) < 2:
            notes.append("every patient falls into the same rule: there is no ranking, so the AUROC is 0.5 "
                         "and there is no calibration slope")
        elif not fit_b.converged:
            notes.append("the risks separate events from non-events completely: the calibration slope is infinite")
    else:
        notes.append("no events" if events == 0 else "only events")
        notes[-1] += ": the AUROC and calibration need patients with and without the event"
    t = metrics._thresholds(thresholds)
    curve = DecisionCurve(tuple(map(float, t)), tuple(map(float, metrics.net_benefit(event, p, t))),
                          tuple(map(float, metrics.net_benefit_treat_all(event, t))))
    return PopulationMetrics(n, events, float(p.mean()), auroc, auroc_ci, auroc_se, metrics.brier_score(event, p),
                             intercept, intercept_ci, slope, slope_ci, recal, _rule_checks(model, rule_index, event),
                             curve, tuple(notes))


def validate_model(model: dict, frame: pd.DataFrame, *, data_name: str = "the new table", by: str | None = None,
                   thresholds=None, target: str | None = None, positive=None) -> ExternalValidation:
    """Score a saved model on a new table and measure how it holds up.

    Parameters
    ----------
    model : dict
        A model file's dictionary (``frl fit --out``, the dashboard's download).
    frame : DataFrame
        The new patients: the columns the rules use and the model's outcome column;
        other columns are ignored.
    data_name : str
        Used in messages and in the result.
    by : str, optional
        A column to report subgroups by (e.g. sex, an age band).
    thresholds : sequence of float, optional
        Risk thresholds of the decision curve (default 0.01, 0.02, ..., 0.99).
    target : str, optional
        The new table's outcome column, when it is not named as in the training data.
    positive : optional
        The new table's event value, when it is not written as in the training data (``Yes`` in the
        new table for a model fitted on ``<30``); a list when several values are the event.  By default the
        model file's ``outcome.event_values`` (a model fitted on several event values), else its
        ``outcome.positive_class``.

    Returns
    -------
    ExternalValidation

    Raises
    ------
    DataError
        One line naming the problem with the new table.
    """
    from ..card import model_identifier
    from ..estimator import FallingRuleListClassifier

    check_model_dict(model)
    outcome = model["outcome"]
    target = target if target is not None else outcome.get("target")
    positive = positive if positive is not None else (outcome.get("event_values") or outcome.get("positive_class"))
    if isinstance(positive, (list, tuple)) and len(positive) == 1:
        positive = positive[0]
    if not target:
        raise FRLError("The model file does not name its outcome column (outcome.target): refit it with `frl fit`, "
                       "which records it")
    if len(frame) < 2:
        raise DataError(f"{data_name} has {len(frame)} row{'s' if len(frame) != 1 else ''} of patients: external "
                        "validation needs many patients, with and without the event")
    event = outcome_events(frame, target, positive, data_name)
    recorded = (model.get("training") or {}).get("codes_read_as_missing")
    emptied = ()
    if recorded:  # fitted with these codes read as missing (--codes-as-missing): read these patients the same way
        from ..columns import empty_recorded_codes

        frame, done = empty_recorded_codes(frame, recorded)
        emptied = (f"read as not known, as at fit time: {'; '.join(done)}",) if done else ()
    check_columns(model, frame, data_name)
    if by is not None:
        if by not in frame.columns:
            raise DataError(f"--by column {by!r} is not in {data_name}")
        if by == target:
            raise DataError(f"--by column {by!r} is the outcome: choose a column that describes the patients")
    estimator = FallingRuleListClassifier.from_dict(model)
    features = frame.drop(columns=[target])
    try:
        rule_index = estimator.apply(features)
    except DataError as exc:
        raise DataError(f"{data_name}: {exc}") from None
    overall = population_metrics(model, rule_index, event, thresholds)
    training_rows = (model.get("training") or {}).get("rows_sha256")
    names = model.get("feature_names") or []
    training_text = (model.get("training") or {}).get("rows_text_sha256")
    same = (bool(training_rows) and rows_fingerprint(features, names) == training_rows) or (
        bool(training_text) and rows_text_fingerprint(features, names) == training_text)  # another format
    # ... or many of its rows, with cells edited or among new patients: estimated from the model's sample of them
    sample = (model.get("training") or {}).get("rows_sample")
    overlap = None if same or not isinstance(sample, dict) else training_overlap(features, sample)
    share = round(overlap.share, 3) if overlap is not None and overlap.holds_training_patients else None
    alike = (model.get("training") or {}).get("rows_alike")
    alike = alike if not same and overlap is None and isinstance(alike, dict) and alike.get("columns") else None
    blanks = checkbox_blanks(frame[target], positive)
    blank_note = ((f"{target} holds {event_label(positive)} and blanks: the {blanks:,} blank cells count as no event (a "
                   "checkbox outcome)",) if blanks else ())
    text_notes = (((TRAINING_ROWS_NOTE,) if same else ()) + ((training_share_note(share),) if share else ())
                  + overlap_notes(overlap) + alike_note(alike)
                  + outcome_reading_note(frame[target], str(target), positive)
                  + blank_note + emptied + table_notes(model, frame, rule_index))
    text_notes += too_few_note(overall)
    if overall.auroc_ci[1] < 0.5:  # worse than chance beyond doubt: most often an outcome coded the other way round
        text_notes += (f"the AUROC is below 0.5 beyond chance: the list ranks these patients the wrong way round, which "
                       f"most often means the event is written differently here; check that {target} = "
                       f"{event_label(positive)} is the event in this table (--positive names it)",)
    if text_notes:
        overall = dataclasses.replace(overall, notes=overall.notes + text_notes)
    subgroups = ()
    if by is not None:
        labels, order = subgroup_labels(frame[by], by)
        subgroups = []
        for label in order:   # a subgroup of 17 patients, 4 events, is told as the whole table would be
            metrics = population_metrics(model, rule_index[labels == label], event[labels == label], thresholds)
            subgroups.append(Subgroup(label, dataclasses.replace(metrics, notes=metrics.notes + too_few_note(metrics))))
        subgroups = tuple(subgroups)
    unvalidated = {k: v for k, v in model.items() if k != "external_validation"}
    shown = event_label(positive) if isinstance(positive, (list, tuple)) else to_jsonable(positive)
    column = (model.get("training") or {}).get("patient_column")
    patients = None
    if column is not None and column in frame.columns:   # encounters of patients: say both counts, as fit does
        n_patients = int(frame[column].dropna().nunique())
        patients = (str(column), n_patients) if 0 < n_patients < len(frame) else None
    return ExternalValidation(data_name, str(target), shown, model_identifier(unvalidated),
                              model.get("created_at"), overall, by, subgroups, same_as_training=same,
                              training_share=share, patients=patients,
                              training_unchecked=(tuple(overlap.missing) if overlap is not None else
                                                  tuple(str(c) for c in alike["columns"]) if alike else ()))


def too_few_note(metrics: PopulationMetrics) -> tuple[str, ...]:
    """The note for patients too few to judge the model (:attr:`PopulationMetrics.too_few_to_judge`), else ()."""
    if not metrics.too_few_to_judge:   # with none on one side, population_metrics has said so already
        return ()
    few = min(metrics.events, metrics.n - metrics.events)
    side = (("has" if few == 1 else "have") + " the event" if metrics.events <= metrics.n - metrics.events
            else ("is" if few == 1 else "are") + " without the event")
    return (f"only {few:,} of these patients {side}: too few to judge the model (at least {FEW_PATIENTS} with the "
            f"event and {FEW_PATIENTS} without are usually needed); the AUROC and calibration here say little",)


def overlap_notes(overlap) -> tuple[str, ...]:
    """The notes on a new table's rows and the training rows below the share that makes it no external validation:
    some rows look like training rows, or the check could not be made (the table lacks some columns)."""
    if overlap is None:
        return ()
    if overlap.missing:
        shown = ", ".join(repr(c) for c in overlap.missing[:5]) + (" ..." if len(overlap.missing) > 5 else "")
        return (f"whether these are the training patients could not be checked: the table lacks {shown}, "
                "which the model file's sample of its training rows was taken over",)
    if overlap.some_training_rows:
        return (f"about {100 * overlap.share:.0f}% of these rows are written exactly as rows the model was fitted "
                "on (every column it reads): if some of these patients were in the training table, leave them out",)
    return ()


def alike_note(alike: dict | None) -> tuple[str, ...]:
    """The note of a validation whose model kept no sample of its training rows, as they repeat one another
    (``training.rows_alike``): whether the new rows are training patients could not be checked."""
    if not alike:
        return ()
    try:
        repeated = f"{100 * float(alike.get('repeated')):.0f}%"
    except (TypeError, ValueError):
        repeated = "many"
    return (f"whether these are the training patients could not be checked: {repeated} of the training rows are "
            "written exactly as another in every column the model reads, so a new patient matches a training patient "
            "by chance about as often; make sure these patients were not in the training table",)


def training_share_note(share: float) -> str:
    """The note of a validation on a table of which about ``share`` of the rows are training rows."""
    return (f"about {100 * share:.0f}% of these rows are rows the model was fitted on (written the same in every "
            f"column; estimated from the model file's sample of its training rows): the figures are "
            f"{'mostly' if share >= 0.9 else 'partly'} the fit's, "
            "so the card will not call them an external validation; validate on patients the model was not fitted "
            "on (a later period, another hospital), or leave the training patients out")


#: The note of a validation on the very rows the model was fitted on.
TRAINING_ROWS_NOTE = ("these are the patients the model was fitted on (the same rows as its training table): the "
                      "figures measure the fit, not how the list holds up on new patients, and the card will not call "
                      "them an external validation; validate on a later period or another hospital")


#: A column the rules use is reported when at least this share of the new table's cells in it are empty.
MISSING_NOTE_SHARE = 0.01
#: A rule is reported when it catches a share of the new patients this many times larger or smaller
#: than at fit time, and at least SHIFT_NOTE_POINTS percentage points apart (rows scored: SHIFT_NOTE_ROWS).
SHIFT_NOTE_RATIO = 2.0
SHIFT_NOTE_POINTS = 5.0
SHIFT_NOTE_ROWS = 50


def empty_cell_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for the columns the rules use that are empty in part of the new table (``None``, ``?``).

    A condition is false on an empty cell (unless it is ``is missing``), so those patients fall to
    lower rules and their risk is read too low when their values would have met the condition.  A column about as
    empty at fit time (kept in the model file: UCI's diabetes export leaves ``A1Cresult`` empty, ``None``, for 83%
    of encounters) was fitted that way, and is not reported unless it is now at least 1.5 times as empty and five
    points more.
    """
    from ..columns import missing_mask

    conditions = [c for rule in model["rules"] for c in rule.get("conditions", [])]
    # a checkbox column's blanks mean "no" (X where present, blank where not): nothing unknown to report
    specs = _binarizer_columns(model)
    flags = {spec.get("name") for spec in specs if spec.get("flag")}
    fitted = {spec.get("name"): float(spec.get("missing") or 0.0) for spec in specs}
    notes = []
    for column in dict.fromkeys(c["column"] for c in conditions):
        if column not in frame.columns or isinstance(frame[column], pd.DataFrame) or column in flags:
            continue
        if any(c["op"] == "is missing" for c in conditions if c["column"] == column):
            continue
        n_empty = int(missing_mask(frame[column]).sum())
        if n_empty == len(frame):
            continue  # an empty column is refused by check_columns
        share, before = n_empty / len(frame), fitted.get(column, 0.0)
        if before and share < max(1.5 * before, before + 0.05):
            continue   # about as empty as the training patients were: the list was fitted on such patients
        if n_empty and n_empty >= MISSING_NOTE_SHARE * len(frame):
            was = f", against {100 * before:.1f}% at fit time" if before else ""
            notes.append(f"column {column!r} is empty for {n_empty:,} of {len(frame):,} patients "
                         f"({100 * share:.1f}%{was}): they meet none of its conditions and fall to lower "
                         "rules, so their risk is read too low if their values would have met them")
    return tuple(notes)


#: A category the model has no item for is reported when at least this many new patients have it.
NEW_LEVEL_ROWS = 10


def new_level_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for categories of a rule's column that many new patients have but the model has no item for.

    Every category that held ``min_support`` of the training patients made an item, so a value held by
    that share of the new patients (and by at least ``NEW_LEVEL_ROWS``) was rare at fit time or is new
    (ward 15 opened, admission type 9 added).  Rules ``column = x`` never catch such patients and rules
    ``column is not x`` always do, as they would any other value: the note names them so the user can
    check that this is meant.
    """
    from ..columns import category_label, missing_mask

    support = _min_support(model)
    kinds = _column_kinds(model)
    categories = _model_categories(model)[0]
    conditions = [c for rule in model["rules"] for c in rule.get("conditions", [])]
    notes = []
    for column in dict.fromkeys(c["column"] for c in conditions if c.get("op") in ("==", "!=")):
        if (kinds.get(column) not in ("categorical", "nominal") or column not in frame.columns
                or isinstance(frame[column], pd.DataFrame)):
            continue
        known = {level.casefold() for level in categories.get(column, ())}
        values = frame[column][~missing_mask(frame[column])].value_counts()  # distinct values, then their labels
        labels = pd.Series(values.to_numpy(), index=[category_label(v) for v in values.index])
        counts = labels[~labels.index.str.casefold().isin(known)].groupby(level=0).sum().sort_values(ascending=False)
        counts = counts[(counts >= NEW_LEVEL_ROWS) & (counts >= support * len(frame))]
        if counts.empty:
            continue
        shown = ", ".join(f"{value!r} ({n:,} patients, {100 * n / len(frame):.1f}%)" for value, n in counts.head(3).items())
        negated = [c for c in conditions if c["column"] == column and c.get("op") == "!="]
        caught = (f"; they meet every 'is not' condition on it ({', '.join(dict.fromkeys(_condition_name(c) for c in negated))})"
                  if negated else "; they meet none of its '=' conditions")
        notes.append(f"column {column!r} has values the model has no item for, rare at fit time or new: {shown}{caught}: "
                     "check that they are coded as at fit time")
    return tuple(notes)


def _condition_name(condition: dict) -> str:
    from ..rules import Condition

    return Condition.from_dict(condition).name


def shift_notes(model: dict, rule_index: np.ndarray) -> tuple[str, ...]:
    """Notes for rules that catch a very different share of the new patients than of the training patients.

    A share two or more times larger or smaller (and at least five points apart) is what a column
    recorded in other units gives (creatinine in umol/L for a model fitted on mg/dL), or other coding,
    or a different population; the note names the rule so the user can check its columns.  A rule that caught
    at least five percent at fit time and catches no one now is the largest such shift (diagnosis codes written
    ``I509`` for ``I50.9``, ``428.0`` for ``428``), and is said too: ``frl predict`` has no other place to say it.
    """
    n_train = model.get("training", {}).get("n_rows")
    n_new = len(rule_index)
    if not n_train or n_new < SHIFT_NOTE_ROWS:
        return ()
    counts = np.bincount(np.asarray(rule_index), minlength=len(model["rules"]) + 1)
    notes = []
    for k, rule in enumerate(model["rules"]):
        fit_share, new_share = rule.get("support", 0) / n_train, counts[k] / n_new
        if not fit_share:
            continue
        ratio = max(new_share / fit_share, fit_share / new_share) if new_share else math.inf
        if ratio >= SHIFT_NOTE_RATIO and abs(new_share - fit_share) * 100 >= SHIFT_NOTE_POINTS:
            columns = ", ".join(dict.fromkeys(c["column"] for c in rule.get("conditions", [])))
            caught = f"{100 * new_share:.1f}%" if new_share else "none"
            notes.append(f"rule {k + 1} ({rule['name']}) catches {caught} of these patients against "
                         f"{100 * fit_share:.1f}% at fit time: check that {columns} "
                         f"{'is' if ',' not in columns else 'are'} recorded in the same units and coding")
    return tuple(notes)


def band_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for thresholds of the model that fall inside a band of the new table (``Age >= 58`` against
    ``[50-60)``): such patients are placed by the band's lower bound, so some land in the wrong rule."""
    from ..columns import band_bounds

    notes = []
    for rule in model["rules"]:
        for c in rule.get("conditions", []):
            if c.get("op") not in (">=", "<") or c["column"] not in frame.columns:
                continue
            series = frame[c["column"]]
            if pd.api.types.is_numeric_dtype(series):
                continue
            t = float(c["value"])
            straddled = [v for v in pd.unique(series.dropna())
                         if (b := band_bounds(v)) is not None and b[0] < t < b[1]]
            if straddled:
                note = (f"column {c['column']!r} is written in bands and the model's threshold {c['value']:g} falls "
                        f"inside {_shown(straddled)}: those patients are placed by the band's lower bound, so some "
                        "land in the wrong rule; give the numbers as at fit time")
                if note not in notes:
                    notes.append(note)
    return tuple(notes)


def text_read_as_missing_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for the columns the rules compare as numbers whose few text cells (``pending``) were read as missing."""
    from ..columns import unreadable_mask

    notes = []
    numeric = sorted({c["column"] for rule in model["rules"] for c in rule.get("conditions", [])
                      if c.get("op") in (">=", "<") and c["column"] in frame.columns})
    for column in numeric:
        series = frame[column]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        counts = series.value_counts(dropna=True)
        values = np.asarray(counts.index, dtype=object)
        unread = unreadable_mask(values)
        if unread.any():
            n = int(counts.to_numpy()[unread].sum())
            notes.append(f"column {column!r}: text such as {_shown(values[unread])} ({n} patient{'s' if n != 1 else ''}) "
                         "read as missing (a few text cells among numbers are): those patients match none of its thresholds")
    return tuple(notes)


def number_code_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for the columns the rules compare as numbers that hold numbers looking like codes for not known
    (:func:`frl_engine.columns.number_codes`: age 999 among ages 18 to 94), which the thresholds read as values."""
    from ..columns import read_column

    notes = []
    numeric = sorted({c["column"] for rule in model["rules"] for c in rule.get("conditions", [])
                      if c.get("op") in (">=", "<") and c["column"] in frame.columns})
    for column in numeric:
        found = read_column(column, frame[column]).number_codes
        if found:
            notes.append(f"column {column!r}: {found}: if that is a code for not known, those patients are placed "
                         "by it as if it were a value; run again with --codes-as-missing (or empty those cells)")
    return tuple(notes)


def unit_notes(model: dict, frame: pd.DataFrame) -> tuple[str, ...]:
    """Notes for a rule's numeric column whose numbers were written with one unit at fit time (``"72 kg"``, kept
    in the model file) and are written with another here (``"160 lbs"``): the thresholds compare the numbers as
    they are, so 160 lb is read as 160 kg.  Cells of plain numbers carry no unit and say nothing."""
    from ..columns import same_unit, written_units

    fitted = {c.get("name"): c.get("unit") for c in _binarizer_columns(model) if c.get("unit")}
    notes = []
    for column in sorted({c["column"] for rule in model["rules"] for c in rule.get("conditions", [])
                          if c.get("op") in (">=", "<") and c["column"] in fitted and c["column"] in frame.columns}):
        unit = fitted[column]
        other = [spelling for name, spelling in written_units(frame[column]).items() if name != same_unit(unit)]
        if other:
            notes.append(f"column {column!r} is written in {', '.join(map(repr, other))} here and in {unit!r} at fit "
                         f"time: its thresholds compare the numbers as written, so convert them to {unit} first")
    return tuple(notes)


def table_notes(model: dict, frame: pd.DataFrame, rule_index) -> tuple[str, ...]:
    """What external validation and ``frl predict`` say about a new table before its numbers are trusted: text
    read as missing in a rule's numeric column, numbers that look like codes for not known, empty cells, bands,
    categories the model has no item for, numbers written in another unit than at fit time, and rules catching a very different share of patients than at fit time."""
    return (text_read_as_missing_notes(model, frame) + number_code_notes(model, frame) + empty_cell_notes(model, frame)
            + band_notes(model, frame) + new_level_notes(model, frame) + unit_notes(model, frame)
            + shift_notes(model, rule_index))


def attach_to_model(model: dict, result: ExternalValidation) -> dict:
    """A copy of the model dictionary with ``external_validation`` set to the result's summary."""
    updated = json.loads(json.dumps(model))
    updated["external_validation"] = result.model_block()
    return updated


# ---------------------------------------------------------------------------------------------- text
def _f(x, digits=3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ci(pair, digits=3) -> str:
    lo, hi = pair
    return "" if math.isnan(lo) else f" (95% CI {lo:.{digits}f} to {hi:.{digits}f})"


def _pct(x) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def format_metrics(m: PopulationMetrics, indent: str = "") -> list[str]:
    lines = [
        f"{indent}patients {m.n:,}, events {m.events:,} ({_pct(m.event_rate)}); mean predicted risk {_pct(m.mean_risk)}",
        f"{indent}AUROC {_f(m.auroc)}{_ci(m.auroc_ci)}",
        f"{indent}Brier score {_f(m.brier, 4)}",
        f"{indent}calibration intercept {_f(m.calibration_intercept)}{_ci(m.calibration_intercept_ci)}   (0 is ideal)",
        f"{indent}calibration slope {_f(m.calibration_slope)}{_ci(m.calibration_slope_ci)}   (1 is ideal)",
    ]
    useful = m.net_benefit.useful_text(_pct)
    span = f"at {useful}" if useful and useful.startswith("the threshold") else f"for {useful}"
    lines.append(f"{indent}decision curve: the list beats treating everyone and no one {span}" if useful else
                 f"{indent}decision curve: at no threshold does the list beat both treating everyone and no one")
    lines += [f"{indent}note: {note}" for note in m.notes]
    return lines


def rule_rows(m: PopulationMetrics) -> list[list[str]]:
    rows = []
    for r in m.rules:
        model_ci = "" if r.model_lower is None else f" ({_pct(r.model_lower)}-{_pct(r.model_upper)})"
        observed = "-" if r.n == 0 else f"{_pct(r.observed)} ({_pct(r.lower)}-{_pct(r.upper)})"
        rows.append([str(r.position + 1), r.rule or "ELSE", f"{_pct(r.model_risk)}{model_ci}", f"{r.n:,}",
                     f"{r.events:,}", observed, "; ".join(r.flags)])
    return rows


def format_validation(result: ExternalValidation) -> str:
    o = result.overall
    lines = [f"External validation on {result.data_name}: {result.target} = {result.event} (model {result.model_id})",
             *format_metrics(o, "  "), ""]
    if result.patients:   # rows are encounters: "rows 3,000 of 2,593 patients (patient_nbr)", as fit says it
        column, count = result.patients
        lines[1] = lines[1].replace(f"patients {o.n:,}", f"rows {o.n:,} of {count:,} patients ({column})", 1)
    if result.same_as_training:
        lines[0] = (f"Not an external validation: {result.data_name} holds the patients the model was fitted on "
                    f"({result.target} = {result.event}, model {result.model_id})")
    elif result.training_share is not None:
        lines[0] = (f"Not an external validation: about {100 * result.training_share:.0f}% of {result.data_name}'s "
                    f"rows are patients the model was fitted on ({result.target} = {result.event}, model "
                    f"{result.model_id})")
    elif result.training_unchecked:
        lines[0] = (f"Validation on {result.data_name}, not checked for the patients the model was fitted on (see the "
                    f"note below): {result.target} = {result.event} (model {result.model_id})")
    header = ["#", "rule", "model risk", "patients", "events", "observed (95% CI)", "flags"]
    rows = rule_rows(o)
    widths = [max(len(h), *(display_width(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    lines += ["  ".join(pad_right(c, w) for c, w in zip(row, widths)).rstrip() for row in rows]
    flagged = [r for r in o.rules if r.flags]
    if flagged:
        lines.append("")
        for r in flagged:
            lines.append(f"  rule {r.position + 1} ({r.rule or 'ELSE'}): " + "; ".join(FLAG_TEXT[f] for f in r.flags))
    else:
        overall = o.overall_calibration_note()
        lines += ["", "  every rule's observed rate is within chance of its printed risk and the rates fall down the "
                      "list" + (f", {overall}" if overall else "")]
    for s in result.subgroups:
        named = s.label if result.by is None or str(result.by) in s.label else f"{result.by} = {s.label}"
        lines += ["", f"Subgroup {named}:", *format_metrics(s.metrics, "  ")]
        flagged = [f"{r.position + 1} ({', '.join(r.flags)})" for r in s.metrics.flagged]
        if flagged:
            lines.append("  flagged rules: " + ", ".join(flagged))
    return "\n".join(lines)
