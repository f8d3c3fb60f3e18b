"""Unit tests of dashboard/charts.py: pure tables and figures, no Streamlit."""

import math
import re

import numpy as np
import pandas as pd
import pytest

from dashboard import charts, ui


def _model(posterior=True, name0="BedSores AND NoShow"):
    model = {
        "format": "frl-model", "format_version": 1,
        "outcome": {"target": "Readmitted30d", "positive_class": "yes", "classes": ["not yes", "yes"], "title": None},
        "hyperparameters": {"lam": 8.0, "min_support": 0.05, "max_conditions": 2, "n_steps": 5000, "n_chains": 4,
                            "random_state": 0},
        "training": {"n_rows": 1000, "n_positive": 200, "positive_rate": 0.2, "n_candidate_rules": 50},
        "rules": [
            {"name": name0, "conditions": [], "probability": 0.6, "support": 100, "n_positive": 60},
            {"name": "Age >= 75", "conditions": [], "probability": 0.3, "support": 300, "n_positive": 90},
        ],
        "default": {"probability": 0.08, "support": 600, "n_positive": 50},
        "parameters": {"K": 0.1, "gammas": [2.0, 3.0], "log_posterior": -500.25},
        "posterior": None,
    }
    if posterior:
        model["posterior"] = {"n_samples": 4000, "risk_median": [0.6, 0.3, 0.08],
                              "risk_lower": [0.5, 0.25, 0.06], "risk_upper": [0.7, 0.35, 0.1]}
    return model


def test_rule_table_reads_like_the_paper():
    table = charts.rule_table(_model())
    assert list(table["keyword"]) == ["IF", "ELSE IF", "ELSE"]
    assert list(table["conditions"]) == ["BedSores AND NoShow", "Age >= 75", ""]
    assert list(table["position"]) == [1, 2, 3]
    assert table["support"].sum() == 1000 and table["events"].sum() == 200
    assert table["share_patients"].sum() == pytest.approx(1.0)
    assert table["share_events"].sum() == pytest.approx(1.0)
    assert list(table["cumulative_events"]) == pytest.approx([0.3, 0.75, 1.0])
    assert list(table["observed"]) == pytest.approx([0.6, 0.3, 50 / 600])
    assert list(table["lower"]) == [0.5, 0.25, 0.06]


def test_rule_table_without_posterior_has_no_intervals():
    table = charts.rule_table(_model(posterior=False))
    assert table["lower"].isna().all() and table["upper"].isna().all()


def test_rule_table_of_an_empty_list():
    model = _model(posterior=False)
    model["rules"] = []
    model["default"] = {"probability": 0.2, "support": 1000, "n_positive": 200}
    table = charts.rule_table(model)
    assert list(table["keyword"]) == ["ALWAYS"]
    # its one line holds every patient, as the card writes it: not "all other patients"
    html = charts.rule_list_html(model)
    assert "all patients" in html and "all other patients" not in html
    assert charts.rule_labels(table) == ["1 · ALWAYS (all patients)"]


def test_paper_table_columns_and_formatting():
    table = charts.paper_table(_model())
    assert list(table.columns) == ["", "Conditions", " ", "Risk", "Support"]
    assert list(table["Risk"]) == ["60.00%", "30.00%", "8.00%"]
    assert table[" "].iloc[0] == "THEN Readmitted30d = yes risk is"


def test_rule_list_html_has_rules_in_order_and_intervals():
    html = charts.rule_list_html(_model())
    assert html.index("BedSores") < html.index("NoShow") < html.index("Age &gt;= 75") < html.index("all other patients")
    assert "95% CrI" in html and "50.0–70.0%" in html
    assert [m for m in re.findall(r'class="frl-kw">([^<]+)<', html)] == ["IF", "ELSE IF", "ELSE"]
    assert "60.0%" in html and 'class="frl-hit"' not in html


def test_rule_list_html_without_posterior_has_no_interval_column():
    assert "95% CrI" not in charts.rule_list_html(_model(posterior=False))


