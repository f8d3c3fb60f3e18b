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


@pytest.mark.parametrize("name,values,expected", [
    # serum sodium 125 to 149 mmol/L: 2 significant figures would leave only 130 and 140
    ("Sodium", np.arange(125, 150).repeat(40), (131.0, 137.0, 143.0)),
    # arterial pH 7.20 to 7.50: 2 figures would leave 7.3 and 7.4, never the clinical 7.35
    ("pH", np.round(np.linspace(7.20, 7.50, 1000), 2), (7.28, 7.35, 7.42)),
    # admission year 2015 to 2023: 2 figures would leave 2000 (none) and 3 figures 2020 alone
    ("AdmitYear", np.arange(2015, 2024).repeat(100), (2017.0, 2019.0, 2021.0)),
])
def test_a_narrow_range_far_from_zero_keeps_its_quartile_cuts(name, values, expected):
    """Rounding to 2 significant figures is for reading; where it would merge the quartiles of a narrow range
    (a lab value, a year), the cuts keep as many figures as keep them apart."""
    binarizer = Binarizer().fit(pd.DataFrame({name: values}))
    assert binarizer.specs_[0].thresholds == expected
    assert f"{name} >= {expected[1]:g}" in [c.name for c in binarizer.conditions_]


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


def test_a_count_is_cut_at_whole_numbers_catching_the_same_patients():
    """Visits 0 to 15: a quartile falling between 7 and 8 reads ``visits >= 8``, never ``visits >= 7.5``,
    and catches exactly the patients the half-way cut would."""
    visits = pd.Series(np.repeat(np.arange(16), 20), name="visits")  # quartiles 3.75, 7.5, 11.25
    assert any(q != np.floor(q) for q in np.quantile(visits, [0.25, 0.5, 0.75]))
    binarizer = Binarizer().fit(visits.to_frame())
    assert binarizer.specs_[0].thresholds == (4.0, 8.0, 11.0)  # 3.8 and 7.5 at 2 figures; 11.25 is 11
    assert "visits >= 8" in [c.name for c in binarizer.conditions_]
    assert np.array_equal(visits >= 8, visits >= 7.5) and np.array_equal(visits >= 4, visits >= 3.8)
    # a measurement with decimals keeps its decimal cuts
    assert not all(float(t).is_integer() for t in Binarizer().fit((visits / 10).to_frame()).specs_[0].thresholds)


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
        # more than a few text cells among the numbers (2 of 19 here): the column must be cleaned
        (_frame(Age=["61", "abc", "xyz", "?"] + [str(v) for v in range(48, 64)]), {"column_kinds": {"Age": "numeric"}},
         r"Column 'Age' is numeric but has non-numeric values such as 'abc', 'xyz' \(11% of its values\): clean them, mark them missing"),
        (_frame(PatientName=[f"name{i}" for i in range(4980)]), {},
         r"No column can make an item \(PatientName: a different value in 100% of rows: an identifier"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Agee": [65]}}, r"thresholds \(--threshold\) names column 'Agee'.*'Age'"),
        (_frame(Age=[60, 70, 80]), {"column_kinds": {"Sex": "categorical"}}, r"column_kinds \(--kind\) names column 'Sex'"),
        (_frame(Age=[60, 70, 80]), {"exclude": ["PatientID"]}, r"exclude \(--exclude\) names column 'PatientID'"),
        (_frame(Age=[60, 70, 80]), {"exclude": "Age"}, "Every column is left out.*tick Use"),
        (_frame(Age=[60, 70, 80]), {"column_kinds": {"Age": "numbr"}}, r"'numbr' for column 'Age'.*numeric, categorical"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": "sixty"}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": [60, float("nan")]}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": []}}, "thresholds for 'Age'"),
        (_frame(Age=[60, 70, 80]), {"thresholds": {"Age": [65]}, "column_kinds": {"Age": "boolean"}}, "'Age'"),
        (_frame(Age=[60.0, np.inf, 80.0, 90.0]), {}, "Column 'Age' has infinite values"),
        (_frame(Flag=["yes", "no", "maybe"]), {"column_kinds": {"Flag": "boolean"}}, r"Column 'Flag'.*'maybe'"),
        (_frame(When=pd.to_datetime(["2024-01-01", "2024-02-01"])), {}, r"When: dates such as '2024-01-01': turn them into numbers"),
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
    assert "11 with an item, 1 rarer level without" in capped.column_table().set_index("column").loc["Ward", "reason"]


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
    junk.loc[junk.index[::5], "Age"] = "abc"  # a fifth of the column: too many to read as missing
    with pytest.raises(DataError, match=r"Column 'Age' holds text where the model compares numbers: 'abc' "
                                        r"\(\d+ of \d+ patients with a value\): correct those cells, or leave them empty"):
        binarizer.transform(junk)
    # one patient with text for a number is refused, naming the cell, not read as missing behind the user's back
    with pytest.raises(DataError, match=r"'abc' \(1 of 1 patient with a value\)"):
        binarizer.transform(junk.iloc[[0]])
    assert binarizer.transform(junk.iloc[[1]]).shape[0] == 1
    # "unknown" is an export's word for no value, not junk: missing at any share, as fit reads it
    unknown = table.assign(Age=table["Age"].astype(str))
    unknown.loc[unknown.index[::5], "Age"] = "unknown"
    age_items = [j for j, c in enumerate(binarizer.conditions_) if c.column == "Age" and c.op in (">=", "<")]
    assert not binarizer.transform(unknown)[unknown.index[::5]][:, age_items].any()
    few = table.assign(Age=table["Age"].astype(object))
    few.loc[0, "Age"] = "pending"  # one text result: missing, so row 0 matches no Age threshold
    items, names = binarizer.transform(few), [c.name for c in binarizer.conditions_]
    age_items = [j for j, name in enumerate(names) if name.startswith("Age >=") or name.startswith("Age <")]
    assert age_items and not items[0, age_items].any()
    assert (items[1:, age_items] == binarizer.transform(table)[1:, age_items]).all()
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


# --------------------------------------------------------------------------
# "is not" items: an event that needs things to be absent
# --------------------------------------------------------------------------


def _negation_frame():
    # 100 rows: safety low 20, med 30, high 44, missing 6; persons 2/4/more; a yes/no column; a 2-level column.
    safety = ["low"] * 20 + ["med"] * 30 + ["high"] * 44 + [None] * 6
    persons = (["2"] * 34 + ["4"] * 33 + ["more"] * 33)
    return pd.DataFrame({"safety": safety, "persons": persons, "Sex": ["F", "M"] * 50,
                         "doors": ["2"] * 97 + ["4"] * 3})


def test_levels_of_a_column_with_three_or_more_levels_get_is_not_items_with_their_known_supports():
    frame = _negation_frame()
    binarizer = Binarizer(min_support=0.05).fit(frame)
    table = binarizer.item_table(frame).set_index("item")["patients"]
    # Counted by hand: "is not" never covers a missing value (6 rows of safety are missing).
    assert table["safety is not low"] == 30 + 44
    assert table["safety is not med"] == 20 + 44
    assert table["safety is not high"] == 20 + 30
    assert table["persons is not 2"] == 66
    assert table["safety is missing"] == 6
    # Two levels: "is not F" would be "= M", which has its own item.
    assert not [c for c in binarizer.conditions_ if c.column == "Sex" and c.op == "!="]
    # doors: "= 4" covers 3% (below the 5% support, no item); "is not 2" would be those 3%: no item either.
    assert [c.name for c in binarizer.conditions_ if c.column == "doors"] == ["doors = 2"]
    # The items are exactly the conditions evaluated on the raw table.
    items = binarizer.transform(frame)
    for j, condition in enumerate(binarizer.conditions_):
        assert np.array_equal(items[:, j], condition.evaluate(frame)), condition.name


def test_is_not_items_respect_support_near_universal_and_the_switch():
    # "is not D" covers 98.5% here (kept: under 99%); with one D row fewer it is near-universal.
    frame = pd.DataFrame({"ward": ["A"] * 100 + ["B"] * 60 + ["C"] * 37 + ["D"] * 3})
    names = [c.name for c in Binarizer(min_support=0.01).fit(frame).conditions_]
    assert names == ["ward = A", "ward = B", "ward = C", "ward = D",
                     "ward is not A", "ward is not B", "ward is not C", "ward is not D"]
    frame = pd.DataFrame({"ward": ["A"] * 100 + ["B"] * 60 + ["C"] * 38 + ["D"] * 2})  # "is not D": 99% of rows
    names = [c.name for c in Binarizer(min_support=0.01).fit(frame).conditions_]
    assert names == ["ward = A", "ward = B", "ward = C", "ward = D", "ward is not A", "ward is not B", "ward is not C"]
    # A negation that is 95% one other level says what that level's item says: "gender is not Female" is Male bar 2.
    frame = pd.DataFrame({"gender": ["Female"] * 60 + ["Male"] * 38 + ["Unknown"] * 2})
    # ("is not Unknown", 98%, is Female or Male: kept.)
    assert [c.name for c in Binarizer(min_support=0.01).fit(frame).conditions_] == [
        "gender = Female", "gender = Male", "gender = Unknown", "gender is not Unknown"]
    # A dominant level's negation below the support makes no item (A: 96%, so "is not A" is 4% < 5%).
    frame = pd.DataFrame({"ward": ["A"] * 192 + ["B"] * 4 + ["C"] * 4, "x": np.arange(200) % 5})
    assert "ward is not A" not in [c.name for c in Binarizer(min_support=0.05).fit(frame).conditions_]
    assert "ward is not A" in [c.name for c in Binarizer(min_support=0.02).fit(frame).conditions_]
    # Switched off: only the levels.
    assert {c.op for c in Binarizer(negate_levels=False).fit(_negation_frame()).conditions_} <= {"==", "is missing"}


def test_a_column_with_many_levels_gets_no_is_not_items():
    frame = pd.DataFrame({"ward": [f"w{i}" for i in range(11)] * 10})
    assert {c.op for c in Binarizer(min_support=0.05).fit(frame).conditions_} == {"=="}
    frame = pd.DataFrame({"ward": [f"w{i}" for i in range(10)] * 10})
    assert sum(c.op == "!=" for c in Binarizer(min_support=0.05).fit(frame).conditions_) == 10


def test_is_not_items_round_trip_and_old_specs_still_load():
    frame = _negation_frame()
    binarizer = Binarizer(min_support=0.05).fit(frame)
    restored = Binarizer.from_dict(json.loads(json.dumps(binarizer.to_dict())))
    assert restored.conditions_ == binarizer.conditions_
    assert np.array_equal(restored.transform(frame), binarizer.transform(frame))
    spec = ColumnSpec("safety", "categorical", categories=("high", "med", "low"), negated=("low",))
    assert spec.conditions()[-1] == Condition("safety", "!=", "low")
    assert spec.to_dict()["negated"] == ["low"]
    old = {"name": "safety", "kind": "categorical", "categories": ["high", "med"], "has_missing": False}
    assert ColumnSpec.from_dict(old).negated == ()
    assert "negated" not in ColumnSpec.from_dict(old).to_dict()  # files without negations are written as before
    for bad in ({**old, "negated": "low"}, {**old, "negated": ["low", "low"]},
                {"name": "Age", "kind": "numeric", "thresholds": [60], "negated": ["60"]}):
        with pytest.raises(ModelFileError):
            ColumnSpec.from_dict(bad)


def test_a_list_headed_by_negations_is_found_when_the_event_needs_things_absent():
    """Cars-like: the event needs safety not low AND persons not 2; levels alone cannot say it in one rule."""
    from frl_engine import FallingRuleListClassifier

    rng = np.random.default_rng(5)
    n = 1200
    frame = pd.DataFrame({"safety": rng.choice(["low", "med", "high"], n), "persons": rng.choice(["2", "4", "more"], n),
                          "buying": rng.choice(["vhigh", "high", "med", "low"], n)})
    good = (frame.safety != "low") & (frame.persons != "2")
    y = np.where(good, rng.random(n) < 0.9, rng.random(n) < 0.03)
    model = FallingRuleListClassifier(min_support=0.05, max_conditions=2, random_state=0).fit(frame, y)
    assert model.rules_[0] in ("safety is not low AND persons is not 2", "persons is not 2 AND safety is not low")
    assert model.supports_[0] == good.sum()


def test_a_list_with_is_not_items_saves_predicts_and_validates_on_new_data():
    from frl_engine import FallingRuleListClassifier
    from frl_engine.validation.external import check_columns, validate_model

    rng = np.random.default_rng(6)
    n = 1500
    frame = pd.DataFrame({"safety": rng.choice(["low", "med", "high"], n), "persons": rng.choice(["2", "4", "more"], n)})
    y = np.where((frame.safety != "low") & (frame.persons != "2"), rng.random(n) < 0.85, rng.random(n) < 0.05)
    model = FallingRuleListClassifier(min_support=0.05, random_state=0).fit(frame.iloc[:1000], y[:1000])
    assert any(c.op == "!=" for rule in model.rule_objects_ for c in rule.conditions)
    saved = FallingRuleListClassifier.from_dict(json.loads(json.dumps(model.to_dict(target="Acceptable"))))
    later = frame.iloc[1000:].reset_index(drop=True)
    assert np.array_equal(saved.predict_proba(later), model.predict_proba(later))
    # A patient whose safety is unknown is in no "safety is not low" rule: the ELSE (or a rule without safety).
    unknown = later.iloc[:1].assign(safety=np.nan)
    position = int(model.apply(unknown)[0])
    if position < len(model.rules_):
        assert "safety" not in {c.column for c in model.rule_objects_[position].conditions}
    model_dict = model.to_dict(target="Acceptable")
    result = validate_model(model_dict, later.assign(Acceptable=np.where(y[1000:], "yes", "no")))
    assert result.auroc > 0.8
    recoded = later.assign(safety="S-" + later["safety"], Acceptable=np.where(y[1000:], "yes", "no"))
    with pytest.raises(DataError, match="'safety' has none of the categories the model knows"):
        validate_model(model_dict, recoded)
    # The same check for a list whose only condition on safety is an "is not" one.
    only_negations = {"rules": [r for r in model_dict["rules"] if {c["op"] for c in r["conditions"]} == {"!="}],
                      "binarizer": model_dict["binarizer"]}
    assert only_negations["rules"]
    with pytest.raises(DataError, match="'safety' has none of the categories the model knows"):
        check_columns(only_negations, recoded)
