"""Reading a column of a hospital export: missing markers, values, and the column's *kind*.

A real export is not a clean table. This module is the one place that decides
how a raw column is read; the binarizer, the CLI (``frl fit --explain-columns``)
and the dashboard's data page all use it.

Missing values
--------------
A cell is missing when it is NaN/None/NaT, or text that is blank or one of the
common missing markers :data:`MISSING_MARKERS` (``?``, ``NA``, ``N/A``, ``NULL``,
``None``, ``NaN``, ``#N/A``, in any case), whatever the column's type. A missing
value matches no condition except ``<column> is missing``.

Kinds
-----
Each column gets one kind, with the reason in words (:func:`read_column`):

- ``numeric``: numbers (or age bands such as ``[70-80)``, read by their lower
  bound), thresholded at rounded quantiles (``Age >= 60``);
- ``categorical``: text labels; one item per level that can reach the support
  threshold (``race = AfricanAmerican``); rarer levels are never refused, they
  just make no item of their own;
- ``boolean``: yes/no, true/false, 0/1: one item (``BedSores``);
- ``code``: hierarchical codes such as ICD-9 (``250.83``, ``428``, ``V57``),
  ICD-10 or ATC, where a prefix is a group: items for frequent codes and for
  code groups (``diag_1 starts with 428``), so rare codes count through their
  group;
- ``nominal``: an integer column whose values are labels (admission type 1-8,
  discharge disposition 1-28): categories, never thresholds;
- ``identifier``: a different value in nearly every row, or a repeated patient
  number: excluded, with the reason shown;
- ``near-constant``: one value (or missing) on at least 99% of rows: no item;
- ``constant``, ``empty``: one value, or none at all: no item;
- ``unsupported``: dates and durations: no item (turn them into numbers).

The user can override any of them (``column_kinds={"ward": "categorical"}``,
``frl fit --kind ward=categorical``).
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .errors import DataError, ModelFileError
from .sniff import COMMA_DECIMAL, POINT_DECIMAL

__all__ = [
    "MISSING_MARKERS", "ITEM_KINDS", "SKIPPED_KINDS", "KIND_ALIASES", "NEAR_CONSTANT_SHARE",
    "ColumnReading", "read_column", "read_columns", "canonical_kind", "is_missing_marker",
    "format_number", "category_label", "category_labels", "missing_mask", "numeric_values", "unreadable_mask",
    "boolean_values", "is_number",
    "band_bounds", "code_label", "code_prefixes", "listed_codes", "has_code_name", "has_nominal_name",
    "has_identifier_name", "has_follow_up_name", "FOLLOW_UP_REASON", "has_outcome_name", "LATER_OUTCOME_REASON", "looks_like_identifier", "parse_interval",
]

#: Text that means "missing" in exports (compared stripped and case-insensitively).
MISSING_MARKERS = frozenset({"", "?", "na", "n/a", "null", "none", "nan", "#n/a", "nil", ".", "-", "--",
                             # the errors of a spreadsheet formula (a BMI of a blank height: #DIV/0!)
                             "#div/0!", "#value!", "#ref!", "#name?", "#num!", "#null!", "#n/a!"})
TRUE_WORDS = frozenset({"yes", "true", "y", "t", "1", "ja", "j", "oui", "si", "sí", "sim", "wahr", "vrai"})
FALSE_WORDS = frozenset({"no", "false", "n", "f", "0", "nein", "nee", "nej", "nei", "non", "não", "nao", "falsch",
                         "faux"})
#: Kinds that make items.
ITEM_KINDS = ("numeric", "categorical", "boolean", "code", "nominal", "code list")
#: Kinds that make none (the column is left out, with the reason).
SKIPPED_KINDS = ("identifier", "near-constant", "constant", "empty", "unsupported")
#: Other words users may type for a kind.
KIND_ALIASES = {"category": "categorical", "categories": "categorical", "number": "numeric", "bool": "boolean",
                "yes/no": "boolean", "codes": "code", "nominal code": "nominal", "nominal-code": "nominal",
                "nominal_code": "nominal", "code_list": "code list", "code-list": "code list",
                "list of codes": "code list", "codes list": "code list", "id": "identifier", "ignore": "identifier", "near_constant": "near-constant"}
#: A column whose most common value (missing counts as a value) covers this share of rows makes no item.
NEAR_CONSTANT_SHARE = 0.99
#: Share of non-missing values that must read as numbers for a text column to be numeric (with some junk).
NUMERIC_SHARE = 0.9
#: A lab's words for "no result" and an export's words for "no value" (compared trimmed and without case): in
#: a column of numbers they are missing at any share, like ``?``, since a month with many results pending is
#: still a measurement.
NO_VALUE_WORDS = frozenset({
    "pending", "in progress", "hemolyzed", "haemolyzed", "hemolysed", "haemolysed", "clotted", "lipemic",
    "lipaemic", "icteric", "cancelled", "canceled", "not done", "not performed", "not measured", "not tested",
    "see note", "see comment", "insufficient", "insufficient sample", "qns", "test not performed",
    "tnp", "nd", "n.d.", "nr", "not reported", "not received", "no sample", "rejected", "specimen rejected",
    "refused", "declined",
    # and an export's words for "no value", read as missing in a column of numbers (a category column keeps
    # "Unknown" as a level of its own): scoring one patient reads them as scoring a thousand does
    "unknown", "unk", "missing", "not available", "not recorded", "not known", "n.k.", "n/k", "nk", "n.a.",
    "not applicable", "no value", "no result", "none recorded"})
#: Share of rows with distinct values above which an integer or text column is an identifier.
IDENTIFIER_SHARE = 0.95
#: Fewest rows for whole numbers with a different value in nearly every row to be told apart from record
#: numbers by their spread (:func:`spread_like_a_measurement`); below it they stay identifiers.
MIN_MEASUREMENT_VALUES = 200
#: Kolmogorov-Smirnov distance from an even spread above which such values are a measurement (and at least
#: the test's 0.1% critical value, 1.95 / sqrt(m)).
MEASUREMENT_SPREAD = 0.15
#: Fewest distinct values of a column read as codes by their shape alone (a name such as diag_1 needs 10).
MIN_CODE_LEVELS = 40
#: Most distinct values of an integer column read as nominal codes when its name says "code".
MAX_NOMINAL_LEVELS = 60

_INTERVAL = re.compile(r"^[\[(]\s*(-?\d+(?:\.\d+)?)\s*[-,;]\s*(-?\d+(?:\.\d+)?)\s*[\])]$")
_OPEN_BAND = re.compile(r"^(?:>=?|≥)\s*(-?\d+(?:\.\d+)?)$|^(-?\d+(?:\.\d+)?)\s*(?:\+|and (?:over|older|above)|"
                        r"or (?:more|older|above))$", re.IGNORECASE)
# An age group written without brackets: 18-29, 30 - 39, 40 to 49 (the lower bound below the upper).
_BARE_RANGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)$", re.IGNORECASE)
_PERCENT = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*%$")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
# A number written with its unit ("72 kg", "3 days", "120 mmHg") or a currency ("$24,247", "€ 310.50").
# 10^9 cells a litre as exports write it: x10^9/L, ×10⁹/L, x10E9/L, 10e9/L ...
_TEN_TO_THE_9 = ("x 10^9/l", "10^9/l", "×10^9/l", "× 10^9/l", "x10⁹/l", "×10⁹/l", "10⁹/l", "x10e9/l", "x 10e9/l",
                 "10e9/l", "×10e9/l")
_TEN_TO_THE_12 = ("x 10^12/l", "10^12/l", "×10^12/l", "x10¹²/l", "×10¹²/l", "10¹²/l", "x10e12/l", "10e12/l")
_LAB_UNITS = ("kpa", "cmh2o", "mmol", "mmol/mol", "meq/l", "nmol/l", "pmol/l", "µg/l", "ug/l", "mg/l", "ng/ml", "ng/l",
              "pg/ml", "µg/dl", "ug/dl", "ng/dl", "mu/l", "miu/l", "mui/l", "u/ml", "iu/ml", "µkat/l", "ukat/l",
              "mosm/kg", "mosm/l", "fl", "pg", "mm/h", "mm/hr", "l/min", "ml/min", "ml/min/1.73m2", "ml/min/1.73 m2",
              "ml/min/1.73m²", "ml/min/1.73 m²", "kg/m2", "kg/m²", "x10^9/l", *_TEN_TO_THE_9, "x10^12/l",
              *_TEN_TO_THE_12, "x10^3/µl", "x 10^3/µl", "x10^3/ul", "10^3/µl", "10^3/ul", "k/µl", "k/ul",
              "g/24h", "mg/24h", "sec", "secs", "breaths/min")
UNITS = ("kg", "g", "mg", "mcg", "µg", "ug", "ng", "lb", "lbs", "oz", "cm", "mm", "in", "ml", "l", "dl", "mmol/l",
         "µmol/l", "umol/l", "mg/dl", "g/dl", "g/l", "mmhg", "bpm", "/min", "kcal", "iu", "iu/l", "u/l",
         "d", "day", "days", "h", "hr", "hrs", "hour", "hours", "min", "mins", "minutes", "wk", "wks", "week",
         "weeks", "mo", "months", "y", "yr", "yrs", "year", "years", "yo", "°c", "°f", *_LAB_UNITS)
# The micro sign (U+00B5) and the Greek mu (U+03BC) look the same; exports write either.
UNITS = (*UNITS, *(u.replace("µ", "μ") for u in UNITS if "µ" in u))
_UNIT_WORDS = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
# The number may group its thousands with commas ("1,684 g", as "1,684" alone is read): group 1 keeps them.
_WITH_UNIT = re.compile(r"^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*(" + _UNIT_WORDS + r")$", re.IGNORECASE)
# Lab exports: a result below (or above) what the assay measures, "<0.5" ("≤0.5", "<0.5 mg/dL"), read at that limit.
_UNIT_SUFFIX = r"(?:\s*(?:" + _UNIT_WORDS + r"))?"
_BELOW_LIMIT = re.compile(r"^(?:<=?|≤)\s*([-+]?\d+(?:\.\d+)?)" + _UNIT_SUFFIX + "$", re.IGNORECASE)
# Group 1: the limit without its unit (">10 mg/dL" is read as ">10", a limit or a band).
_LIMIT = re.compile(r"^((?:[<>]=?|≤|≥)\s*[-+]?\d+(?:\.\d+)?)" + _UNIT_SUFFIX + "$", re.IGNORECASE)
# The unit of a limit written with one ("<0.5 mg/dL"): group 1.
_UNIT_TAIL = re.compile(r"^(?:[<>]=?|≤|≥)\s*[-+]?\d+(?:\.\d+)?\s*(" + _UNIT_WORDS + r")$", re.IGNORECASE)
# Spellings of one unit: "3 days" and "3 d" are the same unit, "72 kg" and "160 lb" are not.
_UNIT_SPELLINGS = (("d", "day", "days"), ("h", "hr", "hrs", "hour", "hours"), ("min", "mins", "minutes"),
                   ("wk", "wks", "week", "weeks"), ("mo", "months"), ("y", "yr", "yrs", "year", "years", "yo"),
                   ("lb", "lbs"), ("µg", "ug", "mcg", "μg"), ("µmol/l", "umol/l", "μmol/l"), ("µg/l", "ug/l", "μg/l"),
                   ("µg/dl", "ug/dl", "μg/dl"), ("µkat/l", "ukat/l", "μkat/l"), ("mu/l", "miu/l", "mui/l"),
                   ("mm/h", "mm/hr"), ("sec", "secs"), ("kg/m2", "kg/m²"),
                   ("ml/min/1.73m2", "ml/min/1.73 m2", "ml/min/1.73m²", "ml/min/1.73 m²"),
                   # 10^9 cells a litre are 10^3 a microlitre: one unit, written five ways
                   ("x10^9/l", *_TEN_TO_THE_9, "x10^3/µl", "x 10^3/µl", "x10^3/ul", "10^3/µl", "10^3/ul", "k/µl",
                    "k/ul", "x10^3/μl", "x 10^3/μl", "10^3/μl", "k/μl"), ("x10^12/l", *_TEN_TO_THE_12))
_UNIT_NAMES = {spelling: group[0] for group in _UNIT_SPELLINGS for spelling in group}


def same_unit(unit: str) -> str:
    """One name for the spellings of a unit (``days`` and ``d``: ``d``; ``MG`` and ``mg``: ``mg``)."""
    unit = unit.lower()
    return _UNIT_NAMES.get(unit, unit)


def written_units(series: pd.Series) -> dict[str, str]:
    """The units a column's numbers are written with (``"72 kg"``, ``"<0.5 mg/dL"``): each unit's one name
    (:func:`same_unit`) with its first spelling; empty for a column of plain numbers.  Read once per distinct
    cell."""
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return {}
    found: dict[str, str] = {}
    for value in pd.unique(series.dropna()):
        if not isinstance(value, str):
            continue
        text = value.strip()
        match = _WITH_UNIT.match(text) or _UNIT_TAIL.search(text)
        if match:
            unit = match.group(2) if match.re is _WITH_UNIT else match.group(1)
            found.setdefault(same_unit(unit), unit)
    return found


_CURRENCY = re.compile(r"^[$€£]\s*([-+]?[\d,]+(?:\.\d+)?)$")
# Several codes in one cell, joined by "|", ";" or "," ("043|039.55", "I50.9; E11.65", "I10, E11.9"; numbers with
# thousands separators, "12,345", were read as numbers before this is asked).
_CODE_LIST = re.compile(r"^[A-Za-z0-9.]+(\s*[|;,]\s*[A-Za-z0-9.]+)+$")
# ICD-9 (428, 250.83, V57, E909), ICD-10 (I50.9, E11.65), ATC (C07AB02), OPCS/CPT-like alphanumerics.
_CODE = re.compile(r"^[A-Z]{0,2}\d{1,3}[A-Z0-9]{0,4}(\.[A-Z0-9]{1,4})?$")
# A name that says "codes": a word such as diag, diag_1, icd10, dx2, atc, cpt, drg, code (not "diagnoses", a count).
_CODE_NAME = re.compile(r"(^|[^a-z])(diag|icd|dx|atc|cpt|opcs|drg|mdc|ccs|diagnosis|code|codes|zip|zipcode|postcode|"
                        r"postal|fips)(\d*)($|[^a-z])|"
                        r"^(diag|icd|dx)\d*[A-Z_]|[a-z](Diag|Icd|ICD|Code|Dx|Procedure)\d*$|"
                        # a procedure as the name's last word (primary_procedure, proc_2), not procedure_minutes
                        r"(^|[^a-z])(procedure|proc|hcpcs|snomed|loinc)[_\s]?\d*$", re.IGNORECASE)
# A name that says "how many" (num_procedures, diag_count, n_dx): a count, never codes.
_COUNT_NAME = re.compile(r"(^|[^a-z])(n|nb|nr|num|number|count|cnt|total|sum)($|[^a-z])|count|total", re.IGNORECASE)
# A name that says "how much" of something named by a code (drg_weight, cpt_rvu, zip_median_income,
# postcode_distance_km, DRGWeight): a measurement, never codes.
_MEASURE_WORDS = (r"(weight|wt|rw|rvus?|score|income|distance|dist|km|miles|cost|costs|charges?|amount|price|payments?|"
                  r"paid|rate|ratio|pct|percent|mean|avg|average|median|los|days|hours|minutes|mins|weeks|months|"
                  r"years|time|duration)")
_MEASURE_NAME = re.compile(r"(^|[^a-z])" + _MEASURE_WORDS + r"($|[^a-z])", re.IGNORECASE)
# The same words as the name's last word (total_charges, los_minutes; not charge_code or cost_center).
_MEASURE_LAST = re.compile(r"(^|[^a-z])" + _MEASURE_WORDS + "$", re.IGNORECASE)
# A name whose two values are two kinds, not a finding and its absence: ``sex`` 0/1 is not "sex: yes".
_TWO_SIDED_NAME = re.compile(r"^(sex|gender|geschlecht|sexe|sexo)$", re.IGNORECASE)
# A duration as the name's ending, even run together (diagtime, DxDays, icu_hours): the time since a diagnosis is no code.
# ... or a year (KMsurv larynx's diagyr, the year of diagnosis: 70 to 78 are years, not diagnosis codes)
_DURATION_END = re.compile(r"(time|days|hours|weeks|months|years|duration|yr|year)$", re.IGNORECASE)
_MEASURE_CAMEL = re.compile(r"[a-zA-Z](Weight|Score|Income|Distance|Cost|Charges?|Amount|Rate)$")
_NOMINAL_NAME = re.compile(r"(_id$|id$|_code$|code|type|source|disposition|status|class|category|group|ward|unit|"
                           r"dept|department|specialty|payer|payor|insurance|insurer|marital|religion|language|"
                           r"nationality|country|occupation|site|region|race|ethnic|sex|gender|zip|postcode|postal|"
                           r"fips|facility|hospital|clinic|provider|physician|doctor|surgeon|attending|consultant|"
                           r"(^|[_\s.\-])(service|team|firm)($|[_\s.\-\d])|"
                           # R's lung: inst, the institution (18 centres), is no dose: "inst < 11" meant nothing
                           r"(^|[_\s.\-])(inst|institution|institute|centre|center)($|[_\s.\-\d]))", re.IGNORECASE)
# The name's last word names a category (stay_type, discharge_disposition_id, length_group, unit_code): whole
# numbers there are labels whatever the rest of the name says.
_NOMINAL_LAST = re.compile(r"(^|[^a-z])(id|code|type|source|disposition|status|class|category|group)$", re.IGNORECASE)
_NOMINAL_LAST_CAMEL = re.compile(r"[a-z0-9](Id|ID|Code|Type|Source|Disposition|Status|Class|Category|Group)$")
# A name that says "how long" or "how much" (time_in_hospital, length_of_stay, insulin_units, clinic_visits):
# a quantity, though a word of _NOMINAL_NAME (hospital, clinic, unit) is in it.
_QUANTITY_NAME = re.compile(r"(^|[^a-z])(time|duration|length|stay|visits?|admissions|readmissions|doses?|units|"
                            r"amount|years|weeks|months|nights)($|[^a-z])", re.IGNORECASE)
_QUANTITY_CAMEL = re.compile(r"[a-z](Time|Duration|Length|Stay|Visits|Admissions|Dose|Doses|Units|Days|Hours|Nights)$")
_ID_WORDS = re.compile(r"(^|[_\s.\-])(id|mrn|uuid|guid|identifier|nbr|number|no|num|key|nr)\.?$|nummer$|numero$"
                       r"|^(id|mrn|uuid|guid|pid|hadm)($|[_\s.\-])|^(fin|csn|har|ipp|nip|nhi)$"
                       # run together: pec's Pbc3 ptno, patno, subjno, caseno (a patient number read as a measurement)
                       r"|^(pt|pat|patient|subj|subject|case)(no|nr|num|nbr|id)$"
                       r"|^(record|patient|subject|encounter|visit|case|admission|person|member)[_\s.\-]?"
                       r"(id|no|num|number|nbr|nr|key|code)$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z0-9](ID|Id|Nbr|No)$")
#: Names of a patient's own number beyond ``patient``/``MRN``: NHS Number, Medical Record Number, chart_no,
#: Hospital No, Health Card Number, Pat. Nr. (shared with :mod:`frl_engine.folds`, which groups folds by it).
PATIENT_NUMBER_WORDS = (r"medical[_\s.\-]?record|nhs|chart|hospital[_\s.\-]?(number|no|nr)|health[_\s.\-]?(number|card)"
                        r"|^pat[_\s.\-]")
_PERSON_WORDS = re.compile(r"(patient|subject|person|member|mrn|encounter|visit|record|case|" + PATIENT_NUMBER_WORDS
                           + ")", re.IGNORECASE)
#: Names that are an encounter's, a stay's or an account's number on their own: hadm_id, stay_id, episode_id,
#: admission_no, Fall-Nr, account_number, Aufnahmenummer, and the acronyms FIN, CSN, HAR, IPP, NIP, NHI.
_RECORD_NAME = re.compile(r"^(hadm|stay|icustay|episode|admission|adm|fall|account|acct|case|encounter|visit|record)"
                          r"[_\s.\-]?(id|no|num|number|nbr|nr|key)\.?$|^(fin|csn|har|ipp|nip|nhi)$|nummer$|numero$",
                          re.IGNORECASE)


# --------------------------------------------------------------------------
# Reading cells
# --------------------------------------------------------------------------


def is_number(value) -> bool:
    """A real number that is not a bool (``True`` is not a threshold); a ``Decimal`` from a database
    driver (pyodbc, cx_Oracle) is one."""
    return isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, (bool, np.bool_))


def format_number(x: float) -> str:
    """Write a number readably: ``60`` not ``60.0``, ``0.24`` not ``0.24000000000000002``."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return np.format_float_positional(x, precision=12, unique=True, fractional=False, trim="-")


