"""The dashboard's charts as Chromium draws them: nothing written over anything else in a narrow column."""

from pathlib import Path

import pytest

from dashboard import charts
from test_browser import CHROMIUM, chromium  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]


def _eleven_rule_model() -> dict:
    """A list as long as the 100,000-row diabetes-shaped export's (11 rules and ELSE), risks falling."""
    rules = [{"name": f"rule {k}", "conditions": [], "probability": 0.24 - 0.015 * k, "support": 5000,
              "n_positive": int(5000 * (0.24 - 0.015 * k))} for k in range(11)]
    events = sum(rule["n_positive"] for rule in rules) + 776
    return {"format": "frl-model", "format_version": 1,
            "outcome": {"target": "readmitted", "positive_class": "<30", "classes": ["no", "<30"], "title": None},
            "hyperparameters": {"lam": 8.0, "min_support": 0.05, "max_conditions": 2},
            "training": {"n_rows": 69_836, "n_positive": events, "positive_rate": events / 69_836,
                         "n_candidate_rules": 4396},
            "rules": rules, "default": {"probability": 0.052, "support": 14_836, "n_positive": 776},
            "parameters": {"K": 0.05, "gammas": [0.1] * 11, "log_posterior": -33707.1}, "posterior": None}


def _box(page, selector):
    return page.locator(selector).first.bounding_box()


@pytest.mark.parametrize("width", [380, 520])
def test_the_events_chart_keeps_its_legend_clear_of_the_rule_axis(chromium, tmp_path, width):  # noqa: F811
    """Once a narrow column turns the rule numbers on their side, the axis title 'Rule' moves down; the legend
    stays below it (it once sat a share of the plot's height below the bars, over the title)."""
    html = tmp_path / "chart.html"
    html.write_text(charts.events_captured_chart(_eleven_rule_model()).to_html(include_plotlyjs=True))
    page = chromium()
    page.set_viewport_size({"width": width, "height": 500})
    page.goto(html.as_uri())
    page.locator("g.legend").first.wait_for()
    figure, title = _box(page, "svg.main-svg"), _box(page, "text.xtitle")
    legend, ticks = _box(page, "g.legend"), _box(page, "g.xaxislayer-above")
    assert title["y"] >= ticks["y"] + ticks["height"] - 1                   # the title under the rule numbers
    assert legend["y"] >= title["y"] + title["height"]                       # and the legend under the title
    assert legend["y"] + legend["height"] <= figure["y"] + figure["height"] + 1   # inside the figure
