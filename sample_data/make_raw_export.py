"""Make a realistic raw hospital export, shaped like the UCI diabetes readmission export.

The UCI "Diabetes 130-US hospitals for years 1999-2008" data set ships as
``diabetic_data.csv``: one row per inpatient encounter, 50 columns, ``?`` for
missing, ICD-9 codes as text, nominal integer codes, 23 medication columns that
are nearly all ``No``, and the outcome ``readmitted`` with the values ``NO``,
``>30`` and ``<30``. That is the kind of file users bring. This module makes a
synthetic file of the same shape (no real person is in it) whose event
``readmitted == "<30"`` was drawn from a KNOWN falling rule list,
:data:`TRUE_LIST`, so a fitted model can be checked against the truth.

Run ``python sample_data/make_raw_export.py --out export.csv [--rows N] [--seed S]``;
the same rows and seed give the same file byte for byte (``numpy.random.Generator``).

How the event is drawn
----------------------
Each encounter gets the risk of the first line of :data:`TRUE_LIST` whose
conditions all hold, else :data:`DEFAULT_RISK`, and ``<30`` is a Bernoulli
draw with that risk. One fact sits outside the list: an encounter that ended in
death (``discharge_disposition_id`` in :data:`EXPIRED_CODES`) is never
readmitted (``NO``). Among encounters that are not ``<30``, ``>30`` against
``NO`` follows a small logistic model of num_medications, time_in_hospital and
the visit counts, so the other columns carry some signal too.

Marginal frequencies follow the UCI export, except where a rule of the true
list needs more patients than the UCI file has (the discharge codes 22, 5, 28
and heart failure in ``diag_1`` among the old are more common here), so that
every rule covers well over 5% of the encounters and mining at the paper's
settings (support 5%) can find it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr

N_ROWS = 100_000
SEED = 0
OUTCOME = "readmitted"
EVENT = "<30"
MISSING = "?"

AGE_BINS = tuple(f"[{10 * i}-{10 * (i + 1)})" for i in range(10))
#: Age bins counted as "age >= 70".
OLD_AGE_BINS = AGE_BINS[7:]
#: Discharge dispositions meaning the patient died (never readmitted).
EXPIRED_CODES = (11, 19, 20, 21)
#: Discharge dispositions of the second rule: 22 rehab facility, 5 another inpatient care, 28 psychiatric hospital.
TRANSFER_CODES = (22, 5, 28)

MEDICATIONS = (
    "metformin", "repaglinide", "nateglinide", "chlorpropamide", "glimepiride", "acetohexamide", "glipizide",
    "glyburide", "tolbutamide", "pioglitazone", "rosiglitazone", "acarbose", "miglitol", "troglitazone",
    "tolazamide", "examide", "citoglipton", "insulin", "glyburide-metformin", "glipizide-metformin",
    "glimepiride-pioglitazone", "metformin-rosiglitazone", "metformin-pioglitazone",
)

COLUMNS = (
    "encounter_id", "patient_nbr", "race", "gender", "age", "weight", "admission_type_id",
    "discharge_disposition_id", "admission_source_id", "time_in_hospital", "payer_code", "medical_specialty",
    "num_lab_procedures", "num_procedures", "num_medications", "number_outpatient", "number_emergency",
    "number_inpatient", "diag_1", "diag_2", "diag_3", "number_diagnoses", "max_glu_serum", "A1Cresult",
    *MEDICATIONS, "change", "diabetesMed", OUTCOME,
)


@dataclass(frozen=True)
class TrueCondition:
    """One condition of the generating list.

    Parameters
    ----------
    column : str
    op : {">=", "in", "starts with"}
        ``>=`` compares a count with ``value``; ``in`` tests membership of the
        cell in the tuple ``value`` (codes or labels); ``starts with`` tests
        whether the text of the cell starts with any prefix in ``value``.
    value : int or tuple
    label : str
        How the condition reads.
    """

    column: str
    op: str
    value: object
    label: str

    def evaluate(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask, shape (len(frame),), of the rows meeting the condition."""
        cells = frame[self.column]
        if self.op == ">=":
            return (pd.to_numeric(cells, errors="coerce") >= self.value).to_numpy(dtype=bool)
        if self.op == "in":
            return cells.isin(list(self.value)).to_numpy(dtype=bool)
        if self.op == "starts with":
            return cells.astype(str).str.startswith(tuple(self.value)).to_numpy(dtype=bool)
        raise ValueError(f"unknown op {self.op!r}")