def category_label(value) -> str:
    """The text a category value is known by: strings stripped, ``2.0`` written ``2``."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Real):
        return format_number(value)
    return str(value).strip()


def category_labels(values: pd.Series) -> pd.Series:
    """:func:`category_label` of every value of ``values`` (same index), computed once per distinct value.

    A column of text, numbers, booleans or categories holds no two distinct values that compare equal
    (``pd.factorize`` would merge them); an object column of mixed kinds can (``True == 1``, labelled ``"True"``
    and ``"1"``), so it is labelled value by value.  100,000 rows of a text column: about 10 ms instead of 100.
    """
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=False) != "string":
        return values.map(category_label)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    labels = np.array(_distinct_labels(uniques, np.asarray(uniques, dtype=object)), dtype=object)
    return pd.Series(labels[codes], index=values.index, dtype=object)


def _distinct_labels(uniques, uniques_obj: np.ndarray) -> list[str]:
    """:func:`category_label` of each of a column's distinct values; whole numbers (an integer column: record
    numbers, codes) written all at once, as ``category_label`` writes them (``str(int(x))`` below 1e15)."""
    values = np.asarray(uniques)
    if values.dtype.kind in "iu" and len(values) and values.min() > -1e15 and values.max() < 1e15:
        return values.astype(str).tolist()
    if (values.dtype.kind == "f" and len(values) and np.all(np.isfinite(values)) and np.all(np.abs(values) < 1e15)
            and np.all(values == np.round(values))):  # whole numbers read as decimals (a column with empty cells)
        return values.astype(np.int64).astype(str).tolist()
    return [category_label(v) for v in uniques_obj]


def is_missing_marker(value) -> bool:
    """True for NaN/None and for text such as ``""``, ``"?"``, ``"NA"``, ``"NULL"`` (:data:`MISSING_MARKERS`)."""
    if isinstance(value, str):
        return value.strip().lower() in MISSING_MARKERS
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _distinct(series: pd.Series) -> list:
    """Distinct non-NaN values of ``series`` in order of appearance."""
    return list(pd.unique(series.dropna()))


def _is_text(series: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)
                or pd.api.types.is_datetime64_any_dtype(series) or pd.api.types.is_timedelta64_dtype(series))


def missing_mask(series: pd.Series) -> np.ndarray:
    """Which cells are missing: NaN, None, NaT, or a missing marker (``?``, ``NA``, blank...).

    Returns
    -------
    numpy.ndarray of bool, shape (len(series),)
    """
    missing = np.array(series.isna(), dtype=bool)  # a writable copy
    if _is_text(series):
        distinct = _distinct(series)
        markers = [v for v in distinct if isinstance(v, str) and v.strip().lower() in MISSING_MARKERS]
        if markers:
            levels = marker_levels(markers, [v for v in distinct if v not in markers])
            markers = [v for v in markers if v not in levels]
        if markers:
            missing |= series.isin(markers).to_numpy(dtype=bool)
    return missing


#: A column's other values that make ``-`` a level (a dipstick's ``-`` / ``+`` / ``++``, a blood group's Rh ``+``).
_SIGN_LEVEL = re.compile(r"^(\+{1,4}|pos|positive|trace|tr)$", re.IGNORECASE)
#: Words of a scale of amount or severity: beside them ``None`` is its lowest level (pain ``None`` / ``Mild`` /
#: ``Severe``; exercise ``Freq`` / ``Some`` / ``None``; alcohol ``none`` / ``light`` / ``heavy``), while beside other
#: words (a discharge to ``home`` / ``rehab`` / ``None``) it is a value not recorded.
_SCALE_WORDS = frozenset({"mild", "moderate", "severe", "slight", "marked", "minimal", "some", "little", "few",
                          "several", "many", "much", "frequent", "freq", "occasional", "occasionally", "rare",
                          "rarely", "often", "sometimes", "always", "daily", "weekly", "monthly", "light", "heavy",
                          "medium", "low", "high", "trace", "former", "current", "ever", "past", "minor", "major",
                          "partial", "complete", "single", "multiple", "moderately", "mildly", "severely"})


def marker_levels(markers, others) -> set:
    """The missing markers that are levels of this column, given its other values: ``None`` (and ``nil``) as the
    lowest level of a scale of amount or severity (pain ``None`` / ``Mild`` / ``Severe``, exercise ``Freq`` /
    ``Some`` / ``None``: :data:`_SCALE_WORDS`), and ``-`` beside ``+`` (a dipstick, a blood group's Rh). Among
    numbers, or other words (``home`` / ``rehab`` / ``None``, ``Yes`` / ``No`` / ``None``), they stay missing."""
    words = [v for v in others if isinstance(v, str) and v.strip()]
    if len(words) != len([v for v in others if not (isinstance(v, float) and math.isnan(v))]):
        return set()   # numbers among the values: a measurement's "None" / "-" is no result
    if words and not np.isnan(_parse_numbers(np.asarray(words, dtype=object))).all():
        return set()
    plain = {w.strip().lower() for w in words}
    levels = set()
    for marker in markers:
        key = marker.strip().lower()
        if key in ("none", "nil") and any(set(re.split(r"[^a-z]+", w)) & _SCALE_WORDS for w in plain):
            levels.add(marker)
        elif key == "-" and any(_SIGN_LEVEL.match(w) for w in plain):
            levels.add(marker)
    return levels


def _examples(values: Sequence, limit: int = 3) -> str:
    return ", ".join(f"'{v}'" for v in list(values)[:limit])


def parse_interval(text: str) -> float | None:
    """The lower bound of a band label such as ``[70-80)``, ``(0, 10]``, ``70-79``, ``>200``, ``90+`` or ``65 and
    over``; None for other text."""
    if not isinstance(text, str):
        return None
    bounds = band_bounds(text)
    return bounds[0] if bounds else None


def band_bounds(text) -> tuple[float, float] | None:
    """``(lower, upper)`` of a band label: ``[50-60)`` -> (50, 60), ``>200`` and ``90+`` -> (200, inf); else None."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    match = _INTERVAL.match(text)
    if match:
        return float(match.group(1)), float(match.group(2))
    match = _BARE_RANGE.match(text)
    if match and float(match.group(1)) < float(match.group(2)):
        return float(match.group(1)), float(match.group(2))
    match = _OPEN_BAND.match(text)
    if match:
        return float(next(g for g in match.groups() if g is not None)), math.inf
    return None


# A negative amount as accounting exports write it: "(12)", "($1,200.50)".
_ACCOUNTING_NEGATIVE = re.compile(r"^\(\s*[$\u20ac\u00a3]?\s*(\d[\d,]*(?:\.\d+)?)\s*\)$")


def _accounting_negative(text: str) -> float | None:
    """``"(1,200)"`` -> -1200 (``"(1,5)"`` is a band, not a negative), else None."""
    match = _ACCOUNTING_NEGATIVE.match(text.strip())
    if match and (_THOUSANDS.match(match.group(1)) or "," not in match.group(1)):
        return -float(match.group(1).replace(",", ""))
    return None


# Thousands grouped by a space, as French, Nordic and many Excel exports write them: "49 517", "1 234 567.5"
# (also the no-break spaces U+00A0 and U+202F).
_SPACED_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?=\s*[^\d\s.,]*$)")
_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"})


