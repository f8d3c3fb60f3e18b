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
from frl_engine.training_rows import (MOST_REPEATED, SAMPLE_SIZE, finding_columns, sample_training_rows,
                                      training_overlap)
from frl_engine.validation.external import validate_model

COLUMNS = ["age", "creatinine", "ward", "sodium", "potassium"]


def patients(n, seed):
    """Rows of an export: an age, three labs with decimals and a ward; nearly all distinct."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 95, n), "creatinine": np.round(rng.lognormal(0, 0.4, n), 2),
                         "ward": rng.choice(["medical", "surgical", "icu"], n),
                         "sodium": np.round(rng.normal(140, 4, n), 1),
                         "potassium": np.round(rng.normal(4.2, 0.5, n), 2)})


def test_the_sample_keeps_the_smallest_hashes_and_all_rows_of_a_small_table():
    small = sample_training_rows(patients(500, 0), COLUMNS)
    assert small["size"] == 500 and small["threshold"] == "f" * 16 and len(small["low_bits"]) == 8 * 500
    assert small["columns"] == COLUMNS
    large = sample_training_rows(patients(30_000, 0), COLUMNS)
    assert large["size"] == SAMPLE_SIZE and len(large["low_bits"]) == 8 * SAMPLE_SIZE
    # about SAMPLE_SIZE / n of the hash range lies at or below the threshold
    assert int(large["threshold"], 16) / 2**64 == pytest.approx(SAMPLE_SIZE / 30_000, rel=0.1)


@pytest.mark.parametrize("share", [0.0, 0.075, 0.3, 0.7, 1.0])
def test_the_estimated_share_of_training_rows_is_near_the_truth(share):
    """40,000 training rows; a new table of 20,000 of which `share` are training rows (shuffled in): the estimate
    from about 1,000 sampled rows lies within 4 standard errors of the truth; the table is said to hold training
    patients from 10%, and 7.5% gets a note."""
    training = patients(40_000, 1)
    sample = sample_training_rows(training, COLUMNS)
    n_old = int(round(share * 20_000))
    new = pd.concat([training.sample(n_old, random_state=2), patients(20_000 - n_old, 3)]).sample(frac=1, random_state=4)
    found = training_overlap(new, sample)
    assert found.sampled == pytest.approx(20_000 * SAMPLE_SIZE / 40_000, rel=0.15)
    error = np.sqrt(max(share * (1 - share), 1e-4) / found.sampled)
    assert abs(found.share - share) <= 4 * error + 1e-9, (found, share)
    assert found.holds_training_patients is (share >= 0.3)
    assert found.some_training_rows is (share == 0.075)


def test_a_small_table_of_training_rows_is_recognised_from_a_few_sampled_rows():
    """45 training encounters (of 10,000) with one cell corrected: about 9 of them fall in the sample and are
    found; that is conclusive (a chance match is about 5e-7 a row), not too few to say."""
    training = patients(10_000, 5)
    sample = sample_training_rows(training, COLUMNS)
    recheck = training.sample(45, random_state=1).reset_index(drop=True)
    recheck.loc[0, "age"] += 1
    found = training_overlap(recheck, sample)
    assert 3 <= found.matched <= found.sampled < 30 and found.holds_training_patients, found
    assert not training_overlap(patients(45, 9), sample).holds_training_patients


def test_a_row_counter_restarting_in_each_export_is_no_evidence_of_the_same_patients():
    """Two hospitals' exports, each with a row counter 1..2500 and four yes/no findings: the counter made every row
    unique and matched, by chance, the other hospital's row of the same number (21% 'training patients'). The
    sample is taken over the columns read as findings, so the counter is not in it, and the rows of four flags
    repeat one another too much to keep a sample: nothing is claimed."""
    rng = np.random.default_rng(0)

    def hospital(seed):
        r = np.random.default_rng(seed)
        frame = pd.DataFrame({"row": np.arange(1, 2501)})
        for name in ("hypertension", "heart_disease", "smoker", "diabetes"):
            frame[name] = r.random(2500) < 0.3
        return frame

    a, b = hospital(1), hospital(2)
    y = rng.random(2500) < 0.2 + 0.4 * a["hypertension"].to_numpy()
    model = FallingRuleListClassifier(n_steps=500, random_state=0).fit(a, y)
    assert "row" not in finding_columns(model, a)   # an identifier: left out of the rules and of the sample
    saved = json.loads(model.to_json(target="stroke"))
    assert "rows_sample" not in saved["training"]   # four flags: rows alike, no sample
    new = b.assign(stroke=np.where(rng.random(2500) < 0.3, 1, 0))
    result = validate_model(saved, new, data_name="hospitalB.csv")
    assert result.external and result.training_share is None


def test_the_training_rows_without_an_unused_column_or_with_text_in_capitals_are_still_recognised():
    """The training export again, without its encounter number (an identifier, in no rule) or with `ward` in
    capitals (the same category to the fit): still the training rows. Without a column the sample was taken
    over, nothing can be compared, and validation says so."""
    rng = np.random.default_rng(3)
    training = patients(3000, 7).assign(encounter_id=rng.permutation(10**6)[:3000] + 10**7)
    y = (training["age"] >= 70).to_numpy() ^ (rng.random(3000) < 0.1)
    model = FallingRuleListClassifier(n_steps=500, random_state=0).fit(training, y)
    saved = json.loads(model.to_json(target="died"))
    assert saved["training"]["rows_sample"]["columns"] == COLUMNS
    table = training.assign(died=y.astype(int))
    for variant in (table.drop(columns="encounter_id"), table.assign(ward=table["ward"].str.upper())):
        result = validate_model(saved, variant, data_name="again.csv")
        assert result.training_share == pytest.approx(1.0, abs=0.001) and not result.external
    if "sodium" not in [c["column"] for r in saved["rules"] for c in r["conditions"]]:   # sodium in no rule
        result = validate_model(saved, table.drop(columns="sodium"), data_name="no_sodium.csv")
        assert result.external and any("could not be checked: the table lacks 'sodium'" in n for n in result.notes)


def test_a_table_lacking_a_sampled_column_is_validated_but_not_called_external_on_the_card():
    """The training table cut down to the list's own columns and the outcome: nothing can be compared with the
    sample of training rows, so whether these are new patients is not known. The validation is made, the note says
    why it was not checked, and the CLI's first line, the report and the card's back say "not checked for training
    patients" instead of "externally validated" (the card said "externally validated" on the training patients)."""
    from frl_engine.card import external_line
    from frl_engine.validation.external import ExternalValidation, attach_to_model, format_validation
    from frl_engine.validation.report import validation_report_html

    rng = np.random.default_rng(3)
    training = patients(3000, 7)
    y = (training["age"] >= 70).to_numpy() ^ (rng.random(3000) < 0.1)
    saved = json.loads(FallingRuleListClassifier(n_steps=500, random_state=0).fit(training, y).to_json(target="died"))
    used = sorted({c["column"] for r in saved["rules"] for c in r["conditions"]})
    unused = [c for c in COLUMNS if c not in used]
    assert used and unused
    cut = training[used].assign(died=y.astype(int))   # the training patients, only the list's columns
    result = validate_model(saved, cut, data_name="cut.csv")
    assert result.training_unchecked == tuple(unused) and result.training_share is None
    assert any("could not be checked: the table lacks" in n for n in result.notes)
    assert format_validation(result).splitlines()[0].startswith(
        "Validation on cut.csv, not checked for the patients the model was fitted on")
    assert "Validated, not checked for training patients" in validation_report_html(result)
    line = external_line(attach_to_model(saved, result))
    assert line.startswith("validated (not checked for training patients): AUROC") and "externally" not in line
    assert ExternalValidation.from_dict(result.to_dict()).training_unchecked == tuple(unused)
    whole = validate_model(saved, training.assign(died=y.astype(int)), data_name="again.csv")
    assert whole.training_unchecked == () and not whole.external   # with every column, they are found