#: The list that generated the event ``readmitted == "<30"``, top first: (conditions joined by AND, risk).
TRUE_LIST: tuple[tuple[tuple[TrueCondition, ...], float], ...] = (
    ((TrueCondition("number_inpatient", ">=", 2, "number_inpatient >= 2"),), 0.30),
    ((TrueCondition("discharge_disposition_id", "in", TRANSFER_CODES, "discharge_disposition_id in {22, 5, 28}"),),
     0.22),
    ((TrueCondition("diag_1", "starts with", ("428",), "diag_1 in 428.x (heart failure)"),
      TrueCondition("age", "in", OLD_AGE_BINS, "age >= 70 ([70-80) and above)")), 0.17),
    ((TrueCondition("number_emergency", ">=", 1, "number_emergency >= 1"),), 0.14),
)
#: Risk of an encounter matching none of the rules (the ELSE line).
DEFAULT_RISK = 0.05
#: Probability of ``>30`` among encounters that are not ``<30``, for a typical encounter (logistic intercept).
LATER_BASE_PROBABILITY = 0.345

# ---------------------------------------------------------------------------------------------------------------
# Marginal frequencies (counts per ~100k encounters, after the UCI export unless noted).

RACE = {"Caucasian": 74.8, "AfricanAmerican": 18.9, "?": 2.2, "Hispanic": 2.0, "Other": 1.5, "Asian": 0.6}
AGE = dict(zip(AGE_BINS, (161, 691, 1657, 3775, 9685, 17256, 22483, 26068, 17197, 2793)))
WEIGHT = {"[75-100)": 1336, "[50-75)": 897, "[100-125)": 625, "[125-150)": 145, "[25-50)": 97, "[0-25)": 48,
          "[150-175)": 35, "[175-200)": 11, ">200": 3}
WEIGHT_MISSING = 0.9686
ADMISSION_TYPE = {1: 53990, 3: 18869, 2: 18480, 6: 5291, 5: 4785, 8: 320, 7: 21, 4: 10}
# 22, 5 and 28 are about three times as common as in the UCI file (the second rule must cover > 5%).
DISCHARGE = {1: 57000, 3: 13954, 6: 12902, 18: 3691, 2: 2128, 22: 5500, 11: 1642, 5: 2700, 25: 989, 4: 815,
             7: 623, 23: 412, 13: 399, 14: 372, 28: 1300, 8: 108, 15: 63, 24: 48, 9: 21, 17: 14, 16: 11, 19: 8,
             10: 6, 27: 5, 12: 3, 20: 2}
SOURCE_EMERGENCY = {7: 88, 1: 6, 17: 2, 4: 1.5, 6: 1.2, 2: 0.5, 5: 0.5, 20: 0.1, 9: 0.1, 3: 0.05, 8: 0.02,
                    22: 0.02, 10: 0.01, 14: 0.005, 11: 0.005, 25: 0.005, 13: 0.002}
SOURCE_OTHER = {1: 65, 7: 10, 17: 12, 4: 6, 6: 4, 2: 2, 5: 1.5, 3: 0.5, 20: 0.3, 9: 0.3, 8: 0.02, 22: 0.02,
                10: 0.02, 14: 0.005, 11: 0.005, 25: 0.005}
TIME_IN_HOSPITAL = dict(zip(range(1, 15), (14208, 17224, 17756, 13924, 9966, 7539, 5859, 4391, 3002, 2342, 1855,
                                            1448, 1210, 1042)))