def _plain_digits(text: str) -> str:
    """``text`` with a typographic minus (``"−1.0"``, U+2212) as ``-`` and spaces between groups of thousands
    removed (``"49 517"`` -> ``"49517"``, ``"2 880 min"`` -> ``"2880 min"``)."""
    text = text.translate(_MINUS_SIGNS)
    match = _SPACED_THOUSANDS.match(text)
    if match:
        number = match.group(0)
        text = re.sub(r"[ \u00a0\u202f]", "", number) + text[len(number):]
    return text


def _number_from_text(text: str) -> float | None:
    """Numeric text as a hospital system writes it, or None.

    ``"12.5"``; a band's lower bound (``"[70-80)"``, ``">200"``, ``"90+"``); a result below an
    assay's limit at that limit (``"<0.5"`` -> 0.5); a percentage as its number (``"95%"`` -> 95);
    thousands separators (``"12,345"`` -> 12345); a number with its unit (``"72 kg"``, ``"3 days"``:
    :data:`UNITS`) or a currency (``"$24,247"``); an accountant's negative (``"(1,200)"`` -> -1200);
    thousands grouped by spaces (``"49 517"``) and a typographic minus (``"−1.0"``).
    """
    try:
        return float(text)
    except ValueError:
        pass
    text = _plain_digits(text)
    try:
        return float(text)
    except ValueError:
        pass
    negative = _accounting_negative(text)
    if negative is not None:
        return negative
    limit = _LIMIT.match(text)
    if limit and limit.group(1) != text:
        return _number_from_text(limit.group(1))  # ">10 mg/dL" as ">10"
    band = parse_interval(text)
    if band is not None:
        return band
    for pattern in (_BELOW_LIMIT, _PERCENT):
        match = pattern.match(text)
        if match:
            return float(match.group(1))
    if _THOUSANDS.match(text):
        return float(text.replace(",", ""))
    match = _WITH_UNIT.match(text)
    if match:
        return float(match.group(1).replace(",", ""))
    match = _CURRENCY.match(text)
    if match and (_THOUSANDS.match(match.group(1)) or "," not in match.group(1)):
        return float(match.group(1).replace(",", ""))
    return None


def _is_plain_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# A decimal comma that cannot be a thousands separator: "7,3", "12,45", "0,125", "1234,5".
_SURE_DECIMAL_COMMA = re.compile(r"^[-+]?(\d+,\d{1,2}|\d+,\d{4,}|0,\d+|\d{4,},\d+)$")


def _decimal_comma_text(texts: list[str]) -> bool:
    """Whether a column's text numbers use a decimal comma (``"7,3"`` stored as text, as a French or
    German Excel writes them into a CSV or a workbook): some value can only be read that way, no
    value has a decimal point, and no value is a list (``"1,4,7"``: then ``"1,2"`` is two codes)."""
    return (any(_SURE_DECIMAL_COMMA.match(t) for t in texts) and not any(POINT_DECIMAL.match(t) for t in texts)
            and not any(t.count(",") > 1 for t in texts))  # "1,4,7" says the column holds lists, not decimals


