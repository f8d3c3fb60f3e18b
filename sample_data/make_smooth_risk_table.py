"""A small ward table whose death risk is smooth in age, creatinine and heart rate, not a rule list.

Real risk rises with age and with a lab value rather than jumping at one threshold.  Then many lists that
cut age and heart rate at neighbouring thresholds score within a nat or two of each other, and the MAP
list's basin is small: the search's hardest case among small tables (docs/search.md section 1, step 8).
The table has the traits of an export: a patient number, ``Yes``/``No`` outcome, and one of three ways of
writing it (``variant``):

- ``"percent"``: SpO2 written ``95%`` and charges ``$12,345``;
- ``"null"``: a ``Y``/``N``/``NULL`` diabetes column, and creatinine ``NULL`` in every 13th row;
- ``"euro"``: semicolons between fields and decimal commas.

usage: python sample_data/make_smooth_risk_table.py OUT.csv [--variant null] [--rows 3000] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

TARGET, EVENT = "Died", "Yes"
VARIANTS = ("percent", "null", "euro")


def make_smooth_risk_table(variant: str = "null", n_rows: int = 3000, seed: int = 0) -> bytes:
    """The table as a file's bytes (read it with ``frl_engine.io.read_table(data, "table.csv")``).

    The log odds of death are ``-3 + 0.04 (age - 50) + 1.2 [creatinine > 1.5] + 0.02 (heart rate - 90)``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    rng = np.random.default_rng(seed)
    age, creatinine = rng.integers(18, 95, n_rows), np.round(rng.lognormal(0, 0.4, n_rows), 2)
    heart_rate = rng.integers(50, 150, n_rows)
    risk = 1 / (1 + np.exp(-(-3 + 0.04 * (age - 50) + 1.2 * (creatinine > 1.5) + 0.02 * (heart_rate - 90))))
    died = rng.random(n_rows) < risk
    frame = pd.DataFrame({"Patient ID": np.arange(100000, 100000 + n_rows), "Age (years)": age,
                          "Creatinine": creatinine, "Heart rate": heart_rate,
                          "Sex": rng.choice(["M", "F"], n_rows), TARGET: np.where(died, EVENT, "No")})
    if variant == "euro":
        frame["Creatinine"] = frame["Creatinine"].map(lambda v: f"{v:.2f}".replace(".", ","))
        return frame.to_csv(sep=";", index=False).encode()
    if variant == "percent":
        frame["SpO2"] = [f"{v}%" for v in rng.integers(85, 100, n_rows)]
        frame["Charges"] = [f"${v:,}" for v in rng.integers(1000, 90000, n_rows)]
    else:
        frame["Diabetic"] = rng.choice(["Y", "N", "NULL"], n_rows, p=[0.3, 0.6, 0.1])
        frame["Creatinine"] = frame["Creatinine"].astype(object)
        frame.loc[::13, "Creatinine"] = "NULL"
    return frame.to_csv(index=False).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--variant", choices=VARIANTS, default="null")
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with open(args.out, "wb") as handle:
        handle.write(make_smooth_risk_table(args.variant, args.rows, args.seed))


if __name__ == "__main__":
    main()
