"""Make the synthetic 30-day readmission table ``sample_data/readmission.csv``.

Run ``python sample_data/make_sample_data.py`` (or ``--out other.csv``) to
write it again; the output is the same byte for byte every time (fixed seed,
``numpy.random.Generator``).

The outcome ``Readmitted30d`` is drawn from a KNOWN falling rule list,
:data:`TRUE_LIST` (then :data:`DEFAULT_RISK` for everyone else), so a fitted
model can be checked against the truth. Its thresholds are ones the binarizer
produces from this table with its defaults (``Age >= 75`` is the rounded 75%
quantile of Age, ``PriorAdmissions >= 3`` that of PriorAdmissions), and each
rule covers well over 5% of the patients, so rule mining at the paper's
settings (5% support, 2 conditions) can find every one of them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from frl_engine.rules import Condition, Rule
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from frl_engine.rules import Condition, Rule

SEED = 20150509
N_PATIENTS = 3000
CSV_PATH = Path(__file__).with_name("readmission.csv")
OUTCOME = "Readmitted30d"

#: The list that generated the outcome, top first: (conditions joined by AND, readmission risk).
TRUE_LIST: tuple[tuple[tuple[Condition, ...], float], ...] = (
    ((Condition("BedSores", "is true"), Condition("NoShow", "is true")), 0.60),
    ((Condition("PriorAdmissions", ">=", 3),), 0.40),
    ((Condition("Age", ">=", 75), Condition("DischargeTo", "==", "home")), 0.25),
    ((Condition("PoorPrognosis", "is true"),), 0.18),
)
#: Risk of a patient matching none of the rules (the ELSE line).
DEFAULT_RISK = 0.05


def _yes_no(flags: np.ndarray) -> np.ndarray:
    return np.where(flags, "yes", "no")


def rule_positions(frame: pd.DataFrame) -> np.ndarray:
    """Which line of :data:`TRUE_LIST` each patient falls into (``len(TRUE_LIST)`` = ELSE).

    Parameters
    ----------
    frame : pandas.DataFrame
        The patients' table (at least the columns the list uses).

    Returns
    -------
    numpy.ndarray of int, shape (len(frame),)
    """
    position = np.full(len(frame), len(TRUE_LIST))
    for index in range(len(TRUE_LIST) - 1, -1, -1):
        position[Rule(TRUE_LIST[index][0]).evaluate(frame)] = index
    return position


def make_table(n_patients: int = N_PATIENTS, seed: int = SEED) -> pd.DataFrame:
    """The synthetic patients' table, outcome included.

    Parameters
    ----------
    n_patients : int, default 3000
    seed : int, default 20150509

    Returns
    -------
    pandas.DataFrame
        One row per patient; columns described in ``sample_data/README.md``.
    """
    rng = np.random.default_rng(seed)
    n = n_patients
    age = np.clip(np.rint(rng.normal(65.6, 14.0, n)), 18, 99).astype(int)
    old = age >= 75
    admission_type = rng.choice(["emergency", "urgent", "elective"], size=n, p=[0.60, 0.25, 0.15])
    length_of_stay = np.maximum(1, np.rint(rng.lognormal(np.log(4.0), 0.6, n))).astype(int)
    prior_admissions = rng.poisson(1.9, n)
    creatinine = np.round(rng.lognormal(np.log(1.0) + 0.005 * (age - 65), 0.3, n), 2)
    creatinine[rng.random(n) < 0.03] = np.nan  # a few lab results never came back
    places = ["home", "home care", "nursing facility", "rehab"]
    discharge_young = rng.choice(places, size=n, p=[0.55, 0.20, 0.10, 0.15])
    discharge_old = rng.choice(places, size=n, p=[0.42, 0.23, 0.22, 0.13])
    discharge_to = np.where(old, discharge_old, discharge_young)
    bed_sores = rng.random(n) < np.where(old, 0.30, 0.23)
    no_show = rng.random(n) < 0.30
    poor_prognosis = rng.random(n) < 0.15
    lives_alone = rng.random(n) < np.where(old, 0.40, 0.25)
    diabetes = rng.random(n) < 0.28

    frame = pd.DataFrame(
        {
            "PatientID": [f"P{100001 + i}" for i in range(n)],
            "Age": age,
            "AdmissionType": admission_type,
            "LengthOfStay": length_of_stay,
            "PriorAdmissions": prior_admissions,
            "Creatinine": creatinine,
            "DischargeTo": discharge_to,
            "BedSores": _yes_no(bed_sores),
            "NoShow": _yes_no(no_show),
            "PoorPrognosis": _yes_no(poor_prognosis),
            "LivesAlone": _yes_no(lives_alone),
            "Diabetes": _yes_no(diabetes),
        }
    )
    risks = np.array([risk for _, risk in TRUE_LIST] + [DEFAULT_RISK])
    readmitted = rng.random(n) < risks[rule_positions(frame)]
    frame[OUTCOME] = _yes_no(readmitted)
    return frame


def write_csv(path: Path | str = CSV_PATH) -> Path:
    """Write the table to ``path`` (Unix line ends, empty cell for missing)."""
    path = Path(path)
    make_table().to_csv(path, index=False, lineterminator="\n")
    return path


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per line of the true list: stated risk, patients captured and their observed readmission rate."""
    position = rule_positions(frame)
    event = frame[OUTCOME].eq("yes").to_numpy()
    names = [Rule(conditions).name for conditions, _ in TRUE_LIST] + ["(everyone else)"]
    risks = [risk for _, risk in TRUE_LIST] + [DEFAULT_RISK]
    return pd.DataFrame(
        {
            "rule": names,
            "stated_risk": risks,
            "patients": [int((position == i).sum()) for i in range(len(names))],
            "observed_rate": [float(event[position == i].mean()) for i in range(len(names))],
        }
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Write the synthetic 30-day readmission table.")
    parser.add_argument("--out", default=str(CSV_PATH), help=f"where to write it (default {CSV_PATH.name} here)")
    args = parser.parse_args(argv)
    path = write_csv(args.out)
    print(f"Wrote {path}")
    print(summary(pd.read_csv(path)).to_string(index=False))


if __name__ == "__main__":
    main()
