"""Tables and plotly figures of the dashboard: pure functions of plain data.

Nothing here imports Streamlit or calls the engine; every function takes a model
dictionary (the model file's layout, docs/model-format.md) or plain arrays and
returns a DataFrame, an HTML string or a new :class:`plotly.graph_objects.Figure`.
They are unit-tested in tests/test_dashboard_charts.py.

The colours follow the printed card (frl_engine.card): navy for the IF/ELSE
keywords, a pale-salmon-to-dark-red ramp for risk.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from frl_engine.rules import split_conditions
from frl_engine.terminal import visible_controls

NAVY = "#16324F"
INK = "#212121"
MUTED = "#646A70"
GRID = "#E6E9EE"
TRACK = "#ECEEF1"
RISK_LOW = (252, 187, 161)
RISK_HIGH = (165, 15, 21)
CHAIN_COLORS = ("#16324F", "#C0392B", "#2E86AB", "#E69F00", "#6A4C93", "#3B8B5A", "#8C564B", "#7F7F7F")
FONT = "Source Sans, Source Sans Pro, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"  # the page's font

TABLE_COLUMNS = ["position", "keyword", "conditions", "risk", "lower", "upper", "support", "events", "observed",
                 "share_patients", "share_events", "cumulative_events"]


# ============================================================================ numbers
def risk_color(fraction: float) -> str:
    """The card's risk ramp: 0 -> pale salmon, 1 -> dark red (hex)."""
    f = min(1.0, max(0.0, float(fraction)))
    r, g, b = (round(lo + (hi - lo) * f) for lo, hi in zip(RISK_LOW, RISK_HIGH))
    return f"#{r:02X}{g:02X}{b:02X}"