PAYER = {"?": 40256, "MC": 32439, "HM": 6274, "SP": 5007, "BC": 4655, "MD": 3532, "CP": 2533, "UN": 2448,
         "CM": 1937, "OG": 1033, "PO": 592, "DM": 549, "CH": 146, "WC": 135, "OT": 95, "MP": 79, "SI": 55}
SPECIALTY = {
    "?": 49949, "InternalMedicine": 14635, "Emergency/Trauma": 7565, "Family/GeneralPractice": 7440,
    "Cardiology": 5352, "Surgery-General": 3099, "Nephrology": 1613, "Orthopedics": 1400,
    "Orthopedics-Reconstructive": 1233, "Radiologist": 1140, "Pulmonology": 871, "Psychiatry": 854,
    "Urology": 685, "ObstetricsandGynecology": 671, "Surgery-Cardiovascular/Thoracic": 652,
    "Gastroenterology": 564, "Surgery-Vascular": 533, "Surgery-Neuro": 468, "PhysicalMedicineandRehabilitation": 391,
    "Oncology": 348, "Pediatrics": 254, "Hematology/Oncology": 207, "Neurology": 203,
    "Pediatrics-Endocrinology": 159, "Otolaryngology": 125, "Endocrinology": 120, "Surgery-Thoracic": 109,
    "Psychology": 101, "Podiatry": 100, "Surgery-Cardiovascular": 98, "Pediatrics-CriticalCare": 87,
    "Hematology": 82, "Gynecology": 58, "Hospitalist": 57, "Radiology": 53, "Surgeon": 45, "Surgery-Plastic": 41,
    "Osteopath": 39, "InfectiousDiseases": 37, "Pediatrics-Pulmonology": 25,
    "Obsterics&Gynecology-GynecologicOnco": 25, "Anesthesiology-Pediatric": 19, "Ophthalmology": 17,
    "Rheumatology": 17, "Pathology": 16, "Anesthesiology": 12, "OutreachServices": 12, "PhysicianNotFound": 11,
    "Surgery-Colon&Rectal": 11, "Surgery-Maxillofacial": 11, "Pediatrics-Neurology": 10,
    "Endocrinology-Metabolism": 8, "Surgery-Pediatric": 8, "Cardiology-Pediatric": 7, "AllergyandImmunology": 7,
    "Psychiatry-Child/Adolescent": 7, "DCPTEAM": 6, "Pediatrics-Hematology-Oncology": 4, "Dentistry": 4,
    "Pediatrics-EmergencyMedicine": 3, "Resident": 2, "Surgery-PlasticwithinHeadandNeck": 1,
    "Pediatrics-AllergyandImmunology": 1, "Dermatology": 1, "SportsMedicine": 1, "Psychiatry-Addictive": 1,
    "Speech": 1, "Perinatology": 1, "Neurophysiology": 1, "Proctology": 1, "Pediatrics-InfectiousDiseases": 1,
}
NUM_PROCEDURES = {0: 46652, 1: 20742, 2: 12717, 3: 9443, 4: 4180, 5: 3078, 6: 4954}
NUMBER_DIAGNOSES = {9: 49474, 5: 11393, 8: 10616, 7: 10393, 6: 10161, 4: 5537, 3: 2835, 2: 1023, 1: 219, 16: 45,
                    10: 17, 13: 16, 11: 11, 15: 10, 12: 9, 14: 7}
MAX_GLU_SERUM = {"None": 96420, "Norm": 2597, ">200": 1485, ">300": 1264}
A1C = {"None": 84748, ">8": 8216, "Norm": 4990, ">7": 3812}
NUMBER_INPATIENT = {0: 67630, 1: 19521, 2: 7566, 3: 3411, 4: 1622, 5: 812, 6: 480, 7: 268, 8: 151, 9: 111,
                    10: 61, 11: 49, 12: 34, 13: 20, 14: 10, 15: 9, 16: 6, 17: 1, 18: 1, 19: 2, 21: 1}
