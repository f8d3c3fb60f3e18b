"""Columns holding several codes in one cell (``428|250.01``, ``I50.9; E11.65``): a problem list, or all of an
encounter's diagnoses. Each frequent code and code group is an item, true when the cell's list holds it."""

import json

import numpy as np
import pandas as pd
import pytest

from frl_engine import FallingRuleListClassifier
from frl_engine.binarize import Binarizer, ColumnSpec
from frl_engine.cli import main
from frl_engine.columns import code_prefixes, listed_codes, read_column
from frl_engine.errors import DataError
from frl_engine.validation.external import check_columns

CODES = ["428.0", "428.9", "250.01", "250.02", "V45.81", "038.9", "401.9", "414.01", "786.50", "E878.1", "486",
         "427.31"]


def _ward(n: int = 3000, seed: int = 4, separator: str = "|") -> pd.DataFrame:
    """Death more likely with a heart-failure code (group 428) and with septicaemia (038.9), and with age."""
    rng = np.random.default_rng(seed)
    lists = [list(rng.choice(CODES, rng.integers(1, 5), replace=False)) for _ in range(n)]
    age = rng.integers(20, 95, n)
    risk = (0.08 + 0.35 * np.array([any(c.startswith("428") for c in codes) for codes in lists])
            + 0.2 * np.array(["038.9" in codes for codes in lists]) + 0.002 * (age - 50))
    died = rng.random(n) < risk
    cells = [separator.join(codes) for codes in lists]
    for i in rng.choice(n, n // 50, replace=False):
        cells[i] = "?"                                               # not recorded
    return pd.DataFrame({"age": age, "diagnoses": cells, "died": np.where(died, "yes", "no")})


def test_a_cells_codes_are_split_trimmed_upper_cased_and_counted_once():
    assert listed_codes("I50.9; e11.65|I50.9") == ("I50.9", "E11.65")
    assert listed_codes("428") == ("428",)
    assert listed_codes(" v45.81 | 038.9 ") == ("V45.81", "038.9")
    assert listed_codes("I10, E11.9") == ("I10", "E11.9")


def test_every_item_of_a_code_list_column_is_the_truth_of_its_condition():
    rng = np.random.default_rng(1)
    spellings = CODES + ["i50.9", "I50.1", "e11.65"]
    cells = [rng.choice(["|", "; ", " | "]).join(rng.choice(spellings, rng.integers(1, 4))) for _ in range(400)]
    cells[:5] = ["?", "", "NA", None, np.nan]
    series = pd.Series(cells, dtype=object)
    spec = ColumnSpec("dx", "code list", categories=("428.0", "I50.9", "E11.65"), prefixes=("428", "I50", "25", "V"),
                      has_missing=True)
    items = spec.item_matrix(series)
    frame = pd.DataFrame({"dx": series})
    for j, condition in enumerate(spec.conditions()):
        assert np.array_equal(items[:, j], condition.evaluate(frame)), condition.name
    # and the truth by hand: a cell holds a code or a code of the group, whatever its case and separator
    for i, cell in enumerate(cells[5:], start=5):
        parts = [p.strip().upper() for p in cell.replace(";", "|").split("|")]
        assert items[i, 1] == ("I50.9" in parts)
        assert items[i, 4] == any(p.startswith("I50") for p in parts)
    assert items[:5, :-1].sum() == 0 and items[:5, -1].all()        # a missing cell holds no code


def test_an_items_support_counts_each_patient_once_and_matches_a_count_by_hand():
    frame = _ward(1000)
    binarizer = Binarizer(min_support=0.05).fit(frame.drop(columns="died"))
    spec = next(s for s in binarizer.specs_ if s.name == "diagnoses")
    assert spec.kind == "code list"
    lists = [() if cell == "?" else tuple(cell.split("|")) for cell in frame["diagnoses"]]
    table = binarizer.item_table(frame.drop(columns="died")).set_index("item")
    for code in spec.categories:
        assert table.loc[f"diagnoses includes {code}", "patients"] == sum(code in codes for codes in lists)
    for group in spec.prefixes:
        assert table.loc[f"diagnoses includes a code starting with {group}", "patients"] == sum(
            any(c.startswith(group) for c in codes) for codes in lists)
    # every code and group on at least 5% of the patients (and not on all) has an item, and no other does; a group
    # that is one code with the same patients (486) is that code's item
    code_counts = {code: sum(code in codes for codes in lists) for code in CODES}
    group_counts = {}
    for codes in lists:
        for group in {p for c in codes for p in code_prefixes(c)}:
            group_counts[group] = group_counts.get(group, 0) + 1
    assert set(spec.categories) == {c for c, k in code_counts.items() if 50 <= k < 1000}
    assert set(spec.prefixes) == {g for g, k in group_counts.items() if 50 <= k < 1000
                                  and not (g in spec.categories and k == code_counts[g])}


def test_the_fitted_list_finds_the_codes_that_carry_the_risk():
    frame = _ward()
    model = FallingRuleListClassifier(random_state=0).fit(frame.drop(columns="died"), frame["died"])
    names = [str(rule) for rule in model.rules_]
    assert names[0] in ("diagnoses includes a code starting with 428", "diagnoses includes 038.9")
    assert "diagnoses includes a code starting with 428" in names
    assert any("diagnoses includes 038.9" in name for name in names)
    # the risks fall down the list, and a saved model scores the same patients the same way
    assert np.all(np.diff(model.probabilities_) <= 1e-12)
    again = FallingRuleListClassifier.from_dict(json.loads(json.dumps(model.to_dict())))
    new = _ward(500, seed=9, separator="; ")                        # another export's separator
    np.testing.assert_array_equal(again.apply(new.drop(columns="died")), model.apply(new.drop(columns="died")))


def test_frl_fit_predict_and_validate_read_a_code_list_column(tmp_path, capsys):
    data, new, model = tmp_path / "ward.csv", tmp_path / "new.csv", tmp_path / "model.json"
    _ward().to_csv(data, index=False)
    _ward(800, seed=7, separator="; ").to_csv(new, index=False)
    assert main(["fit", str(data), "--target", "died", "--seed", "0", "--out", str(model)]) == 0
    assert "diagnoses includes a code starting with 428" in capsys.readouterr().out
    assert main(["predict", str(model), str(new), "--out", str(tmp_path / "scored.csv")]) == 0
    scored = pd.read_csv(tmp_path / "scored.csv")
    heart = scored["diagnoses"].fillna("").str.contains("428")
    assert scored.loc[heart, "risk"].min() > scored.loc[~heart, "risk"].median()
    assert main(["validate", str(model), str(new), "--target", "died"]) == 0
    assert "AUROC" in capsys.readouterr().out


def test_new_patients_whose_lists_hold_none_of_the_models_codes_are_named_as_recoded():
    frame = _ward()
    model = FallingRuleListClassifier(random_state=0).fit(frame.drop(columns="died"), frame["died"])
    recoded = _ward(400, seed=3)
    recoded["diagnoses"] = ["I50.9; K21.9" if i % 2 else "J18.9" for i in range(len(recoded))]   # ICD-10 now
    with pytest.raises(DataError, match="column 'diagnoses' has none of the categories the model knows"):
        check_columns(model.to_dict(), recoded)
    check_columns(model.to_dict(), _ward(400, seed=3, separator=" ; "))   # the same codes: no complaint


@pytest.mark.filterwarnings("ignore::frl_engine.errors.PossibleLeakWarning")
def test_a_short_column_of_lists_is_read_as_lists_when_the_user_says_so():
    frame = pd.DataFrame({"dx": ["428.0|250.01", "428.0", "250.01|V45.81", "V45.81"] * 50,
                          "died": [1, 1, 0, 0] * 50})
    assert read_column("dx", frame["dx"]).kind != "code list"        # 4 distinct values: not recognised
    model = FallingRuleListClassifier(column_kinds={"dx": "code_list"}, random_state=0).fit(
        frame[["dx"]], frame["died"])
    assert str(model.rules_[0]) == "dx includes 428.0" and model.probabilities_[0] > 0.9


def test_the_baselines_get_a_yes_no_column_per_frequent_code():
    from frl_engine.validation.crossval import _baseline_frame

    frame = _ward(600)
    features, numeric, categorical = _baseline_frame(frame.drop(columns="died"))
    assert "diagnoses" not in categorical
    lists = frame["diagnoses"]
    for code in CODES:
        column = f"diagnoses includes {code}"
        assert column in numeric
        expected = np.where(lists == "?", np.nan, [float(code in cell.split("|")) for cell in lists])
        np.testing.assert_array_equal(features[column].to_numpy(), expected)


def test_the_patient_form_asks_for_a_list_and_finds_the_rule():
    from dashboard import services

    frame = _ward()
    model = FallingRuleListClassifier(random_state=0).fit(frame.drop(columns="died"), frame["died"]).to_dict()
    fields = {field.column: field for field in services.patient_fields(model)}
    assert fields["diagnoses"].kind == "code"
    example = fields["diagnoses"].example.split("; ")         # a list, as the table writes one: two codes it tests
    assert len(example) == 2 and any(code.startswith("428") for code in example) and "038.9" in example
    heart = services.explain_patient(model, {"diagnoses": "250.01; 428.9", "age": 60})
    fired = heart.steps[-1]
    assert fired[1] and "428" in fired[0]
    none = services.explain_patient(model, {"diagnoses": "486", "age": 30})
    assert none.risk < heart.risk
