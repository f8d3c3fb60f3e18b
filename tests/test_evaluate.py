"""The evaluation layer: cross-validation of FRL against the baselines, its result object, figures and CLI."""

import json
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from sklearn.metrics import roc_auc_score

from frl_engine.cli import main
from frl_engine.errors import FRLError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.evaluate import (METHODS, EvaluationResult, check_methods, cross_validate_models, mean_roc_curve,
                                 method_seed)
from frl_engine.figures import (FOLD_LINE_WIDTH, MEAN_LINE_WIDTH, calibration_figure, evaluation_report_html,
                                roc_figure)

FAST_FRL = {"n_steps": 400, "n_chains": 2}


def clinical_table(n=240, seed=0):
    """A small mixed table: numbers with gaps, categories, yes/no; the event depends on a few of them."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 90, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    ward = rng.choice(["medical", "surgical", "icu"], n)
    smoker = rng.choice(["yes", "no"], n)
    labs = rng.normal(size=n)
    logit = -1.5 + 0.04 * np.nan_to_num(age - 50) + 1.2 * (ward == "icu") + 0.8 * (smoker == "yes")
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    return pd.DataFrame({"Age": age, "Ward": ward, "Smoker": smoker, "Lab": labs}), y


@pytest.fixture(scope="module")
def result():
    X, y = clinical_table()
    return cross_validate_models(X, y, n_folds=3, frl_params=FAST_FRL, random_state=11, n_jobs=1, dataset="toy")


def test_same_numbers_whatever_the_number_of_workers(result):
    X, y = clinical_table()
    parallel = cross_validate_models(X, y, n_folds=3, frl_params=FAST_FRL, random_state=11, n_jobs=2, dataset="toy")
    assert parallel.without_timings() == result.without_timings()
    # ... and whichever other methods run alongside: FRL's folds alone are the same.
    alone = cross_validate_models(X, y, n_folds=3, methods=("frl",), frl_params=FAST_FRL, random_state=11, n_jobs=1)
    assert [(f.scores, f.rules, f.seed) for f in alone.fold_results("frl")] == \
        [(f.scores, f.rules, f.seed) for f in result.fold_results("frl")]
    # A different seed gives different folds.
    other = cross_validate_models(X, y, n_folds=3, methods=("cart",), random_state=12, n_jobs=1)
    assert other.fold_results("cart")[0].test_index != result.fold_results("cart")[0].test_index


def test_auroc_is_recomputed_from_the_stored_predictions(result):
    X, y = clinical_table()
    assert result.methods == METHODS
    for fold in result.folds:
        assert fold.auroc == pytest.approx(roc_auc_score(fold.y_true, fold.scores), abs=1e-12)
        assert list(fold.y_true) == list(y[list(fold.test_index)])
        assert fold.fpr[0] == 0 and fold.tpr[-1] == 1 and len(fold.fpr) == len(fold.tpr)
    # The stored FRL scores are what the list fitted on the training fold with the recorded seed predicts.
    fold = result.fold_results("frl")[1]
    train = np.setdiff1d(np.arange(len(y)), fold.test_index)
    model = FallingRuleListClassifier(**FAST_FRL, random_state=fold.seed).fit(X.iloc[train], y[train])
    assert model.rules_ == list(fold.rules)
    np.testing.assert_allclose(model.predict_proba(X.iloc[list(fold.test_index)])[:, 1], fold.scores)
    assert fold.seed == method_seed(11, "frl", 1)


def test_summary_mean_std_list_lengths_and_times(result):
    s = result.summary("frl")
    aurocs = [f.auroc for f in result.fold_results("frl")]
    assert s.auroc_mean == pytest.approx(np.mean(aurocs)) and s.auroc_std == pytest.approx(np.std(aurocs))
    assert s.list_lengths == tuple(len(f.rules) for f in result.fold_results("frl"))
    assert all(f.fit_seconds > 0 for f in result.folds)
    assert result.summary("svm").list_lengths is None
    svm_params = result.fold_results("svm")[0].best_params
    assert set(svm_params) == {"C", "gamma"} and set(result.fold_results("logreg")[0].best_params) == {"C"}
    table = result.auroc_table()
    assert list(table["method"]) == ["FRL", "SVM", "LogReg", "CART", "RF", "HGB"]
    assert "FRL" in result.format_table() and "fold 3" in result.format_table()
    assert result.validation_summary() == {"method": "3-fold stratified cross-validation", "n_folds": 3,
                                           "auroc_mean": s.auroc_mean, "auroc_std": s.auroc_std}


def test_folds_are_stratified_and_partition_the_rows(result):
    X, y = clinical_table()
    tests = [set(f.test_index) for f in result.fold_results("frl")]
    assert sum(len(t) for t in tests) == len(y) and set().union(*tests) == set(range(len(y)))
    for t in tests:
        share = y[list(t)].sum()
        assert abs(share - y.sum() / 3) <= 1
    for method in METHODS:  # every method is tested on the same folds
        assert [set(f.test_index) for f in result.fold_results(method)] == tests


def test_calibration_counts_add_up_to_the_test_folds(result):
    for fold in result.fold_results("frl"):
        assert len(fold.calibration) == fold.list_length + 1
        assert sum(c.count for c in fold.calibration) == fold.n_test
        assert sum(c.positives for c in fold.calibration) == sum(fold.y_true)
        predicted = [c.predicted for c in fold.calibration]
        assert predicted == sorted(predicted, reverse=True)  # risks fall down the list
        assert set(np.round(fold.scores, 12)) <= set(np.round(predicted, 12))
        for c in fold.calibration:
            assert c.observed is None if c.count == 0 else c.observed == c.positives / c.count
    assert result.calibration_table()["count"].sum() == result.n_rows


def test_perfectly_separable_toy_problem_gets_auroc_one():
    rng = np.random.default_rng(5)
    n = 200
    marker = rng.random(n) < 0.4
    X = pd.DataFrame({"Marker": np.where(marker, "yes", "no"), "Noise": rng.normal(size=n),
                      "Colour": rng.choice(["red", "blue"], n)})
    res = cross_validate_models(X, marker, n_folds=5, methods=("frl", "cart"), frl_params=FAST_FRL, random_state=0)
    assert [f.auroc for f in res.fold_results("frl")] == [1.0] * 5
    assert res.summary("frl").auroc_mean == 1.0 and res.summary("frl").auroc_std == 0.0
    fpr, tpr = mean_roc_curve(res.fold_results("frl"))
    assert fpr[0] == 0 and tpr[0] == 0 and np.all(tpr[1:] == 1.0)


def test_json_round_trip(result, tmp_path):
    text = result.to_json()
    json.loads(text)  # plain JSON: no NaN, no numpy types
    again = EvaluationResult.from_json(text)
    assert again == result
    assert again.summary("rf") == result.summary("rf")
    path = tmp_path / "result.json"
    result.save(path)
    assert EvaluationResult.load(path) == result
    with pytest.raises(FRLError, match="not an evaluation result"):
        EvaluationResult.from_dict({"format": "frl-model"})


def test_roc_figure_has_thin_fold_lines_and_bold_means(result):
    fig = roc_figure(result)
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == len(METHODS) * (result.n_folds + 1)
    per_method = result.n_folds + 1
    for m, method in enumerate(METHODS):
        traces = fig.data[m * per_method:(m + 1) * per_method]
        assert [t.line.width for t in traces[:-1]] == [FOLD_LINE_WIDTH] * result.n_folds
        assert traces[-1].line.width == MEAN_LINE_WIDTH > FOLD_LINE_WIDTH
        assert all(t.showlegend is False for t in traces[:-1])
        assert f"AUROC {result.summary(method).auroc_mean:.2f}" in traces[-1].name
        assert len({t.line.color for t in traces}) == 1
        assert list(traces[0].x) == list(result.fold_results(method)[0].fpr)
    only = roc_figure(result, methods=("frl", "rf"))
    assert len(only.data) == 2 * per_method


def test_calibration_figure_one_trace_per_fold(result):
    fig = calibration_figure(result)
    assert isinstance(fig, go.Figure) and len(fig.data) == result.n_folds
    for trace, fold in zip(fig.data, result.fold_results("frl")):
        shown = [c for c in fold.calibration if c.count]
        assert list(trace.x) == [c.predicted for c in shown]
        assert list(trace.y) == [c.observed for c in shown]


def test_report_html_is_self_contained(result):
    page = evaluation_report_html(result)
    assert page.startswith("<!DOCTYPE html>")
    assert "plotly.js v" in page and page.count("plotly.js v") == 1
    assert not re.search(r"<script[^>]*\bsrc\s*=", page)
    assert "AUROC" in page and "FRL" in page


@pytest.mark.parametrize("kwargs, message", [
    ({"methods": ("frl", "xgboost")}, "Unknown method 'xgboost': choose from frl, svm, logreg, cart, rf"),
    ({"methods": "frl,,svm,nope"}, "Unknown method 'nope'"),
    ({"methods": ()}, "No method"),
    ({"n_folds": 1}, "at least 2 folds, got 1"),
    ({"n_folds": 50}, "50 folds need at least 50 events and 50 non-events, but the data has only"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"random_state": -3}, "random_state"),
    ({"frl_params": {"n_step": 10}}, "Unknown FRL setting 'n_step'"),
])
def test_bad_settings_are_one_line_errors(kwargs, message):
    X, y = clinical_table(60)
    with pytest.raises(FRLError, match=re.escape(message)) as info:
        cross_validate_models(X, y, **kwargs)
    assert "\n" not in str(info.value)


def test_bad_outcome_is_refused():
    X, y = clinical_table(60)
    with pytest.raises(FRLError, match="60 rows"):
        cross_validate_models(X, y[:50])
    with pytest.raises(FRLError, match="true/false"):
        cross_validate_models(X, np.where(y, "sick", "well"))
    assert check_methods("FRL, rf") == ("frl", "rf")


def _write_csv(tmp_path, n=150):
    X, y = clinical_table(n, seed=3)
    frame = X.assign(Outcome=np.where(y, "died", "survived"))
    path = tmp_path / "patients.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_evaluate_writes_json_and_offline_html(tmp_path, capsys):
    data = _write_csv(tmp_path)
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    code = main(["evaluate", str(data), "--target", "Outcome", "--positive", "died", "--folds", "3",
                 "--steps", "300", "--chains", "1", "--methods", "frl,logreg,cart", "--jobs", "1",
                 "--out", str(out), "--html", str(page)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "FRL" in printed and "LogReg" in printed and "CART" in printed and "AUROC" in printed
    saved = EvaluationResult.from_json(out.read_text())
    assert saved.methods == ("frl", "logreg", "cart") and saved.n_folds == 3 and saved.n_rows == 150
    assert saved.frl_params["n_steps"] == 300 and saved.random_state == 0
    text = page.read_text()
    assert "plotly.js v" in text and "Plotly.newPlot" in text
    assert not re.search(r"<script[^>]*\bsrc\s*=", text)


@pytest.mark.parametrize("extra, message", [
    (["--methods", "frl,xgb"], "frl: error: Unknown method 'xgb'"),
    (["--folds", "1"], "frl: error: Cross-validation needs at least 2 folds"),
    (["--folds", "200"], "frl: error: 200 folds need at least 200 events"),
])
def test_cli_evaluate_errors(tmp_path, capsys, extra, message):
    data = _write_csv(tmp_path, 60)
    code = main(["evaluate", str(data), "--target", "Outcome", "--steps", "50", "--jobs", "1", *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message) and err.count("\n") == 1


def test_cli_evaluate_with_two_events_runs_every_baseline_and_warns_and_explains_its_columns(tmp_path, capsys):
    """Two events in 152 patients, two folds: each training fold holds one event, too few for the baselines' inner
    3-fold tuning, which stopped the run with a scikit-learn traceback. They are fitted untuned instead (one event)
    and the run warns that the patients are too few; --explain-columns prints how the columns were read."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"Age": rng.integers(20, 90, 152), "Ward": rng.choice(["A", "B"], 152),
                          "Outcome": ["died"] * 2 + ["alive"] * 150})
    data = tmp_path / "two.csv"
    frame.to_csv(data, index=False)
    code = main(["evaluate", str(data), "--target", "Outcome", "--positive", "died", "--folds", "2", "--steps", "200",
                 "--chains", "1", "--methods", "frl,logreg,svm,rf", "--jobs", "1", "--explain-columns"])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "LogReg" in printed and "SVM" in printed and "RF" in printed and "Traceback" not in err
    assert "Warning: Only 152 patients, 2 of them with the event" in printed
    assert printed.index("column ") < printed.index("AUROC") and "Ward " in printed
    assert "FRL fold 1: no rule beats the overall risk (" in printed and "0 rules" not in printed