NUMBER_EMERGENCY = {0: 90383, 1: 7677, 2: 2042, 3: 725, 4: 374, 5: 192, 6: 94, 7: 73, 8: 50, 9: 33, 10: 34,
                    11: 23, 12: 10, 13: 12, 14: 3, 15: 3, 16: 5, 18: 5, 19: 4, 20: 4, 21: 2, 22: 6, 24: 1, 25: 2,
                    28: 1, 29: 1, 37: 1, 42: 1, 46: 1, 54: 1, 63: 1, 64: 1, 76: 1}
NUMBER_OUTPATIENT = {0: 85027, 1: 8547, 2: 3594, 3: 2042, 4: 1099, 5: 533, 6: 303, 7: 155, 8: 98, 9: 83, 10: 57,
                     11: 42, 12: 30, 13: 31, 14: 28, 15: 20, 16: 15, 17: 8, 18: 5, 19: 3, 20: 7, 21: 7, 22: 5,
                     23: 2, 24: 3, 25: 2, 26: 2, 27: 3, 28: 1, 29: 2, 33: 2, 34: 1, 35: 2, 36: 2, 37: 1, 38: 1,
                     39: 1, 40: 1, 42: 1}
#: Per medication: counts of (No, Steady, Up, Down) in the UCI export.
MEDICATION_COUNTS = {
    "metformin": (81778, 18346, 1067, 575), "repaglinide": (100227, 1384, 110, 45),
    "nateglinide": (101063, 668, 24, 11), "chlorpropamide": (101680, 79, 6, 1), "glimepiride": (96575, 4670, 327, 194),
    "acetohexamide": (101765, 1, 0, 0), "glipizide": (89080, 11356, 770, 560), "glyburide": (91116, 9274, 812, 564),
    "tolbutamide": (101743, 23, 0, 0), "pioglitazone": (94438, 6976, 234, 118),
    "rosiglitazone": (95401, 6100, 178, 87), "acarbose": (101458, 295, 10, 3), "miglitol": (101728, 31, 2, 5),
    "troglitazone": (101763, 3, 0, 0), "tolazamide": (101727, 38, 1, 0), "examide": (1, 0, 0, 0),
    "citoglipton": (1, 0, 0, 0), "insulin": (47383, 30849, 11316, 12218),
    "glyburide-metformin": (101060, 692, 8, 6), "glipizide-metformin": (101753, 13, 0, 0),
    "glimepiride-pioglitazone": (101765, 1, 0, 0), "metformin-rosiglitazone": (101764, 2, 0, 0),
    "metformin-pioglitazone": (101765, 1, 0, 0),
}
MEDICATION_LEVELS = ("No", "Steady", "Up", "Down")
#: Medication columns that are "No" on at least 99% of the encounters (all but the 8 common drugs).
NEAR_CONSTANT_MEDICATIONS = tuple(m for m, c in MEDICATION_COUNTS.items() if c[0] / sum(c) >= 0.99)

# ---------------------------------------------------------------------------------------------------------------
# ICD-9 codes as the export writes them (text; trailing zeros of sub-codes dropped, as in the UCI file).

_DIABETES = {"250": 1200, "250.01": 300, "250.02": 620, "250.03": 40, "250.1": 90, "250.11": 420, "250.12": 300,
             "250.13": 851, "250.2": 110, "250.21": 20, "250.22": 70, "250.23": 10, "250.3": 30, "250.31": 5,
             "250.32": 15, "250.33": 4, "250.4": 140, "250.41": 60, "250.42": 70, "250.43": 30, "250.5": 60,
             "250.51": 8, "250.52": 12, "250.53": 10, "250.6": 1183, "250.7": 260, "250.71": 3, "250.72": 20,
             "250.73": 5, "250.8": 1680, "250.81": 100, "250.82": 200, "250.83": 150, "250.9": 60,
             "250.91": 20, "250.92": 150, "250.93": 15}
