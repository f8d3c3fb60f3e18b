"""Several FRL settings in one `frl evaluate` run: each fold mined once, the numbers those of separate runs."""

import json

import numpy as np
import pytest

from frl_engine.cli import main
from frl_engine.errors import FRLError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.evaluate import EvaluationResult, cross_validate_models, method_seed
from frl_engine.folds import stratified_folds
from frl_engine.validation.sweep import cross_validate_settings
from test_evaluate import FAST_FRL, clinical_table

SETTINGS = [{**FAST_FRL, "lam": 2.0}, {**FAST_FRL, "lam": 8.0}, {**FAST_FRL, "lam": 8.0, "min_support": 0.1}]


@pytest.fixture(scope="module")
def swept():
    X, y = clinical_table()
    seen = []
    result = cross_validate_settings(X, y, SETTINGS, n_folds=3, methods=("frl", "cart"), random_state=11,
                                     n_jobs=1, dataset="toy", progress=lambda done, total: seen.append((done, total)))
    return result, seen


def test_each_setting_equals_its_own_separate_run(swept):
    result, _ = swept
    X, y = clinical_table()
    assert len(result.results) == 3
    for setting, shared in zip(SETTINGS, result.results):
        alone = cross_validate_models(X, y, n_folds=3, methods=("frl", "cart"), frl_params=setting,
                                      random_state=11, n_jobs=1, dataset="toy")
        assert shared.without_timings() == alone.without_timings()
    # Different lam on the same mined rules did change the lists somewhere (the comparison is not vacuous).
    assert result.results[0].summary("frl").list_lengths != result.results[1].summary("frl").list_lengths


def test_the_list_of_a_fold_is_the_estimators_own_fit(swept):
    result, _ = swept
    X, y = clinical_table()
    train, test = stratified_folds(y, 3, 11)[1]
    direct = FallingRuleListClassifier(**SETTINGS[0], random_state=method_seed(11, "frl", 1)).fit(X.iloc[train], y[train])
    fold = result.results[0].fold_results("frl")[1]
    assert fold.rules == tuple(direct.rules_)
    assert fold.scores == tuple(float(s) for s in direct.predict_proba(X.iloc[test])[:, 1])


def test_mining_runs_once_per_fold_and_mining_setting(swept):
    result, _ = swept
    # lam 2 and lam 8 share the 5% support rules; the 10% support setting mines its own: 2 groups x 3 folds.
    assert result.n_minings == 2 * 3 and result.n_frl_fits == 3 * 3
    assert result.labels == ("lam=2, min_support=0.05", "lam=8, min_support=0.05", "lam=8, min_support=0.1")


def test_progress_counts_every_finished_fit(swept):
    _, seen = swept
    total = 3 * 3 + 1 * 3  # FRL settings x folds + baselines x folds
    assert [t for _, t in seen] == [total] * len(seen)
    assert seen[-1][0] == total and all(b > a for (a, _), (b, _) in zip(seen, seen[1:]))


def test_same_numbers_in_two_workers(swept):
    result, _ = swept
    X, y = clinical_table()
    parallel = cross_validate_settings(X, y, SETTINGS[:2], n_folds=3, methods=("frl", "cart"),
                                       random_state=11, n_jobs=2, dataset="toy")
    for a, b in zip(parallel.results, result.results[:2]):
        assert a.without_timings() == b.without_timings()
    assert parallel.n_minings == 3


def test_settings_that_read_the_columns_differently_are_refused():
    X, y = clinical_table()
    with pytest.raises(FRLError, match="differ in exclude"):
        cross_validate_settings(X, y, [{"exclude": ("Lab",)}, {}], n_folds=3, methods=("frl", "cart"))
    with pytest.raises(FRLError, match="non-empty list"):
        cross_validate_settings(X, y, [], n_folds=3)
    with pytest.raises(FRLError, match="lam"):
        cross_validate_settings(X, y, [{"lam": -1.0}], n_folds=3, methods=("frl",))


def test_frl_evaluate_takes_several_lam_values(tmp_path, capsys):
    X, y = clinical_table()
    data = tmp_path / "toy.csv"
    X.assign(Event=np.where(y, "yes", "no")).to_csv(data, index=False)
    out = tmp_path / "result.json"
    status = main(["evaluate", str(data), "--target", "Event", "--lam", "2,8", "--steps", "400", "--chains", "2",
                   "--folds", "3", "--seed", "11", "--methods", "frl,cart", "--jobs", "1", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    assert "FRL lam=2" in printed and "FRL lam=8" in printed and "CART" in printed
    assert "6 FRL fits shared 3 rule minings" in printed
    for lam in (2, 8):
        written = EvaluationResult.load(tmp_path / f"result-lam{lam}.json")
        assert written.frl_params["lam"] == lam
        alone = cross_validate_models(X, y == 1, n_folds=3, methods=("frl", "cart"),
                                      frl_params={**FAST_FRL, "lam": float(lam)}, random_state=11)
        assert [f.auroc for f in written.folds] == [f.auroc for f in alone.folds]
        row = next(line for line in printed.splitlines() if line.startswith(f"FRL lam={lam} "))
        assert f"{alone.summary('frl').auroc_mean:.3f}" in row
    assert not out.exists()
    assert json.loads((tmp_path / "result-lam2.json").read_text())["format"] == "frl-evaluation"


def test_frl_evaluate_refuses_a_bad_lam_list(tmp_path, capsys):
    X, y = clinical_table()
    data = tmp_path / "toy.csv"
    X.assign(Event=y).to_csv(data, index=False)
    assert main(["evaluate", str(data), "--target", "Event", "--lam", "2,x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frl: error: ") and "--lam" in err and err.count("\n") == 1
