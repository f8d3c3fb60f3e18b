"""Plotly figures and self-contained HTML reports built from evaluation results.

Pure functions: each takes plain result data (:class:`~frl_engine.evaluate.EvaluationResult`,
:class:`~frl_engine.reproduce.SimulationResult`, ...) and returns a new
:class:`plotly.graph_objects.Figure` or an HTML string; nothing is computed
here that the result does not already hold, and nothing is mutated.

* :func:`roc_figure` -- the paper's figure 3: every test fold's ROC curve as a
  thin line, the mean curve of each method in bold, the legend giving each
  method's mean AUROC (std).
* :func:`calibration_figure` -- the risk each rule of a fold's list predicts
  against the event rate observed among the test rows it captures (one point
  per rule and fold, sized by the number of rows).
* :func:`simulation_figure` -- the paper's figure 2: mean edit distance of the
  MAP list to the true list against N.
* :func:`evaluation_report_html`, :func:`reproduction_report_html` -- pages that
  work offline (plotly.js is inlined once; no external script).
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go

from .evaluate import METHOD_NAMES, EvaluationResult, mean_roc_curve

__all__ = [
    "METHOD_COLORS", "FOLD_LINE_WIDTH", "MEAN_LINE_WIDTH", "roc_figure", "calibration_figure", "simulation_figure",
    "evaluation_report_html", "reproduction_report_html", "figures_html",
]

METHOD_COLORS = {"frl": "#d62728", "svm": "#1f77b4", "logreg": "#2ca02c", "cart": "#9467bd", "rf": "#ff7f0e"}
FOLD_LINE_WIDTH = 1.0
MEAN_LINE_WIDTH = 3.5
FOLD_OPACITY = 0.35
_FALLBACK_COLORS = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


def _color(method: str, index: int) -> str:
    return METHOD_COLORS.get(method, _FALLBACK_COLORS[index % len(_FALLBACK_COLORS)])


def _diagonal(fig: go.Figure) -> None:
    # A layout shape, not a trace: the traces are exactly the curves.
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line={"color": "#999999", "dash": "dash", "width": 1},
                  layer="below")


def roc_figure(result: EvaluationResult, methods=None, *, title: str | None = None) -> go.Figure:
    """ROC curves of every fold (thin) and each method's mean curve (bold), as the paper's figure 3.

    Traces, per method in order: one per fold (``line.width`` =
    :data:`FOLD_LINE_WIDTH`, hidden from the legend), then the mean
    (``line.width`` = :data:`MEAN_LINE_WIDTH`, named ``"FRL (AUROC 0.82 ± 0.02)"``).
    """
    methods = tuple(methods) if methods is not None else result.methods
    fig = go.Figure()
    for index, method in enumerate(methods):
        summary = result.summary(method)
        color = _color(method, index)
        name = METHOD_NAMES.get(method, method)
        for fold in result.fold_results(method):
            fig.add_trace(go.Scatter(
                x=list(fold.fpr), y=list(fold.tpr), mode="lines", name=f"{name} fold {fold.fold + 1}",
                legendgroup=method, showlegend=False, opacity=FOLD_OPACITY,
                line={"color": color, "width": FOLD_LINE_WIDTH},
                hovertemplate=f"{name} fold {fold.fold + 1} (AUROC {fold.auroc:.3f})<br>"
                              "FPR %{x:.3f}, TPR %{y:.3f}<extra></extra>",
            ))
        fpr, tpr = mean_roc_curve(result.fold_results(method))
        fig.add_trace(go.Scatter(
            x=fpr.tolist(), y=tpr.tolist(), mode="lines", legendgroup=method,
            name=f"{name} (AUROC {summary.auroc_mean:.2f} ± {summary.auroc_std:.2f})",
            line={"color": color, "width": MEAN_LINE_WIDTH},
            hovertemplate=f"{name} mean<br>FPR %{{x:.3f}}, TPR %{{y:.3f}}<extra></extra>",
        ))
    _diagonal(fig)
    heading = title or (f"ROC curves, {result.description}" + (f": {result.dataset}" if result.dataset else ""))
    fig.update_layout(
        title=heading, xaxis={"title": "False positive rate", "range": [0, 1], "constrain": "domain"},
        yaxis={"title": "True positive rate", "range": [0, 1.01], "scaleanchor": "x", "scaleratio": 1},
        legend={"x": 0.98, "y": 0.02, "xanchor": "right", "yanchor": "bottom", "bgcolor": "rgba(255,255,255,0.8)"},
        template="plotly_white", width=620, height=600,
    )
    return fig


def calibration_figure(result: EvaluationResult, method: str = "frl", *, title: str | None = None) -> go.Figure:
    """Predicted risk of each rule against the observed event rate on the test fold; one trace per fold.

    Marker area grows with the number of test rows in the rule; rules no test
    row fell into are left out of the plot (they stay in the result).
    """
    fig = go.Figure()
    folds = result.fold_results(method)
    largest = max((c.count for f in folds for c in f.calibration), default=1) or 1
    palette = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf")
    for fold in folds:
        bins = [c for c in fold.calibration if c.count > 0]
        fig.add_trace(go.Scatter(
            x=[c.predicted for c in bins], y=[c.observed for c in bins], mode="markers",
            name=f"fold {fold.fold + 1}",
            marker={"size": [6 + 24 * math.sqrt(c.count / largest) for c in bins],
                    "color": palette[fold.fold % len(palette)], "opacity": 0.7, "line": {"width": 1, "color": "white"}},
            customdata=[[html.escape(c.rule) if c.rule else "ELSE (default)", c.count, c.positives, c.position + 1] for c in bins],
            hovertemplate="rule %{customdata[3]}: %{customdata[0]}<br>predicted %{x:.1%}, observed %{y:.1%}"
                          "<br>%{customdata[2]} of %{customdata[1]} test rows<extra>fold " + str(fold.fold + 1)
                          + "</extra>",
        ))
    _diagonal(fig)
    name = METHOD_NAMES.get(method, method)
    fig.update_layout(
        title=title or f"{name} calibration on the test folds: each rule's risk against its observed rate",
        xaxis={"title": "Predicted risk (learned on the training fold)", "range": [0, 1], "tickformat": ".0%"},
        yaxis={"title": "Observed event rate (test fold)", "range": [0, 1], "tickformat": ".0%",
               "scaleanchor": "x", "scaleratio": 1},
        template="plotly_white", width=620, height=600,
    )
    return fig


def simulation_figure(simulation, *, title: str | None = None) -> go.Figure:
    """Mean edit distance between the MAP list and the true list against N (paper figure 2).

    ``simulation`` is a :class:`~frl_engine.reproduce.SimulationResult`; error
    bars are one standard error of the mean over the replicates.
    """
    sizes = list(simulation.sizes)
    means = [float(np.mean(d)) for d in simulation.distances]
    errors = [float(np.std(d, ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0 for d in simulation.distances]
    fig = go.Figure(go.Scatter(
        x=sizes, y=means, mode="lines+markers", name="mean edit distance",
        error_y={"type": "data", "array": errors, "visible": True},
        line={"color": "#d62728", "width": 2.5},
        hovertemplate="N = %{x}<br>mean distance %{y:.2f}<extra></extra>",
    ))
    fig.update_layout(
        title=title or (f"Mean distance to the true list decreases with sample size "
                        f"({simulation.n_replicates} replicates per N)"),
        xaxis={"title": "N (observations)", "type": "log"},
        yaxis={"title": "Mean edit distance to the true list", "rangemode": "tozero"},
        template="plotly_white", width=700, height=450,
    )
    return fig


# ---------------------------------------------------------------------------------------------- HTML
_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1300px;
       color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
.note { color: #555; font-size: 0.92em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; white-space: pre-wrap; }
"""


