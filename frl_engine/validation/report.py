"""Figures and the self-contained HTML report of an external validation.

Pure functions of an :class:`~frl_engine.validation.external.ExternalValidation`
(or one of its :class:`~frl_engine.validation.external.PopulationMetrics`):

* :func:`calibration_figure` -- each rule's risk (x) against the event rate
  observed among the new patients it captures (y), with the observed 95%
  interval as a vertical bar (and the model's credible interval as a horizontal
  one when the model has it), marker area growing with the patients captured;
  the diagonal is perfect calibration, the dashed curve the logistic
  recalibration ``expit(a + b logit(risk))``.
* :func:`decision_curve_figure` -- net benefit of using the list, of treating
  everyone and of treating no one, against the risk threshold.
* :func:`subgroup_figure` -- a forest plot of each subgroup's AUROC with its interval.
* :func:`validation_report_html` -- one page that works offline (plotly.js inlined once).
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from scipy.special import expit, logit

from .external import FLAG_TEXT, ExternalValidation, PopulationMetrics, rule_rows

__all__ = ["calibration_figure", "decision_curve_figure", "subgroup_figure", "validation_report_html", "rule_table_frame",
           "subgroup_table_frame", "INTERPRETATION"]

MODEL_COLOR = "#d62728"
ALL_COLOR = "#1f77b4"
NONE_COLOR = "#555555"
FLAG_COLOR = "#ff7f0e"

INTERPRETATION = (
    ("AUROC", "the chance that a patient who had the event was given a higher risk than one who did not; "
              "0.5 is a coin toss, 1 is perfect ranking. Worry when the interval reaches down to 0.6 or the AUROC "
              "is well below the cross-validated one."),
    ("Brier score", "the mean squared difference between risk and outcome; lower is better. Compare it with "
                    "r(1 - r), the score of giving everyone the event rate r."),
    ("Calibration intercept", "0 when the average risk is right; below 0 the list over-predicts in these patients, "
                              "above 0 it under-predicts. Worry when its interval excludes 0."),
    ("Calibration slope", "1 when the spread of risks is right; below 1 the risks are too extreme (high risks too "
                          "high, low too low), above 1 too timid. Worry below about 0.8."),
    ("Decision curve", "the net benefit of treating patients above a risk threshold, in true positives per patient "
                       "net of false positives weighted by the threshold's odds. The list is useful at a threshold "
                       "where its curve lies above both treating everyone and treating no one."),
)


def _diagonal(fig: go.Figure) -> None:
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line={"color": "#999999", "dash": "dash", "width": 1},
                  layer="below")


def calibration_figure(m: PopulationMetrics, *, title: str | None = None) -> go.Figure:
    """Predicted risk of each rule against the observed rate in the new patients, with intervals.

    Traces: ``"rules"`` (markers; flagged rules in orange) and, when the slope
    exists, ``"recalibration"`` (the logistic recalibration curve).
    """
    shown = [r for r in m.rules if r.n > 0]
    largest = max((r.n for r in shown), default=1)
    has_model_ci = any(r.model_lower is not None for r in shown)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[r.model_risk for r in shown], y=[r.observed for r in shown], mode="markers+text", name="rules",
        text=[str(r.position + 1) if r.rule else "ELSE" for r in shown], textposition="middle right",
        error_y={"type": "data", "symmetric": False, "array": [r.upper - r.observed for r in shown],
                 "arrayminus": [r.observed - r.lower for r in shown], "color": "#888", "thickness": 1.2},
        error_x=({"type": "data", "symmetric": False,
                  "array": [(r.model_upper - r.model_risk) if r.model_upper is not None else 0 for r in shown],
                  "arrayminus": [(r.model_risk - r.model_lower) if r.model_lower is not None else 0 for r in shown],
                  "color": "#bbb", "thickness": 1.2} if has_model_ci else None),
        marker={"size": [9 + 26 * math.sqrt(r.n / largest) for r in shown],
                "color": [FLAG_COLOR if {"rises", "outside"} & set(r.flags) else MODEL_COLOR for r in shown],
                "opacity": 0.75, "line": {"width": 1, "color": "white"}},
        customdata=[[html.escape(r.rule or "ELSE (everyone else)"), r.n, r.events, r.lower, r.upper,
                     "; ".join(r.flags) or "none"] for r in shown],
        hovertemplate="%{customdata[0]}<br>model risk %{x:.1%}, observed %{y:.1%} (95% CI %{customdata[3]:.1%} to "
                      "%{customdata[4]:.1%})<br>%{customdata[2]} events in %{customdata[1]} patients"
                      "<br>flags: %{customdata[5]}<extra></extra>",
    ))
    if not math.isnan(m.calibration_slope):
        low = min(r.model_risk for r in shown)
        high = max(r.model_risk for r in shown)
        x = np.linspace(low, high, 60)
        y = expit(m.recalibration_intercept + m.calibration_slope * logit(x))
        fig.add_trace(go.Scatter(
            x=x.tolist(), y=y.tolist(), mode="lines", name=f"recalibration (slope {m.calibration_slope:.2f})",
            line={"color": "#444", "dash": "dot", "width": 1.5},
            hovertemplate="model risk %{x:.1%} -> recalibrated %{y:.1%}<extra></extra>"))
    _diagonal(fig)
    top = max([0.05] + [r.upper for r in shown] + [r.model_risk for r in shown] + [r.model_upper or 0 for r in shown])
    limit = min(1.0, math.ceil(top * 11) / 10)
    fig.update_layout(
        title=title or "Calibration: each rule's risk against the observed rate",
        xaxis={"title": "Model's risk", "range": [0, limit], "tickformat": ".0%"},
        yaxis={"title": "Observed event rate (95% CI)", "range": [0, limit], "tickformat": ".0%",
               "scaleanchor": "x", "scaleratio": 1},
        legend={"x": 0.02, "y": 0.98, "bgcolor": "rgba(255,255,255,0.8)"},
        template="plotly_white", width=560, height=540, margin={"l": 60, "r": 20, "t": 60, "b": 50},
    )
    return fig


def decision_curve_figure(m: PopulationMetrics, *, title: str | None = None) -> go.Figure:
    """Net benefit of the list, treat-all and treat-none against the threshold risk (Vickers & Elkin 2006)."""
    curve = m.net_benefit
    t = list(curve.thresholds)
    highest = max([r.model_risk for r in m.rules if r.n > 0], default=0.5)
    x_max = min(0.99, max(0.2, math.ceil((highest + 0.1) * 10) / 10))
    rate = m.event_rate
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=list(curve.model), mode="lines", name="falling rule list",
                             line={"color": MODEL_COLOR, "width": 3},
                             hovertemplate="threshold %{x:.0%}: net benefit %{y:.4f}<extra>list</extra>"))
    fig.add_trace(go.Scatter(x=t, y=list(curve.treat_all), mode="lines", name="treat everyone",
                             line={"color": ALL_COLOR, "width": 1.5},
                             hovertemplate="threshold %{x:.0%}: net benefit %{y:.4f}<extra>treat all</extra>"))
    fig.add_trace(go.Scatter(x=t, y=[0.0] * len(t), mode="lines", name="treat no one",
                             line={"color": NONE_COLOR, "width": 1.5, "dash": "dash"}, hoverinfo="skip"))
    y_top = max(0.01, (rate if not math.isnan(rate) else 0.1) * 1.15)
    fig.update_layout(
        title=title or "Decision curve: net benefit against the threshold risk",
        xaxis={"title": "Threshold risk (treat when the risk is at least this)", "range": [0, x_max],
               "tickformat": ".0%"},
        yaxis={"title": "Net benefit", "range": [-y_top * 0.3, y_top]},
        legend={"x": 0.98, "y": 0.98, "xanchor": "right", "bgcolor": "rgba(255,255,255,0.8)"},
        template="plotly_white", width=620, height=540, margin={"l": 60, "r": 20, "t": 60, "b": 50},
    )
    return fig


def subgroup_figure(result: ExternalValidation, *, title: str | None = None) -> go.Figure:
    """A forest plot: each subgroup's AUROC with its 95% interval, the overall AUROC as a dashed line.

    Subgroups without an AUROC (no events, or only events) are listed with no point.
    """
    groups = list(result.subgroups)
    labels = [f"{s.label} (n={s.metrics.n:,})" for s in groups]
    fig = go.Figure(go.Scatter(
        x=[s.metrics.auroc for s in groups], y=labels, mode="markers", name="AUROC (95% CI)",
        marker={"color": MODEL_COLOR, "size": 10, "symbol": "square"},
        error_x={"type": "data", "symmetric": False,
                 "array": [s.metrics.auroc_ci[1] - s.metrics.auroc for s in groups],
                 "arrayminus": [s.metrics.auroc - s.metrics.auroc_ci[0] for s in groups], "color": "#666"},
        customdata=[[s.metrics.events, s.metrics.auroc_ci[0], s.metrics.auroc_ci[1]] for s in groups],
        hovertemplate="%{y}: AUROC %{x:.3f} (95% CI %{customdata[1]:.3f} to %{customdata[2]:.3f}), "
                      "%{customdata[0]} events<extra></extra>",
    ))
    if not math.isnan(result.overall.auroc):
        fig.add_vline(x=result.overall.auroc, line={"color": "#444", "dash": "dash", "width": 1},
                      annotation_text=f"all patients {result.overall.auroc:.2f}", annotation_position="top")
    fig.add_vline(x=0.5, line={"color": "#bbb", "width": 1})
    fig.update_layout(
        title=title or f"AUROC by {result.by}",
        xaxis={"title": "AUROC (95% CI)", "range": [0.4, 1.0]},
        yaxis={"autorange": "reversed", "title": ""},
        template="plotly_white", width=620, height=max(260, 110 + 42 * len(groups)), showlegend=False,
        margin={"l": 10, "r": 20, "t": 70, "b": 50},
    )
    return fig


_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1250px;
       color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child, table.rules td:nth-child(2), table.rules th:nth-child(2) { text-align: left; }
thead th { background: #f3f3f3; }
tr.flag td { background: #fff1e0; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
.note { color: #555; font-size: 0.92em; }
.headline { font-size: 1.25em; margin: 0.4em 0 0.8em 0; }
details { margin: 0.3em 0; } summary { cursor: pointer; color: #333; }
dl { margin: 0.5em 0; } dt { font-weight: 600; margin-top: 0.4em; } dd { margin-left: 1.2em; color: #444; }
"""


