"""From a raw clinical table to readable items (frl_engine.binarize)."""

import json

import numpy as np
import pandas as pd
import pytest

from frl_engine.binarize import Binarizer, ColumnSpec, infer_column_kind, round_threshold
from frl_engine.errors import DataError, ModelFileError
from frl_engine.rules import Condition


@pytest.fixture
def table():
    rng = np.random.default_rng(11)
    n = 300
    return pd.DataFrame(
        {
            "Age": rng.integers(25, 95, n),
            "Sex": rng.choice(["F", "M"], n),
            "Shape": rng.choice(["round", "oval", "irregular"], n, p=[0.5, 0.3, 0.2]),
            "BedSores": rng.choice(["Yes", "no"], n, p=[0.25, 0.75]),
            "Diabetes": rng.integers(0, 2, n),
            "Creatinine": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(0, 0.3, n).round(2)),
            "Ward": ["B4"] * n,
        }
    )


# --------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, kind",
    [
        ([True, False, True], "boolean"),
        ([0, 1, 1, 0], "boolean"),
        ([0.0, 1.0, np.nan, 1.0], "boolean"),
        (["Yes", "no", "YES", None], "boolean"),
        (["Y", "n", "y"], "boolean"),
        (["TRUE", "false"], "boolean"),
        (["F", "M", "F"], "categorical"),
        (["yes", "maybe", "no"], "categorical"),
        ([1, 2, 1, 2], "categorical"),
        (["home", "rehab", "home care"], "categorical"),
        ([61.5, 72.0, 45.25, 80.0], "numeric"),
        (["61", " 72 ", "45.5", ""], "numeric"),
        (["61"] * 19 + ["abc"], "numeric"),
        (["61", "72", "abc", "def"], "categorical"),
        ([5, 5, 5, np.nan], "constant"),
        (["x", "x"], "constant"),
        ([np.nan, np.nan], "empty"),
        ([None, " "], "empty"),
        (pd.to_datetime(["2024-01-01", "2024-02-01"]), "unsupported"),
    ],
)
def test_infer_column_kind(values, kind):
    assert infer_column_kind(pd.Series(values)) == kind


def test_each_kind_gives_its_items(table):
    binarizer = Binarizer(thresholds={"Age": [45, 60]}).fit(table)
    names = [c.name for c in binarizer.conditions_]
    assert names[:4] == ["Age >= 45", "Age < 45", "Age >= 60", "Age < 60"]
    assert {"Sex = F", "Sex = M", "BedSores", "Diabetes", "Shape = round", "Creatinine is missing"} <= set(names)
    kinds = {spec.name: spec.kind for spec in binarizer.specs_}
    assert kinds == {"Age": "numeric", "Sex": "categorical", "Shape": "categorical", "BedSores": "boolean",
                     "Diabetes": "boolean", "Creatinine": "numeric"}
    assert binarizer.constant_columns_ == ("Ward",)
    assert binarizer.conditions_ == [c for spec in binarizer.specs_ for c in spec.conditions()]


def test_categories_are_ordered_by_frequency_then_name():
    frame = pd.DataFrame({"Shape": ["oval"] * 3 + ["round"] * 5 + ["irregular"] * 3 + [" lobular "] * 1})
    spec = Binarizer().fit(frame).specs_[0]
    assert spec.categories == ("round", "irregular", "oval", "lobular")


def test_column_kinds_override_inference():
    frame = pd.DataFrame({"Stage": [1, 2, 3, 4, 2, 3, 1, 4], "Score": [1, 2, 1, 2, 1, 2, 2, 1],
                          "Flag": ["Yes", "no", "yes", "no", "no", "no", "yes", "no"]})
    binarizer = Binarizer(column_kinds={"Stage": "categorical", "Score": "numeric", "Flag": "boolean"}).fit(frame)
    names = [c.name for c in binarizer.conditions_]
    assert "Stage = 2" in names and "Score >= 2" in names and "Flag" in names
    assert binarizer.transform(frame)[:, names.index("Stage = 2")].tolist() == (frame["Stage"] == 2).tolist()


# --------------------------------------------------------------------------
# Numeric thresholds
# --------------------------------------------------------------------------


@pytest.mark.parametrize("raw, rounded", [(59.73, 60.0), (0.2374, 0.24), (1234, 1200.0), (-0.0004567, -0.00046),
                                          (75.0, 75.0), (0.0, 0.0)])
def test_round_threshold_to_two_significant_figures(raw, rounded):
    assert round_threshold(raw) == rounded