def figures_html(figures) -> list[str]:
    """Each figure as an HTML fragment; plotly.js is inlined in the first one only, so the page works offline."""
    return [fig.to_html(full_html=False, include_plotlyjs=(i == 0), include_mathjax=False,
                        config={"displaylogo": False, "responsive": True})
            for i, fig in enumerate(figures)]


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _table(header, rows) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _auroc_rows(result: EvaluationResult):
    for method in result.methods:
        s = result.summary(method)
        lengths = "" if s.list_lengths is None else " ".join(map(str, s.list_lengths))
        yield ([s.name, f"{s.auroc_mean:.3f} ({s.auroc_std:.3f})"] + [f"{a:.3f}" for a in s.aurocs]
               + [f"{s.fit_seconds_mean:.2f}", lengths])


def _evaluation_section(result: EvaluationResult, heading: str, *, figure_offset: int = 0) -> tuple[str, list]:
    header = ["Method", "AUROC mean (std)"] + [f"fold {k + 1}" for k in range(result.n_folds)] + ["fit s / fold",
                                                                                                 "FRL list lengths"]
    parts = [f"<h2>{html.escape(heading)}</h2>",
             f"<p>{html.escape(result.description)} of {result.n_rows} rows ({result.n_positive} events), "
             f"seed {result.random_state}; {result.elapsed_seconds:.1f} s.</p>",
             _table(header, list(_auroc_rows(result)))]
    figures = [roc_figure(result)]
    if "frl" in result.methods:
        figures.append(calibration_figure(result))
        lists = []
        for fold in result.fold_results("frl"):
            lists.append(f"<b>fold {fold.fold + 1}</b> ({fold.n_candidates} mined rules): "
                         + " | ".join(html.escape(r) for r in fold.rules))
        parts.append("<p class=\"note\">FRL lists per training fold, top rule first:<br>" + "<br>".join(lists) + "</p>")
    return "\n".join(parts), figures


