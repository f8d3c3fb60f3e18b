"""The model file's sample of its training rows tells how many rows of a new table are training rows.

A bottom-k sample of row hashes (`frl_engine.training_rows`): every training row whose hash is at most the
threshold is kept, so the share of a new table's sampled rows found in it estimates the share of its rows that
are training rows. Checked against the truth of tables built with a known share.
"""

import json

import numpy as np
import pandas as pd
import pytest

from frl_engine import FallingRuleListClassifier
from frl_engine.training_rows import (FEWEST_SAMPLED, MOST_REPEATED, SAMPLE_SIZE, sample_training_rows,
                                      training_overlap)


def patients(n, seed):
    """Rows of an export: a record number, an age, a lab with two decimals and a ward; nearly all distinct."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"encounter_id": rng.integers(10**6, 10**8, n), "age": rng.integers(18, 95, n),
                         "creatinine": np.round(rng.lognormal(0, 0.4, n), 2),
                         "ward": rng.choice(["medical", "surgical", "icu"], n)})


def test_the_sample_keeps_the_smallest_hashes_and_all_rows_of_a_small_table():
    small = sample_training_rows(patients(500, 0), ["encounter_id", "age", "creatinine", "ward"])
    assert small["size"] == 500 and small["threshold"] == "f" * 16 and len(small["low_bits"]) == 8 * 500
    large = sample_training_rows(patients(30_000, 0), ["encounter_id", "age", "creatinine", "ward"])
    assert large["size"] == SAMPLE_SIZE and len(large["low_bits"]) == 8 * SAMPLE_SIZE
    # about SAMPLE_SIZE / n of the hash range lies at or below the threshold
    assert int(large["threshold"], 16) / 2**64 == pytest.approx(SAMPLE_SIZE / 30_000, rel=0.1)


@pytest.mark.parametrize("share", [0.0, 0.05, 0.3, 0.7, 1.0])
def test_the_estimated_share_of_training_rows_is_near_the_truth(share):
    """40,000 training rows; a new table of 20,000 of which `share` are training rows (shuffled in): the estimate
    from about 1,000 sampled rows lies within 4 standard errors of the truth, and the table is said to hold training
    patients exactly when the share is well above chance."""
    columns = ["encounter_id", "age", "creatinine", "ward"]
    training = patients(40_000, 1)
    sample = sample_training_rows(training, columns)
    n_old = int(round(share * 20_000))
    new = pd.concat([training.sample(n_old, random_state=2), patients(20_000 - n_old, 3)]).sample(frac=1, random_state=4)
    found = training_overlap(new, columns, sample)
    expected = 20_000 * SAMPLE_SIZE / 40_000
    assert found.sampled == pytest.approx(expected, rel=0.15)
    error = np.sqrt(max(share * (1 - share), 1e-4) / found.sampled)
    assert abs(found.share - share) <= 4 * error + 1e-9, (found, share)
    assert found.holds_training_patients is (share >= 0.3)   # 0.05 is under TRAINING_SHARE; 0.0 has no match


def test_rows_that_repeat_one_another_keep_no_sample():
    """A table of a few yes/no columns: most new patients are written exactly as some training patient, so a match
    says nothing about who they are: no sample is kept, and validation cannot call new patients old ones."""
    rng = np.random.default_rng(0)
    alike = pd.DataFrame({"sex": rng.choice(["F", "M"], 5000), "ward": rng.choice(["icu", "medical"], 5000),
                          "age_band": rng.choice(["<65", ">=65"], 5000)})
    assert sample_training_rows(alike, alike.columns) is None
    nearly_distinct = patients(5000, 0)
    repeated = pd.concat([nearly_distinct, nearly_distinct.iloc[: int(5000 * MOST_REPEATED)]])
    assert sample_training_rows(repeated, repeated.columns) is None   # just over the share allowed
    assert sample_training_rows(nearly_distinct, nearly_distinct.columns) is not None


def test_a_new_table_without_the_models_columns_or_with_a_damaged_sample_is_not_judged():
    columns = ["encounter_id", "age", "creatinine", "ward"]
    sample = sample_training_rows(patients(3000, 0), columns)
    assert training_overlap(patients(3000, 0).drop(columns="ward"), columns, sample) is None
    for damaged in ({}, {"threshold": "zz", "low_bits": "00"}, {**sample, "low_bits": sample["low_bits"][:-3]}):
        assert training_overlap(patients(3000, 0), columns, damaged) is None
    tiny = training_overlap(patients(3000, 0).iloc[: FEWEST_SAMPLED - 1], columns, sample)
    assert tiny.share == 1.0 and not tiny.holds_training_patients   # too few rows to say


def test_a_fitted_model_file_carries_its_sample_and_reads_it_back(tmp_path):
    frame = patients(3000, 5)
    y = (frame["age"] >= 70).to_numpy() ^ (np.random.default_rng(6).random(3000) < 0.1)
    model = FallingRuleListClassifier(n_steps=500, random_state=0).fit(frame, y)
    block = json.loads(model.to_json())["training"]["rows_sample"]
    assert block == sample_training_rows(frame, frame.columns)
    again = FallingRuleListClassifier.from_dict(json.loads(model.to_json()))
    assert again.rows_sample_ == block and json.loads(again.to_json())["training"]["rows_sample"] == block