def _fmt(x: float, digits: int = 3) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _ci(pair, digits: int = 3) -> str:
    return "" if math.isnan(pair[0]) else f"{pair[0]:.{digits}f} to {pair[1]:.{digits}f}"


def _metrics_table(m: PopulationMetrics) -> str:
    rows = [
        ("Patients", f"{m.n:,}", ""), ("Events", f"{m.events:,} ({100 * m.event_rate:.1f}%)", ""),
        ("Mean predicted risk", f"{100 * m.mean_risk:.1f}%", ""),
        ("AUROC", _fmt(m.auroc), _ci(m.auroc_ci)), ("Brier score", _fmt(m.brier, 4), ""),
        ("Calibration intercept", _fmt(m.calibration_intercept), _ci(m.calibration_intercept_ci)),
        ("Calibration slope", _fmt(m.calibration_slope), _ci(m.calibration_slope_ci)),
    ]
    body = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td><td>{html.escape(c)}</td></tr>"
                   for a, b, c in rows)
    return ("<table class=\"metrics\"><thead><tr><th>Measure</th><th>Value</th><th>95% CI</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")


def _rule_table(m: PopulationMetrics) -> str:
    header = ["#", "Rule", "Model's risk", "Patients", "Events", "Observed (95% CI)", "Flags"]
    head = "".join(f"<th>{h}</th>" for h in header)
    body = []
    for check, row in zip(m.rules, rule_rows(m)):
        css = " class=\"flag\"" if {"rises", "outside"} & set(check.flags) else ""
        flags = "; ".join(FLAG_TEXT[f] for f in check.flags)
        cells = row[:-1] + [flags]
        body.append(f"<tr{css}>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table class=\"rules\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _subgroup_table(result: ExternalValidation) -> str:
    header = ["Group", "Patients", "Events", "AUROC (95% CI)", "Brier", "Intercept", "Slope", "Flagged rules", "Notes"]
    head = "".join(f"<th>{h}</th>" for h in header)
    rows = []
    for s in result.subgroups:
        m = s.metrics
        auroc = _fmt(m.auroc) + (f" ({_ci(m.auroc_ci, 2)})" if not math.isnan(m.auroc_ci[0]) else "")
        flagged = ", ".join(f"{r.position + 1} ({', '.join(f for f in r.flags if f != 'empty')})" for r in m.flagged)
        cells = [s.label, f"{m.n:,}", f"{m.events:,}", auroc, _fmt(m.brier, 4), _fmt(m.calibration_intercept),
                 _fmt(m.calibration_slope), flagged or "none", "; ".join(m.notes)]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table class=\"subgroups\"><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def validation_report_html(result: ExternalValidation, *, title: str | None = None, model: dict | None = None) -> str:
    """One offline HTML page: headline, metrics, per-rule table with flags, calibration plot, decision curve,
    subgroups, and what each number means."""
    from ..figures import figures_html

    o = result.overall
    title = title or (f"Validation on {result.data_name} (not checked for training patients)"
                      if result.external and result.training_unchecked else
                      f"External validation on {result.data_name}" if result.external
                      else f"Validation on {result.data_name} (not external)")
    figures = [calibration_figure(o), decision_curve_figure(o)]
    if result.subgroups:
        figures.append(subgroup_figure(result))
    fragments = figures_html(figures)
    trained = ""
    if model is not None:
        training = model.get("training") or {}
        if training.get("n_rows"):
            trained = (f" The list was fitted on {training['n_rows']:,} patients"
                       + (f" of {html.escape(str(training['data_name']))}" if training.get("data_name") else "")
                       + (f" ({100 * training['positive_rate']:.1f}% events)" if training.get("positive_rate") is not None else "")
                       + ".")
    flagged = o.flagged
    overall = o.overall_calibration_note()
    verdict = ("Every rule's observed rate is within chance of its printed risk and the rates fall down the list"
               + (f", {html.escape(overall)}." if overall else ".")
               if not flagged else
               f"{len(flagged)} rule{'s' if len(flagged) > 1 else ''} flagged (highlighted below): "
               "check them before using the list on these patients.")
    # the training patients, or many of them, are no external validation (as the card and the CLI say)
    headline = ("Not an external validation" if not result.external else
                "Too few new patients to judge the list" if o.too_few_to_judge else
                "Validated, not checked for training patients" if result.training_unchecked else "Externally validated")
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class=\"headline\">{headline}: <b>{html.escape(result.headline())}</b></p>",
        f"<p>Outcome {html.escape(result.target)} = {html.escape(str(result.event))}; model ID "
        f"{html.escape(result.model_id)}; validated {html.escape(result.validated_at)}.{trained}</p>",
        _metrics_table(o),
        *(f"<p class=\"note\">Note: {html.escape(n)}.</p>" for n in o.notes),
        f"<h2>Each rule on {'the new' if result.external else 'these'} patients</h2>",
        f"<p>{html.escape(verdict)}</p>",
        _rule_table(o),
        f"<div class=\"figures\">{''.join(fragments[:2])}</div>",
    ]
    useful = o.net_benefit.useful_text()
    parts.append("<p class=\"note\">" + html.escape(
        f"The list beats treating everyone and treating no one at {useful}." if useful else
        "At no threshold does the list beat both treating everyone and treating no one.") + "</p>")
    if result.subgroups:
        parts += [f"<h2>By {html.escape(str(result.by))}</h2>", _subgroup_table(result), "@@SUBGROUP_FIGURE@@"]
        for s in result.subgroups:
            parts.append(f"<details><summary>Each rule in {html.escape(s.label)} ({s.metrics.n:,} patients)"
                         f"</summary>{_rule_table(s.metrics)}</details>")
    parts.append("<h2>What the numbers mean</h2><dl>" + "".join(
        f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in INTERPRETATION) + "</dl>")
    parts.append("<p class=\"note\">Flags: " + html.escape("; ".join(f"{k}: {v}" for k, v in FLAG_TEXT.items()))
                 + ". Observed intervals are Wilson 95% intervals; the AUROC interval is DeLong's.</p>")
    body = "\n".join(parts).replace("@@SUBGROUP_FIGURE@@", "".join(fragments[2:]))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{html.escape(title)}"
            f"</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")



