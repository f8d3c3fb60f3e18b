"""The external validation's figures and HTML report hold exactly the result's numbers."""

import math

import numpy as np
import pytest

from frl_engine.validation.external import validate_model
from frl_engine.validation.report import (calibration_figure, decision_curve_figure, rule_table_frame,
                                          subgroup_figure, subgroup_table_frame, validation_report_html)
from test_validation_external import model_dict, new_table


@pytest.fixture(scope="module")
def result():
    return validate_model(model_dict(), new_table(n=3000, seed=0), data_name="2025.csv", by="Ward")


def test_calibration_figure_plots_each_rule_at_its_risk_and_observed_rate(result):
    fig = calibration_figure(result.overall)
    points = fig.data[0]
    assert list(points.x) == [r.model_risk for r in result.rules]
    assert list(points.y) == pytest.approx([r.observed for r in result.rules])
    assert list(points.error_y.array) == pytest.approx([r.upper - r.observed for r in result.rules])
    curve = fig.data[1]  # recalibration: expit(a + b logit(x))
    x = np.asarray(curve.x)
    expected = 1 / (1 + np.exp(-(result.recalibration_intercept + result.calibration_slope * np.log(x / (1 - x)))))
    assert np.asarray(curve.y) == pytest.approx(expected)


def test_decision_curve_figure_draws_the_results_net_benefit(result):
    fig = decision_curve_figure(result.overall)
    model, everyone, no_one = fig.data
    assert list(model.y) == list(result.net_benefit.model) and list(everyone.y) == list(result.net_benefit.treat_all)
    assert set(no_one.y) == {0.0} and list(model.x) == list(result.net_benefit.thresholds)


def test_subgroup_figure_and_tables(result):
    fig = subgroup_figure(result)
    assert list(fig.data[0].x) == [s.metrics.auroc for s in result.subgroups]
    assert [label.split(" (")[0] for label in fig.data[0].y] == ["icu", "medical", "surgical"]
    table = subgroup_table_frame(result)
    assert list(table["patients"]) == [s.metrics.n for s in result.subgroups]
    rules = rule_table_frame(result.overall)
    assert list(rules["patients"]) == [r.n for r in result.rules] and rules["conditions"].iloc[-1] == "ELSE"


def test_the_report_is_one_offline_page_with_the_numbers(result):
    page = validation_report_html(result, model=model_dict())
    assert page.count("<script src=\"http") == 0 and page.count("plotly-graph-div") >= 3
    assert f"{result.auroc:.3f}" in page and f"{result.calibration_slope:.3f}" in page
    assert "By Ward" in page and page.count("<details>") == 3
    assert "fitted on 2,000 patients of 2024.csv" in page
    for r in result.rules:
        assert f"{r.n:,}" in page
    assert not math.isnan(result.auroc)