def pct(p: float | None, digits: int = 1) -> str:
    """0.6206 -> '62.1%'; None/NaN -> '–'; a share above 0 that would round to 0 (30 of 20,186: '0%') -> '<1%'
    (or '<0.1%'), and one below 1 that would round to 100% -> '>99%'."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    value, step = 100 * float(p), 10.0 ** -digits
    text = f"{value:.{digits}f}"
    if 0 < value and float(text) == 0:
        return f"<{step:.{digits}f}%"
    if value < 100 and float(text) == 100:
        return f">{100 - step:.{digits}f}%"
    return f"{text}%"


def interval(lower: float | None, upper: float | None, digits: int = 1) -> str:
    if lower is None or upper is None or (isinstance(lower, float) and math.isnan(lower)):
        return ""
    return f"{100 * lower:.{digits}f}–{100 * upper:.{digits}f}%"


def outcome_label(model: dict) -> str:
    """'Readmitted30d = yes' (or the model's own title)."""
    outcome = model.get("outcome") or {}
    if outcome.get("title"):
        return str(outcome["title"])
    target = outcome.get("target") or "event"
    positive = outcome.get("positive_class")
    return f"{target} = {positive}" if positive is not None else str(target)


# ============================================================================ the list
def rule_table(model: dict) -> pd.DataFrame:
    """The list as the paper's Table 1, one row per rule (ELSE last), with what each rule captures.

    Columns: ``position`` (1 = top), ``keyword`` (IF / ELSE IF / ELSE), ``conditions``,
    ``risk`` (fitted), ``lower``/``upper`` (95% credible interval, NaN without a
    posterior), ``support`` (patients the rule captures), ``events`` (events among
    them), ``observed`` (events / support), ``share_patients``, ``share_events``
    (of all patients / events) and ``cumulative_events`` (events captured by this
    rule and the ones above it, as a share of all events).
    """
    rules = list(model["rules"])
    default = model["default"]
    posterior = model.get("posterior") or {}
    lower = posterior.get("risk_lower")
    upper = posterior.get("risk_upper")
    n_rules = len(rules)
    entries = rules + [default]
    supports = np.array([int(e["support"]) for e in entries])
    events = np.array([int(e.get("n_positive", 0) or 0) for e in entries])
    total, total_events = max(int(supports.sum()), 1), max(int(events.sum()), 1)
    rows = []
    cumulative = 0
    for i, entry in enumerate(entries):
        cumulative += int(events[i])
        keyword = ("IF" if i == 0 else "ELSE IF") if i < n_rules else ("ELSE" if n_rules else "ALWAYS")
        rows.append({
            "position": i + 1,
            "keyword": keyword,
            "conditions": visible_controls(entry["name"]) if i < n_rules else "",   # a U+202E shown, not obeyed
            "risk": float(entry["probability"]),
            "lower": float(lower[i]) if lower is not None else float("nan"),
            "upper": float(upper[i]) if upper is not None else float("nan"),
            "support": int(supports[i]),
            "events": int(events[i]),
            "observed": events[i] / supports[i] if supports[i] else float("nan"),
            "share_patients": supports[i] / total,
            "share_events": events[i] / total_events,
            "cumulative_events": cumulative / total_events,
        })
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def paper_table(model: dict) -> pd.DataFrame:
    """The list exactly as the paper prints it: '', Conditions, '', Risk, Support (text cells)."""
    table = rule_table(model)
    label = outcome_label(model)
    return pd.DataFrame({
        "": table["keyword"],
        "Conditions": table["conditions"],
        " ": [f"THEN {label} risk is" for _ in range(len(table))],
        "Risk": [f"{100 * r:.2f}%" for r in table["risk"]],
        "Support": table["support"],
    })


def _conditions_html(text: str, keyword: str = "ELSE") -> str:
    if not text:   # an empty list's one line (ALWAYS) holds everyone, as the card writes it
        return f'<span class="frl-else">{"all patients" if keyword == "ALWAYS" else "all other patients"}</span>'
    parts = [f'<span class="frl-c">{html.escape(p.strip())}</span>' for p in split_conditions(text)]
    return ' <span class="frl-and">AND</span> '.join(parts)


_LIST_CSS = """
<style>
.frl-list { width: 100%; border-collapse: collapse; font-size: 1rem; color: #212121; margin: 0.25rem 0 0.5rem 0; }
.frl-list th { font-weight: 600; font-size: 0.75rem; color: #646A70; text-transform: uppercase; letter-spacing: 0.03em;
  text-align: left; padding: 0.35rem 0.55rem; border-bottom: 2px solid #16324F; white-space: nowrap; }
.frl-list td { padding: 0.55rem 0.55rem; border-bottom: 1px solid #E1E5EA; vertical-align: middle; }
.frl-list tr.frl-hit td { background: #FFF1DC; }
.frl-list tr.frl-hit td.frl-kw { box-shadow: inset 4px 0 0 #E69F00; }
.frl-list .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.frl-list .frl-kw { font-weight: 700; color: #16324F; white-space: nowrap; width: 1%; }
.frl-list .frl-cond { min-width: 15rem; }
.frl-list .frl-c { white-space: nowrap; }
.frl-list .frl-and { color: #646A70; font-size: 0.8em; letter-spacing: 0.04em; padding: 0 0.25em; }
.frl-list .frl-else { color: #646A70; font-style: italic; }
.frl-list .frl-then { color: #646A70; font-size: 0.85rem; white-space: nowrap; width: 1%; }
.frl-list .frl-barcell { width: 5.5rem; padding-right: 0.1rem; }
.frl-list .frl-bar { display: block; width: 5rem; height: 0.75rem; background: #ECEEF1; border-radius: 2px; }
.frl-list .frl-bar > span { display: block; height: 100%; border-radius: 2px; }
.frl-list .frl-risk { font-weight: 700; font-size: 1.15rem; width: 1%; }
.frl-list .frl-ci { color: #646A70; font-size: 0.85rem; }
.frl-list .frl-sub { color: #646A70; font-size: 0.8rem; }
.frl-note { color: #646A70; font-size: 0.85rem; margin-bottom: 0.2rem; }
.frl-wrap { width: 100%; overflow-x: auto; container-type: inline-size; }
/* In a narrow window (a tablet, or the sidebar open on a small screen) the risk stays in view: the bar and the
   event columns go first, then the support; the printed card and a wide window show every column. */
@container (max-width: 46rem) {
  .frl-list .frl-extra { display: none; }
  .frl-list .frl-cond { min-width: 8rem; }
  .frl-list .frl-c { white-space: normal; }
}
@container (max-width: 32rem) { .frl-list:not(.frl-compact) .frl-support { display: none; } }
@container (max-width: 22rem) { .frl-compact .frl-support { display: none; } }
.frl-compact .frl-cond { min-width: 0; }
.frl-compact td, .frl-compact th { padding-left: 0.4rem; padding-right: 0.4rem; }
</style>
"""


def rule_list_html(model: dict, *, highlight: int | None = None, show_then: bool = True,
                   compact: bool = False) -> str:
    """The falling rule list as an HTML table laid out like the paper's Table 1 (and the printed card).

    One row per rule, top first, ELSE last: keyword, conditions, "THEN",
    risk (with a bar), 95% credible interval (when a posterior was sampled),
    support, and the events the rule captures (count, rate, share of all events).
    ``highlight`` is the 0-based row to mark (a patient's rule); ``compact``
    leaves the bars and the event columns out (for side-by-side lists).  All
    text from the model is escaped.
    """
    table = rule_table(model)
    has_ci = not table["lower"].isna().all()
    label = html.escape(outcome_label(model))
    top = max(float(table["risk"].max()), 1e-9)
    head = ["<th></th>", "<th>Conditions</th>"]
    if show_then:
        head.append('<th class="frl-extra"></th>')
    if not compact:
        head.append('<th class="frl-extra"></th>')
    head.append('<th class="num">Risk</th>')
    if has_ci:
        head.append('<th class="num">95% CrI</th>')
    head.append('<th class="num frl-support">Support</th>')
    if not compact:
        head += ['<th class="num frl-extra">Events</th>', '<th class="num frl-extra">Event rate</th>',
                 '<th class="num frl-extra">Of all events</th>']
    body = []
    for i, row in table.iterrows():
        cls = ' class="frl-hit"' if highlight is not None and i == highlight else ""
        fraction = row["risk"] / top
        cells = [f'<td class="frl-kw">{html.escape(row["keyword"])}</td>',
                 f'<td class="frl-cond">{_conditions_html(row["conditions"], row["keyword"])}</td>']
        if show_then:
            cells.append('<td class="frl-then frl-extra">THEN</td>')
        if not compact:
            fill = f"width:{max(1.5, 100 * fraction):.1f}%;background:{risk_color(fraction)}"
            cells.append(f'<td class="frl-barcell frl-extra"><span class="frl-bar"><span style="{fill}"></span></span></td>')
        cells.append(f'<td class="num frl-risk">{pct(row["risk"])}</td>')
        if has_ci:
            cells.append(f'<td class="num frl-ci">{interval(row["lower"], row["upper"])}</td>')
        share = "" if compact else f' <span class="frl-sub">({pct(row["share_patients"], 0)})</span>'
        cells.append(f'<td class="num frl-support">{row["support"]:,}{share}</td>')
        if not compact:
            cells += [
                f'<td class="num frl-extra">{row["events"]:,}</td>',
                f'<td class="num frl-extra">{pct(row["observed"])}</td>',
                f'<td class="num frl-extra">{pct(row["share_events"], 0)}<br><span class="frl-sub">'
                f'cum. {pct(row["cumulative_events"], 0)}</span></td>',
            ]
        body.append(f"<tr{cls}>{''.join(cells)}</tr>")
    caption = (f'<div class="frl-note">Risk of <b>{label}</b>. Start at the top: the first rule that matches the '
               "patient gives the risk.</div>")
    table_class = "frl-list frl-compact" if compact else "frl-list"
    return (_LIST_CSS + caption + f'<div class="frl-wrap"><table class="{table_class}"><thead><tr>' + "".join(head)
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table></div>")


LEGEND_BELOW = {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top"}
LEGEND_AT_FOOT = {"orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yref": "container", "yanchor": "bottom"}


def _label_margin(labels) -> int:
    """Left margin (px) that fits the longest y tick label at 12 px."""
    return int(min(420, 24 + 6.6 * max((len(str(x)) for x in labels), default=4)))


def _base_layout(fig: go.Figure, *, height: int, title: str | None = None, left: int = 10, **extra) -> go.Figure:
    below = extra.get("legend") is LEGEND_BELOW
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15, "color": INK}} if title else None,
        height=height, margin={"l": left, "r": 20, "t": 46 if title else 16, "b": 95 if below else 40},
        font={"family": FONT, "size": 13, "color": INK}, plot_bgcolor="white", paper_bgcolor="white",
        hoverlabel={"font": {"family": FONT}}, **extra,
    )
    fig.update_xaxes(gridcolor=GRID, zeroline=False, linecolor="#C9CED6", automargin=True)
    fig.update_yaxes(gridcolor=GRID, zeroline=False, linecolor="#C9CED6", automargin=True)
    return fig


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plotly_text(text) -> str:
    """Text for a plotly label or hover: plotly reads ``<...>`` as markup (``Age < 60 AND Crea > 1``
    would lose its middle), so the angle brackets and ampersands are written as entities."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def rule_labels(table: pd.DataFrame) -> list[str]:
    """Axis labels: '1 · BedSores AND NoShow', ..., 'ELSE · all other patients'."""
    return [plotly_text(f"{r.position} · {_short(r.conditions)}") if r.conditions
            else f"{r.position} · ALWAYS (all patients)" if r.keyword == "ALWAYS"
            else f"{r.position} · ELSE (all others)" for r in table.itertuples()]


def falling_risk_chart(model: dict, *, highlight: int | None = None) -> go.Figure:
    """The falling bar chart: each rule's risk, top rule first, with its 95% credible interval when known."""
    table = rule_table(model)
    labels = rule_labels(table)
    top = max(float(table["risk"].max()), 1e-9)
    colors = [risk_color(r / top) for r in table["risk"]]
    if highlight is not None:
        colors = [c if i == highlight else "#D5D9DF" for i, c in enumerate(colors)]
    has_ci = not table["lower"].isna().all()
    error = None
    if has_ci:
        error = {"type": "data", "symmetric": False, "array": (table["upper"] - table["risk"]).clip(lower=0).tolist(),
                 "arrayminus": (table["risk"] - table["lower"]).clip(lower=0).tolist(), "color": "#4A4F55",
                 "thickness": 1.2, "width": 4}
    custom = np.stack([table["conditions"].replace("", "all other patients").map(plotly_text), table["support"],
                       table["events"],
                       [interval(lo, hi) or "–" for lo, hi in zip(table["lower"], table["upper"])]], axis=1)
    fig = go.Figure(go.Bar(
        x=table["risk"], y=labels, orientation="h", marker={"color": colors, "line": {"width": 0}},
        error_x=error, customdata=custom, name="risk",
        hovertemplate="<b>%{customdata[0]}</b><br>risk %{x:.1%} (95% CrI %{customdata[3]})<br>"
                      "%{customdata[2]} events among %{customdata[1]} patients<extra></extra>",
    ))
    # The numbers sit just right of the bar (or of its interval), never on top of the whisker.
    right = table["upper"].where(table["upper"].notna(), table["risk"]) if has_ci else table["risk"]
    fig.add_trace(go.Scatter(
        x=np.maximum(right, table["risk"]) + 0.015 * max(top, 0.05), y=labels, mode="text",
        text=[pct(r) for r in table["risk"]], textposition="middle right", hoverinfo="skip",
        textfont={"size": 13, "color": INK}, cliponaxis=False, name="",
    ))
    fig.update_yaxes(autorange="reversed", tickfont={"size": 12}, automargin=True)
    upper = float(np.nanmax(table["upper"])) if has_ci else top
    end = max(upper, top) * 1.2 + 0.03
    if end <= 1.0:
        fig.update_xaxes(tickformat=".0%", range=[0, end], title="Risk")
    else:   # room right of 100% for the top rule's number (it was cut off there); no tick past 100%
        fig.update_xaxes(tickformat=".0%", range=[0, min(end, 1.2)], tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0],
                         title="Risk")
    return _base_layout(fig, height=90 + 44 * len(table), title="Risk falls down the list", showlegend=False,
                        bargap=0.35, left=_label_margin(labels))