#: Heart failure codes (the 428 group of the third rule) and their shares within the group.
HEART_FAILURE = {"428": 4200, "428.0": 800, "428.1": 60, "428.2": 90, "428.21": 120, "428.22": 70, "428.23": 110,
                 "428.3": 50, "428.31": 70, "428.32": 60, "428.33": 80, "428.4": 30, "428.41": 40, "428.42": 30,
                 "428.43": 50, "428.9": 40}
_ISCHEMIC = {"410": 3000, "410.01": 90, "410.11": 70, "410.21": 20, "410.31": 15, "410.41": 160, "410.51": 10,
             "410.61": 5, "410.71": 200, "410.81": 20, "410.91": 30, "411": 800, "412": 120, "413": 200,
             "414": 6000, "414.01": 300, "414.02": 20, "414.8": 30, "414.9": 20}
_PNEUMONIA = {"480": 30, "481": 250, "482": 300, "482.41": 40, "482.42": 30, "482.83": 20, "483": 10, "484": 5,
              "485": 60, "486": 3500}
_PRIMARY_OTHERS = {"786": 4016, "427": 2766, "491": 2275, "715": 2151, "682": 2042, "434": 2028, "780": 2019,
                   "996": 1967, "276": 1889, "599": 1595, "584": 1520, "V57": 1207, "518": 1115, "820": 1082,
                   "577": 1057, "435": 1016, "562": 989, "574": 965, "296": 896, "38": 858, "440": 842, "433": 807,
                   "401": 600, "403": 700, "496": 600, "424": 600, "493": 550, "E909": 3, "E885": 2}
_SECONDARY_OTHERS = {"276": 6752, "427": 5036, "401": 6000, "496": 3000, "599": 3288, "403": 2600, "707": 2000,
                     "585": 1900, "584": 1600, "491": 1500, "285": 1600, "780": 1400, "425": 1300, "682": 1000,
                     "518": 1300, "424": 1300, "305": 1000, "786": 900, "998": 700, "272": 1900, "V45": 1300,
                     "V58": 800, "V43": 400, "V42": 300, "V10": 400, "V15": 300, "V12": 200, "V57": 100,
                     "E878": 400, "E885": 300, "E849": 300, "E932": 300, "E888": 200, "E909": 20, "E942": 200,
                     "E944": 100, "E947": 100, "E934": 150, "E935": 80, "E939": 80}
_TAIL_SEED = 19992008  # fixed: the code vocabulary is the same whatever the user's seed


