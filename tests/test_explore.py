"""Hyperparameter exploration (frl_engine.explore, `frl explore`, `frl fit --tune`), locally and on Dask."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.errors import FRLError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.evaluate import cross_validate_models
from frl_engine.explore import (TABLE_COLUMNS, ExploreGrid, explore, one_standard_error_choice, pareto_mask)
from frl_engine.io import read_table, split_target

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "readmission.csv"
FAST = {"exclude": ["PatientID"], "n_steps": 1000, "n_chains": 2}
NUMBERS = ["lam", "min_support", "max_conditions", "n_rules", "n_conditions", "log_posterior", "auroc_mean",
           "auroc_sd", "n_candidates"]


@pytest.fixture(scope="module")
def sample():
    features, event, _ = split_target(read_table(SAMPLE), "Readmitted30d", None)
    return features, event


@pytest.fixture(scope="module")
def local_result(sample):
    X, y = sample
    return explore(X, y, lam=[2, 8], min_support=[0.05, 0.1], max_conditions=[2], n_folds=3, random_state=0,
                   params=FAST, n_jobs=2)


def deterministic(table):
    return table.drop(columns=["fit_seconds"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------- the grid
@pytest.mark.parametrize("grid, message", [
    (dict(lam=[], min_support=[0.05]), "The grid is empty: give at least one value of lam"),
    (dict(lam=[2], min_support=[]), "The grid is empty: give at least one value of min_support"),
    (dict(lam=[2, -1], min_support=[0.05]), "lam (the prior mean list length) must be positive, got -1"),
    (dict(lam=[0], min_support=[0.05]), "lam (the prior mean list length) must be positive, got 0"),
    (dict(lam=[2], min_support=[0.05, 5]), "min_support is a fraction of patients strictly between 0 and 1"),
    (dict(lam=[2], min_support=[0]), "strictly between 0 and 1 (e.g. 0.05 for 5%), got 0"),
    (dict(lam=[2], min_support=[1]), "strictly between 0 and 1 (e.g. 0.05 for 5%), got 1"),
    (dict(lam=[2], min_support=[0.05], max_conditions=[0]), "max_conditions must be at least 1, got 0"),
    (dict(lam=["a"], min_support=[0.05]), "lam takes numbers, got 'a'"),
    (dict(lam=[2], min_support=[0.05], n_thresholds=[3, 0]),
     "n_thresholds (thresholds per numeric column) must be at least 1, got 0"),
    (dict(lam=[2], min_support=[0.05], n_thresholds=[2.5]), "n_thresholds takes whole numbers, got 2.5"),
])
def test_a_bad_grid_is_refused_with_one_message(grid, message):
    with pytest.raises(FRLError) as info:
        ExploreGrid(**grid)
    assert message in str(info.value)


def test_grid_values_are_sorted_and_deduplicated_and_the_cells_are_their_product():
    grid = ExploreGrid(lam=[8, 2, 8], min_support=[0.1, 0.05], max_conditions=[2.0, 1])
    assert grid.lam == (2.0, 8.0) and grid.min_support == (0.05, 0.1) and grid.max_conditions == (1, 2)
    assert len(grid) == 8 and len(set(grid.cells)) == 8 and len(grid.mining_groups) == 4


@pytest.mark.parametrize("argv, message", [
    (["--lam", ","], "--lam is empty"),
    (["--lam", "2,-4"], "lam (the prior mean list length) must be positive, got -4"),
    (["--min-support", "0.05,1.5"], "--min-support is a fraction of patients strictly between 0 and 1"),
    (["--max-conditions", "1.5"], "--max-conditions takes whole numbers"),
    (["--lam", "two"], "--lam takes numbers separated by commas"),
    (["--n-thresholds", "0"], "--n-thresholds (thresholds per numeric column) must be at least 1, got 0"),
])
def test_cli_bad_grid_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    status = main(["explore", str(SAMPLE), "--target", "Readmitted30d", "--exclude", "PatientID",
                   "--out", str(tmp_path / "t.csv"), *argv])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("frl: error: ") and message in err
    assert not (tmp_path / "t.csv").exists()


# ---------------------------------------------------------------------------------------------- choices
def test_pareto_cells_are_those_no_other_cell_beats():
    n_rules = [2, 3, 3, 5, 4, 2]
    auroc = [0.70, 0.80, 0.75, 0.85, 0.80, np.nan]
    # (2, .70) best at 2 rules; (3, .80) beats (3, .75) and (4, .80); (5, .85) highest.
    assert pareto_mask(n_rules, auroc).tolist() == [True, True, False, True, False, False]


def test_the_one_standard_error_rule_picks_the_shortest_list_within_one_se_of_the_best():
    # best: cell 2 (.85, SE .02) -> floor .83; eligible: cells 1 (.84, 4 rules), 2 (.85, 6), 3 (.83, 4 rules, more
    # conditions); cell 0 (.80, 2 rules) is too far below.  Shortest: 4 rules; tie -> fewer conditions -> cell 1.
    choice = one_standard_error_choice(n_rules=[2, 4, 6, 4], n_conditions=[2, 5, 9, 7],
                                       auroc_mean=[0.80, 0.84, 0.85, 0.83], auroc_se=[0.01, 0.01, 0.02, 0.01])
    assert choice == 1
    assert one_standard_error_choice([1], [1], [np.nan], [np.nan]) is None


# ---------------------------------------------------------------------------------------------- the engine
def test_the_table_has_one_row_per_cell_and_its_statistics_agree_with_their_definitions(local_result):
    table = local_result.table
    assert list(table.columns) == list(TABLE_COLUMNS) and len(table) == 4
    assert sorted(zip(table.lam, table.min_support)) == [(2, 0.05), (2, 0.1), (8, 0.05), (8, 0.1)]
    for _, row in table.iterrows():
        folds = np.array([float(v) for v in row["auroc_folds"].split()])
        assert len(folds) == 3
        assert row["auroc_mean"] == pytest.approx(folds.mean(), abs=1e-4)
        assert row["auroc_sd"] == pytest.approx(folds.std(ddof=1), abs=1e-4)
        assert row["auroc_se"] == pytest.approx(row["auroc_sd"] / np.sqrt(3))
        rules = row["rules"].split(" | ") if row["rules"] else []
        assert row["n_rules"] == len(rules) and row["top_rule"] == (rules[0] if rules else "")
        assert row["n_conditions"] == sum(r.count(" AND ") + 1 for r in rules)
    assert table["recommended"].sum() == 1 and table.loc[table.recommended, "pareto"].all()


def test_a_cell_is_exactly_the_estimator_and_frl_evaluate_with_its_settings(sample, local_result):
    """Sharing the mining between cells changes nothing: the full-data list is the estimator's with the
    same settings and seed, and the cross-validated AUROC is `frl evaluate`'s for FRL."""
    X, y = sample
    row = local_result.table.iloc[-1]
    settings = local_result.cell_settings(row)
    model = FallingRuleListClassifier(**settings).fit(X, y)
    assert " | ".join(model.rules_) == row["rules"]
    assert model.log_posterior_ == pytest.approx(row["log_posterior"], abs=1e-9)
    assert len(model.candidate_names_) == row["n_candidates"]
    params = {k: v for k, v in settings.items() if k != "random_state"}
    evaluation = cross_validate_models(X, y, n_folds=3, methods=("frl",), frl_params=params, random_state=0, n_jobs=1)
    aurocs = evaluation.summary("frl").aurocs
    assert row["auroc_mean"] == pytest.approx(np.mean(aurocs), abs=1e-12)