def events_captured_chart(model: dict) -> go.Figure:
    """Events each rule captures (bars) and the cumulative share of all events (line)."""
    table = rule_table(model)
    labels = [f"{p}" if c else "ELSE" for p, c in zip(table["position"], table["conditions"])]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=labels, y=table["events"], name="Events captured", marker={"color": NAVY},
        customdata=np.stack([table["conditions"].replace("", "all other patients").map(plotly_text), table["support"],
                             table["observed"]], axis=1),
        hovertemplate="<b>%{customdata[0]}</b><br>%{y} events among %{customdata[1]} patients "
                      "(rate %{customdata[2]:.1%})<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=labels, y=table["cumulative_events"], name="Cumulative share", yaxis="y2",
        mode="lines+markers", line={"color": "#C0392B", "width": 2.5}, marker={"size": 7},
        hovertemplate="rules 1–%{x}: %{y:.0%} of all events<extra></extra>",
    ))
    # the legend at the foot of the figure, not a share of the plot's height below it: there it met the axis
    # title once a narrow column turned the rule numbers on their side
    _base_layout(fig, height=400, title="Events captured by each rule", legend=LEGEND_AT_FOOT, bargap=0.45)
    fig.update_layout(margin={"b": 115}, yaxis={"title": "Events", "rangemode": "tozero"},
                      yaxis2={"title": "Cumulative share of events", "overlaying": "y", "side": "right",
                              "range": [0, 1.05], "tickformat": ".0%", "dtick": 0.25, "showgrid": False},
                      xaxis={"title": "Rule", "type": "category"})
    return fig