def _tail_codes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The long tail of rarer codes: (codes, weights falling geometrically with a fixed random rank, is_v_or_e)."""
    numeric = [str(i) for i in range(1, 1000)]
    v_codes = [f"V{i:02d}" for i in range(1, 87)]
    e_codes = [f"E{i}" for i in range(800, 1000)]
    codes = np.array(numeric + v_codes + e_codes)
    order = np.random.default_rng(_TAIL_SEED).permutation(len(codes))
    weights = np.empty(len(codes))
    weights[order] = np.exp(-np.arange(len(codes)) / 115.0)
    return codes, weights, np.array([c[0] in "VE" for c in codes])


def _vocabulary(explicit: dict, tail_share: float, v_e_factor: float, exclude=()) -> tuple[np.ndarray, np.ndarray]:
    """Codes and probabilities: the explicit common codes plus the long tail holding ``tail_share`` of the mass."""
    codes, weights, v_or_e = _tail_codes()
    weights = weights * np.where(v_or_e, v_e_factor, 1.0)
    excluded = tuple(exclude)
    keep = np.array([c not in explicit and not c.startswith(excluded) for c in codes], dtype=bool)
    codes, weights = codes[keep], weights[keep]
    head_codes = np.array([c for c in explicit if not c.startswith(excluded)])
    head = np.array([explicit[c] for c in head_codes], dtype=float)
    head = head / head.sum() * (1 - tail_share)
    tail = weights / weights.sum() * tail_share
    return np.concatenate([head_codes, codes]), np.concatenate([head, tail])


def _primary_vocabulary():
    explicit = {**_DIABETES, **_ISCHEMIC, **_PNEUMONIA, **_PRIMARY_OTHERS}
    return _vocabulary(explicit, tail_share=0.22, v_e_factor=0.1, exclude=("428",))


def _secondary_vocabulary(v_e_factor: float):
    diabetes = {code: 3 * count for code, count in _DIABETES.items()}
    explicit = {**diabetes, **HEART_FAILURE, **_ISCHEMIC, **_PNEUMONIA, **_SECONDARY_OTHERS}
    return _vocabulary(explicit, tail_share=0.28, v_e_factor=v_e_factor)


# ---------------------------------------------------------------------------------------------------------------


def _draw(rng: np.random.Generator, table: dict, size: int) -> np.ndarray:
    """``size`` draws from the values of ``table`` with probabilities proportional to its counts."""
    values = list(table)
    p = np.array([table[v] for v in values], dtype=float)
    return np.array(values)[rng.choice(len(values), size=size, p=p / p.sum())]


def _quantile(table: dict, u: np.ndarray) -> np.ndarray:
    """Inverse distribution function of the integer distribution ``table`` at uniforms ``u``."""
    values = np.array(sorted(table))
    cdf = np.cumsum([table[v] for v in values], dtype=float)
    return values[np.searchsorted(cdf / cdf[-1], u, side="right").clip(max=len(values) - 1)]


def _visits(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outpatient, emergency and inpatient visit counts with UCI marginals, mildly correlated (Gaussian copula)."""
    corr = np.array([[1.0, 0.25, 0.2], [0.25, 1.0, 0.35], [0.2, 0.35, 1.0]])
    u = ndtr(rng.standard_normal((n, 3)) @ np.linalg.cholesky(corr).T)
    return (_quantile(NUMBER_OUTPATIENT, u[:, 0]), _quantile(NUMBER_EMERGENCY, u[:, 1]),
            _quantile(NUMBER_INPATIENT, u[:, 2]))