def test_rule_list_html_escapes_model_text_and_marks_the_patient_row():
    html = charts.rule_list_html(_model(name0="<script>alert(1)</script> AND x"), highlight=1)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert html.count('class="frl-hit"') == 1
    rows = html.split("<tr")
    assert 'class="frl-hit"' in rows[3]  # header row, then rule 1, then rule 2 (highlighted)


def test_rule_list_html_compact_leaves_event_columns_out():
    html = charts.rule_list_html(_model(), compact=True, show_then=False)
    assert "Event rate" not in html and ">THEN<" not in html
    assert ">THEN<" in charts.rule_list_html(_model())


def test_falling_risk_chart_falls_and_has_intervals():
    fig = charts.falling_risk_chart(_model())
    bar = fig.data[0]
    assert list(bar.x) == [0.6, 0.3, 0.08]
    assert list(bar.x) == sorted(bar.x, reverse=True)
    assert bar.y[0].startswith("1 · BedSores") and bar.y[-1].startswith("3 · ELSE")
    assert bar.error_x.array is not None and list(bar.error_x.array) == pytest.approx([0.1, 0.05, 0.02])
    assert fig.layout.yaxis.autorange == "reversed"
    assert [t for t in fig.data[1].text] == ["60.0%", "30.0%", "8.0%"]


def test_falling_risk_chart_without_posterior_and_with_highlight():
    fig = charts.falling_risk_chart(_model(posterior=False), highlight=0)
    assert fig.data[0].error_x.array is None
    colors = list(fig.data[0].marker.color)
    assert colors[1] == colors[2] == "#D5D9DF" and colors[0] != "#D5D9DF"


def test_events_captured_chart():
    fig = charts.events_captured_chart(_model())
    assert list(fig.data[0].y) == [60, 90, 50]
    assert list(fig.data[1].y) == pytest.approx([0.3, 0.75, 1.0])
    assert list(fig.data[0].x) == ["1", "2", "ELSE"]


def test_length_histogram_chart_with_prior():
    fig = charts.length_histogram_chart({3: 0.25, 4: 0.75}, lam=4.0, map_length=4)
    bars = fig.data[0]
    assert sum(bars.y) == pytest.approx(1.0)
    assert list(bars.x) == list(range(0, 9))   # the posterior's lengths and the prior's mass, 4 ± 2 sd
    assert bars.marker.color[list(bars.x).index(4)] == "#C0392B"
    prior = fig.data[1]
    assert prior.y[list(prior.x).index(4)] == pytest.approx(math.exp(-4) * 4 ** 4 / 24)


def test_the_length_histogram_shows_the_prior_where_its_mass_is_at_a_large_lambda():
    """At λ = 20 the axis stopped at the posterior's L = 10 and the grey prior lay flat at 0%: the chart now runs to
    the prior's mass (λ ± 2 sd), so the reader sees how far the data pulled the length below the prior."""
    fig = charts.length_histogram_chart({5: 0.2, 6: 0.5, 7: 0.3}, lam=20.0, map_length=6)
    prior = fig.data[1]
    assert min(prior.x) <= 5 and max(prior.x) >= 28 and max(prior.y) > 0.08   # P(L = 19 or 20) is about 8.9%
    assert sum(fig.data[0].y) == pytest.approx(1.0) and fig.layout.xaxis.dtick == 1


def test_poisson_pmf_sums_to_one():
    assert charts.poisson_pmf(8.0, range(0, 60)).sum() == pytest.approx(1.0)


def test_inclusion_chart_keeps_order_and_marks_the_list():
    inclusion = {"a": 1.0, "b": 0.5, "c": 0.1, "d": 0.0}
    fig = charts.inclusion_chart(inclusion, map_rules=("a",), top=10)
    assert list(fig.data[0].y) == ["a", "b", "c"]
    assert list(fig.data[0].marker.color) == ["#C0392B", "#8FA3B8", "#8FA3B8"]