def evaluation_report_html(result: EvaluationResult, *, title: str | None = None, notes=()) -> str:
    """A self-contained HTML page: the AUROC table, the ROC figure, the calibration figure, the FRL lists."""
    title = title or ("Cross-validated comparison" + (f": {result.dataset}" if result.dataset else ""))
    section, figures = _evaluation_section(result, "AUROC per method and fold")
    settings = result.settings
    details = [
        f"FRL settings: {html.escape(_params_text(result.frl_params))}",
        f"Baselines: {html.escape(settings.get('baseline_preprocessing', ''))}; SVM grid "
        f"{html.escape(str(settings.get('svm_grid')))}, LogReg grid {html.escape(str(settings.get('logreg_grid')))} "
        f"chosen by inner {settings.get('inner_folds')}-fold CV (AUROC); RF {settings.get('rf_trees')} trees.",
    ] + [html.escape(f"At this size: {n}.") for n in settings.get("scaling") or ()] + [html.escape(n) for n in notes]
    fragments = figures_html(figures)
    body = (f"<h1>{html.escape(title)}</h1>\n{section}\n<div class=\"figures\">{''.join(fragments)}</div>\n"
            + "".join(f"<p class=\"note\">{d}</p>" for d in details))
    return _page(title, body)


def _params_text(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"


def reproduction_report_html(reproduction, *, title: str = "Falling rule lists: the paper's experiments reproduced") -> str:
    """The reproduction (:class:`~frl_engine.reproduce.ReproductionResult`) as one offline HTML page."""
    from .reproduce import format_reproduction

    body = [f"<h1>{html.escape(title)}</h1>", "<pre>" + html.escape(format_reproduction(reproduction)) + "</pre>"]
    figures = []
    for key, run in reproduction.datasets.items():
        section, figs = _evaluation_section(run.evaluation, f"{run.title}")
        body.append(section)
        body.append(f"<div class=\"figures\">@@FIG{len(figures)}@@</div>")
        figures.append(figs)
    if reproduction.simulation is not None:
        body.append("<h2>Simulation study (section 4)</h2>")
        body.append(f"<div class=\"figures\">@@FIG{len(figures)}@@</div>")
        figures.append([simulation_figure(reproduction.simulation)])
    flat = [f for group in figures for f in group]
    fragments = figures_html(flat)
    page = "\n".join(body)
    position = 0
    for index, group in enumerate(figures):
        page = page.replace(f"@@FIG{index}@@", "".join(fragments[position:position + len(group)]))
        position += len(group)
    return _page(title, page)