def test_a_user_error_inside_a_parallel_fold_reaches_the_caller_as_is():
    from frl_engine.errors import RuleMiningError

    X, y = clinical_table(120)
    with pytest.raises(RuleMiningError, match=r"lower min_support \(now 0.999\)") as info:
        cross_validate_models(X, y, n_folds=3, methods=("cart", "frl"), frl_params={"min_support": 0.999}, n_jobs=2)
    assert "\n" not in str(info.value)


def test_progress_is_reported_per_fold_without_changing_the_numbers():
    import numpy as np
    import pandas as pd

    from frl_engine.evaluate import cross_validate_models

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.random(240), "b": rng.choice(["u", "v"], 240)})
    y = (X["a"] > 0.6) ^ (rng.random(240) < 0.1)
    seen = []
    with_progress = cross_validate_models(X, y, n_folds=3, methods=("cart", "logreg"), random_state=1,
                                          progress=lambda done, total: seen.append((done, total)))
    without = cross_validate_models(X, y, n_folds=3, methods=("cart", "logreg"), random_state=1)
    assert seen == [(i, 6) for i in range(1, 7)]
    assert [f.auroc for f in with_progress.folds] == [f.auroc for f in without.folds]


def test_cart_is_tuned_as_the_other_baselines_not_grown_fully():
    """A fully grown tree memorises a noisy outcome (AUROC .54 on the raw export, .67 on Pima), which flattered FRL.
    CART's smallest leaf is chosen by the nested grid search, and it ranks new patients far better than a full tree
    on a smooth, noisy risk."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    n = 1200
    X = pd.DataFrame({"age": rng.uniform(20, 90, n), "bp": rng.normal(130, 20, n), "noise": rng.normal(0, 1, n)})
    y = rng.random(n) < 1 / (1 + np.exp(-(X["age"] - 60) / 10))
    result = cross_validate_models(X, y, n_folds=3, methods=("cart",), random_state=0, n_jobs=1)
    chosen = [f.best_params["min_samples_leaf"] for f in result.fold_results("cart")]
    assert all(leaf > 1 for leaf in chosen), chosen
    full = [roc_auc_score(f.y_true, DecisionTreeClassifier(random_state=0).fit(
        X.drop(index=list(f.test_index)), np.delete(y, list(f.test_index))).predict_proba(
        X.iloc[list(f.test_index)])[:, 1]) for f in result.fold_results("cart")]
    assert result.summary("cart").auroc_mean > np.mean(full) + 0.05


def test_evaluate_warns_of_a_number_the_outcome_was_cut_from(tmp_path, capsys):
    """R's birthwt: low is bwt < 2500 g. frl fit warned; frl evaluate printed AUROC .96 for FRL and .997 for the
    baselines without a word."""
    rng = np.random.default_rng(8)
    n = 300
    weight = np.round(rng.normal(2950, 700, n))
    frame = pd.DataFrame({"age": rng.integers(15, 45, n), "smoke": rng.choice(["yes", "no"], n), "bwt": weight,
                          "low": np.where(weight < 2500, "yes", "no")})
    frame.to_csv(tmp_path / "birthwt.csv", index=False)
    code = main(["evaluate", str(tmp_path / "birthwt.csv"), "--target", "low", "--folds", "3", "--methods", "cart",
                 "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Warning: 'bwt < 2500' alone tells the outcome almost perfectly" in out and "--exclude bwt" in out
    honest = frame.assign(low=np.where(rng.random(n) < np.where(weight < 2500, 0.6, 0.2), "yes", "no"))
    honest.to_csv(tmp_path / "honest.csv", index=False)
    assert main(["evaluate", str(tmp_path / "honest.csv"), "--target", "low", "--folds", "3", "--methods", "cart",
                 "--jobs", "1"]) == 0
    assert "almost perfectly" not in capsys.readouterr().out
