"""FallingRuleListClassifier behaves as a scikit-learn binary classifier and as the paper's model."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from frl_engine import FallingRuleListClassifier
from frl_engine.errors import FRLError, ModelFileError
from frl_engine.model import fit_list
from frl_engine.simulate import simulate_rule_list_data


@parametrize_with_checks([FallingRuleListClassifier(n_steps=500, n_chains=1, random_state=0)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def clinical_frame(n=1500, seed=0):
    """A small clinical table with a known falling structure: old AND frail first, then smokers."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "Age": rng.integers(20, 95, size=n).astype(float),
        "Frail": rng.random(n) < 0.3,
        "Smoker": np.where(rng.random(n) < 0.35, "yes", "no"),
        "Ward": rng.choice(["medical", "surgical", "cardiac"], size=n),
    })
    risk = np.where((frame.Age >= 70) & frame.Frail, 0.8, np.where(frame.Smoker == "yes", 0.4, 0.08))
    y = np.where(rng.random(n) < risk, "readmitted", "home")
    return frame, y


@pytest.fixture(scope="module")
def fitted():
    frame, y = clinical_frame()
    model = FallingRuleListClassifier(random_state=0, positive_class="readmitted").fit(frame, y)
    return model, frame, y


def test_fitted_list_is_readable_falling_and_accounts_for_every_patient(fitted):
    model, frame, y = fitted
    assert model.rules_, "a list with real structure should not be empty"
    assert all("x_" not in name and name for name in model.rules_)
    assert len(model.probabilities_) == len(model.supports_) == len(model.rules_) + 1
    assert np.all(np.diff(model.probabilities_) <= 0)
    assert model.supports_.sum() == len(frame)
    assert model.positives_.sum() == (y == "readmitted").sum()
    # The top rule names the high-risk group.
    assert "Frail" in model.rules_[0] and "Age >=" in model.rules_[0]


def test_supports_and_apply_agree_with_the_rules_evaluated_on_the_data(fitted):
    model, frame, y = fitted
    position = model.apply(frame)
    counts = np.bincount(position, minlength=len(model.rules_) + 1)
    np.testing.assert_array_equal(counts, model.supports_)
    taken = np.zeros(len(frame), dtype=bool)
    for index, rule in enumerate(model.rule_objects_):
        captured = rule.evaluate(frame) & ~taken
        assert np.all(position[captured] == index)
        taken |= captured
    events = pd.Series(y == "readmitted").groupby(position).sum()
    np.testing.assert_array_equal(events.reindex(range(len(model.supports_)), fill_value=0), model.positives_)


def test_predict_proba_is_the_risk_of_the_rule_that_fires(fitted):
    model, frame, _ = fitted
    proba = model.predict_proba(frame)
    event_column = list(model.classes_).index("readmitted")
    np.testing.assert_allclose(proba[:, event_column], model.probabilities_[model.apply(frame)])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(model.predict(frame)) <= {"home", "readmitted"}
    np.testing.assert_array_equal(model.predict(frame) == "readmitted", proba[:, event_column] >= 0.5)


def test_a_risk_of_exactly_one_half_predicts_the_event(fitted):
    """predict says the event where the risk is at least 1/2: a tie is the event, whichever class sorts first."""
    model, frame, _ = fitted
    halved = model.to_dict()
    for rule in halved["rules"]:
        rule["probability"] = 0.5
    halved["default"]["probability"] = 0.5
    tied = FallingRuleListClassifier.from_dict(halved)
    assert list(tied.classes_) == ["home", "readmitted"]  # the event sorts second
    assert set(tied.predict(frame.iloc[:20])) == {"readmitted"}
    # and scikit-learn's reading of the score agrees: positive means classes_[1]
    assert np.all(tied.decision_function(frame.iloc[:20]) > 0)


def test_log_posterior_is_the_exact_objective_of_the_reported_list(fitted):
    model, _, _ = fitted
    order = [model.candidate_names_.index(name) for name in model.rules_]
    assert fit_list(model.problem_, order).log_posterior == pytest.approx(model.log_posterior_, abs=1e-9)


def test_same_seed_same_list_and_other_seeds_run(fitted):
    model, frame, y = fitted
    again = FallingRuleListClassifier(random_state=0, positive_class="readmitted", n_jobs=1).fit(frame, y)
    assert again.rules_ == model.rules_
    np.testing.assert_array_equal(again.probabilities_, model.probabilities_)