# A fit reads a column of numbers written as text three times (read_column, the binariser's fit, the items of
# its rows); the distinct cells of the last few such columns are parsed once (_parse_numbers).  Only columns of
# at least PARSE_CACHE_MIN distinct cells are kept, at most PARSE_CACHE_COLUMNS of them: 100,000 rows of
# charges written "76 774" took 0.4 s a reading.
PARSE_CACHE_MIN = 1_000
PARSE_CACHE_COLUMNS = 16


def _parse_numbers(uniques: np.ndarray) -> np.ndarray:
    """Each distinct cell as a float: numbers or numeric text (:func:`_number_from_text`); NaN otherwise.

    The distinct cells of one column are looked at together: when they use a decimal comma
    (:func:`_decimal_comma_text`), ``"1,500"`` there is one and a half, not fifteen hundred.  A column of many
    distinct cells read again (the same cells, equal one by one) gets the numbers parsed the first time.
    """
    if len(uniques) >= PARSE_CACHE_MIN:
        cells = tuple(uniques)
        try:
            hash(cells)
        except TypeError:   # a cell that cannot be a key (a list): parsed each time
            return _parse_number_cells(cells)
        return _parse_number_cells_kept(cells).copy()
    return _parse_number_cells(uniques)


@functools.lru_cache(maxsize=PARSE_CACHE_COLUMNS)
def _parse_number_cells_kept(cells: tuple) -> np.ndarray:
    """:func:`_parse_number_cells`, kept for the last ``PARSE_CACHE_COLUMNS`` columns (equal cells parse equally:
    a number and the same number of another type, ``True`` and ``1``, read as the same float)."""
    return _parse_number_cells(cells)


def _parse_number_cells(uniques) -> np.ndarray:
    """:func:`_parse_numbers`, every time."""
    out = np.full(len(uniques), np.nan)
    texts = [_plain_digits(v.strip()) for v in uniques if isinstance(v, str)]  # "1 234,5" reads as "1234,5"
    comma = bool(texts) and _decimal_comma_text(texts)
    for i, value in enumerate(uniques):
        if isinstance(value, (bool, np.bool_)):
            out[i] = float(value)
        elif is_number(value):
            out[i] = float(value)
        elif isinstance(value, str):
            text = value.strip()
            if comma and COMMA_DECIMAL.match(_plain_digits(text)):
                out[i] = float(_plain_digits(text).replace(",", "."))
                continue
            number = _number_from_text(text)  # which reads grouped thousands and a typographic minus itself
            if number is not None:
                out[i] = number
    return out


def is_no_value_word(value) -> bool:
    """Whether a cell is a word for "no value" (:data:`NO_VALUE_WORDS`: ``pending``, ``hemolyzed``, ``unknown``)."""
    return isinstance(value, str) and value.strip().lower() in NO_VALUE_WORDS


def unreadable_mask(values) -> np.ndarray:
    """Which of a column's distinct ``values`` are text that reads neither as a number nor as missing (``pending``)."""
    values = np.asarray(values, dtype=object)
    return np.isnan(_parse_numbers(values)) & ~np.array([is_missing_marker(v) for v in values], dtype=bool)


def numeric_values(series: pd.Series, column: str, *, scoring: bool = False) -> np.ndarray:
    """The column as floats, NaN where missing; band labels (``[70-80)``) read as their lower bound.

    Text results among the numbers are read as missing, as :func:`read_column` says in its reason:
    a lab's "no result" words (``pending``, ``hemolyzed``: :data:`NO_VALUE_WORDS`) at any share,
    and any other text on at most ``1 - NUMERIC_SHARE`` of the other non-missing cells.
    ``scoring=True`` is a fitted model reading new patients: the advice names the cells to correct
    (a column the model compares as numbers cannot be read as categories any more).

    Raises
    ------
    DataError
        If more non-missing values than that are not numbers.
    """
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype("float64").to_numpy(dtype=float, na_value=np.nan)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    uniques = np.asarray(uniques, dtype=object)
    parsed = _parse_numbers(uniques)
    marker = np.array([is_missing_marker(v) for v in uniques], dtype=bool)
    status = np.array([is_no_value_word(v) for v in uniques], dtype=bool)
    bad = np.isnan(parsed) & ~marker & ~status
    if bad.any():
        counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
        present, n_bad = int(counts[~marker & ~status].sum()), int(counts[bad].sum())
        if n_bad > (1 - NUMERIC_SHARE) * max(present, 1):
            if scoring:
                raise DataError(
                    f"Column '{column}' holds text where the model compares numbers: {_examples(uniques[bad])} "
                    f"({n_bad:,} of {present:,} patient{'s' if present != 1 else ''} with a value): correct those "
                    "cells, or leave them empty to score those patients with the value missing")
            raise DataError(
                f"Column '{column}' is numeric but has non-numeric values such as "
                f"{_examples(uniques[bad])} ({100 * n_bad / max(present, 1):.0f}% of its values): clean "
                "them, mark them missing, or read the column as categories"
            )
    parsed[marker | status | bad] = np.nan
    values = np.full(len(series), np.nan)
    present = codes >= 0
    values[present] = parsed[codes[present]]
    return values


def _as_truth(value) -> bool | None:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Real):
        return {0.0: False, 1.0: True}.get(float(value))
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        try:
            return {0.0: False, 1.0: True}.get(float(word))
        except ValueError:
            return None
    return None


def is_flag(value, n_missing: int, n: int) -> bool:
    """Whether a column holding the one value ``value`` on some rows and blanks on the others (``n_missing`` of ``n``)
    reads as a flag, as checkbox exports write findings: ``X``, ``Y``, ``Yes``, ``1`` or ``✓`` where present, blank
    where not.  A yes-like value or a short mark that is not a number, present and blank each on at least 1% of rows
    (a single number such as 0.01 among blanks is a lab, not a flag)."""
    if not n or not n_missing or min(n_missing, n - n_missing) < (1 - NEAR_CONSTANT_SHARE) * n:
        return False
    if _as_truth(value) is True:
        return True
    return isinstance(value, str) and 0 < len(value.strip()) <= 20 and _as_truth(value) is None and (
        pd.isna(pd.to_numeric(value.strip(), errors="coerce")))


def boolean_values(series: pd.Series, column: str) -> np.ndarray:
    """Which cells say yes (True, 1, "yes", "true", "y" in any case); missing cells are False.

    Raises
    ------
    DataError
        If a non-missing value is not yes/no-like.
    """
    missing = missing_mask(series)
    present = series[~missing]
    yes, bad = [], []
    for value in _distinct(present):
        truth = _as_truth(value)
        if truth is None:
            bad.append(value)
        elif truth:
            yes.append(value)
    if bad:
        raise DataError(f"Column '{column}' should hold yes/no values but has {_examples(bad)}: "
                        "clean them or mark them missing")
    return series.isin(yes).to_numpy(dtype=bool) & ~missing


def code_label(value) -> str:
    """A code as compared: the label, upper-cased (``v57`` -> ``V57``; ``428.0`` stays ``428.0``)."""
    return category_label(value).upper()


#: What joins the codes of one cell in a column of code lists (``043|039.55``, ``I50.9; E11.65``, ``I10, E11.9``).
CODE_LIST_SEPARATORS = re.compile(r"\s*[|;,]\s*")


def listed_codes(value) -> tuple[str, ...]:
    """The codes of one cell of a code list, as compared (:func:`code_label`), each once, in order.

    ``"I50.9; e11.65|I50.9"`` -> ``("I50.9", "E11.65")``; a single code is a list of one.
    """
    codes = (part.strip().upper() for part in CODE_LIST_SEPARATORS.split(category_label(value)))
    return tuple(dict.fromkeys(code for code in codes if code))


def code_prefixes(label: str) -> list[str]:
    """The groups a code belongs to, most specific first: ``250.83`` -> ``250``, ``25``; ``V57`` -> ``V57``, ``V5``, ``V``.

    The stem is the part before the dot (the ICD category); its prefixes down to
    two characters are groups (``42`` = 420-429), and a leading letter alone is
    one too (``V`` = supplementary codes, ``I`` = ICD-10 circulatory).
    """
    stem = label.split(".")[0]
    prefixes = [stem[:k] for k in range(len(stem), 1, -1)]
    if stem[:1].isalpha():
        prefixes.append(stem[:1])
    return prefixes