def test_quantile_thresholds_are_rounded_readable_and_named_without_float_noise():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"Age": rng.normal(60, 12, 2000), "Creatinine": rng.lognormal(0, 0.3, 2000)})
    binarizer = Binarizer().fit(frame)
    for spec in binarizer.specs_:
        raw = frame[spec.name].quantile([0.25, 0.5, 0.75]).to_numpy()
        assert spec.thresholds == tuple(round_threshold(q) for q in raw)
    names = [c.name for c in binarizer.conditions_]
    assert all("e" not in n.split()[-1] and len(n.split()[-1]) <= 4 for n in names), names


def test_n_thresholds_uses_evenly_spaced_interior_quantiles():
    frame = pd.DataFrame({"Score": np.arange(1, 1001)})  # different in every row: declared numeric, not an identifier
    spec = Binarizer(n_thresholds=4, column_kinds={"Score": "numeric"}).fit(frame).specs_[0]
    assert spec.thresholds == tuple(round_threshold(q) for q in np.quantile(np.arange(1, 1001), [0.2, 0.4, 0.6, 0.8]))


def test_thresholds_that_collapse_when_rounded_are_kept_once():
    # Quartiles 59.6, 60.1, 60.4 all round to 60: one threshold, two items, no duplicates.
    values = np.concatenate([np.linspace(50, 59.6, 250), np.linspace(59.6, 60.1, 250),
                             np.linspace(60.1, 60.4, 250), np.linspace(60.4, 90, 250)])
    binarizer = Binarizer().fit(pd.DataFrame({"Age": values}))
    assert binarizer.specs_[0].thresholds == (60.0,)
    assert [c.name for c in binarizer.conditions_] == ["Age >= 60", "Age < 60"]


def test_every_quantile_item_splits_the_patients():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({
        "MostlyZero": np.where(rng.random(500) < 0.85, 0.0, rng.exponential(0.3, 500).round(3)),
        "Counts": rng.poisson(0.4, 500),
        "Narrow": 100 + rng.integers(1, 4, 500) / 10,
    })
    binarizer = Binarizer().fit(frame)
    items = binarizer.transform(frame)
    assert [spec.name for spec in binarizer.specs_] == ["MostlyZero", "Counts", "Narrow"]
    assert np.all((items.sum(axis=0) > 0) & (items.sum(axis=0) < len(frame)))
    # A quartile at the minimum (0) moves up to the smallest value above it.
    assert binarizer.specs_[1].thresholds[0] == 1.0
    # 2 significant figures would give 100 everywhere; more figures are used instead.
    assert all(100 < t <= 100.3 for t in binarizer.specs_[2].thresholds)


def test_user_thresholds_are_used_as_given():
    frame = pd.DataFrame({"Age": [30, 44, 45.5, 50, 61, 70]})
    binarizer = Binarizer(thresholds={"Age": [60.25, 45.5]}).fit(frame)
    assert binarizer.specs_[0].thresholds == (45.5, 60.25)
    assert [c.name for c in binarizer.conditions_] == ["Age >= 45.5", "Age < 45.5", "Age >= 60.25", "Age < 60.25"]
    assert binarizer.transform(frame)[:, 0].tolist() == [False, False, True, True, True, True]


# --------------------------------------------------------------------------
# Missing values
# --------------------------------------------------------------------------