def test_trace_chart_one_line_per_chain_and_rhat_in_title():
    trace = np.arange(12, dtype=float).reshape(3, 4)
    fig = charts.trace_chart(trace, title="Log posterior", y_title="lp", rhat=1.234, ess=56.0)
    assert len(fig.data) == 3 and list(fig.data[2].y) == [8, 9, 10, 11]
    assert "R-hat 1.234" in fig.layout.title.text and "ESS 56" in fig.layout.title.text
    flat = charts.trace_chart(np.ones((2, 5)), title="L", y_title="L", rhat=float("nan"), step=True)
    assert "R-hat n/a" in flat.layout.title.text and flat.data[0].line.shape == "hv"


def test_acceptance_table_and_chart():
    acceptance = {"swap": 0.2, "replace": 0.01, "add": 0.0, "remove": float("nan"), "all": 0.05}
    per_chain = ({"swap": 0.3, "all": 0.1}, {"swap": 0.1, "all": 0.0})
    table = charts.acceptance_table(acceptance, per_chain, {"swap": 10, "all": 20})
    assert list(table["move"]) == ["swap", "replace", "add", "remove", "all"]
    assert table.loc[0, "chain 1"] == 0.3 and table.loc[4, "proposals"] == 20
    fig = charts.acceptance_chart(acceptance, per_chain)
    assert fig.data[0].y[3] is None  # a move never proposed has no bar
    assert len(fig.data) == 3


def test_compare_summary_and_shared_rules():
    a, b = _model(), _model(name0="LivesAlone")
    summary = charts.compare_summary({"A": a, "B": b})
    assert list(summary.index) == ["A", "B"]
    assert summary.loc["A", "Rules (L)"] == "2" and summary.loc["A", "Top risk"] == "60.0%"
    assert summary.map(lambda v: isinstance(v, str)).all().all()
    only_a, both, only_b = charts.shared_rules(a, b)
    assert only_a == {"BedSores AND NoShow"} and both == {"Age >= 75"} and only_b == {"LivesAlone"}
    fig = charts.compare_risk_chart({"A": a, "B": b})
    assert [t.name for t in fig.data] == ["A", "B"]


def test_small_formatters():
    assert charts.pct(0.6206) == "62.1%" and charts.pct(None) == "–" and charts.pct(float("nan")) == "–"
    assert charts.interval(0.1, 0.25) == "10.0–25.0%" and charts.interval(None, None) == ""
    assert charts.risk_color(0) == "#FCBBA1" and charts.risk_color(1) == "#A50F15" and charts.risk_color(7) == "#A50F15"
    assert charts.format_cut(60.0) == "60" and charts.format_cut(0.25) == "0.25"
    assert charts.outcome_label(_model()) == "Readmitted30d = yes"


def test_item_table_display_and_auroc_display():
    items = pd.DataFrame({"item": ["Age >= 60"], "column": ["Age"], "patients": [30], "percent": [30.0]})
    assert charts.item_table_display(items)["percent"].tolist() == [30.0]
    auroc = pd.DataFrame({"method": ["CART", "FRL"], "auroc_mean": [0.6, 0.8], "auroc_std": [0.01, 0.02],
                          "fit_seconds": [0.1, 1.0], "list_lengths": ["", "4 4"]})
    shown = charts.auroc_display(auroc)
    assert list(shown["Method"]) == ["FRL", "CART"] and "AUROC (mean)" in shown.columns


def test_rule_text_reaches_plotly_as_text_not_markup():
    model = _model(name0="Age < 60 AND Creatinine > 1 & <b>x</b>")
    label = charts.falling_risk_chart(model).data[0].y[0]
    assert "<" not in label and ">" not in label and "&lt;b&gt;" in label and "&amp;" in label
    assert charts.plotly_text("a<b>c") == "a&lt;b&gt;c"
    hover = charts.inclusion_chart({"Age < 60 AND Crea > 1": 0.5}).data[0]
    assert hover.y[0] == "Age &lt; 60 AND Crea &gt; 1" and hover.customdata[0] == hover.y[0]