def spread_like_a_measurement(values) -> bool:
    """Whether distinct whole numbers are spread like a measurement rather than like record numbers.

    Record numbers (sequential, or drawn at random from a range) are spread evenly over
    ``[min, max]``; charges in whole dollars or a length of stay in minutes crowd where most
    patients are, with a long tail.  The Kolmogorov-Smirnov distance ``D`` between the values and
    the uniform distribution on their range tells them apart: a measurement when there are at least
    ``MIN_MEASUREMENT_VALUES`` values and ``D >= max(MEASUREMENT_SPREAD, 1.95 / sqrt(m))`` (1.95:
    the test's 0.1% critical value, so record numbers drawn at random pass only by a rare chance).
    """
    v = np.sort(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    m = len(v)
    if m < MIN_MEASUREMENT_VALUES or v[-1] == v[0]:
        return False
    u = (v - v[0]) / (v[-1] - v[0])
    distance = max(float(np.max(np.arange(1, m + 1) / m - u)), float(np.max(u - np.arange(m) / m)))
    return distance >= max(MEASUREMENT_SPREAD, 1.95 / math.sqrt(m))


def has_code_name(name: str) -> bool:
    """``diag_1``, ``icd10``, ``proc_code``, ``DRG``: a name that says "codes" (and not a count such as ``diag_count``,
    nor a measurement such as ``drg_weight``, ``zip_median_income`` or ``Months_from_Diagnosis``, ``diagtime``).

    Such a column is read as codes even when every code is a number (ICD-9 ``250.83``, procedure
    ``36.06``), and :func:`frl_engine.io.read_table` keeps its cells as text (``038`` is not ``38``).
    """
    name = str(name).strip()
    return (bool(_CODE_NAME.search(name)) and not _COUNT_NAME.search(name) and not _MEASURE_NAME.search(name)
            and not _MEASURE_CAMEL.search(name) and not _DURATION_END.search(name))


def has_nominal_name(name: str) -> bool:
    """``admission_type_id``, ``ward``, ``discharge_disposition``, ``hospital``: a name that says "category", so its
    whole numbers are labels (ward 12 is not "ward >= 7").

    A name that also says "how long" or "how many" is a quantity: ``time_in_hospital`` (days), ``hospital_los``,
    ``clinic_visits``, ``number_of_wards`` and ``insulin_units`` keep their thresholds; a last word that names a
    category wins over that (``stay_type``, ``length_group``).
    """
    name = str(name).strip()
    if _NOMINAL_LAST.search(name) or _NOMINAL_LAST_CAMEL.search(name):
        return True
    if not _NOMINAL_NAME.search(name):
        return False
    return not any(pattern.search(name) for pattern in (_COUNT_NAME, _MEASURE_NAME, _MEASURE_CAMEL, _QUANTITY_NAME,
                                                          _QUANTITY_CAMEL))


# What a follow-up ends with: the outcome, or the end of observation (``time_to_death``, ``days_until_relapse``).
_FOLLOW_UP_ENDS = (r"(?:death|event|relapse|recurrence|progression|failure|censor|censoring|last_?follow_?up|"
                   r"last_?contact|end_?of_?follow_?up|outcome|readmission)")
_UNIT = r"(?:_?(?:days|months|years|weeks|d|m|y|mo|yrs))?"
_FOLLOW_UP_NAME = re.compile(
    r"^(?:(?:time|futime|fu|fup|fu_?time|follow_?up|follow_?up_?(?:time|period|length)|last_?follow_?up"
    r"|length_?of_?follow_?up|lenfol|survival|survival_?time|surv|surv_?time|[a-z]{1,2}_?time|time_?\d{1,3}|tdeath"
    r"|event_?t"
    r"|(?:os|pfs|dfs|efs|rfs|ttp|ttr|tte|t2e)(?:_?time)?|(?:overall|progression_?free|disease_?free|event_?free"
    r"|recurrence_?free|relapse_?free|metastasis_?free)_?survival(?:_?time)?|time_?on_?study|study_?time"
    r"|time_?in_?study|(?:pg|prog|progression)_?time|tstop|tstart|stop)" + _UNIT
    + r"|survival_?in_?(?:days|months|years)"
    r"|(?:time|days|months|years|weeks)_?(?:to|until|till)_?" + _FOLLOW_UP_ENDS
    + r"|time_?(?:of_?)?" + _FOLLOW_UP_ENDS
    + r"|(?:censor(?:ing)?|event|death|relapse|recurrence|obs|observation)_?(?:time|days|months|years))$")


def has_follow_up_name(name: str) -> bool:
    """``time``, ``futime``, ``lenfol``, ``survival_time``, ``days_to_death``, ``os_months``...: a name that says
    "time until the outcome or the end of follow-up" (survival data), as do one letter and ``time`` (Rotterdam's
    ``dtime`` and ``rtime``, to death and to relapse) and ``time`` with a number (WCGS's ``time169``).
    ``time_in_hospital``, ``diagtime`` and ``time_to_antibiotics`` are not: they are known while the patient is
    seen."""
    return bool(_FOLLOW_UP_NAME.match(_name_key(name)))


def _name_key(name) -> str:
    """A column name as the name patterns read it: lower case, spaces, dots and dashes as ``_``."""
    return re.sub(r"[\s.\-]+", "_", str(name).strip().lower())


#: Whole names of a column that records an outcome: an event after the patient is seen (R's Rotterdam table holds
#: ``recur`` beside ``death``; survival tables hold ``status``, ``fstat``, ``delta``).
_OUTCOME_NAMES = frozenset({"recur", "recurred", "recurrence", "relapse", "relapsed", "death", "dead", "died",
                            "deceased", "dth", "mortality", "progression", "progressed", "pstat", "metastasis_event",
                            "vital_status", "vitalstatus", "vstatus", "fstat", "censor", "censored", "cens",
                            "censoring", "readmitted", "readmission", "survived"})
#: Names that record an outcome only when their values are codes or outcome words (``status`` 0/1/2, ``event``
#: yes/no), not when they are words of their own (an encounter's status, ``inpatient`` / ``outpatient``).
_CODED_OUTCOME_NAMES = frozenset({"status", "event", "outcome", "delta"})


def has_outcome_name(name: str, labels=()) -> bool:
    """Whether a column of a few values is named like an outcome (``recur``, ``death``, ``fstat``; ``status`` or
    ``event`` when its values are numbers or outcome words): such a column beside the outcome is a second outcome,
    known only after the patient is seen (:data:`LATER_OUTCOME_REASON`)."""
    key = _name_key(name)
    if key in _OUTCOME_NAMES:
        return True
    if key not in _CODED_OUTCOME_NAMES:
        return False
    from .io import plain_word, _EVENTS, _NO_EVENTS  # io imports this module

    return all(_is_plain_number(str(label)) or plain_word(label) in _EVENTS | _NO_EVENTS for label in labels)


#: Why a column named like a follow-up time is left out (:func:`has_follow_up_name`).
FOLLOW_UP_REASON = ("named like a follow-up time (until the outcome or the end of follow-up): known only afterwards, "
                    "so a rule on it could not be used when a patient is seen; left out (if it is known then, declare "
                    "it numeric to use it)")


#: Why a column named like an outcome, beside the outcome, is left out (:func:`has_outcome_name`).
LATER_OUTCOME_REASON = ("named like an outcome (an event such as a relapse or a death): known only after the patient "
                        "is seen, so a rule on it could not be used then; left out (if it is known then, give it a "
                        "type to use it)")


#: A name that says "identifier" and nothing more (R's ``id``, ``ID``, ``subjid``): a patient's, when it repeats a few
#: times (:func:`repeated_generic_id`).
GENERIC_ID_NAME = re.compile(r"^(id|subj|subjid|subject|subject_?id|patient|ident)$", re.IGNORECASE)


def repeated_generic_id(name: str, n_values: int, n_rows: int) -> bool:
    """A column named only ``id`` (:data:`GENERIC_ID_NAME`) whose values repeat a few times each: at least 20 of
    them and at most 20 rows each on average (R's colon, cgd, bladder: a patient's rows), not an ``id`` of a few
    sites. The reader leaves it out and the cross-validation folds keep its rows together
    (:func:`frl_engine.folds.patient_groups`)."""
    return bool(GENERIC_ID_NAME.match(str(name).strip())) and 20 <= n_values < n_rows <= 20 * n_values


def has_identifier_name(name: str) -> bool:
    """``PatientID``, ``patient_id``, ``patient_nbr``, ``MRN``, ``record_no``...: a name that says "identifier"."""
    name = str(name).strip()
    return bool(_ID_WORDS.search(name) or _ID_CAMEL.search(name))


# --------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnReading:
    """How one column is read, and why.

    Attributes
    ----------
    name : str
    kind : str
        One of :data:`ITEM_KINDS` (it makes items) or :data:`SKIPPED_KINDS`.
    reason : str
        Why, in words (``"integer labels (8 values) named like a code"``).
    missing_share : float
        Fraction of rows missing (markers included).
    n_levels : int
        Distinct non-missing values.
    top_share : float
        Fraction of rows holding the most common value (missing counts as one).
    examples : str
        A few values, as they appear.
    declared : bool
        The user chose the kind (``column_kinds``), rather than the inference.
    text_as_missing : str
        For a numeric column, the text cells read as missing (``"15.9% text such as 'TNP'"``), else "".
    number_codes : str
        For a numeric column, the numbers that look like codes for not known (:func:`number_codes`: ``"999 on
        160 rows, far from its other values, 18 to 94"``), else "".  They are still
        read as numbers; the fit says so.
    flag : bool
        A checkbox column (:func:`is_flag`: ``X`` where a finding is present, blank where not), read as a boolean
        or a one-level category whose blanks mean no.
    outside_thresholds : str
        For a numeric column with the user's thresholds, those at or below its smallest value or above its
        largest (``"200 (its values are 18 to 94)"``): their items hold every patient or none, so they make no
        rule (often a typo, 600 for 60); the fit says so.  Else "".
    text_among_numbers : str
        For a column read as text labels although most of its cells are numbers (an age written ``seventy`` on a
        third of the rows): the text, ``"'seventy' on 139 of 418 rows"``; its numbers then meet no threshold.
    unknown_unit : str
        For a column of text labels that are numbers written with one unit not in :data:`UNITS`
        (``"6.6 widgets/L"``), that unit; else "".  The fit says to write them as plain numbers.
    """

    name: str
    kind: str
    reason: str
    missing_share: float
    n_levels: int
    top_share: float
    examples: str = ""
    declared: bool = False
    text_as_missing: str = ""
    number_codes: str = ""
    flag: bool = False
    outside_thresholds: str = ""
    unknown_unit: str = ""
    text_among_numbers: str = ""

    @property
    def used(self) -> bool:
        """Whether the column makes items."""
        return self.kind in ITEM_KINDS

    def to_dict(self) -> dict:
        return {"column": self.name, "kind": self.kind, "used": self.used, "reason": self.reason,
                "missing_share": round(self.missing_share, 4), "levels": self.n_levels,
                "top_share": round(self.top_share, 4), "examples": self.examples, "declared": self.declared}


def canonical_kind(kind: str, column: str = "") -> str:
    """A kind the user typed, as the engine names it (``"category"`` -> ``"categorical"``).

    Raises
    ------
    DataError
        For a word that is no kind.
    """
    word = str(kind).strip().lower()
    word = KIND_ALIASES.get(word, word)
    if word not in ITEM_KINDS + ("identifier",):
        where = f" for column '{column}'" if column else ""
        raise DataError(f"Unknown column kind {kind!r}{where}: use one of numeric, categorical, boolean, code, "
                        "nominal, code_list, or identifier (to leave it out)")
    return word


def _looks_like_codes(labels: list[str], name: str, n_levels: int) -> bool:
    """Hierarchical codes: most distinct values shaped like ICD/ATC codes, with letters or dots, or a code-like name."""
    shaped = [lab for lab in labels if _CODE.match(lab.upper())]
    named = has_code_name(name)
    if len(shaped) < 0.9 * len(labels) or n_levels < (10 if named else MIN_CODE_LEVELS):
        return False
    lettered = sum(1 for lab in shaped if any(ch.isalpha() for ch in lab))
    dotted = sum(1 for lab in shaped if "." in lab)
    return lettered > 0 or dotted >= 0.1 * len(shaped) or named


_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
# Dates with the month's name: 01-Jan-2020, 01JAN2020 (SAS), 01-JAN-20 (Oracle), 1 January 2020, Jan 1, 2020.
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_TIME = r"([ T:]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(\s?[ap]\.?m\.?)?)?"
_DATE_WORDS = re.compile(r"^(\d{1,2}[-\s/.]?" + _MONTH + r"[-\s/.,]*\d{2,4}|" + _MONTH + r"\s+\d{1,2}(st|nd|rd|th)?,?\s+\d{4})"
                         + _TIME + "$", re.IGNORECASE)


_TIME_OF_DAY = re.compile(r"^\d{1,2}:\d{2}(:\d{2})?(\s?[AaPp]\.?[Mm]\.?)?$")


# Two numbers in one cell: a blood pressure (120/80, 135/85 mmHg), a visual acuity (20/40).
_NUMBER_PAIR = re.compile(r"^\d{1,3}(\.\d+)?\s*/\s*\d{1,3}(\.\d+)?(\s*mm\s?hg)?$", re.IGNORECASE)


def _mostly(pattern: re.Pattern, labels: list[str]) -> bool:
    """Whether at least 90% of the first 200 distinct values match ``pattern``."""
    sample = labels[:200]
    return bool(sample) and sum(1 for lab in sample if pattern.match(lab)) >= 0.9 * len(sample)


def _looks_like_times(labels: list[str]) -> bool:
    """Times of day such as 14:35, 08:05:00 or 2:30 PM on at least 90% of the distinct values."""
    return _mostly(_TIME_OF_DAY, labels)


def _looks_like_number_dates(parsed: np.ndarray) -> bool:
    """Whole numbers that are all dates written as YYYYMMDD (20210102), as many hospital systems export them."""
    if len(parsed) < 2 or not np.all(np.isfinite(parsed)) or not np.all(parsed == np.round(parsed)):
        return False
    values = parsed.astype(np.int64)
    years, months, days = values // 10_000, values // 100 % 100, values % 100
    return bool(np.all((years >= 1900) & (years <= 2100) & (months >= 1) & (months <= 12) & (days >= 1)
                       & (days <= 31)))


#: A name that says "a date or a time stamp": admit_date, AdmitDate, discharge_dt, DOB, Aufnahmedatum, event_timestamp.
_DATE_WORD = re.compile(r"(^|[_\s.\-])(date|datum|fecha|dt|dttm|datetime|timestamp|dob)($|[_\s.\-])|datum$",
                        re.IGNORECASE)
_DATE_CAMEL = re.compile(r"[a-z](Date|Datum|DT|Dttm|Timestamp)$")
#: Excel's serial days (1 = 1900-01-01) of 1950 to 2050, Unix seconds and milliseconds of 1980 to 2050.
_SERIAL_DATE_RANGES = ((18_264, 54_789), (3.15e8, 2.53e9), (3.15e11, 2.53e12))


def _looks_like_serial_dates(name: str, parsed: np.ndarray) -> str | None:
    """What the numbers of a column named like a date are (Excel serial days, Unix seconds or milliseconds), else None.

    Only a date's name decides: 44927 is an Excel date in ``admit_date`` and a charge in ``total_charge``.
    """
    if not (_DATE_WORD.search(name) or _DATE_CAMEL.search(name)) or len(parsed) < 2:
        return None
    finite = parsed[np.isfinite(parsed)]
    if not len(finite):
        return None
    for (low, high), what in zip(_SERIAL_DATE_RANGES, ("Excel serial days", "seconds since 1970",
                                                       "milliseconds since 1970")):
        if finite.min() >= low and finite.max() <= high:
            return what
    return None


def _looks_like_dates(labels: list[str]) -> bool:
    """Text such as 2021-03-04, 04/03/2021, 2021-03-04 10:30, 04-Mar-2021, 04MAR2021 or Mar 4, 2021 on at least 90%
    of the distinct values, whichever way each is written (an export that joined systems mixes 2021-03-04, 04.03.2021
    and 04 Mar 2021 in one column)."""
    sample = labels[:200]
    return bool(sample) and sum(1 for lab in sample if _DATE.match(lab) or _DATE_WORDS.match(lab)) >= 0.9 * len(sample)


#: Numbers that exports write for "not known" (999, 9999, -9, -99 ...): all nines, positive or negative.
_ALL_NINES = frozenset(float(10 ** k - 1) for k in range(1, 7))
#: A code must be on at least this many rows, and the other numbers on at least CODE_MIN_OTHERS.
CODE_MIN_ROWS = 3
CODE_MIN_OTHERS = 20


#: A name that says "when, in the follow-up": its 0 is the first visit, never a code (HSAUR3's schizophrenia2 month
#: 0, 2, 4 ...).
_SCHEDULE_NAME = re.compile(r"^(month|week|day|visit|year|time|period|cycle|wave|occasion|session)s?(_?(no|nr|number))?$",
                            re.IGNORECASE)


def number_codes(values, counts, name: str | None = None) -> list[tuple[float, int]]:
    """The numbers of a column that look like codes for "not known" rather than measurements.

    A code is a whole number written with nines only (9, 99, 999 ... or -9, -99 ...), held by at least
    :data:`CODE_MIN_ROWS` rows, and apart from the column's other numbers (at least :data:`CODE_MIN_OTHERS`
    rows of them): a positive code above every other value and at least twice the largest in size (age 999
    against 18 to 94; pain score 99 against 0 to 10); a negative code below every other value, which are
    all at least 0 or at most half its size (potassium -9 against 2.4 to 6.1).  Age 99 among ages up to 94,
    or a base excess of -9 among values from -15 to 10, are values, not codes.  And 0 where no other value is
    near it (:func:`_zero_code`: a BMI of 0), unless ``name`` says when in the follow-up (``month``, ``visit``:
    0 is the first visit).

    Parameters
    ----------
    values : array of float
        The column's distinct numbers (no NaN).
    counts : array of int
        Rows holding each.
    name : str, optional
        The column's name.

    Returns
    -------
    list of (code, rows)
        Largest first; empty when nothing looks like a code.
    """
    values = np.asarray(values, dtype=float)
    counts = np.asarray(counts)
    found = [] if name is not None and _SCHEDULE_NAME.match(str(name).strip()) else _zero_code(values, counts)
    candidate = np.array([abs(v) in _ALL_NINES for v in values], dtype=bool) & (counts >= CODE_MIN_ROWS)
    if not candidate.any() or counts[~candidate].sum() < CODE_MIN_OTHERS:
        return found
    others = values[~candidate & (values != 0.0 if found else True)]
    low, high = float(others.min()), float(others.max())
    size = max(abs(low), abs(high))
    found += [(float(v), int(c)) for v, c in zip(values[candidate], counts[candidate])
              if (v > 0 and v > high and v >= 2 * size) or (v < 0 and v < low and (low >= 0 or -v >= 2 * size))]
    return sorted(found, reverse=True)


def _zero_code(values: np.ndarray, counts: np.ndarray) -> list[tuple[float, int]]:
    """``[(0.0, rows)]`` when 0 looks like a code for not known, else ``[]``.

    Some exports write 0 where a measurement was not taken (a BMI, a blood pressure, a glucose of 0: the
    Pima diabetes table's zeros).  0 is such a code when every other value is positive, at least 2 (so a
    count starting at 1, or a lab of small values such as creatinine 0.4, is never suspected) and at least a
    tenth of their median (BMI 0 against 18.2 to 67.1; not an income of 0 against 3,000 to 300,000), with the
    row counts of :func:`number_codes`.
    """
    zero = values == 0.0
    if not zero.any() or counts[zero].sum() < CODE_MIN_ROWS or counts[~zero].sum() < CODE_MIN_OTHERS:
        return []
    others, weights = values[~zero], counts[~zero]
    if others.min() < 2.0:
        return []
    order = np.argsort(others)
    median = others[order][np.searchsorted(np.cumsum(weights[order]), weights.sum() / 2.0)]
    return [(0.0, int(counts[zero].sum()))] if others.min() >= 0.1 * median else []


def empty_number_codes(frame: pd.DataFrame, columns=None) -> tuple[pd.DataFrame, list[str]]:
    """The table with the numbers that look like codes for not known (:func:`number_codes`) emptied.

    Parameters
    ----------
    frame : DataFrame
    columns : iterable of str, optional
        The columns to look in (default: every column); only those that read as numeric
        (:func:`read_column`) and hold such codes change.

    Returns
    -------
    (DataFrame, list of str)
        A copy with those cells missing (the input is not changed), and what was emptied, one text per column
        (``"age = 999 (166)"``); the same frame and ``[]`` when there was nothing.  The copy's
        ``attrs["codes_read_as_missing"]`` records the codes per column (``{"age": [999.0]}``), which a model
        file keeps so that new patients are read the same way (:func:`empty_recorded_codes`).
    """
    record = {}
    for column in frame.columns if columns is None else columns:
        if isinstance(frame[column], pd.DataFrame):  # a repeated column name: read_table refuses those
            continue
        reading = read_column(str(column), frame[column])
        if reading.kind != "numeric" or not reading.number_codes:
            continue
        values = numeric_values(frame[column], column)
        distinct, counts = np.unique(values[~np.isnan(values)], return_counts=True)
        record[str(column)] = [code for code, _ in number_codes(distinct, counts, str(column))]
    out, done = empty_recorded_codes(frame, record)
    if done:
        out.attrs["codes_read_as_missing"] = {**(frame.attrs.get("codes_read_as_missing") or {}), **record}
    return out, done


def recorded_codes(recorded) -> dict[str, list[float]]:
    """``training.codes_read_as_missing`` of a model file (or the ``attrs`` entry :func:`empty_number_codes`
    writes) as ``{column: [code, ...]}``; ``{}`` when absent.  Anything else raises
    :class:`~frl_engine.errors.ModelFileError` naming the entry."""
    if recorded is None:
        return {}
    try:
        return {str(column): [float(code) for code in codes] for column, codes in recorded.items()}
    except (AttributeError, TypeError, ValueError):
        raise ModelFileError(f"The model file is damaged: training.codes_read_as_missing must map each column to "
                             f"its codes (like {{\"age\": [999]}}), got {recorded!r}") from None


def empty_recorded_codes(frame: pd.DataFrame, recorded: dict) -> tuple[pd.DataFrame, list[str]]:
    """The table with the codes a model was fitted without (``training.codes_read_as_missing``: ``{"age": [999]}``)
    emptied in the columns it has, as at fit time: exactly those values, found or not by :func:`number_codes` in
    this table.  Returns the copy and what was emptied (``"age = 999 (154)"``), or the same frame and ``[]``;
    a damaged entry raises :class:`~frl_engine.errors.ModelFileError` (:func:`recorded_codes`)."""
    out, done = None, []
    for column, codes in recorded_codes(recorded).items():
        if column not in frame.columns or isinstance(frame[column], pd.DataFrame):
            continue
        try:
            values = numeric_values(frame[column], column)
        except DataError:  # not numbers here: validation says what is wrong with the column
            continue
        hit = np.isin(values, np.asarray(codes, dtype=float))
        if hit.any():
            out = frame.copy() if out is None else out
            out[column] = out[column].mask(hit)
            done.append(f"{column} = {', '.join(format_number(float(c)) for c in codes)} ({int(hit.sum()):,})")
    if out is None:
        return frame, []
    out.attrs = dict(frame.attrs)
    return out, done


def _mixes_text_and_numbers(values) -> bool:
    """Whether distinct values hold both text and numbers (``"250"`` and ``250``), booleans aside."""
    text = number = False
    for v in values:
        text = text or isinstance(v, str)
        number = number or (isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_)))
        if text and number:
            return True
    return False


