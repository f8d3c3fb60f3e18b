"""Figures and the HTML report of a hyperparameter exploration (:mod:`frl_engine.explore`).

Pure functions of an :class:`~frl_engine.explore.ExploreResult`'s table:

* :func:`heatmap_figure` -- mean cross-validated AUROC over lam x min_support, one panel per
  ``max_conditions``; each cell's text gives the AUROC and the list length.
* :func:`frontier_figure` -- AUROC (with +-1 SE bars) against the length of the full-data list,
  one point per cell; the Pareto-best cells are joined by a line, the recommended cell is a star.
* :func:`explore_report_html` -- a self-contained page (plotly.js inlined once; works offline).
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .explore import DEFAULT_N_THRESHOLDS
from .figures import _page, _table, figures_html

__all__ = ["heatmap_figure", "frontier_figure", "explore_report_html", "cell_label"]


def _num(x) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:g}"


def cell_label(row) -> str:
    """``λ 4 · support 5% · ≤2 conditions``: how a cell is named on the page and in the report.

    A cell with other than the default 3 thresholds per numeric column says so (``· 5 thresholds``).
    """
    label = (f"λ {_num(row['lam'])} · support {_num(round(100 * float(row['min_support']), 3))}% · "
             f"≤{int(row['max_conditions'])} condition{'s' if int(row['max_conditions']) != 1 else ''}")
    thresholds = row.get("n_thresholds", DEFAULT_N_THRESHOLDS)
    if pd.notna(thresholds) and int(thresholds) != DEFAULT_N_THRESHOLDS:
        label += f" · {int(thresholds)} thresholds"
    return label


def _panels(table: pd.DataFrame) -> list[tuple[int, int]]:
    """The heatmap's panels: one per ``(max_conditions, n_thresholds)`` present."""
    if not len(table):
        return [(2, DEFAULT_N_THRESHOLDS)]
    thresholds = table["n_thresholds"] if "n_thresholds" in table else pd.Series(DEFAULT_N_THRESHOLDS, table.index)
    return sorted({(int(c), int(t)) for c, t in zip(table["max_conditions"], thresholds)})


def _panel_title(conditions: int, thresholds: int, several: bool) -> str:
    title = f"≤ {conditions} condition{'s' if conditions > 1 else ''} per rule"
    return title + f", {thresholds} threshold{'s' if thresholds > 1 else ''}" if several else title


#: The heatmap's colours: white to a middle blue, every one readable under near-black text (contrast 6:1 or more).
HEAT_SCALE = [[0.0, "#F7FBFF"], [0.5, "#C6DBEF"], [1.0, "#6BAED6"]]


def heatmap_figure(table: pd.DataFrame, *, title: str | None = "Cross-validated AUROC over λ and minimum support") -> go.Figure:
    """One heatmap of mean AUROC per ``max_conditions`` (and ``n_thresholds`` when the grid varies it):
    x = lam, y = min_support (categories)."""
    panels = _panels(table)
    several = len({t for _, t in panels}) > 1
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[_panel_title(c, t, several) for c, t in panels])
    lams = sorted(table["lam"].unique()) if len(table) else []
    supports = sorted(table["min_support"].unique()) if len(table) else []
    finite = table["auroc_mean"].astype(float)
    zmin, zmax = (float(np.nanmin(finite)), float(np.nanmax(finite))) if finite.notna().any() else (0.5, 1.0)
    for k, (c, t) in enumerate(panels, start=1):
        sub = table[(table["max_conditions"] == c)
                    & ((table["n_thresholds"] == t) if "n_thresholds" in table else True)]
        z = np.full((len(supports), len(lams)), np.nan)
        text = np.full((len(supports), len(lams)), "not run", dtype=object)   # a cell a stopped grid never reached
        custom = np.full((len(supports), len(lams)), -1, dtype=int)
        for index, row in sub.iterrows():
            i, j = supports.index(row["min_support"]), lams.index(row["lam"])
            z[i, j] = row["auroc_mean"]
            if pd.notna(row["auroc_mean"]):
                mark = " ★" if row["recommended"] else ""
                text[i, j] = f"{row['auroc_mean']:.3f}<br>{int(row['n_rules'])} rules{mark}"
            else:
                text[i, j] = "not fitted"
            custom[i, j] = int(index)
        fig.add_trace(go.Heatmap(
            x=[_num(v) for v in lams], y=[f"{100 * v:g}%" for v in supports], z=z, text=text, customdata=custom,
            # light to middle blue under dark text of a fixed size: readable on every cell (Viridis's middle teal
            # under auto-coloured text was not, and plotly shrank the text to about 7 px to fit it)
            texttemplate="%{text}", textfont={"size": 12, "color": "#111111"}, zmin=zmin, zmax=zmax,
            colorscale=HEAT_SCALE, showscale=(k == len(panels)),
            colorbar={"title": "AUROC"}, xgap=2, ygap=2,
            hovertemplate="λ %{x} · support %{y}<br>AUROC %{z:.3f}<extra></extra>"), row=1, col=k)
        fig.update_xaxes(title_text="λ (prior list length)", type="category", row=1, col=k)
    fig.update_yaxes(title_text="minimum support", type="category", row=1, col=1)
    fig.update_layout(title=title, height=380, margin={"l": 60, "r": 20, "t": 70, "b": 50}, template="plotly_white")
    return fig