def test_rows_that_repeat_one_another_keep_no_sample():
    """A table of a few yes/no columns: most new patients are written exactly as some training patient, so a match
    says nothing about who they are: no sample is kept, and validation cannot call new patients old ones."""
    rng = np.random.default_rng(0)
    alike = pd.DataFrame({"sex": rng.choice(["F", "M"], 5000), "ward": rng.choice(["icu", "medical"], 5000),
                          "age_band": rng.choice(["<65", ">=65"], 5000)})
    assert sample_training_rows(alike, alike.columns) is None
    nearly_distinct = patients(5000, 0)
    repeated = pd.concat([nearly_distinct, nearly_distinct.iloc[: int(5000 * MOST_REPEATED)]])
    assert sample_training_rows(repeated, COLUMNS) is None   # just over the share allowed
    assert sample_training_rows(nearly_distinct, COLUMNS) is not None


def test_training_rows_too_alike_for_a_sample_are_said_unchecked_not_externally_validated():
    """mlbench's BreastCancer: 41% of its rows are written as another, so no sample was kept, and half of the training
    table itself came back 'Externally validated' with no word. The model file now says its rows are alike, and the
    validation, its report and the card's back say it was not checked for training patients."""
    from frl_engine.card import external_line
    from frl_engine.validation.external import attach_to_model

    rng = np.random.default_rng(4)
    n = 3000
    alike = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "ward": rng.choice(["icu", "medical"], n),
                          "age_band": rng.choice(["<65", ">=65"], n)})
    y = (rng.random(n) < np.where(alike["ward"] == "icu", 0.4, 0.1)).astype(int)
    saved = json.loads(FallingRuleListClassifier(n_steps=500, random_state=0).fit(alike, y).to_json(target="died"))
    assert "rows_sample" not in saved["training"] and saved["training"]["rows_alike"]["repeated"] == 1.0
    again = FallingRuleListClassifier.from_dict(saved)
    assert json.loads(again.to_json(target="died"))["training"]["rows_alike"] == saved["training"]["rows_alike"]
    result = validate_model(saved, alike.iloc[::2].assign(died=y[::2]), data_name="half.csv")
    assert result.training_unchecked == ("sex", "ward", "age_band") and result.external
    assert any("could not be checked: 100% of the training rows are written exactly as another" in note
               for note in result.notes)
    assert external_line(attach_to_model(saved, result)).startswith("validated (not checked for training patients)")
    # rows that tell patients apart keep a sample and no such word
    distinct = json.loads(FallingRuleListClassifier(n_steps=500, random_state=0).fit(
        patients(3000, 0), (patients(3000, 0)["age"] >= 70).to_numpy()).to_json())
    assert "rows_alike" not in distinct["training"] and "rows_sample" in distinct["training"]


def test_a_damaged_sample_is_not_judged():
    sample = sample_training_rows(patients(3000, 0), COLUMNS)
    for damaged in ({}, {"threshold": "zz", "low_bits": "00", "columns": COLUMNS},
                    {**sample, "low_bits": sample["low_bits"][:-3]}, {**sample, "columns": []}):
        assert training_overlap(patients(3000, 0), damaged) is None


def test_a_fitted_model_file_carries_its_sample_and_reads_it_back():
    frame = patients(3000, 5)
    y = (frame["age"] >= 70).to_numpy() ^ (np.random.default_rng(6).random(3000) < 0.1)
    model = FallingRuleListClassifier(n_steps=500, random_state=0).fit(frame, y)
    block = json.loads(model.to_json())["training"]["rows_sample"]
    assert block == sample_training_rows(frame, finding_columns(model, frame))
    again = FallingRuleListClassifier.from_dict(json.loads(model.to_json()))
    assert again.rows_sample_ == block and json.loads(again.to_json())["training"]["rows_sample"] == block