def test_the_number_of_thresholds_is_a_dimension_of_the_grid_and_a_cell_is_the_estimator_with_it(sample, tmp_path,
                                                                                                   capsys):
    """Each n_thresholds mines its own items; its cells are the estimator's lists with that setting, and
    `frl fit --tune --tune-n-thresholds` fits the recommended cell's, thresholds included."""
    X, y = sample
    result = explore(X, y, lam=[4], min_support=[0.1], max_conditions=[1], n_thresholds=[1, 5], n_folds=3,
                     random_state=0, params=FAST, n_jobs=1)
    table = result.table
    assert table["n_thresholds"].tolist() == [1, 5]
    assert table.loc[0, "n_candidates"] < table.loc[1, "n_candidates"]  # more cut points, more one-item rules
    for _, row in table.iterrows():
        settings = result.cell_settings(row)
        assert settings["n_thresholds"] == row["n_thresholds"]
        model = FallingRuleListClassifier(**settings).fit(X, y)
        assert " | ".join(model.rules_) == row["rules"] and len(model.candidate_names_) == row["n_candidates"]
    model_path = tmp_path / "model.json"
    status = main(["fit", str(SAMPLE), "--target", "Readmitted30d", "--exclude", "PatientID", "--tune",
                   "--tune-lam", "4", "--tune-min-support", "0.1", "--tune-max-conditions", "1",
                   "--tune-n-thresholds", "1,5", "--tune-folds", "3", "--steps", "1000", "--chains", "2",
                   "--out", str(model_path)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    rec = result.recommended
    assert FallingRuleListClassifier.load(model_path).n_thresholds == rec["n_thresholds"]
    assert f"--n-thresholds {int(rec['n_thresholds'])}:" in printed
    tuning = json.loads(model_path.read_text())["training"]["tuning"]  # how the settings were chosen travels along
    assert tuning["grid"]["n_thresholds"] == [1, 5] and tuning["folds"] == 3
    assert tuning["chosen"]["n_thresholds"] == rec["n_thresholds"]
    assert tuning["auroc_mean"] == pytest.approx(rec["auroc_mean"]) and "optimistic" in tuning["note"]


def test_the_same_seed_gives_the_same_table_for_any_number_of_workers(sample, local_result):
    X, y = sample
    serial = explore(X, y, lam=[2, 8], min_support=[0.05, 0.1], n_folds=3, random_state=0, params=FAST, n_jobs=1)
    pd.testing.assert_frame_equal(deterministic(serial.table), deterministic(local_result.table))
    other = explore(X, y, lam=[2], min_support=[0.1], n_folds=3, random_state=1, params=FAST, n_jobs=1)
    assert other.table.iloc[0]["auroc_folds"] != local_result.table.query("lam == 2 and min_support == 0.1").iloc[0]["auroc_folds"]


def test_a_stopped_run_keeps_the_finished_cells_and_cancels_the_rest(sample, local_result):
    X, y = sample
    seen = []
    result = explore(X, y, lam=[2, 8], min_support=[0.05, 0.1], n_folds=3, random_state=0, params=FAST, n_jobs=2,
                     progress=lambda done, total, rows: seen.append((done, total)),
                     should_stop=lambda: len(seen) >= 1)
    assert result.stopped and seen == [(1, 8)]
    assert len(result.table) < 4
    full = deterministic(local_result.table).set_index(["lam", "min_support", "max_conditions"])
    for _, row in deterministic(result.table).iterrows():  # finished cells are the complete run's (bar the marks)
        expected = full.loc[(row["lam"], row["min_support"], row["max_conditions"])]
        assert row["rules"] == expected["rules"] and row["auroc_mean"] == expected["auroc_mean"]


def test_a_cell_that_cannot_be_mined_is_reported_and_the_others_are_kept(sample):
    X, y = sample
    result = explore(X, y, lam=[4], min_support=[0.05, 0.9], n_folds=2, random_state=0, params=FAST, n_jobs=1)
    bad = result.table[result.table.min_support == 0.9].iloc[0]
    assert "No rule covers at least 90%" in bad["error"] and np.isnan(bad["auroc_mean"])
    assert result.recommended["min_support"] == 0.05
    with pytest.raises(FRLError, match="No cell of the grid could be fitted"):
        explore(X, y, lam=[4], min_support=[0.9], n_folds=2, params=FAST, n_jobs=1)


def test_unknown_settings_and_bad_folds_are_refused(sample):
    X, y = sample
    with pytest.raises(FRLError, match="explore cannot vary or take 'lam'"):
        explore(X, y, lam=[2], min_support=[0.1], params={"lam": 3})
    with pytest.raises(FRLError, match="at least 2 folds"):
        explore(X, y, lam=[2], min_support=[0.1], n_folds=1)


# ---------------------------------------------------------------------------------------------- Dask
def test_a_dask_cluster_gives_the_same_table(sample, local_result):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            result = explore(*sample, lam=[2, 8], min_support=[0.05, 0.1], n_folds=3, random_state=0, params=FAST,
                             scheduler=cluster.scheduler_address)
            ran = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert result.where.startswith("dask (tcp://")
    assert "explore_task" in ran  # the tasks ran on the cluster
    pd.testing.assert_frame_equal(deterministic(result.table), deterministic(local_result.table))


def test_a_worker_lost_mid_run_does_not_lose_the_run(sample, local_result):
    """A worker process dies after the first task: Dask re-runs its tasks elsewhere, the table is the same."""
    distributed = pytest.importorskip("distributed")
    import os

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            pids = client.run(os.getpid)  # worker address -> its process
            killed = []

            def progress(done, total, rows):
                if not killed:
                    victim = sorted(pids)[0]
                    os.kill(pids[victim], signal.SIGKILL)
                    killed.append(victim)

            result = explore(*sample, lam=[2, 8], min_support=[0.05, 0.1], n_folds=3, random_state=0, params=FAST,
                             scheduler=cluster.scheduler_address, progress=progress)
    assert killed and not result.stopped
    psutil = pytest.importorskip("psutil")
    assert not psutil.pid_exists(pids[killed[0]]) or psutil.Process(pids[killed[0]]).status() == psutil.STATUS_ZOMBIE
    pd.testing.assert_frame_equal(deterministic(result.table), deterministic(local_result.table))


def test_an_unreachable_scheduler_is_one_message(sample):
    with pytest.raises(FRLError, match="Cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        explore(*sample, lam=[2], min_support=[0.1], n_folds=2, params=FAST, scheduler="tcp://127.0.0.1:1")


# ---------------------------------------------------------------------------------------------- CLI
def test_frl_explore_writes_the_table_and_the_report_and_prints_it_sorted(tmp_path, capsys, local_result):
    out, html = tmp_path / "table.csv", tmp_path / "report.html"
    status = main(["explore", str(SAMPLE), "--target", "Readmitted30d", "--exclude", "PatientID", "--lam", "2,8",
                   "--min-support", "0.05,0.1", "--folds", "3", "--seed", "0", "--steps", "1000", "--chains", "2",
                   "--out", str(out), "--html", str(html)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    table = pd.read_csv(out)
    assert len(table) == 4 and {"lam", "min_support", "max_conditions", "n_rules", "auroc_mean", "auroc_sd",
                                "log_posterior"} <= set(table.columns)
    expected = deterministic(local_result.table)
    assert np.allclose(table[NUMBERS].to_numpy(float), expected[NUMBERS].to_numpy(float))
    assert sum(line.startswith("[") and "/4] λ" in line for line in printed.splitlines()) == 4
    lines = printed.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:3] == ["lam", "support", "cond"])
    shown = [float(line[2:].split()[5]) for line in lines[head + 1:head + 5]]
    assert shown == sorted(shown, reverse=True)
    assert shown == pytest.approx(sorted(expected["auroc_mean"], reverse=True), abs=5e-4)
    assert "Recommended: --lam" in printed and "no setting found a rule" not in printed
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "plotly" in page and "recommended" in page


def test_frl_fit_tune_fits_the_recommended_cell(tmp_path, capsys, local_result):
    model_path = tmp_path / "model.json"
    status = main(["fit", str(SAMPLE), "--target", "Readmitted30d", "--exclude", "PatientID", "--tune",
                   "--tune-lam", "2,8", "--tune-min-support", "0.05,0.1", "--tune-max-conditions", "2",
                   "--tune-folds", "3", "--steps", "1000", "--chains", "2", "--out", str(model_path)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    rec = local_result.recommended
    model = FallingRuleListClassifier.load(model_path)
    assert model.lam == rec["lam"] and model.min_support == rec["min_support"]
    assert " | ".join(model.rules_) == rec["rules"]
    assert model.log_posterior_ == pytest.approx(rec["log_posterior"], abs=1e-9)
    assert f"Tuned (one-standard-error rule): --lam {rec['lam']:g}" in printed


def test_ctrl_c_stops_frl_explore_with_one_line_and_no_worker_left(tmp_path):
    psutil = pytest.importorskip("psutil")
    proc = subprocess.Popen([sys.executable, "-m", "frl_engine.cli", "explore", str(SAMPLE), "--target",
                             "Readmitted30d", "--exclude", "PatientID", "--lam", "1,2,4,8,16",
                             "--min-support", "0.02,0.03,0.05,0.1", "--max-conditions", "1,2,3", "--folds", "5",
                             "--out", str(tmp_path / "t.csv")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline().startswith("readmission.csv")
        assert proc.stdout.readline().startswith("Exploring 60 cells")
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [p for p in psutil.Process(proc.pid).children(recursive=True) if "loky" in " ".join(p.cmdline())]
            time.sleep(0.2)
        assert workers, "no worker process started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.startswith("frl: explore stopped: ") and err.count("\n") == 1, err
    assert not (tmp_path / "t.csv").exists()
    time.sleep(1.0)
    assert not [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]


def test_frl_explore_says_when_no_setting_found_any_rule(tmp_path, capsys):
    """An outcome drawn independently of every column: every cell's list is empty, and the recommendation (the
    simplest cell) comes with a warning instead of reading as a finding."""
    rng = np.random.default_rng(2)
    data = tmp_path / "noise.csv"
    pd.DataFrame({"Age": rng.integers(20, 90, 300), "Ward": rng.choice(["A", "B", "C"], 300),
                  "Died": np.where(rng.random(300) < 0.1, "yes", "no")}).to_csv(data, index=False)
    status = main(["explore", str(data), "--target", "Died", "--lam", "1,2", "--min-support", "0.2,0.3", "--folds", "2",
                   "--steps", "300", "--chains", "1", "--jobs", "1"])
    printed, err = capsys.readouterr()
    assert status == 0, err
    assert "(0 rules, AUROC" in printed and "Warning: no setting found a rule that beats the overall risk" in printed


def test_the_heatmap_names_cells_a_stopped_grid_never_ran_and_keeps_its_text_readable():
    """A grid stopped after 3 of its 4 cells: the fourth read as an empty cell; it now says "not run". The cells'
    text keeps one readable size (plotly shrank it to about 7 px) in near-black on colours light enough for it."""
    from frl_engine.explore_figures import HEAT_SCALE, heatmap_figure

    table = pd.DataFrame({"lam": [2.0, 8.0, 2.0], "min_support": [0.05, 0.05, 0.10], "max_conditions": [2, 2, 2],
                          "auroc_mean": [0.71, 0.74, np.nan], "n_rules": [3, 6, 0],
                          "recommended": [False, True, False]})
    [heat] = heatmap_figure(table).data
    text = {(y, x): t for row_y, row in zip(heat.y, heat.text) for x, t in zip(heat.x, row) for y in [row_y]}
    assert text[("5%", "8")].startswith("0.740<br>6 rules ★") and text[("10%", "2")] == "not fitted"
    assert text[("10%", "8")] == "not run"
    assert heat.textfont.size == 12 and heat.textfont.color == "#111111"

    def luminance(hex_colour):
        channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    darkest = min(luminance(colour) for _, colour in HEAT_SCALE)
    assert (darkest + 0.05) / (luminance("#111111") + 0.05) >= 4.5   # WCAG AA contrast on every cell