def test_json_round_trip_predicts_identically(fitted, tmp_path):
    model, frame, _ = fitted
    path = tmp_path / "model.json"
    model.save(path, target="Outcome", data_name="clinic.csv")
    text = path.read_text(encoding="utf-8")
    assert json.loads(text)["format"] == "frl-model"
    loaded = FallingRuleListClassifier.load(path)
    assert loaded.rules_ == model.rules_
    np.testing.assert_array_equal(loaded.predict_proba(frame), model.predict_proba(frame))
    np.testing.assert_array_equal(loaded.apply(frame), model.apply(frame))
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    # Missing values and unseen categories at prediction time fall through rules, never crash.
    odd = frame.head(5).copy()
    odd.loc[:, "Age"] = np.nan
    odd.loc[:, "Ward"] = "never seen"
    assert loaded.predict_proba(odd).shape == (5, 2)


def test_a_file_that_is_not_a_model_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ModelFileError, match="not a falling rule list model"):
        FallingRuleListClassifier.load(path)
    path.write_text("not json at all")
    with pytest.raises(ModelFileError, match="not valid JSON"):
        FallingRuleListClassifier.load(path)


def test_prediction_needs_the_columns_the_rules_use(fitted):
    model, frame, _ = fitted
    with pytest.raises(FRLError, match="lacks column"):
        model.predict_proba(frame.drop(columns=["Age"]))


def test_works_inside_cross_val_score_and_pipeline():
    frame, y = clinical_frame(800, seed=1)
    event = y == "readmitted"
    scores = cross_val_score(FallingRuleListClassifier(random_state=0, n_steps=2000), frame, event, cv=3, scoring="roc_auc")
    assert np.all(scores > 0.7)
    pipeline = Pipeline([("keep", FunctionTransformer(lambda f: f[["Age", "Frail", "Smoker"]])),
                         ("frl", FallingRuleListClassifier(random_state=0, n_steps=2000))])
    pipeline.fit(frame, event)
    assert pipeline.predict_proba(frame).shape == (800, 2)


def test_boolean_columns_as_rules_recover_the_simulated_list():
    """mine_rules=False: each boolean column is one candidate rule (the paper's section 4 setting)."""
    data = simulate_rule_list_data(np.random.default_rng(0), 5000, n_rules=40)
    columns = [f"rule{j}" for j in range(40)]
    frame = pd.DataFrame(data.coverage, columns=columns)
    model = FallingRuleListClassifier(mine_rules=False, random_state=0).fit(frame, data.y)
    assert model.rules_ == [columns[j] for j in data.true_order]
    np.testing.assert_allclose(model.probabilities_, data.probabilities, atol=0.06)


@pytest.mark.parametrize("params, message", [
    (dict(min_support=0), "min_support"),
    (dict(min_support=1.5), "min_support"),
    (dict(max_conditions=0), "max_conditions"),
    (dict(n_chains=0), "n_chains"),
    (dict(lam=-1), "lam"),
    (dict(cooling="slow"), "cooling"),
])
def test_bad_settings_get_a_message_naming_them(params, message):
    frame, y = clinical_frame(200)
    with pytest.raises(FRLError, match=message):
        FallingRuleListClassifier(**params).fit(frame, y)


def test_one_class_or_three_classes_are_refused():
    frame, _ = clinical_frame(100)
    with pytest.raises(ValueError, match="only one class"):
        FallingRuleListClassifier().fit(frame, np.ones(100))
    for constant in (True, False):  # an event vector (bool) takes a path of its own
        with pytest.raises(ValueError, match="only one class"):
            FallingRuleListClassifier().fit(frame, np.full(100, constant))
    with pytest.raises(ValueError, match="exactly two"):
        FallingRuleListClassifier().fit(frame, np.arange(100) % 3)



def test_an_outcome_of_three_values_is_the_named_event_against_all_others():
    """positive_class on a 3-valued outcome: the same model as on the event's yes/no column, named as the
    command line's --positive names it (classes "not <event>" and "<event>")."""
    frame, y = clinical_frame(800)
    rng = np.random.default_rng(5)
    when = np.where(rng.random(len(y)) < 0.5, "readmitted <30", "readmitted >30")
    three = np.where(y == "readmitted", when, "home")
    both = FallingRuleListClassifier(random_state=0, n_jobs=1, positive_class=["READMITTED <30 ", "readmitted >30"])
    both.fit(frame, pd.Series(three, name="readmission"))
    binary = FallingRuleListClassifier(random_state=0, n_jobs=1).fit(frame, y == "readmitted")
    assert list(both.classes_) == ["not readmitted <30 or readmitted >30", "readmitted <30 or readmitted >30"]
    assert both.rules_ == binary.rules_ and both.n_events_ == int((y == "readmitted").sum())
    np.testing.assert_allclose(both.predict_proba(frame)[:, 1], binary.predict_proba(frame)[:, 1])
    assert set(both.predict(frame)) <= set(both.classes_)
    assert both.to_dict()["outcome"]["target"] == "readmission"

    early = FallingRuleListClassifier(random_state=0, n_jobs=1, positive_class="readmitted <30").fit(frame, three)
    assert early.positive_class_ == "readmitted <30" and early.n_events_ == int((three == "readmitted <30").sum())
    codes = np.select([three == "home", three == "readmitted <30"], [0, 1], 2)
    by_code = FallingRuleListClassifier(random_state=0, n_jobs=1, positive_class=1).fit(frame, codes)
    assert list(by_code.classes_) == ["not 1", 1] and by_code.rules_ == early.rules_

    with pytest.raises(FRLError, match="'gone' is not one of the outcome values"):
        FallingRuleListClassifier(positive_class="gone").fit(frame, three)
    with pytest.raises(FRLError, match="no patient is without it"):
        FallingRuleListClassifier(positive_class=["home", "readmitted <30", "readmitted >30"]).fit(frame, three)
    with pytest.raises(ValueError, match="name the event, FallingRuleListClassifier\\(positive_class="):
        FallingRuleListClassifier().fit(frame, three)