def test_a_control_character_in_a_value_is_shown_on_the_page_not_obeyed():
    """A category value holding U+202E (right-to-left override) would print the rest of its line reversed in the
    browser, as on a terminal: the rule table, its charts and the page's markdown show it as <U+202E>."""

    table = charts.rule_table(_model(name0="Smoking = smokes\u202eX AND NoShow"))
    assert table["conditions"][0] == "Smoking = smokes<U+202E>X AND NoShow"
    assert "\u202e" not in " ".join(charts.rule_labels(table))
    assert ui.md("smokes\u202eX") == "smokes\\<U\\+202E\\>X" and ui.md("Age >= 60") == "Age \\>= 60"
    items = pd.DataFrame({"item": ["smoking = smokes\u202eX"], "column": ["smoking"], "patients": [12],
                          "percent": [4.0]})
    assert charts.item_table_display(items)["item"].tolist() == ["smoking = smokes<U+202E>X"]


def test_the_top_rules_number_stays_inside_the_chart_when_its_interval_reaches_100_percent():
    """A top rule of 91.8% with an interval up to 98.6%: its number sits right of the whisker, past 100%; the axis
    stopped at 100% and cut it off. The axis now leaves room for it, with no tick past 100%."""
    model = _model()
    model["rules"][0]["probability"] = 0.918
    model["posterior"]["risk_upper"][0] = 0.986
    fig = charts.falling_risk_chart(model)
    label_x = fig.data[1].x[0]
    assert fig.layout.xaxis.range[1] >= label_x + 0.1   # room for "91.8%" right of its x, near 100%
    assert max(fig.layout.xaxis.tickvals) == 1.0
    assert charts.falling_risk_chart(_model()).layout.xaxis.range[1] <= 1.0   # as before when it fits


def test_a_widget_label_escapes_only_what_markdown_would_change_so_screen_readers_hear_the_name():
    """Column names label the patient check's fields; markdown escapes everywhere (`number\\_inpatient`) reached the
    accessible name a screen reader speaks. An underscore inside a name changes nothing in markdown: kept as is."""
    assert ui.label("number_inpatient") == "number_inpatient"
    assert ui.label("discharge_disposition_id") == "discharge_disposition_id"
    assert ui.label("Age*") == "Age\\*" and ui.label("_note_") == "\\_note\\_"   # these would be emphasis
    assert ui.label("dose [mg]") == "dose \\[mg\\]"


def test_a_share_that_would_round_to_0_or_100_percent_says_less_or_more_than_the_last_digit():
    """A rule of 30 patients among 20,186 read '30 (0%)'; a risk of 0.9996 read '100.0%'."""
    assert charts.pct(30 / 20186, 0) == "<1%" and charts.pct(0.005, 0) == "<1%" and charts.pct(0.0149, 0) == "1%"
    assert charts.pct(0.0004) == "<0.1%" and charts.pct(0.9996) == ">99.9%" and charts.pct(0.996, 0) == ">99%"
    assert charts.pct(0) == "0.0%" and charts.pct(1) == "100.0%" and charts.pct(0.6206) == "62.1%"
    assert charts.pct(None) == "–" and charts.pct(float("nan")) == "–"


def test_the_length_histogram_says_why_the_list_shown_is_a_rare_length():
    from dashboard import services

    note = services.length_note({2: 0.01, 3: 0.3, 4: 0.44, 5: 0.25}, 2)
    assert note.startswith(" Most sampled lists are longer than the list shown (most often 4 rules, against 1% at 2)")
    assert services.length_note({2: 0.3, 3: 0.4, 4: 0.3}, 2) == ""      # a common length: nothing to explain
    assert "shorter" in services.length_note({3: 0.7, 4: 0.25, 6: 0.05}, 6)
    assert services.length_note({}, 2) == ""
