"""Cross-validation at real size: how the baselines scale, the HGB baseline, raw columns, and the layout.

The size thresholds are lowered here (monkeypatch) so that a few hundred rows take the
paths a 70,000-row export takes; the time on the real size is printed by
benchmarks/bench_evaluate.py, not asserted here.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.evaluate import cross_validate_models as reexported
from frl_engine.validation import crossval
from frl_engine.validation.crossval import METHODS, EvaluationResult, _baseline_frame, cross_validate_models


def raw_table(n=600, seed=0):
    """A raw export in miniature: '?' for missing, an identifier, codes, a yes/no and a signal in two columns."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 90, n).astype(object)
    age[rng.random(n) < 0.05] = "?"
    ward = rng.choice(["medical", "surgical", "icu", "?"], n, p=[0.45, 0.3, 0.15, 0.1])
    insulin = rng.choice(["No", "Steady", "Up"], n)
    smoker = rng.choice(["yes", "no"], n)
    logit = -1.5 + 0.04 * (np.where(age == "?", 50, age).astype(float) - 50) + 1.4 * (ward == "icu")
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    frame = pd.DataFrame({"encounter_id": np.arange(100_000, 100_000 + n), "age": age, "ward": ward,
                          "insulin": insulin, "smoker": smoker, "lab": rng.normal(size=n).round(3)})
    return frame, y


def test_the_old_import_path_is_the_new_function():
    assert reexported is cross_validate_models
    assert METHODS == ("frl", "svm", "logreg", "cart", "rf", "hgb")


def test_baselines_read_raw_columns_as_the_rule_list_does():
    frame, _ = raw_table()
    numbers, numeric, categorical = _baseline_frame(frame)
    assert "encounter_id" not in numbers.columns  # an identifier is no feature
    assert numeric == ["age", "smoker", "lab"] and categorical == ["ward", "insulin"]
    assert numbers["age"].isna().sum() == (frame["age"] == "?").sum()  # '?' is missing, the rest are numbers
    assert set(numbers["smoker"].dropna()) == {0.0, 1.0}
    ward = numbers["ward"]  # one integer label per level, "?" (missing) a level of its own
    assert ward.nunique() == 4 and ward[frame["ward"] == "?"].nunique() == 1
    assert (ward == ward[frame["ward"] == "?"].iloc[0]).sum() == (frame["ward"] == "?").sum()


def test_above_the_size_thresholds_the_baselines_scale_and_say_so(monkeypatch):
    monkeypatch.setattr(crossval, "TUNE_MAX_ROWS", 150)
    monkeypatch.setattr(crossval, "SVM_EXACT_MAX_ROWS", 150)
    monkeypatch.setattr(crossval, "RF_MAX_SAMPLES", 150)
    monkeypatch.setattr(crossval, "NYSTROEM_COMPONENTS", 50)
    frame, y = raw_table()
    result = cross_validate_models(frame, y, n_folds=3, methods=("svm", "logreg", "rf", "hgb"), random_state=3,
                                   n_jobs=1)
    notes = result.settings["scaling"]
    assert len(notes) == 3 and "subsample of 150 of the 400 training rows" in notes[0]
    assert "Nystroem" in notes[1] and "bootstrap sample of 150 rows" in notes[2]
    assert "Note: SVM: RBF kernel approximated" in result.format_table()
    for fold in result.fold_results("svm"):
        assert set(fold.best_params) == {"C", "gamma"}
    for fold in result.folds:
        assert fold.auroc == pytest.approx(roc_auc_score(fold.y_true, fold.scores), abs=1e-12)
    assert result.summary("hgb").auroc_mean > 0.65 and result.summary("svm").auroc_mean > 0.65  # the signal is found
    # Below the thresholds nothing is said and the exact kernel SVM runs.
    small = cross_validate_models(frame.iloc[:200], y[:200], n_folds=3, methods=("svm",), random_state=3, n_jobs=1)
    assert small.settings["scaling"] == [] and "Note:" not in small.format_table()


def test_the_tuned_model_is_the_grid_point_refitted_on_the_whole_fold(monkeypatch):
    from sklearn.base import clone

    monkeypatch.setattr(crossval, "TUNE_MAX_ROWS", 150)
    frame, y = raw_table(400)
    numbers, numeric, categorical = _baseline_frame(frame)
    model, best = crossval._fit_baseline("logreg", numeric, categorical, 7, numbers, y)
    pipeline, _ = crossval._baseline_model("logreg", numeric, categorical, 7, len(y))
    direct = clone(pipeline).set_params(**best).fit(numbers, y)
    assert np.allclose(model.predict_proba(numbers), direct.predict_proba(numbers))


def test_the_estimators_own_cross_validation_gives_the_evaluation_layers_numbers():
    frame, y = raw_table(300)
    params = {"n_steps": 300, "n_chains": 2, "min_support": 0.1}
    layer = cross_validate_models(frame, y, n_folds=3, methods=("frl",), frl_params=params, random_state=5, n_jobs=2)
    estimator = FallingRuleListClassifier(**params)
    own = estimator.cross_validate(frame, y, n_folds=3, random_state=5, n_jobs=1)
    assert own.aurocs == layer.summary("frl").aurocs
    assert estimator.validation_summary_ == layer.validation_summary()
    assert own.summary("frl").auroc_mean == layer.summary("frl").auroc_mean
    # the same full result as before the layers were split (the API contract): every fold's rows, scores,
    # ROC curve, rules and calibration, an EvaluationResult that round-trips through JSON
    assert isinstance(own, EvaluationResult) and own.methods == ("frl",)
    assert own.without_timings().folds == layer.without_timings().folds
    assert EvaluationResult.from_json(own.to_json()).without_timings().folds == own.without_timings().folds
    assert own.calibration_table().equals(layer.calibration_table())


def test_the_report_says_how_the_baselines_scaled(monkeypatch):
    from frl_engine.figures import evaluation_report_html

    monkeypatch.setattr(crossval, "RF_MAX_SAMPLES", 150)
    frame, y = raw_table(400)
    result = cross_validate_models(frame, y, n_folds=2, methods=("rf",), random_state=1, n_jobs=1)
    page = evaluation_report_html(result)
    assert "At this size: RF: each tree grown on a bootstrap sample of 150 rows." in page