def test_the_engine_recovers_the_list_that_generated_the_sample_data():
    """sample_data/readmission.csv was drawn from a known falling rule list; the MAP list finds its top three rules."""
    import importlib.util
    from pathlib import Path

    from frl_engine.rules import Rule

    folder = Path(__file__).resolve().parents[1] / "sample_data"
    spec = importlib.util.spec_from_file_location("make_sample_data", folder / "make_sample_data.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    frame = pd.read_csv(folder / "readmission.csv")
    y = frame.pop("Readmitted30d")
    model = FallingRuleListClassifier(random_state=0, exclude=["PatientID"]).fit(frame, y)
    true_names = [Rule(conditions).name for conditions, _ in generator.TRUE_LIST]
    assert model.rules_[:3] == true_names[:3]
    assert model.probabilities_[-1] == pytest.approx(generator.DEFAULT_RISK, abs=0.02)


def test_the_fpgrowth_reference_miner_gives_the_same_model():
    frame, y = clinical_frame(600, seed=2)
    fast = FallingRuleListClassifier(random_state=0, n_steps=2000).fit(frame, y)
    reference = FallingRuleListClassifier(random_state=0, n_steps=2000, miner="fpgrowth").fit(frame, y)
    assert reference.candidate_names_ == fast.candidate_names_
    assert reference.rules_ == fast.rules_
    with pytest.raises(FRLError, match="bitset"):
        FallingRuleListClassifier(miner="apriori").fit(frame, y)


def test_negate_levels_false_keeps_the_papers_items_and_is_kept_in_the_model_file():
    """Categorical columns of 3-10 levels get 'is not' items by default; negate_levels=False gives one item per level."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"safety": rng.choice(["low", "med", "high"], 600),
                          "persons": rng.choice(["2", "4", "more"], 600)})
    y = (frame["safety"] != "low") & (frame["persons"] != "2") & (rng.random(600) < 0.9)
    default = FallingRuleListClassifier(random_state=0).fit(frame, y)
    paper = FallingRuleListClassifier(negate_levels=False, random_state=0).fit(frame, y)
    assert any(" is not " in name for name in default.candidate_names_)
    assert not any(" is not " in name for name in paper.candidate_names_)
    again = FallingRuleListClassifier.from_dict(paper.to_dict())
    assert again.negate_levels is False
    with pytest.raises(FRLError, match="negate_levels"):
        FallingRuleListClassifier(negate_levels="no").fit(frame, y)


def test_the_outcome_is_named_as_the_series_y_names_it():
    """A model fitted in Python on ``y = frame.pop("died")`` recorded no target, so its card read
    'Risk of None = Yes' and format_list dropped the outcome; y's name is now the model's target."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 90, 300)})
    frame["died"] = np.where(rng.random(300) < 0.2 + 0.5 * (frame["age"] >= 70), "Yes", "No")
    y = frame.pop("died")
    model = FallingRuleListClassifier(random_state=0).fit(frame, y)
    assert model.to_dict()["outcome"]["target"] == "died" and "THEN died = Yes risk is" in model.format_list()
    unnamed = FallingRuleListClassifier(random_state=0).fit(frame, y.to_numpy())
    assert unnamed.to_dict()["outcome"]["target"] is None
    # a y computed from a finding carries that finding's name, which is no outcome's
    derived = rng.random(300) < 0.2 + 0.5 * (frame["age"] >= 70)
    assert derived.name == "age"
    assert FallingRuleListClassifier(random_state=0).fit(frame, derived).to_dict()["outcome"]["target"] is None
