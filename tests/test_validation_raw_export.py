"""External validation on the synthetic raw hospital export: a list fitted on early encounters, validated on
later ones, reading '?' markers, ICD-9 code groups and the three-valued outcome exactly as at fit time."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from frl_engine.errors import DataError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import split_target
from frl_engine.validation.external import validate_model

SCRIPT = Path(__file__).resolve().parents[1] / "sample_data" / "make_raw_export.py"
pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="sample_data/make_raw_export.py is not there")


@pytest.fixture(scope="module")
def fitted():
    spec = importlib.util.spec_from_file_location("make_raw_export", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    frame = module.make_raw_export(12_000, seed=5)
    early, later = frame.iloc[:8000], frame.iloc[8000:].reset_index(drop=True)
    features, event, positive = split_target(early, "readmitted", "<30")
    model = FallingRuleListClassifier(exclude=["encounter_id", "patient_nbr"], n_steps=2000, n_chains=2,
                                      random_state=0).fit(features, event)
    model.event_label_ = positive
    return model.to_dict(target="readmitted", data_name="early.csv"), model, later


def test_a_later_period_of_the_raw_export_is_scored_as_the_estimator_scores_it(fitted):
    model_dict, model, later = fitted
    assert model_dict["rules"]
    result = validate_model(model_dict, later, data_name="later.csv", by="gender")
    event = (later["readmitted"] == "<30").to_numpy()
    risk = model.predict_proba(later.drop(columns=["readmitted"]))[:, list(model.classes_).index(True)]
    assert result.n == 4000 and result.events == int(event.sum())
    assert result.auroc == pytest.approx(roc_auc_score(event, risk), abs=1e-12)
    assert result.brier == pytest.approx(np.mean((risk - event) ** 2))
    assert sum(r.n for r in result.rules) == 4000
    assert {s.label for s in result.subgroups} >= {"Female", "Male"}


def test_question_marks_stay_missing_values_not_a_changed_type(fitted):
    model_dict, _, later = fitted
    numeric = [c["column"] for r in model_dict["rules"] for c in r["conditions"] if c["op"] in (">=", "<")]
    if not numeric:
        pytest.skip("the fitted list has no numeric condition")
    marked = later.astype({numeric[0]: object})
    marked.loc[:50, numeric[0]] = "?"
    validate_model(model_dict, marked)  # no error: '?' is a missing marker, as at fit time
    marked.loc[60, numeric[0]] = "unknown value"  # one text cell: missing, and the result says so
    result = validate_model(model_dict, marked)
    assert any(f"'{numeric[0]}'" in note and "'unknown value'" in note for note in result.overall.notes)
    marked.loc[marked.index[100::5], numeric[0]] = "unknown value"  # a fifth of the column: its type changed
    with pytest.raises(DataError, match=f"'{numeric[0]}' holds text such as 'unknown value'"):
        validate_model(model_dict, marked)


def test_codes_recoded_to_another_scheme_are_named(fitted):
    model_dict, _, later = fitted
    coded = [c["column"] for r in model_dict["rules"] for c in r["conditions"] if c["op"] in ("==", "starts with")]
    if not coded:
        pytest.skip("the fitted list has no category or code condition")
    recoded = later.assign(**{coded[0]: "Z" + later[coded[0]].astype(str) + "-new"})
    with pytest.raises(DataError, match=f"'{coded[0]}' has none of the categories the model knows"):
        validate_model(model_dict, recoded)
