"""A synthetic encounter export whose outcome is logistic in its columns, not a planted falling rule list.

The raw export of ``make_raw_export.py`` draws its outcome from a falling rule list, which the
search finds in its first round of chains.  Real outcomes are not lists: each risk factor adds to the
log odds.  This export does that, with the traits of a hospital export (ICD-9 codes with V and E codes,
integer codes that are labels, Y/N and T/F flags, lab values with their units, thousands grouped by
spaces, medication columns mostly "No", encounter and patient numbers), so the cost of the search on
such data can be measured (``benchmarks/bench_logistic_export.py``).

usage: python sample_data/make_logistic_export.py OUT.csv [--rows 20000] [--seed 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

TARGET, EVENT = "readmitted", "Yes"
HEART_FAILURE = ("428", "428.0", "428.22", "428.9")


def _icd9_codes(rng: np.random.Generator, n_codes: int = 700) -> list[str]:
    codes = {"428", "250.01", "V45", "V57", "E878", "009", "038", "414", "786", "401.9"}
    while len(codes) < n_codes:
        kind = rng.random()
        if kind < 0.1:
            codes.add(f"V{rng.integers(1, 90):02d}")
        elif kind < 0.15:
            codes.add(f"E{rng.integers(800, 999):03d}")
        elif kind < 0.5:
            codes.add(f"{rng.integers(1, 999):03d}")
        else:
            codes.add(f"{rng.integers(1, 999):03d}.{rng.integers(0, 99)}")
    return sorted(codes)


def make_logistic_export(n_rows: int = 20_000, seed: int = 3) -> pd.DataFrame:
    """``n_rows`` encounters x 36 columns; ``readmitted`` is Yes with probability expit(linear predictor)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 95, n_rows)
    admission = rng.integers(1, 9, n_rows)
    ward = rng.choice([3, 7, 12], n_rows)
    diagnosis = rng.choice(_icd9_codes(rng), n_rows)
    heart = rng.random(n_rows) < 0.15
    diagnosis[heart] = rng.choice(HEART_FAILURE, heart.sum())
    diabetes = rng.random(n_rows) < 0.12
    diagnosis[diabetes] = rng.choice(["250.01", "250.02", "250.8", "250.83"], diabetes.sum())
    insulin = rng.choice(["Y", "N"], n_rows, p=[0.3, 0.7])
    creatinine = np.round(rng.lognormal(0, 0.5, n_rows), 2)
    log_odds = (-2.8 + 1.6 * (admission == 3) + 1.3 * np.isin(diagnosis, HEART_FAILURE) + 1.0 * (insulin == "Y")
                + 0.03 * (age - 60) + 0.9 * (ward == 12) + 0.8 * (creatinine > 1.5))
    readmitted = rng.random(n_rows) < 1 / (1 + np.exp(-log_odds))
    frame = pd.DataFrame({
        "encounter_id": rng.permutation(np.arange(10_000_000, 10_000_000 + 7 * n_rows, 7)),
        "patient_nbr": rng.integers(100_000, 100_000 + max(n_rows // 2, 1), n_rows),
        "age": age, "Sex": rng.choice(["M", "F"], n_rows), "admission_type_id": admission,
        "discharge_disposition_id": rng.integers(1, 30, n_rows), "ward": ward, "diag_1": diagnosis,
        TARGET: np.where(readmitted, EVENT, "No"), "insulin": insulin,
        "smoker": rng.choice(["T", "F"], n_rows, p=[0.25, 0.75]),
        "creatinine": [f"{c} mg/dL" for c in creatinine],
        "sodium": [f"{s:.1f} mmol/L" for s in rng.normal(139, 4, n_rows)],
        "o2sat": [f"{o}%" for o in rng.integers(80, 101, n_rows)],
        "los": [f"{d} days" for d in rng.integers(1, 30, n_rows)],
        "charges": [f"{c:,}".replace(",", " ") for c in rng.integers(500, 90_000, n_rows)],
        "crp": np.round(rng.lognormal(1.5, 1.2, n_rows), 3),
    })
    for j in range(8):
        frame[f"lab{j}"] = np.round(rng.lognormal(3, 0.5, n_rows), 1)
    for j in range(8):
        frame[f"med{j}"] = rng.choice(["No", "Steady", "Up", "Down"], n_rows, p=[0.8, 0.15, 0.03, 0.02])
    frame["num_procedures"] = rng.poisson(1.2, n_rows)
    frame["number_inpatient"] = rng.poisson(0.4, n_rows)
    frame["race"] = rng.choice(["Caucasian", "AfricanAmerican", "Hispanic", "Asian", "?"], n_rows,
                               p=[0.7, 0.18, 0.05, 0.03, 0.04])
    return frame


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    make_logistic_export(args.rows, args.seed).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