def _identifiers(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encounter ids (increasing), patient numbers (~70% of encounters are a patient's only one), patient index."""
    encounter_id = 2_278_392 + np.cumsum(rng.geometric(1 / 4300, size=n))
    n_patients = max(1, round(0.70 * n))
    frailty = rng.lognormal(0.0, 1.3, size=n_patients)
    repeat = rng.choice(n_patients, size=n - n_patients, p=frailty / frailty.sum())
    patient = rng.permutation(np.concatenate([np.arange(n_patients), repeat]))
    numbers = np.sort(rng.choice(189_502_619 - 135, size=n_patients, replace=False) + 135)
    return encounter_id, numbers[rng.permutation(n_patients)], patient


def _diagnoses(rng: np.random.Generator, n: int, old: np.ndarray, n_diagnoses: np.ndarray):
    """diag_1..diag_3 as text; heart failure as first diagnosis is more likely at age >= 70."""
    codes, p = _primary_vocabulary()
    diag_1 = codes[rng.choice(len(codes), size=n, p=p)]
    hf_codes = np.array(list(HEART_FAILURE))
    hf_p = np.array(list(HEART_FAILURE.values()), dtype=float)
    heart_failure = rng.random(n) < np.where(old, 0.20, 0.05)
    diag_1[heart_failure] = hf_codes[rng.choice(len(hf_codes), size=int(heart_failure.sum()), p=hf_p / hf_p.sum())]
    diag_1[rng.random(n) < 0.0002] = MISSING
    columns = [diag_1]
    for position, v_e_factor, missing in ((2, 1.0, 0.0025), (3, 2.0, 0.012)):
        codes, p = _secondary_vocabulary(v_e_factor)
        diag = codes[rng.choice(len(codes), size=n, p=p)]
        diag[(n_diagnoses < position) | (rng.random(n) < missing)] = MISSING
        columns.append(diag)
    return columns


def _medications(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    levels = np.array(MEDICATION_LEVELS)
    out = {}
    for name in MEDICATIONS:
        counts = np.array(MEDICATION_COUNTS[name], dtype=float)
        out[name] = levels[rng.choice(4, size=n, p=counts / counts.sum())]
    return out


def rule_positions(frame: pd.DataFrame) -> np.ndarray:
    """Which line of :data:`TRUE_LIST` each encounter falls into (``len(TRUE_LIST)`` = ELSE).

    Parameters
    ----------
    frame : pandas.DataFrame
        The export (at least the columns the list uses), as made or as read back from the CSV.

    Returns
    -------
    numpy.ndarray of int, shape (len(frame),)
    """
    position = np.full(len(frame), len(TRUE_LIST))
    for index in range(len(TRUE_LIST) - 1, -1, -1):
        conditions, _ = TRUE_LIST[index]
        mask = np.logical_and.reduce([condition.evaluate(frame) for condition in conditions])
        position[mask] = index
    return position


def expired(frame: pd.DataFrame) -> np.ndarray:
    """Encounters that ended in death (never readmitted, outside the list), shape (len(frame),)."""
    return frame["discharge_disposition_id"].isin(EXPIRED_CODES).to_numpy(dtype=bool)


def event_risk(frame: pd.DataFrame) -> np.ndarray:
    """The true probability of ``<30`` for each encounter: the list's risk, 0 for those who died."""
    risks = np.array([risk for _, risk in TRUE_LIST] + [DEFAULT_RISK])
    return np.where(expired(frame), 0.0, risks[rule_positions(frame)])


def make_raw_export(n_rows: int = N_ROWS, seed: int = SEED) -> pd.DataFrame:
    """A synthetic raw export shaped like the UCI diabetes readmission file.

    Parameters
    ----------
    n_rows : int, default 100_000
        Encounters (rows).
    seed : int, default 0
        Seed of the ``numpy.random.Generator``; the same ``n_rows`` and seed give the same table.

    Returns
    -------
    pandas.DataFrame
        ``n_rows`` rows and the 50 columns of :data:`COLUMNS`, with cells as the CSV holds them
        (integers, or text with ``?`` for missing).
    """
    if n_rows < 1:
        raise ValueError("n_rows must be at least 1")
    rng = np.random.default_rng(seed)
    n = int(n_rows)
    encounter_id, patient_nbr, patient = _identifiers(rng, n)
    n_patients = len(patient_nbr)

    race = _draw(rng, RACE, n_patients)[patient]
    gender_p = rng.random(n_patients) < 0.538
    gender = np.where(gender_p, "Female", "Male").astype(object)
    gender[rng.choice(n_patients, size=min(n_patients, max(1, round(3 * n / 100_000))), replace=False)] = (
        "Unknown/Invalid")
    gender = gender[patient]
    age = _draw(rng, AGE, n_patients)[patient]
    old = np.isin(age, OLD_AGE_BINS)
    weight = np.where(rng.random(n) < WEIGHT_MISSING, MISSING, _draw(rng, WEIGHT, n))

    admission_type = _draw(rng, ADMISSION_TYPE, n)
    discharge = _draw(rng, DISCHARGE, n)
    source = np.where(admission_type == 1, _draw(rng, SOURCE_EMERGENCY, n), _draw(rng, SOURCE_OTHER, n))
    time_in_hospital = _draw(rng, TIME_IN_HOSPITAL, n)
    payer = _draw(rng, PAYER, n)
    specialty = _draw(rng, SPECIALTY, n)
    lab = np.clip(np.rint(rng.normal(43 + 1.6 * (time_in_hospital - 4.4), 19, n)), 1, 132).astype(int)
    lab[rng.random(n) < 0.03] = 1
    procedures = _draw(rng, NUM_PROCEDURES, n)
    mean_medications = 16 + 0.9 * (time_in_hospital - 4.4) + 1.2 * (procedures - 1.3)
    medications = np.clip(np.rint(rng.gamma(4.5, np.maximum(mean_medications, 3) / 4.5)), 1, 81).astype(int)
    outpatient, emergency, inpatient = _visits(rng, n)
    n_diagnoses = _draw(rng, NUMBER_DIAGNOSES, n)
    diag_1, diag_2, diag_3 = _diagnoses(rng, n, old, n_diagnoses)
    max_glu = _draw(rng, MAX_GLU_SERUM, n)
    a1c = _draw(rng, A1C, n)
    drugs = _medications(rng, n)
    stacked = np.stack(list(drugs.values()))
    any_drug = (stacked != "No").any(axis=0)
    any_dose_change = np.isin(stacked, ("Up", "Down")).any(axis=0)
    change = np.where(any_dose_change | (any_drug & (rng.random(n) < 0.30)), "Ch", "No")
    diabetes_med = np.where(any_drug, "Yes", "No")

    frame = pd.DataFrame(
        {
            "encounter_id": encounter_id, "patient_nbr": patient_nbr[patient], "race": race, "gender": gender,
            "age": age, "weight": weight, "admission_type_id": admission_type,
            "discharge_disposition_id": discharge, "admission_source_id": source,
            "time_in_hospital": time_in_hospital, "payer_code": payer, "medical_specialty": specialty,
            "num_lab_procedures": lab, "num_procedures": procedures, "num_medications": medications,
            "number_outpatient": outpatient, "number_emergency": emergency, "number_inpatient": inpatient,
            "diag_1": diag_1, "diag_2": diag_2, "diag_3": diag_3, "number_diagnoses": n_diagnoses,
            "max_glu_serum": max_glu, "A1Cresult": a1c, **drugs, "change": change, "diabetesMed": diabetes_med,
        }
    )
    for column in frame.columns:  # text and int64 columns, as pandas reads them back from the CSV
        frame[column] = frame[column].astype(np.int64 if frame[column].dtype.kind in "iu" else str)

    event = rng.random(n) < event_risk(frame)
    z = (np.log(LATER_BASE_PROBABILITY / (1 - LATER_BASE_PROBABILITY))
         + 0.025 * (medications - 16) + 0.04 * (time_in_hospital - 4.4)
         + 0.35 * np.minimum(inpatient, 4) + 0.12 * np.minimum(outpatient, 4) + 0.15 * np.minimum(emergency, 3)
         + 0.15 * (a1c == ">8"))
    later = (rng.random(n) < 1 / (1 + np.exp(-z))) & ~expired(frame)
    frame[OUTCOME] = pd.Series(np.where(event, EVENT, np.where(later, ">30", "NO")), index=frame.index).astype(str)
    return frame[list(COLUMNS)]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per line of the true list (those who died left out): stated risk, support, captured rows, observed rate."""
    alive = ~expired(frame)
    position = rule_positions(frame)
    event = frame[OUTCOME].eq(EVENT).to_numpy()
    names = [" AND ".join(c.label for c in conditions) for conditions, _ in TRUE_LIST] + ["(everyone else)"]
    risks = [risk for _, risk in TRUE_LIST] + [DEFAULT_RISK]
    supports = [float(np.logical_and.reduce([c.evaluate(frame) for c in conditions]).mean())
                for conditions, _ in TRUE_LIST] + [float("nan")]
    return pd.DataFrame(
        {
            "rule": names,
            "stated_risk": risks,
            "support": supports,
            "captured": [int((alive & (position == i)).sum()) for i in range(len(names))],
            "observed_rate": [float(event[alive & (position == i)].mean()) for i in range(len(names))],
        }
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Write a synthetic raw hospital export (UCI diabetes layout).")
    parser.add_argument("--rows", type=int, default=N_ROWS, help=f"encounters (default {N_ROWS:,})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    parser.add_argument("--out", required=True, help="CSV file to write")
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error("--rows must be at least 1")
    frame = make_raw_export(args.rows, args.seed)
    frame.to_csv(args.out, index=False, lineterminator="\n")
    rate = frame[OUTCOME].eq(EVENT).mean()
    print(f"Wrote {args.out}: {len(frame):,} rows x {frame.shape[1]} columns; {EVENT!r} on {rate:.1%}")
    print(summary(frame).to_string(index=False))


if __name__ == "__main__":
    main()