def test_missing_values_match_no_item_but_their_own(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    items = binarizer.transform(table)
    missing = table["Creatinine"].isna().to_numpy()
    columns = [j for j, c in enumerate(binarizer.conditions_) if c.column == "Creatinine"]
    names = [binarizer.conditions_[j].name for j in columns]
    assert names[-1] == "Creatinine is missing"
    assert items[:, columns[-1]].tolist() == missing.tolist()
    assert not items[missing][:, columns[:-1]].any()
    # Every non-missing value is on exactly one side of each threshold.
    assert np.all(items[~missing][:, columns[0:-1:2]] ^ items[~missing][:, columns[1:-1:2]])


def test_missing_values_in_new_data_are_accepted_when_fit_had_none(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    new = table.head(4).copy()
    new["Age"] = new["Age"].astype(float)
    new.loc[new.index[0], "Age"] = np.nan
    new.loc[new.index[1], "BedSores"] = None
    items = binarizer.transform(new)
    age = [j for j, c in enumerate(binarizer.conditions_) if c.column == "Age"]
    bed = [c.name for c in binarizer.conditions_].index("BedSores")
    assert not items[0, age].any() and not items[1, bed]
    assert "Age is missing" not in [c.name for c in binarizer.conditions_]


def test_yes_no_column_with_blanks_gets_a_missing_item():
    frame = pd.DataFrame({"BedSores": ["yes", "no", "", "no", "yes", None]})
    binarizer = Binarizer().fit(frame)
    assert [c.name for c in binarizer.conditions_] == ["BedSores", "BedSores is missing"]
    assert binarizer.transform(frame).tolist() == [[True, False], [False, False], [False, True], [False, False],
                                                   [True, False], [False, True]]


# --------------------------------------------------------------------------
# Errors a user can act on
# --------------------------------------------------------------------------


def _frame(**columns):
    return pd.DataFrame(columns)


@pytest.mark.parametrize(
    "frame, settings, pattern",
    [
        (pd.DataFrame({"Age": []}), {}, "no rows"),
        (pd.DataFrame(index=range(3)), {}, "no columns"),
        (pd.DataFrame([[1, 2], [3, 4]], columns=["Age", "Age"]), {}, "Column 'Age' appears 2 times"),
        (pd.DataFrame({0: [1, 2, 3]}), {}, "text name"),
        (_frame(Notes=[None, "?", "NA"]), {}, r"No column can make an item \(Notes: no values\)"),
        (_frame(Age=["61", "abc", "72", "?"] + [str(v) for v in range(40, 76)]), {},
         r"Column 'Age' is numeric but has non-numeric values such as 'abc': clean them, mark them missing"),
        (_frame(PatientName=[f"name{i}" for i in range(4980)]), {},
         r"No column can make an item \(PatientName: a different value in 100% of rows: an identifier"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Agee": [65]}}, r"thresholds names column 'Agee'.*'Age'"),
        (_frame(Age=[60, 70, 80]), {"column_kinds": {"Sex": "categorical"}}, "column_kinds names column 'Sex'"),
        (_frame(Age=[60, 70, 80]), {"exclude": ["PatientID"]}, "exclude names column 'PatientID'"),
        (_frame(Age=[60, 70, 80]), {"exclude": "Age"}, "Every column is excluded"),
        (_frame(Age=[60, 70, 80]), {"column_kinds": {"Age": "numbr"}}, r"'numbr' for column 'Age'.*numeric, categorical"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": "sixty"}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": [60, float("nan")]}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": []}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": [65]}, "column_kinds": {"Age": "boolean"}}, "'Age'"),
        (_frame(Age=[60.0, np.inf, 80.0, 90.0]), {}, "Column 'Age' has infinite values"),
        (_frame(Flag=["yes", "no", "maybe"]), {"column_kinds": {"Flag": "boolean"}}, r"Column 'Flag'.*'maybe'"),
        (_frame(When=pd.to_datetime(["2024-01-01", "2024-02-01"])), {}, r"When: datetime.*turn them into numbers"),
        (_frame(Ward=["B4", "B4"], Site=[1, 1]), {}, "single value"),
        (_frame(Age=[60, 70, 80]), {"n_thresholds": 0}, "n_thresholds"),
        (_frame(Age=[60, 70, 80]), {"max_categories": 1}, "max_categories"),
    ],
)
def test_unusable_tables_and_settings_raise_one_line_data_errors(frame, settings, pattern):
    with pytest.raises(DataError, match=pattern) as caught:
        Binarizer(**settings).fit(frame)
    assert "\n" not in str(caught.value)


def test_max_categories_caps_the_items_keeping_the_most_frequent_levels_and_never_refuses():
    frame = pd.DataFrame({"Ward": [f"w{i}" for i in range(12)] * 2 + ["w5"]})
    assert len(Binarizer(max_categories=12).fit(frame).conditions_) == 12
    capped = Binarizer(max_categories=11).fit(frame)
    names = [c.name for c in capped.conditions_]
    assert len(names) == 11 and names[0] == "Ward = w5"  # the most frequent level first
    assert "1 rarer levels without" in capped.column_table().set_index("column").loc["Ward", "reason"]


# --------------------------------------------------------------------------
# New data
# --------------------------------------------------------------------------