def read_column(name: str, series: pd.Series, *, declared: str | None = None) -> ColumnReading:
    """Infer the kind of one column (or check the user's), with the reason.

    Parameters
    ----------
    name : str
    series : pandas.Series
    declared : str, optional
        The user's kind for this column (see :func:`canonical_kind`).

    Returns
    -------
    ColumnReading
    """
    n = len(series)
    if series.dtype == object and any(isinstance(v, (list, dict, set, tuple)) for v in series.head(1000)):
        # a cell holding a list or a record (JSON exports): not one value, and unhashable for pandas
        return ColumnReading(name=name, kind="unsupported", reason="lists or records in its cells: give one "
                             "value per cell (e.g. a column per item) to use it", missing_share=0.0,
                             n_levels=0, top_share=0.0, examples="", declared=declared is not None)
    missing = missing_mask(series)
    n_missing = int(missing.sum())
    present = series[~missing]
    codes, uniques = pd.factorize(present, use_na_sentinel=True)
    if present.dtype == object and _mixes_text_and_numbers(uniques):
        # two exports put together ("250" and 250): one value is one level, as the items read it (category_label)
        labels = np.array([category_label(v) for v in uniques], dtype=object)
        codes, uniques = pd.factorize(labels[codes], use_na_sentinel=True)
    counts = np.bincount(codes, minlength=len(uniques)) if len(uniques) else np.zeros(0, dtype=np.int64)
    n_levels = len(uniques)
    top = max(int(counts.max()) if n_levels else 0, n_missing)
    top_share = top / n if n else 1.0
    order = np.argsort(-counts, kind="stable")[:4]
    examples = ", ".join(category_label(uniques[i]) for i in order)
    base = dict(name=name, missing_share=n_missing / n if n else 0.0, n_levels=n_levels, top_share=top_share,
                examples=examples)

    if declared is not None:
        kind = canonical_kind(declared, name)
        return ColumnReading(kind=kind, reason="chosen by you", declared=True, **base)

    def reading(kind, reason):
        return ColumnReading(kind=kind, reason=reason, **base)

    dtype = series.dtype
    if n_levels == 0:
        return reading("empty", "no values")
    if (pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)
            or pd.api.types.is_complex_dtype(dtype) or isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype))):
        what = ("dates" if pd.api.types.is_datetime64_any_dtype(dtype) else
                "durations" if pd.api.types.is_timedelta64_dtype(dtype) else
                "periods" if isinstance(dtype, pd.PeriodDtype) else
                "intervals" if isinstance(dtype, pd.IntervalDtype) else "complex numbers")
        first = uniques[0]
        if isinstance(first, pd.Timestamp) and first == first.normalize():   # a date without its midnight
            first = first.strftime("%Y-%m-%d")
        example = f" such as '{category_label(first)}'"
        return reading("unsupported", f"{what}{example}: turn them into numbers (e.g. days since admission) to use "
                                      "them")
    if n_levels == 1:
        label = category_label(uniques[0])
        if is_flag(uniques[0], n_missing, n):
            # a checkbox export: 'X' (or Y, 1) where the finding is present, blank where it is not
            share = f"a flag: '{label}' on {100 * (n - n_missing) / n:.0f}% of rows, blank on the others"
            if _as_truth(uniques[0]) is True:
                return replace(reading("boolean", f"{share} (a blank matches no item)"), flag=True)
            return replace(reading("categorical", f"{share} (an item for it; a blank matches no item)"), flag=True)
        extra = " (and missing)" if n_missing else ""
        return reading("constant", f"a single value '{label}'{extra}: makes no item")

    if n_levels <= 4 and has_outcome_name(name, [category_label(u) for u in uniques]):
        # a second outcome beside the one chosen (Rotterdam's recur beside death): a list on it reads "IF recur"
        return reading("unsupported", LATER_OUTCOME_REASON)
    if isinstance(dtype, pd.CategoricalDtype) and pd.api.types.is_numeric_dtype(dtype.categories.dtype):
        # the user said these numbers are labels (X["ivdrug"].astype("category")): never thresholds on them
        return reading("categorical", f"numbers kept as a pandas category ({n_levels} values): read as labels, an "
                                      "item per frequent value, never thresholds")
    # Is the column made of numbers (or number-like text, or bands such as [70-80))?
    uniques_obj = np.asarray(uniques, dtype=object)
    if pd.api.types.is_bool_dtype(dtype):
        parsed = uniques_obj.astype(float)
    elif pd.api.types.is_numeric_dtype(dtype):
        parsed = np.asarray(uniques, dtype=float)
    else:
        parsed = _parse_numbers(uniques_obj)
    text_cells = not pd.api.types.is_numeric_dtype(dtype)
    # Limits (<0.5, >150) among plain numbers are lab results at an assay's limit, not bands.  Without
    # plain numbers around them ("<30", ">30", "NO") "<x" is a label, not a number.
    is_limit = np.array([text_cells and isinstance(v, str) and bool(_LIMIT.match(v.strip())) for v in uniques_obj],
                        dtype=bool)
    plain = sum(1 for v in uniques_obj if not isinstance(v, str) or _is_plain_number(v) or _WITH_UNIT.match(v.strip()))
    if is_limit.any() and plain < is_limit.sum():
        below = np.array([isinstance(v, str) and bool(_BELOW_LIMIT.match(v.strip())) for v in uniques_obj], dtype=bool)
        parsed = np.where(below, np.nan, parsed)
        is_limit[:] = False
    limits = list(uniques_obj[is_limit])
    readable = ~np.isnan(parsed)
    # A lab's "no result" words (pending) are missing cells, not text: they do not count against the numbers.
    status = np.array([text_cells and is_no_value_word(v) for v in uniques_obj], dtype=bool)
    number_share = counts[readable].sum() / max(counts[~status].sum(), 1)
    text_share = counts[~readable].sum() / max(counts.sum(), 1)  # text read as missing, status words included
    bands = text_cells and not limits and any(
        isinstance(v, str) and parse_interval(v) is not None and _accounting_negative(v) is None
        for v in uniques_obj[readable])
    labels = _distinct_labels(uniques, uniques_obj)
    words = {lab.lower() for lab in labels}
    integers = readable.all() and np.all(parsed == np.round(parsed)) and not bands
    distinct_share = n_levels / max(n - n_missing, 1)

    if not readable.all() and _looks_like_dates(labels):
        return reading("unsupported", f"dates such as '{labels[int(order[0])]}': turn them into numbers (e.g. days "
                                      "since admission) to use them")
    if not readable.all() and _looks_like_times(labels):
        return reading("unsupported", f"times of day such as '{labels[int(order[0])]}': turn them into numbers "
                                      "(e.g. the hour) to use them")
    if not readable.all() and n_levels >= 20 and _mostly(_NUMBER_PAIR, labels):
        # as text, each pair is a level of its own (949 levels for 1,000 blood pressures): no item, silently (a few
        # pairs, such as visual acuities 20/20, 20/40, stay categories: each level can make an item)
        return reading("unsupported", f"pairs of numbers such as '{labels[int(order[0])]}' (a blood pressure?): split "
                                      "them into two numeric columns (e.g. systolic and diastolic) to use them")
    if readable.all() and _looks_like_number_dates(parsed[readable]):
        return reading("unsupported", f"dates written as numbers (YYYYMMDD) such as '{labels[int(order[0])]}': "
                                      "turn them into numbers (e.g. days since admission) to use them")
    serial = _looks_like_serial_dates(str(name), parsed[readable]) if readable.all() else None
    if serial:
        return reading("unsupported", f"dates stored as numbers ({serial}, such as '{labels[int(order[0])]}'): turn "
                                      "them into numbers that mean something (e.g. days since admission) to use them")
    if number_share >= NUMERIC_SHARE and has_follow_up_name(name):
        # survival data: the time to death or to the end of follow-up heads every list it is in (UCI/R pbc, whas500's
        # lenfol, flchain's futime), and no one knows it when the card is used
        return reading("unsupported", FOLLOW_UP_REASON)
    # Identifiers: a different value in nearly every row, or a patient/encounter number that repeats.
    textual_or_integer = integers or not readable.all()
    measurement_note = ""
    if n >= 20 and textual_or_integer and distinct_share >= IDENTIFIER_SHARE and n_levels >= 20:
        # Amounts written with a currency, a unit or grouped thousands ("$43,860", "72 kg", "49 517") are
        # measurements whatever their spread: no system writes record numbers that way.
        amounts = text_cells and 2 * sum(bool(_CURRENCY.match(lab) or _WITH_UNIT.match(lab) or _THOUSANDS.match(lab)
                                              or _SPACED_THOUSANDS.match(lab)) for lab in labels) > len(labels)
        if integers and not has_identifier_name(name) and amounts:
            measurement_note = (f" (a different value in {100 * distinct_share:.0f}% of rows, written as amounts "
                                "such as " + repr(labels[int(order[0])]) + ": a measurement, not record numbers)")
        elif (integers and not has_identifier_name(name)
                and spread_like_a_measurement(parsed)):
            # Whole-dollar charges, minutes of stay: a different value in nearly every row, yet a measurement.
            measurement_note = (f" (a different value in {100 * distinct_share:.0f}% of rows, spread like a "
                                "measurement, not like record numbers)")
        elif integers and not has_identifier_name(name) and (_MEASURE_LAST.search(name) or _MEASURE_CAMEL.search(name)):
            # total_charges, cost, los_minutes: the name ends saying "how much", whatever the spread (charges
            # drawn evenly over a range look like record numbers to the spread test); charge_code, payment_ref,
            # cost_center do not
            measurement_note = (f" (a different value in {100 * distinct_share:.0f}% of rows, named like a "
                                "measurement, not like record numbers)")
        else:
            return reading("identifier", f"a different value in {100 * distinct_share:.0f}% of rows: an identifier, "
                                         "left out (declare a kind to use it)")
    if has_identifier_name(name) and textual_or_integer and n_levels > MAX_NOMINAL_LEVELS and (
            _PERSON_WORDS.search(name) or _RECORD_NAME.search(name) or distinct_share >= 0.5):
        return reading("identifier", f"named like an identifier, {n_levels:,} values (a repeated patient or "
                                     "record number): left out")
    if textual_or_integer and repeated_generic_id(name, n_levels, n - n_missing):
        # R's bladder: 340 rows of 85 patients under "id", which rules used ("id >= 64") while the folds grouped by it
        return reading("identifier", f"named like an identifier, {n_levels:,} values each on a few rows (a patient's "
                                     "rows, which the cross-validation keeps together): left out")
    if top_share >= NEAR_CONSTANT_SHARE:
        value = "missing" if n_missing == top else f"'{labels[int(np.argmax(counts))]}'"
        share = f"{100 * top_share:.1f}% of rows" if top == n or 100 * top_share < 99.95 else f"{top:,} of {n:,} rows"
        return reading("near-constant", f"{value} on {share}: makes no item")
    yes_no = words <= (TRUE_WORDS | FALSE_WORDS) and words & TRUE_WORDS and words & FALSE_WORDS
    if (n_levels == 2 and not pd.api.types.is_bool_dtype(dtype) and set(parsed[readable].tolist()) == {0.0, 1.0}
            and _TWO_SIDED_NAME.match(str(name).strip())):
        # sex 0/1 is no finding that is present or absent: as a flag, a rule read "sex AND etype = 2" (R's colon)
        return reading("categorical", "0 and 1 under a name with two sides (sex, gender): read as the values 0 and "
                                      "1, as which is which only the codebook says")
    if (n_levels == 2 and (pd.api.types.is_bool_dtype(dtype) or set(parsed[readable].tolist()) == {0.0, 1.0})) or (
            yes_no and not pd.api.types.is_numeric_dtype(dtype)):
        return reading("boolean", "two values, yes/no-like")
    n_numbers = int(len(np.unique(parsed[readable])))
    # Text among mostly numbers: codes when that text is code-shaped (V57, E909 among 250.83, 428), a
    # measurement with a few text results when it is words (pending, hemolyzed among 0.83, 1.25).
    unreadable = [labels[i] for i in np.flatnonzero(~readable)]
    coded_text = any(_CODE.match(lab.upper()) for lab in (labels[i] for i in np.flatnonzero(~readable & ~status)))
    if number_share == 1 or (number_share >= NUMERIC_SHARE
                             and not (coded_text and _looks_like_codes(labels, name, n_levels))):
        # a name that says codes (drg, icd9, cpt) never gets thresholds, however few its values (a cohort export
        # of three heart-failure DRGs, 291 / 292 / 293, is not "drg >= 292")
        named_code = has_code_name(name)
        if integers and 3 <= n_levels <= MAX_NOMINAL_LEVELS and (has_nominal_name(name) or named_code):
            return reading("nominal", f"whole-number labels ({n_levels} values) named like a code: read as "
                                      "categories, never thresholds")
        if named_code and ((integers and n_levels > MAX_NOMINAL_LEVELS) or (not integers and n_levels >= 3)):
            return reading("code", f"numbers named like codes, such as {', '.join(labels[i] for i in order[:3])} "
                                   f"({n_levels:,} values): read as codes with groups, never thresholds")
        if n_numbers == 2 and text_share == 0:
            return reading("categorical", "two values")
        if bands:
            return reading("numeric", "bands such as "
                           f"'{next(v for v in uniques_obj if isinstance(v, str) and parse_interval(v) is not None)}'"
                           ", read by their lower bound")
        n_text = int(counts[~readable].sum())   # below 0.05% a share would read 0.0%: one 'pending' in 3,000 rows
        share = (f"{100 * text_share:.1f}%" if text_share >= 0.0005 else
                 f"{n_text:,} cell{'' if n_text == 1 else 's'} of")
        unread = f"{share} text such as {_examples(unreadable, 2)}" if text_share else ""
        junk = f" ({unread}: read as missing)" if unread else ""
        if limits:
            junk += f"; {', '.join(repr(v.strip()) for v in limits[:3])} read at that limit"
        units = sorted({m.group(2) for m in (_WITH_UNIT.match(lab) for lab in labels) if m} if text_cells else set())
        if len({same_unit(unit) for unit in units}) > 1:
            # 46 mg/dL is hypoglycaemia and 6.1 mmol/L is not: one threshold cannot compare both.
            return reading("unsupported", f"numbers written in different units ({', '.join(map(repr, units[:4]))}): "
                                          "convert them to one unit to use the column")
        if units:
            junk += f"; written with the unit{'s' if len(units) > 1 else ''} {', '.join(map(repr, units[:3]))}"
        found = number_codes(parsed[readable], counts[readable], name)
        if found:
            rest = parsed[readable][~np.isin(parsed[readable], [code for code, _ in found])]
            shown = ", ".join(f"{format_number(code)} on {rows:,} rows" for code, rows in found)
            apart = f"{shown}, far from its other values, {format_number(rest.min())} to {format_number(rest.max())}"
            codes_note = apart
            junk += f"; {apart} (a code for not known? read as a number unless those cells are emptied)"
        numeric = reading("numeric", f"numbers, {n_levels:,} values{junk}{measurement_note}: thresholds at rounded "
                                     "quantiles")
        if found:
            numeric = replace(numeric, number_codes=codes_note)
        if text_share > 0:  # the text results read as missing count as missing
            unread_cells = int(counts[~readable].sum())
            numeric = replace(numeric, missing_share=(n_missing + unread_cells) / n, text_as_missing=unread)
        return numeric
    listed = [lab for lab in labels if _CODE_LIST.match(lab)]
    if n_levels >= 20 and 2 * len(listed) > n_levels and all(
            _CODE.match(part) for lab in listed[:200] for part in listed_codes(lab)):
        # "043|039.55|V45": several diagnoses in one cell; an item per whole list would match nobody, so an item
        # holds when the cell's list holds a frequent code or a code of a frequent group.
        return reading("code list", f"lists of codes such as '{listed[0]}' (several codes in one cell): items for "
                                    "frequent codes and code groups, each true when the list holds one")
    if _looks_like_codes(labels, name, n_levels):
        return reading("code", f"codes such as {', '.join(labels[i] for i in order[:3])} ({n_levels:,} values): "
                               "items for frequent codes and code groups")
    unit = _unknown_unit(labels) if n_levels >= 20 else None
    if unit:
        # "7.2 widgets/L": each number a level of its own, few reaching the support; "group rare values" was the
        # only advice, wrong for a measurement
        example = next((labels[i] for i in order if labels[i].strip().casefold().endswith(unit.casefold())),
                       labels[int(order[0])])
        return replace(reading("categorical", f"text labels ({n_levels:,} values): an item per frequent level; "
                                              f"numbers written with a unit not read here, {unit!r} (such as "
                                              f"'{example}'): to compare them with thresholds, write the column as "
                                              "plain numbers in one unit"), unknown_unit=unit)
    text_rows = int(counts[~readable & ~status].sum())
    if n_levels >= 20 and readable.any() and counts[readable].sum() >= text_rows:
        # most cells are numbers, but more text than a column of numbers holds (NUMERIC_SHARE): the numbers are
        # levels of their own and meet no threshold (an age written 'seventy' on a third of the rows)
        words = [labels[i] for i in order if not readable[i] and not status[i]]
        shown = ", ".join(repr(w) for w in words[:2]) + (" ..." if len(words) > 2 else "")
        said = f"{shown} on {text_rows:,} of {n - n_missing:,} rows"
        return replace(reading("categorical", f"text labels ({n_levels:,} values): an item per frequent level; "
                                              f"mostly numbers, but text such as {said}, too much for a column of "
                                              "numbers: correct or empty those cells to compare it with thresholds"),
                       text_among_numbers=said)
    return reading("categorical", f"text labels ({n_levels:,} values): an item per frequent level")