def frontier_figure(table: pd.DataFrame, *, title: str | None = "AUROC against list length") -> go.Figure:
    """Mean AUROC (error bars: one SE) against the number of rules; Pareto-best joined; recommended starred."""
    ok = table[table["auroc_mean"].notna()]
    fig = go.Figure()
    labels = [cell_label(r) for _, r in ok.iterrows()]
    fig.add_trace(go.Scatter(
        x=ok["n_rules"], y=ok["auroc_mean"], mode="markers", name="cells",
        error_y={"type": "data", "array": ok["auroc_se"].fillna(0), "thickness": 1, "width": 3, "color": "#aaa"},
        marker={"size": 10, "color": "#1f77b4", "opacity": 0.75}, text=labels, customdata=list(ok.index),
        hovertemplate="%{text}<br>%{x} rules · AUROC %{y:.3f}<extra></extra>"))
    front = ok[ok["pareto"].astype(bool)].sort_values("n_rules")
    fig.add_trace(go.Scatter(x=front["n_rules"], y=front["auroc_mean"], mode="lines+markers", name="Pareto-best",
                             line={"color": "#d62728", "width": 2}, marker={"size": 12, "color": "#d62728"},
                             customdata=list(front.index), text=[cell_label(r) for _, r in front.iterrows()],
                             hovertemplate="%{text}<br>%{x} rules · AUROC %{y:.3f}<extra>Pareto-best</extra>"))
    best = ok[ok["recommended"].astype(bool)]
    if len(best):
        fig.add_trace(go.Scatter(x=best["n_rules"], y=best["auroc_mean"], mode="markers", name="recommended",
                                 marker={"symbol": "star", "size": 22, "color": "#ffbf00",
                                         "line": {"color": "#333", "width": 1}},
                                 customdata=list(best.index), text=[cell_label(r) for _, r in best.iterrows()],
                                 hovertemplate="%{text}<br>%{x} rules · AUROC %{y:.3f}<extra>recommended</extra>"))
    fig.update_layout(title=title, xaxis_title="rules in the list (ELSE not counted)",
                      yaxis_title="cross-validated AUROC (mean ± SE)", height=380, template="plotly_white",
                      margin={"l": 60, "r": 20, "t": 70, "b": 50}, legend={"orientation": "h", "y": -0.2})
    fig.update_xaxes(dtick=1)
    return fig


def explore_report_html(result, *, title: str | None = None) -> str:
    """The table (sorted by AUROC), the heatmap and the frontier, as one offline page."""
    title = title or "Hyperparameter exploration"
    table = result.sorted_table()
    header = ["", "λ", "min support", "max conditions", "thresholds", "rules", "AUROC mean", "SD", "log posterior", "top rule"]
    rows = []
    for _, r in table.iterrows():
        mark = ("★ recommended" if r["recommended"] else "") + (" · Pareto" if r["pareto"] else "")
        if r["error"]:
            rows.append([mark, _num(r["lam"]), _num(r["min_support"]), int(r["max_conditions"]), int(r["n_thresholds"]),
                         "", "", "", "", f"not fitted: {r['error']}"])
        else:
            rows.append([mark, _num(r["lam"]), _num(r["min_support"]), int(r["max_conditions"]), int(r["n_thresholds"]),
                         int(r["n_rules"]),
                         f"{r['auroc_mean']:.3f}", f"{r['auroc_sd']:.3f}", f"{r['log_posterior']:.2f}", r["top_rule"]])
    rec = result.recommended
    note = ("" if rec is None else
            f"<p>Recommended (one-standard-error rule: the shortest list whose AUROC is within one SE of the best): "
            f"<b>{html.escape(cell_label(rec))}</b>, {int(rec['n_rules'])} rules, AUROC {rec['auroc_mean']:.3f}.<br>"
            f"List: {html.escape(rec['rules'] or '(no rule: ELSE only)')}</p>")
    fragments = figures_html([heatmap_figure(result.table), frontier_figure(result.table)])
    body = (f"<h1>{html.escape(title)}</h1>\n<p>{result.n_folds}-fold stratified cross-validation, seed "
            f"{result.random_state}, {len(result.table)} cells, run {html.escape(result.where)} in "
            f"{result.elapsed_seconds:.1f} s{' (stopped early)' if result.stopped else ''}.</p>\n{note}\n"
            f"{_table(header, rows)}\n<div class=\"figures\">{''.join(fragments)}</div>")
    return _page(title, body)