def test_transform_on_new_data_uses_what_fit_learned(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    new = pd.DataFrame({
        "Age": [30, 100, 60], "Sex": ["M", "F", "X"], "Shape": ["oval", "star", "round"],
        "BedSores": ["no", "YES", "n"], "Diabetes": [1, 0, 1], "Creatinine": [0.5, 9.0, np.nan],
        "Other": ["a", "b", "c"],
    })
    items = binarizer.transform(new)
    assert items.shape == (3, len(binarizer.conditions_))
    for j, condition in enumerate(binarizer.conditions_):
        assert items[:, j].tolist() == condition.evaluate(new).tolist()
    names = [c.name for c in binarizer.conditions_]
    assert not items[2, [j for j, n in enumerate(names) if n.startswith("Sex =")]].any()  # unseen category
    assert items[1, names.index("BedSores")]
    # The learned thresholds do not move with the new data.
    assert Binarizer(exclude=["Ward"]).fit(table).specs_ == binarizer.specs_


def test_transform_names_absent_columns_and_junk(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    with pytest.raises(DataError, match=r"lacks column\(s\) 'Age', 'Creatinine'"):
        binarizer.transform(table.drop(columns=["Age", "Creatinine"]))
    junk = table.assign(Age=table["Age"].astype(str))
    junk.loc[0, "Age"] = "unknown"
    with pytest.raises(DataError, match=r"Column 'Age' is numeric but has non-numeric values such as 'unknown'"):
        binarizer.transform(junk)
    with pytest.raises(RuntimeError, match="not fitted"):
        Binarizer().transform(table)


def test_item_table_counts_patients_per_item(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    summary = binarizer.item_table(table)
    items = binarizer.transform(table)
    assert list(summary.columns) == ["item", "column", "patients", "percent"]
    assert summary["item"].tolist() == [c.name for c in binarizer.conditions_]
    assert summary["column"].tolist() == [c.column for c in binarizer.conditions_]
    assert summary["patients"].tolist() == items.sum(axis=0).tolist()
    assert np.allclose(summary["percent"], 100 * items.mean(axis=0))
    row = summary.set_index("item").loc["Creatinine is missing"]
    assert row["patients"] == table["Creatinine"].isna().sum()


# --------------------------------------------------------------------------
# Saving what was learned
# --------------------------------------------------------------------------


def test_specs_and_binarizer_round_trip_through_json(table):
    binarizer = Binarizer(exclude=["Ward"]).fit(table)
    text = json.dumps(binarizer.to_dict(), allow_nan=False)
    restored = Binarizer.from_dict(json.loads(text))
    assert restored.specs_ == binarizer.specs_
    assert restored.conditions_ == binarizer.conditions_
    assert np.array_equal(restored.transform(table), binarizer.transform(table))
    for spec in binarizer.specs_:
        assert ColumnSpec.from_dict(spec.to_dict()) == spec


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {"name": "Age"},
        {"name": "Age", "kind": "numeric", "thresholds": []},
        {"name": "Age", "kind": "numeric", "thresholds": [60, 45]},
        {"name": "Age", "kind": "numeric", "thresholds": ["60"]},
        {"name": "Age", "kind": "ordinal", "thresholds": [60]},
        {"name": "Sex", "kind": "categorical", "categories": []},
        {"name": "Sex", "kind": "categorical", "categories": ["F", "F"]},
        {"name": "Flag", "kind": "boolean", "thresholds": [1]},
        {"name": "Flag", "kind": "boolean", "has_missing": "yes"},
        {"name": "Flag", "kind": "boolean", "colour": "red"},
    ],
)
def test_column_spec_from_dict_rejects_malformed_input(bad):
    with pytest.raises(ModelFileError):
        ColumnSpec.from_dict(bad)


def test_column_spec_items():
    spec = ColumnSpec("Age", "numeric", thresholds=(45, 60), has_missing=True)
    assert spec.conditions() == [Condition("Age", ">=", 45), Condition("Age", "<", 45), Condition("Age", ">=", 60),
                                 Condition("Age", "<", 60), Condition("Age", "is missing")]
    assert spec.to_dict() == {"name": "Age", "kind": "numeric", "thresholds": [45, 60], "categories": [],
                              "has_missing": True}


def test_a_numeric_patient_identifier_is_left_out_with_the_reason():
    """A rule like `PatientID >= 100750` would be meaningless on a card: the binarizer leaves the column out."""
    frame = pd.DataFrame({"PatientID": np.arange(100001, 100101), "Age": np.arange(100) % 60 + 30})
    binarizer = Binarizer().fit(frame)
    assert "PatientID" not in {c.column for c in binarizer.conditions_}
    row = binarizer.column_table().set_index("column").loc["PatientID"]
    assert row["kind"] == "identifier" and not row["used"] and "different value in 100% of rows" in row["reason"]
    assert "PatientID" not in {c.column for c in Binarizer(exclude=["PatientID"]).fit(frame).conditions_}
    # The user can insist it is a measurement.
    kept = Binarizer(column_kinds={"PatientID": "numeric"}).fit(frame)
    assert any(c.column == "PatientID" for c in kept.conditions_)
    # A measurement that happens to differ in every row is not an identifier when its name is not one.
    weights = frame.rename(columns={"PatientID": "Weight"}).assign(Weight=np.linspace(50.5, 99.5, 100))
    assert any(c.column == "Weight" for c in Binarizer().fit(weights).conditions_)