# ============================================================================ data page
def item_table_display(items: pd.DataFrame) -> pd.DataFrame:
    """The binarised items for display: item, column, patients, percent (0-100); a control character in a value
    shown as ``<U+202E>``, as in the rule table."""
    shown = items[["item", "column", "patients", "percent"]].copy()
    for name in ("item", "column"):
        shown[name] = shown[name].map(lambda text: visible_controls(str(text)))
    return shown


# ============================================================================ posterior
def poisson_pmf(lam: float, values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return np.exp(values * math.log(lam) - lam - np.array([math.lgamma(v + 1) for v in values]))


def length_histogram_chart(lengths: dict, lam: float | None = None, map_length: int | None = None) -> go.Figure:
    """Posterior of the list length L (bars) with the prior Poisson(lambda) for comparison."""
    ks = sorted(int(k) for k in lengths)
    lo, hi = min(ks + ([map_length] if map_length is not None else [])), max(ks)
    lo, hi = max(0, lo - 2), hi + 2
    if lam is not None and lam > 0:   # the prior's mass too (mean ± 2 sd): at λ = 20 it lay off a chart ending at 10
        spread = 2 * math.sqrt(lam)
        lo, hi = min(lo, max(0, math.floor(lam - spread))), max(hi, math.ceil(lam + spread))
    grid = list(range(lo, hi + 1))
    post = [float(lengths.get(k, 0.0)) for k in grid]
    colors = [NAVY if k != map_length else "#C0392B" for k in grid]
    fig = go.Figure(go.Bar(x=grid, y=post, name="Posterior", marker={"color": colors},
                           hovertemplate="L = %{x}: %{y:.1%} of samples<extra></extra>"))
    if lam is not None and lam > 0:
        fig.add_trace(go.Scatter(x=grid, y=poisson_pmf(lam, grid), name=f"Prior, λ = {lam:g}",
                                 mode="lines+markers", line={"color": "#9AA3AD", "dash": "dot", "width": 1.5},
                                 marker={"size": 5}, hovertemplate="prior P(L = %{x}) = %{y:.1%}<extra></extra>"))
    _base_layout(fig, height=360, title="Posterior of the list length L", legend=LEGEND_BELOW)
    fig.update_xaxes(title="Rules in the list, L (ELSE not counted)", dtick=1 if len(grid) <= 30 else 5)
    fig.update_yaxes(title="Share of samples", tickformat=".0%", rangemode="tozero")
    return fig


def inclusion_chart(inclusion: dict, map_rules=(), top: int = 15) -> go.Figure:
    """How often each candidate rule is in the sampled lists (rules of the shown list in red)."""
    items = [(k, v) for k, v in inclusion.items() if v > 0][:top]
    names = [plotly_text(_short(k, 60)) for k, _ in items]
    in_map = set(map_rules)
    fig = go.Figure(go.Bar(
        x=[v for _, v in items], y=names, orientation="h",
        marker={"color": ["#C0392B" if k in in_map else "#8FA3B8" for k, _ in items]},
        customdata=[plotly_text(k) for k, _ in items],
        hovertemplate="%{customdata}: in %{x:.1%} of sampled lists<extra></extra>",
        text=[pct(v, 0) for _, v in items], textposition="outside", cliponaxis=False,
    ))
    fig.update_yaxes(autorange="reversed", tickfont={"size": 12}, automargin=True)
    fig.update_xaxes(tickformat=".0%", range=[0, 1.1], title="Share of sampled lists that contain the rule")
    return _base_layout(fig, height=max(240, 90 + 26 * len(items)),
                        title="Rule inclusion frequencies (red: a rule of the list shown)", showlegend=False,
                        bargap=0.3, left=_label_margin(names))


def disagreement_table(disagreement) -> pd.DataFrame:
    """One row per rule the chains disagree on: the rule, then the share of each chain's lists holding it."""
    rows = [{"rule": rule, **{f"chain {k + 1}": share for k, share in enumerate(shares)}}
            for rule, shares in disagreement]
    return pd.DataFrame(rows)


def trace_chart(trace: np.ndarray, *, title: str, y_title: str, rhat: float | None = None,
                ess: float | None = None, step: bool = False) -> go.Figure:
    """One line per chain over the kept samples (a trace plot), R-hat and ESS in the title."""
    trace = np.atleast_2d(np.asarray(trace, dtype=float))
    fig = go.Figure()
    for chain, values in enumerate(trace):
        fig.add_trace(go.Scatter(
            y=values, x=np.arange(1, len(values) + 1), mode="lines", name=f"chain {chain + 1}",
            line={"width": 1.1, "color": CHAIN_COLORS[chain % len(CHAIN_COLORS)], "shape": "hv" if step else "linear"},
            opacity=0.85, hovertemplate=f"chain {chain + 1}, sample %{{x}}: %{{y:.4g}}<extra></extra>",
        ))
    bits = [title]
    if rhat is not None:
        bits.append("R-hat n/a (no variation)" if _nan(rhat) else f"R-hat {rhat:.3f}")
    if ess is not None and not _nan(ess):
        bits.append(f"ESS {ess:.0f}")
    _base_layout(fig, height=340, title=" · ".join(bits), legend=LEGEND_BELOW)
    fig.update_xaxes(title="Kept sample")
    fig.update_yaxes(title=y_title)
    if step:
        fig.update_yaxes(dtick=1)
    return fig


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


MOVE_ORDER = ("swap", "replace", "add", "remove")


def acceptance_table(acceptance: dict, per_chain=(), proposals: dict | None = None) -> pd.DataFrame:
    """Acceptance rate of each Metropolis-Hastings move: pooled, and per chain."""
    rows = []
    for move in (*MOVE_ORDER, "all"):
        row = {"move": move, "pooled": acceptance.get(move, float("nan"))}
        if proposals:
            row["proposals"] = int(proposals.get(move, 0))
        for chain, rates in enumerate(per_chain):
            row[f"chain {chain + 1}"] = rates.get(move, float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


def acceptance_chart(acceptance: dict, per_chain=()) -> go.Figure:
    """Acceptance rates per move (pooled bars, each chain a dot)."""
    moves = list(MOVE_ORDER) + ["all"]
    fig = go.Figure(go.Bar(x=moves, y=[_nz(acceptance.get(m)) for m in moves], name="pooled",
                           marker={"color": NAVY}, hovertemplate="%{x}: %{y:.1%} accepted<extra>pooled</extra>"))
    for chain, rates in enumerate(per_chain):
        fig.add_trace(go.Scatter(x=moves, y=[_nz(rates.get(m)) for m in moves], mode="markers",
                                 name=f"chain {chain + 1}",
                                 marker={"size": 8, "color": CHAIN_COLORS[chain % len(CHAIN_COLORS)],
                                         "line": {"width": 1, "color": "white"}},
                                 hovertemplate=f"chain {chain + 1}, %{{x}}: %{{y:.1%}}<extra></extra>"))
    _base_layout(fig, height=360, title="Acceptance rate of each list move", legend=LEGEND_BELOW)
    fig.update_yaxes(tickformat=".1%", rangemode="tozero", title="Accepted proposals")
    return fig


def _nz(value):
    return None if _nan(value) else value


# ============================================================================ validation
def fit_for_streamlit(fig: go.Figure, height: int = 480) -> go.Figure:
    """A figure from frl_engine.figures resized to fill a Streamlit column."""
    fig = go.Figure(fig)
    fig.update_layout(width=None, autosize=True, height=height, margin={"l": 10, "r": 10, "t": 50, "b": 40},
                      font={"family": FONT}, title={"font": {"size": 15}, "x": 0, "xanchor": "left"})
    return fig


def auroc_display(table: pd.DataFrame) -> pd.DataFrame:
    """The engine's AUROC table with readable column names, best mean first."""
    out = table.copy()
    out = out.sort_values("auroc_mean", ascending=False, kind="stable").reset_index(drop=True)
    return out.rename(columns={"method": "Method", "auroc_mean": "AUROC (mean)", "auroc_std": "SD",
                               "fit_seconds": "Fit time per fold (s)", "list_lengths": "FRL list lengths"})


# ============================================================================ compare
def compare_summary(models: dict) -> pd.DataFrame:
    """Side-by-side facts of two or more lists: name -> model."""
    rows = []
    for name, model in models.items():
        hyper = model.get("hyperparameters") or {}
        table = rule_table(model)
        training = model.get("training") or {}
        outcome = model.get("outcome") or {}
        rows.append({
            "": name,
            "Data": training.get("data_name"),
            "Outcome": (f"{outcome.get('target')} = {outcome.get('positive_class')}" if outcome.get("target")
                        else outcome.get("positive_class")),
            "Rules (L)": len(model["rules"]),
            "λ": hyper.get("lam"),
            "Min support": pct(hyper.get("min_support"), 0) if hyper.get("min_support") is not None else "–",
            "Max conditions": hyper.get("max_conditions"),
            "Steps × chains": f"{hyper.get('n_steps', '?')} × {hyper.get('n_chains', '?')}",
            "Seed": hyper.get("random_state"),
            "Top risk": pct(table["risk"].iloc[0]),
            "ELSE risk": pct(table["risk"].iloc[-1]),
            "Patients in ELSE": pct(table["share_patients"].iloc[-1], 0),
            "Log posterior": f"{float((model.get('parameters') or {}).get('log_posterior', float('nan'))):.2f}",
            "Candidate rules": training.get("n_candidate_rules"),
        })
    # Text cells: the table is shown transposed (one column per list), so its columns mix kinds.
    return pd.DataFrame(rows).set_index("").map(lambda v: "–" if v is None else str(v))


def shared_rules(model_a: dict, model_b: dict) -> tuple[set, set, set]:
    """Rules only in A, in both, only in B."""
    a = {r["name"] for r in model_a["rules"]}
    b = {r["name"] for r in model_b["rules"]}
    return a - b, a & b, b - a


def compare_risk_chart(models: dict) -> go.Figure:
    """Risk down each list, overlaid: how the two lists fall."""
    fig = go.Figure()
    palette = (NAVY, "#C0392B", "#2E86AB", "#E69F00")
    for index, (name, model) in enumerate(models.items()):
        table = rule_table(model)
        fig.add_trace(go.Scatter(
            x=table["position"], y=table["risk"], mode="lines+markers", name=name, line={"shape": "hv", "width": 2.5,
                                                                                         "color": palette[index % 4]},
            marker={"size": 8}, customdata=table["conditions"].replace("", "ELSE (all others)").map(plotly_text),
            hovertemplate=f"{name}, rule %{{x}}: %{{customdata}}<br>risk %{{y:.1%}}<extra></extra>",
        ))
    _base_layout(fig, height=340, title="Risk down each list", legend=LEGEND_BELOW)
    fig.update_xaxes(title="Rule position (last = ELSE)", dtick=1)
    fig.update_yaxes(title="Risk", tickformat=".0%", rangemode="tozero")
    return fig


def format_cut(value: float) -> str:
    """A threshold as the rules print it: 60 not 60.0."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
