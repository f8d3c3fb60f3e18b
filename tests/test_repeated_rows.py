"""Records written more than once (a join that repeats encounters): found only where a record number repeats with
every other column, said by the command line, the Python API and the dashboard, and left out only on request."""

import warnings

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.errors import RepeatedRecordsWarning
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.repeated_rows import repeated_records, without_repeated_records


def _encounters(n=600, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 90, n)
    risk = np.where(age >= 70, 0.5, 0.1)
    return pd.DataFrame({
        "encounter_id": rng.permutation(n) * 7 + 100_000,
        "patient_nbr": rng.integers(1, n // 2, n),  # a patient's several encounters: not copies
        "age": age,
        "ward": rng.choice(["A", "B", "C"], n),
        "readmitted": np.where(rng.random(n) < risk, "yes", "no"),
    })


def _with_copies(frame, n_copies, seed=1):
    rng = np.random.default_rng(seed)
    copies = frame.iloc[rng.choice(len(frame), n_copies, replace=False)]
    return pd.concat([frame, copies]).sample(frac=1, random_state=seed).reset_index(drop=True)


def test_copies_of_records_are_counted_by_the_record_number_they_repeat():
    table = _with_copies(_encounters(), 90)
    found = repeated_records(table)
    assert found is not None
    assert (found.n_copies, found.n_rows, found.record_column) == (90, 690, "encounter_id")
    # the later of each pair of equal rows, the first kept
    assert np.array_equal(found.copies, table.duplicated(keep="first").to_numpy())
    kept, again = without_repeated_records(table)
    assert again.n_copies == 90
    assert len(kept) == 600 and kept["encounter_id"].is_unique
    assert kept.sort_values("encounter_id").reset_index(drop=True).equals(
        _encounters().sort_values("encounter_id").reset_index(drop=True))


def test_a_patient_seen_twice_and_identical_rows_without_a_record_number_are_not_copies():
    table = _encounters()
    assert table["patient_nbr"].duplicated().any() and repeated_records(table) is None
    # a coarse table without a record number: two patients may agree on every column
    coarse = pd.DataFrame({"sex": ["F", "M"] * 50, "smoker": ["yes"] * 100, "outcome": ["no"] * 100})
    assert repeated_records(coarse) is None
    # the same encounter number on two different rows is not a copy either (a recoded export, not a join)
    clash = _encounters()
    clash.loc[1, "encounter_id"] = clash.loc[0, "encounter_id"]
    assert repeated_records(clash) is None
    # one encounter number on two different records, each written twice: not a record number
    reused = _encounters()
    reused.loc[1, "encounter_id"] = reused.loc[0, "encounter_id"]
    assert repeated_records(pd.concat([reused, reused.iloc[:2]])) is None
    # a copy whose encounter number is missing is not a repeated record
    blank = _encounters().astype({"encounter_id": "object"})
    blank.loc[[0, 1], "encounter_id"] = None
    blank.loc[1, ["patient_nbr", "age", "ward", "readmitted"]] = blank.loc[0, ["patient_nbr", "age", "ward",
                                                                                 "readmitted"]]
    assert repeated_records(blank) is None


def test_the_api_warns_and_a_fit_on_copies_is_a_fit_on_more_evidence():
    """Each copy weighs its outcome once more: the copies change the fit, which is why the user is told."""
    original = _encounters()
    table = _with_copies(original, 300)
    X, y = table.drop(columns="readmitted"), table["readmitted"]
    with pytest.warns(RepeatedRecordsWarning, match="300 of 900 rows .* encounter_id included"):
        model = FallingRuleListClassifier(n_chains=2, random_state=0).fit(X, y)
    assert model.n_rows_ == 900
    with warnings.catch_warnings():
        warnings.simplefilter("error", RepeatedRecordsWarning)  # no copies: no warning
        FallingRuleListClassifier(n_chains=2, random_state=0).fit(original.drop(columns="readmitted"),
                                                                   original["readmitted"])


def test_frl_fit_warns_and_drops_the_copies_only_when_asked(tmp_path, capsys):
    path = tmp_path / "encounters.csv"
    _with_copies(_encounters(), 45).to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "readmitted", "--chains", "2", "--out", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "Warning: 45 of 645 rows (7.0%) repeat an earlier row in every column, encounter_id included" in out
    assert "--drop-repeated-rows" in out and "645 rows of" in out
    assert main(["fit", str(path), "--target", "readmitted", "--chains", "2", "--drop-repeated-rows",
                 "--out", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "Left out 45 rows that repeat an earlier row in every column, encounter_id included" in out
    assert "Warning: 45" not in out and "600 rows of" in out
    clean = tmp_path / "clean.csv"
    _encounters().to_csv(clean, index=False)
    assert main(["fit", str(clean), "--target", "readmitted", "--chains", "2", "--drop-repeated-rows",
                 "--out", str(tmp_path / "c.json")]) == 0
    assert "nothing was left out" in capsys.readouterr().out


def test_frl_validate_warns_of_repeated_records_in_the_new_table_and_drops_them_when_asked(tmp_path, capsys):
    train, new = tmp_path / "train.csv", tmp_path / "new.csv"
    _encounters(seed=0).to_csv(train, index=False)
    _with_copies(_encounters(seed=3), 60).to_csv(new, index=False)
    model = tmp_path / "model.json"
    assert main(["fit", str(train), "--target", "readmitted", "--chains", "2", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["validate", str(model), str(new)]) == 0
    out = capsys.readouterr().out
    assert "Warning: 60 of 660 rows (9.1%) repeat an earlier row" in out and "validate again with --drop-repeated-rows" in out
    assert main(["validate", str(model), str(new), "--drop-repeated-rows"]) == 0
    out = capsys.readouterr().out
    assert "Left out 60 rows that repeat an earlier row" in out and "Warning: 60" not in out


def test_every_command_that_reads_training_data_offers_to_drop_repeated_rows():
    from frl_engine.cli import build_parser

    parser = build_parser()
    for command in ("fit", "sample", "evaluate", "explore"):
        args = parser.parse_args([command, "t.csv", "--target", "y", "--drop-repeated-rows"])
        assert args.drop_repeated_rows, command
    assert parser.parse_args(["validate", "m.json", "t.csv", "--drop-repeated-rows"]).drop_repeated_rows


def test_cells_a_database_driver_returns_as_lists_are_compared_as_text():
    """A column of lists (unhashable: pandas cannot hash the rows) is compared as text: the copies are found,
    and two records whose lists differ are not copies."""
    table = _with_copies(_encounters(), 30)
    table["codes"] = [[int(a) % 7, int(a) % 5] for a in table["encounter_id"]]
    with pytest.raises(TypeError):
        table.duplicated()
    found = repeated_records(table)
    assert found is not None and (found.n_copies, found.record_column) == (30, "encounter_id")
    first_copy = int(np.flatnonzero(found.copies)[0])
    table.at[first_copy, "codes"] = [99]             # now that row's record differs from its earlier twin
    assert repeated_records(table) is None


def test_cross_validation_warns_of_repeated_records_once_not_once_per_fold():
    """The folds' fits each saw the repeats and each warned, five raw warnings for one table: now the table is warned
    about once, by the estimator's cross_validate and by cross_validate_models alike."""
    from frl_engine.validation.crossval import cross_validate_models

    frame = _with_copies(_encounters(), 30)
    y = frame.pop("readmitted")
    for run in (lambda: FallingRuleListClassifier(n_steps=200, n_chains=1).cross_validate(frame, y, n_folds=3),
                lambda: cross_validate_models(frame, (y == "yes").to_numpy(), n_folds=3, methods=("frl", "cart"),
                                              frl_params={"n_steps": 200, "n_chains": 1}, n_jobs=1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        assert sum(issubclass(w.category, RepeatedRecordsWarning) for w in caught) == 1