def rule_table_frame(m: PopulationMetrics):
    """The per-rule table as a DataFrame (for the dashboard): numbers as fractions, flags in words."""
    import pandas as pd

    return pd.DataFrame([{
        "rule": r.position + 1, "conditions": r.rule or "ELSE", "model risk": r.model_risk,
        "model CrI": "" if r.model_lower is None else f"{100 * r.model_lower:.1f}–{100 * r.model_upper:.1f}%",
        "patients": r.n, "events": r.events, "observed": r.observed,
        "observed 95% CI": "" if r.n == 0 else f"{100 * r.lower:.1f}–{100 * r.upper:.1f}%",
        "flag": "; ".join(FLAG_TEXT[f] for f in r.flags),
    } for r in m.rules])


def subgroup_table_frame(result: ExternalValidation):
    """One row per subgroup: patients, events, AUROC with its interval, Brier, intercept, slope, flagged rules."""
    import pandas as pd

    rows = []
    for s in result.subgroups:
        m = s.metrics
        rows.append({
            "group": s.label, "patients": m.n, "events": m.events, "AUROC": m.auroc,
            "AUROC 95% CI": "" if math.isnan(m.auroc_ci[0]) else f"{m.auroc_ci[0]:.2f}–{m.auroc_ci[1]:.2f}",
            "Brier": m.brier, "intercept": m.calibration_intercept, "slope": m.calibration_slope,
            "flagged rules": ", ".join(str(r.position + 1) for r in m.flagged) or "none",
            "note": "; ".join(m.notes),
        })
    return pd.DataFrame(rows)