# A number followed by something that is not a number: "7.2 widgets/L", "3 tabs".
_NUMBER_THEN_TEXT = re.compile(r"^[-+]?\d+(?:[.,]\d+)?\s*([^\d\s,.;|][^,;|]{0,23})$")


def _unknown_unit(labels: list[str]) -> str | None:
    """The one word written after the numbers of at least 90% of a column's distinct labels (a unit
    :data:`UNITS` does not hold), or None."""
    found = [m.group(1).strip() for m in map(_NUMBER_THEN_TEXT.match, (lab.strip() for lab in labels)) if m]
    if len(found) < 0.9 * len(labels):
        return None
    words = pd.Series([w.casefold() for w in found]).value_counts()
    word = words.index[0]
    if words.iloc[0] < 0.9 * len(labels) or len(word) < 2 or word == "%" or word in {u.casefold() for u in UNITS}:
        return None   # "100 B" is a bed; "%" and "kg" are read (a column of them failing for another reason)
    return next(w for w in found if w.casefold() == word)


def read_columns(frame: pd.DataFrame, *, column_kinds: dict | None = None, exclude: Sequence[str] = ()) -> list[ColumnReading]:
    """:func:`read_column` for every column; excluded columns read as ``identifier`` with reason "excluded by you"."""
    kinds = dict(column_kinds or {})
    excluded = set([exclude] if isinstance(exclude, str) else exclude)
    readings = []
    for name in frame.columns:
        series = frame[name]
        if name in excluded:
            readings.append(ColumnReading(name=str(name), kind="identifier", reason="excluded by you",
                                          missing_share=float(missing_mask(series).mean()) if len(series) else 0.0,
                                          n_levels=int(series.nunique()), top_share=0.0, declared=True))
        else:
            readings.append(read_column(str(name), series, declared=kinds.get(name)))
    return readings


def looks_like_identifier(name: str, series: pd.Series) -> str | None:
    """Why a column is read as an identifier, or None (the one heuristic of :func:`read_column`)."""
    reading = read_column(str(name), series)
    return reading.reason if reading.kind == "identifier" else None
