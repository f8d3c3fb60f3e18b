"""The laminated risk card (frl_engine.card, frl_engine.cli_card).

Models are built here from docs/model-format.md (the engine that writes them is
developed in parallel): the paper's Table 1 mammography list and the section 5.1
readmission list.  The PDF is checked through pypdf (text, positions, boxes) and
through the card's own layout (every text line's measured box), and rendered to
PNG with pdftoppm into test-artifacts/ for a human look.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from frl_engine import card as card_mod
from frl_engine.card import CARD_SIZES, format_risk, layout_card, model_identifier, render_card
from frl_engine.cli_card import register
from frl_engine.errors import FRLError, ModelFileError

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
MM = 72 / 25.4  # points per mm

MAMMO_RULES = [  # Table 1 of Wang & Rudin (2015)
    ("IrregularShape AND Age >= 60", 0.8522, 230),
    ("SpiculatedMargin AND Age >= 45", 0.7813, 64),
    ("IllDefinedMargin AND Age >= 60", 0.6923, 39),
    ("IrregularShape", 0.6340, 153),
    ("LobularShape AND Density >= 2", 0.3968, 63),
    ("RoundShape AND Age >= 60", 0.2609, 46),
]
MAMMO_DEFAULT = (0.1038, 366)

READMISSION_RULES = [  # section 5.1
    ("BedSores AND Noshow", 0.3325, 770),
    ("PoorPrognosis AND MaxCare", 0.2842, 278),
    ("PoorCondition AND Noshow", 0.2463, 337),
    ("BedSores", 0.1981, 308),
    ("NegativeIdeation AND Noshow", 0.1821, 291),
    ("MaxCare", 0.1384, 477),
    ("Noshow", 0.0600, 1127),
    ("MoodProblems", 0.0445, 1325),
]
READMISSION_DEFAULT = (0.0088, 3031)


def _condition(part: str) -> dict:
    """A condition as the model file writes it: a number for >= and <, a category for = (written ==)."""
    for op in (">=", "<", "="):
        if f" {op} " in part:
            column, value = part.split(f" {op} ")
            if op == "=":
                return {"column": column, "op": "==", "value": value}
            return {"column": column, "op": op, "value": float(value)}
    return {"column": part, "op": "is true", "value": None}


def make_model(
    rules=MAMMO_RULES,
    default=MAMMO_DEFAULT,
    *,
    target="Malignant",
    positive="yes",
    title="Malignancy risk of a mammographic mass",
    data_name="mammographic_masses.csv",
    posterior=True,
    validation=True,
) -> dict:
    """A model dict exactly as docs/model-format.md describes the model file."""
    rule_dicts = [
        {
            "name": name,
            "conditions": [_condition(p) for p in name.split(" AND ")],
            "probability": p,
            "support": n,
            "n_positive": round(p * n),
        }
        for name, p, n in rules
    ]
    n_rows = sum(n for _, _, n in rules) + default[1]
    n_positive = sum(r["n_positive"] for r in rule_dicts) + round(default[0] * default[1])
    risks = [p for _, p, _ in rules] + [default[0]]
    model = {
        "format": "frl-model",
        "format_version": 1,
        "created_at": "2026-11-22T17:50:00+00:00",
        "outcome": {"target": target, "positive_class": positive, "classes": ["no", positive], "title": title},
        "hyperparameters": {
            "lam": 8.0, "alpha": 1.0, "beta": 0.1, "alpha_K": 1.0, "beta_K": 0.1,
            "min_support": 0.05, "max_conditions": 2, "n_steps": 5000, "n_chains": 2,
            "temperature": 1.0, "cooling": None, "mine_rules": True, "random_state": 0,
        },
        "training": {
            "n_rows": n_rows, "n_positive": n_positive, "positive_rate": n_positive / n_rows,
            "n_candidate_rules": 160, "data_name": data_name,
        },
        "rules": rule_dicts,
        "default": {"probability": default[0], "support": default[1], "n_positive": round(default[0] * default[1])},
        "parameters": {"K": 0.052, "gammas": [1.2] * len(rules), "log_posterior": -1234.5},
        "binarizer": None,
        "feature_names": sorted({c["column"] for r in rule_dicts for c in r["conditions"]}),
        "posterior": None,
        "validation": None,
    }
    if posterior:
        model["posterior"] = {
            "n_samples": 2000,
            "risk_median": risks,
            "risk_lower": [max(0.0, p * 0.9 - 0.01) for p in risks],
            "risk_upper": [min(1.0, p * 1.1 + 0.01) for p in risks],
        }
    if validation:
        model["validation"] = {
            "method": "5-fold stratified cross-validation", "n_folds": 5, "auroc_mean": 0.8, "auroc_std": 0.02,
        }
    return json.loads(json.dumps(model))  # exactly what reading the file gives


def long_model(n_rules=12, width=80) -> dict:
    rules = []
    for i in range(n_rules):
        name = (f"Systolic blood pressure at admission >= {100 + i} AND Prior admissions in the last year >= {i}")
        rules.append((name[:width].rstrip(), round(0.9 - 0.065 * i, 4), 40 + 7 * i))
    return make_model(rules, (0.03, 1500), title="Long list")


def expected_condition(name: str) -> str:
    return name.replace(" AND ", " and ").replace(">=", "≥").replace("<=", "≤")


def norm(text: str) -> str:
    return " ".join(text.split())


def pdf_pages(pdf: bytes) -> list:
    return PdfReader(io.BytesIO(pdf)).pages


def page_text(page) -> str:
    return norm(page.extract_text())


def runs(page) -> list[tuple[str, float, float, str, float]]:
    """(text, x pt, baseline y pt, font name, size pt) of every text run on a page, via pypdf's visitor."""
    found = []

    def visit(text, cm, tm, font_dict, font_size):
        if text.strip():
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            found.append((text.strip(), x, y, str((font_dict or {}).get("/BaseFont", "")), font_size * tm[0]))

    page.extract_text(visitor_text=visit)
    return found


def assert_in_order(haystack: str, needles: list[str]) -> None:
    pos = -1
    for needle in needles:
        nxt = haystack.find(needle, pos + 1)
        assert nxt > pos, f"{needle!r} missing or out of order after position {pos} in:\n{haystack}"
        pos = nxt


# --------------------------------------------------------------------------- content


def test_front_lists_every_rule_risk_and_support_in_falling_order():
    model = make_model()
    pages = pdf_pages(render_card(model))
    assert len(pages) == 2  # front and back of one pocket card
    front = page_text(pages[0])
    needles = []
    for keyword, (name, p, n) in zip(["IF"] + ["ELSE IF"] * 5, MAMMO_RULES):
        needles += [keyword, expected_condition(name), format_risk(p, n), f"{n:,}"]
    needles += ["ELSE", "all other patients", "10%", "366"]
    assert_in_order(front, ["Malignancy risk of a mammographic mass"] + needles)
    assert [format_risk(p, n) for _, p, n in MAMMO_RULES] == ["85%", "78%", "69%", "63%", "40%", "26%"]
    # credible intervals, from the posterior, next to each risk
    for lo, hi in zip(model["posterior"]["risk_lower"], model["posterior"]["risk_upper"]):
        assert f"{round(lo * 100)}–{round(hi * 100)}%" in front


def test_readmission_list_with_sub_percent_default_and_no_posterior():
    model = make_model(READMISSION_RULES, READMISSION_DEFAULT, target="Readmitted30d", title=None,
                       data_name="readmission.csv", posterior=False, validation=False)
    lay = layout_card(model)
    pdf = render_card(model)
    pages = pdf_pages(pdf)
    front, back = page_text(pages[0]), page_text(pages[1])
    assert lay.title == "Risk of Readmitted30d = yes"  # default title when outcome.title is null
    assert front.startswith("Risk of Readmitted30d = yes")
    needles = []
    for name, p, n in READMISSION_RULES:
        needles += [expected_condition(name), format_risk(p, n), f"{n:,}"]
    assert_in_order(front, needles + ["all other patients", "0.9%", "3,031"])
    assert "CrI" not in front  # no posterior: no interval column
    assert "not externally validated" in back
    assert "AUROC" not in back


def test_a_model_without_an_outcome_name_says_the_outcome_never_none():
    """A model fitted in Python on a y without a name records no target; its card read 'Risk of None = Yes'."""
    model = make_model(READMISSION_RULES, READMISSION_DEFAULT, target=None, title=None,
                       data_name="readmission.csv", posterior=False, validation=False)
    front, back = (page_text(page) for page in pdf_pages(render_card(model)))
    assert front.startswith("Risk of the outcome (yes)")
    assert "None" not in front + back and "the outcome (yes)" in back


def test_back_tells_provenance_settings_and_model_id():
    model = make_model()
    back = page_text(pdf_pages(render_card(model))[1])
    for text in ["mammographic_masses.csv", "2026-11-22", "N = 961", "AUROC 0.80 ± 0.02",
                 "5-fold stratified cross-validation", "not externally validated",
                 "λ = 8", "min support 5%", "max 2 conditions", "5,000 steps", "seed 0",
                 "2,000 posterior samples", "does not replace clinical judgement"]:
        assert text in back, text
    canonical = json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected_id = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:10]
    assert model_identifier(model) == expected_id
    assert re.fullmatch(r"[0-9a-f]{10}", expected_id)
    assert expected_id in back


def test_the_back_says_a_list_from_a_handful_of_patients_is_too_few_to_rely_on():
    """Fitted on 14 patients, 6 with the event: the back says so; the 961 patients of the paper's list do not."""
    few = make_model(rules=[("IrregularShape AND Age >= 60", 0.6, 5)], default=(0.33, 9), posterior=False,
                     validation=False)
    assert few["training"]["n_rows"] == 14 and few["training"]["n_positive"] == 6
    back = page_text(pdf_pages(render_card(few))[1])
    assert "N = 14" in back and "too few to rely on" in back
    assert "too few to rely on" not in page_text(pdf_pages(render_card(make_model()))[1])


def test_model_id_changes_when_the_model_changes():
    model = make_model()
    changed = copy.deepcopy(model)
    changed["rules"][2]["support"] += 1
    assert model_identifier(changed) != model_identifier(model)
    back = page_text(pdf_pages(render_card(changed))[1])
    assert model_identifier(changed) in back and model_identifier(model) not in back
    # key order does not matter (canonical form), the content does
    reordered = dict(reversed(list(model.items())))
    assert model_identifier(reordered) == model_identifier(model)


@pytest.mark.parametrize(
    ("p", "n", "shown"),
    [
        (0.8522, 230, "85%"),
        (0.7813, 64, "78%"),  # 64 patients: whole percent, never 78.1%
        (0.125, 40, "13%"),  # half up, not banker's rounding
        (0.0088, 3031, "0.9%"),  # below 1% with >= 1000 patients: one decimal
        (0.0088, 40, "<1%"),  # 40 patients cannot support 0.1% precision
        (0.004, 400, "<1%"),
        (0.0004, 5000, "<0.1%"),
        (0.0, 10, "<1%"),  # never 0%
        (0.998, 500, ">99%"),  # never 100%
        (0.0096, 5000, "1%"),  # 0.95%..1% rounds to whole percent: the column never rises
    ],
)
def test_rounding_rule(p, n, shown):
    assert format_risk(p, n) == shown


def _not_above(below: str, above: str) -> bool:
    """Does the printed risk ``below`` read as no higher than ``above``?  ("<x%" is a bound, never a rise.)"""
    if below.startswith("<"):
        return True
    if above.startswith("<"):
        return not below.startswith(">") and float(below[:-1]) < float(above[1:-1])
    if below.startswith(">"):
        return above.startswith(">")
    return above.startswith(">") or float(below[:-1]) <= float(above[:-1])


def test_printed_risks_never_rise_down_the_list():
    import random

    rng = random.Random(0)
    for _ in range(300):  # falling lists with mixed supports, many near 1%
        risks = sorted((rng.choice([rng.random(), rng.random() / 50]) for _ in range(12)), reverse=True)
        shown = [format_risk(p, rng.choice([30, 400, 999, 1000, 5000])) for p in risks]
        for above, below in zip(shown, shown[1:]):
            assert _not_above(below, above), (above, below, shown)
    # the case that motivates "<1%" rather than "1%" for small rules below 0.95%
    assert _not_above(format_risk(0.0055, 400), format_risk(0.006, 5000))


def test_risk_bars_fall_and_darken_with_the_list():
    lay = layout_card(make_model())
    front = lay.pages[0]
    bars = [i for i in front.items if isinstance(i, card_mod.Rect) and i.role == "bar"]
    assert len(bars) == len(MAMMO_RULES) + 1
    widths = [b.w for b in bars]
    assert widths == sorted(widths, reverse=True) and widths[0] > 3 * widths[-1]
    darkness = [-sum(b.color) for b in bars]
    assert darkness == sorted(darkness, reverse=True)
    # bars are proportional to the risk (ratio-preserving scale)
    assert widths[0] / widths[3] == pytest.approx(MAMMO_RULES[0][1] / MAMMO_RULES[3][1], rel=1e-6)


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize("size", ["pocket", "index", "a6"])
def test_trim_box_is_exactly_the_card(size):
    pages = pdf_pages(render_card(make_model(), size=size))
    w, h = CARD_SIZES[size]
    for page in pages:
        trim, media, bleed = page.trimbox, page.mediabox, page.bleedbox
        assert float(trim.width) / MM == pytest.approx(w, abs=0.1)
        assert float(trim.height) / MM == pytest.approx(h, abs=0.1)
        # the page is the card plus a 10 mm margin for the crop marks, card centred
        assert float(media.width) / MM == pytest.approx(w + 20, abs=0.1)
        assert float(media.height) / MM == pytest.approx(h + 20, abs=0.1)
        assert float(trim.left) / MM == pytest.approx(10, abs=0.05)
        assert float(trim.bottom) / MM == pytest.approx(10, abs=0.05)
        assert float(bleed.width) / MM == pytest.approx(w + 6, abs=0.1)
    assert CARD_SIZES == {"pocket": (85.6, 54.0), "index": (127.0, 76.2), "a6": (148.0, 105.0)}


def test_pdf_asks_viewers_to_print_at_actual_size():
    pdf = render_card(make_model())
    assert b"/PrintScaling /None" in pdf
    front, back = (page_text(p) for p in pdf_pages(pdf))
    assert "FRONT" in front and "BACK" in back
    assert "print at 100% (actual size)" in front and "85.6 × 54 mm" in front


def _check_layout_inside(lay) -> None:
    x0, y0, x1, y1 = lay.trim
    bx0, by0, bx1, by1 = lay.bleed
    for page in lay.pages:
        card_text = [t for t in page.texts if t.role != "slug"]
        for t in card_text:
            assert x0 < t.x and t.right < x1 and y0 < t.top and t.bottom < y1, (page.side, page.card, t)
        for a, b in itertools.combinations(card_text, 2):
            overlap_x = min(a.right, b.right) - max(a.x, b.x)
            overlap_y = min(a.bottom, b.bottom) - max(a.top, b.top)
            assert overlap_x <= 1e-6 or overlap_y <= 1e-6, f"text overlaps: {a.text!r} / {b.text!r}"
        for t in page.texts:
            if t.role == "slug":  # the printing note lives in the margin, off the card and its bleed
                assert t.top > by1 and t.bottom < lay.page_h and t.x > x0 and t.right < x1
        for item in page.items:
            if isinstance(item, card_mod.Rect):
                assert bx0 - 1e-6 <= item.x and item.x + item.w <= bx1 + 1e-6
                assert by0 - 1e-6 <= item.y and item.y + item.h <= by1 + 1e-6


def _check_pdf_inside(pdf: bytes, fonts) -> None:
    """Independent check from the PDF itself: every text run starts and ends inside the TrimBox."""
    for page in pdf_pages(pdf):
        trim = page.trimbox
        for text, x, y, font, size in runs(page):
            if "print at 100%" in text or text.startswith(("FRONT", "BACK")):
                continue  # the slug, in the margin by design
            width_pt = fonts.width(text, "Bold" in font, size) * MM
            assert float(trim.left) < x and x + width_pt < float(trim.right), (text, x, width_pt)
            assert float(trim.bottom) < y < float(trim.top), (text, y)


def test_long_list_never_overflows_and_moves_up_or_continues():
    model = long_model()
    assert all(len(r["name"]) == 80 for r in model["rules"])
    lay = layout_card(model, size="pocket")
    assert lay.size != "pocket" or lay.n_cards > 1
    assert lay.size == "a6" and lay.n_cards >= 2  # 12 long rules do not fit one card of any size
    assert [p.side for p in lay.pages] == ["front", "back"] * lay.n_cards
    _check_layout_inside(lay)
    pdf = render_card(model, size="pocket")
    _check_pdf_inside(pdf, card_mod._measuring_fonts())
    pages = pdf_pages(pdf)
    assert len(pages) == 2 * lay.n_cards
    fronts = " ".join(page_text(p) for p in pages[::2])
    needles = []
    for r in model["rules"]:
        needles += [expected_condition(r["name"]), format_risk(r["probability"], r["support"])]
    assert_in_order(fronts, needles + ["all other patients", "3%"])
    assert "Continue on card 2" in page_text(pages[0])
    assert "Card 2 of" in page_text(pages[2]) and "continued" in page_text(pages[2])
    for back in pages[1::2]:  # every card carries its own back with the model ID
        assert model_identifier(model) in page_text(back)


def _front_rows(lay) -> list[list[str]]:
    """The keywords (IF / ELSE IF / ELSE) on each front card, in order."""
    return [[t.text for t in page.texts if t.role == "keyword"] for page in lay.pages if page.side == "front"]


def _rows_height(page) -> float:
    """How far down a front card its rows reach, from the line under the column headings (mm)."""
    heading = next(i for i in page.items if isinstance(i, card_mod.Line) and i.role == "rule-line")
    row_roles = {"keyword", "condition", "default", "risk", "interval", "support"}
    return max(t.bottom for t in page.texts if t.role in row_roles) - heading.y1


def test_a_list_over_several_cards_is_spread_evenly_never_leaving_the_else_row_alone():
    """Regression: 24 rules (a third with very long column names) over three A6 cards were split greedily, 12 + 12
    rows, and the third card held only "ELSE".  The rows are now spread over the fewest cards evenly, in order."""
    names = [f"Very_long_clinical_indicator_name_number_{i:02d}_from_the_EHR_export" if i % 3 == 0 else f"flag_{i:02d}"
             for i in range(24)]
    model = make_model([(name, round(0.95 - 0.035 * i, 4), 250) for i, name in enumerate(names)], (0.0175, 1127),
                       posterior=False)
    lay = layout_card(model, size="a6")
    assert (lay.size, lay.n_cards) == ("a6", 3)
    _check_layout_inside(lay)
    rows = _front_rows(lay)
    assert list(itertools.chain(*rows)) == ["IF"] + ["ELSE IF"] * 23 + ["ELSE"]  # every row once, in order
    assert all(len(card) >= 5 for card in rows), rows  # never a card with the ELSE row (or two rows) alone
    fronts = [page for page in lay.pages if page.side == "front"]
    heights = [_rows_height(page) for page in fronts]
    assert min(heights) > 0.75 * max(heights), heights  # evenly filled, not full, full, nearly empty
    conditions = "".join(t.text for page in fronts for t in page.texts if t.role == "condition")
    assert conditions.replace(" ", "") == "".join(names)  # the conditions in the list's order
    for k, page in enumerate(fronts, start=1):
        band = norm(" ".join(t.text for t in page.texts if t.role == "band"))
        continued = [t.text for t in page.texts if t.role == "continued"]
        if k == 1:
            assert "Card 1 of 3. Start at the top" in band
        else:
            assert f"Card {k} of 3 (continued): use only if no rule on the previous cards matched." in band
        assert continued == ([f"No rule matched? Continue on card {k + 1} →"] if k < 3 else [])


def test_medium_list_moves_up_to_index_card():
    rules = [(f"Finding{i} AND Age >= {40 + i}", round(0.8 - 0.07 * i, 3), 120) for i in range(10)]
    model = make_model(rules, (0.02, 900))
    lay = layout_card(model, size="pocket")
    assert (lay.size, lay.requested_size, lay.n_cards) == ("index", "pocket", 1)
    _check_layout_inside(lay)


@pytest.mark.parametrize("size", ["pocket", "index", "a6"])
def test_nothing_overlaps_or_leaves_the_card(size):
    for model in (make_model(), make_model(READMISSION_RULES, READMISSION_DEFAULT, posterior=False)):
        lay = layout_card(model, size=size)
        assert lay.size == size
        _check_layout_inside(lay)


def test_very_long_words_and_names_are_broken_not_clipped():
    word = "Hyper" + "x" * 300
    model = make_model([(f"{word} AND Age >= 60", 0.5, 100)], (0.1, 900),
                       title="T" * 100, data_name="d" * 500 + ".csv")
    model["validation"]["method"] = "m" * 400
    lay = layout_card(model)
    _check_layout_inside(lay)
    pdf = render_card(model)
    _check_pdf_inside(pdf, card_mod._measuring_fonts())
    front = "".join(page_text(pdf_pages(pdf)[0]).split())
    assert word in front  # every character of the long word is printed, across lines


def _condition_lines(page) -> list[str]:
    """The lines of condition text on a front card, top to bottom, as printed (runs of one line joined)."""
    lines: dict[float, list] = {}
    for t in page.texts:
        if t.role == "condition":
            lines.setdefault(round(t.baseline, 6), []).append(t)
    return ["".join(t.text for t in sorted(runs, key=lambda t: t.x)) for _, runs in sorted(lines.items())]


def test_and_never_ends_a_line_it_starts_the_next_with_its_condition():
    """Regression: "Age ≥ 60 and" / "Very_long_..." -- a condition too long for the rest of the line left the grey
    "and" at the end of the line.  The connective stays with the first word of the condition it introduces."""
    long_column = "Very_long_clinical_indicator_name_number_00_from_the_EHR_export"
    rules = [
        (f"Age >= 60 AND {long_column}", 0.6, 150),
        (f"Age >= 60 AND Sex = F AND {long_column[:40]} AND Prior admissions in the last year >= 2", 0.4, 150),
        ("Age >= 60 AND Sex = F", 0.3, 150),
    ]
    many = [(f"Age >= {40 + i} AND {long_column.replace('00', f'{i:02d}')}", round(0.9 - 0.03 * i, 4), 100)
            for i in range(16)]
    cases = [(make_model(rules, (0.05, 500)), size) for size in ("pocket", "index", "a6")]
    cases.append((make_model(many, (0.02, 900)), "a6"))
    for model, size in cases:
        lay = layout_card(model, size=size)
        assert lay.size == size
        _check_layout_inside(lay)
        lines = [line for page in lay.pages if page.side == "front" for line in _condition_lines(page)]
        for line in lines:
            assert line.split()[-1] != "and", (size, lines)
        assert any(line.startswith("and Very_long_") for line in lines), lines  # "and" moved down with its condition
        expected = "".join(expected_condition(r["name"]) for r in model["rules"])
        assert "".join(lines).replace(" ", "") == expected.replace(" ", "")  # nothing lost, nothing reordered
    assert lay.n_cards > 1  # the last case is the continuation layout


def test_a_rule_too_long_for_any_card_is_refused_not_clipped():
    model = make_model([("Finding " * 600 + "AND Age >= 60", 0.5, 100)], (0.1, 900))
    with pytest.raises(FRLError, match="Rule 1 is too long to print even on an A6 card"):
        render_card(model)


def test_model_with_no_rules_prints_the_base_rate():
    lay = layout_card(make_model([], (0.12, 500)))
    texts = [t.text for t in lay.pages[0].texts]
    assert "ALL" in texts and "all patients" in texts and "12%" in texts
    _check_layout_inside(lay)


# --------------------------------------------------------------------------- text safety


def test_unicode_renders():
    rules = [("Größe >= 180 AND Ménière = yes", 0.7, 120), ("Âge <= 30 AND Température != normal", 0.3, 200)]
    model = make_model(rules, (0.05, 700), title="Risque de chute — Größe ≥ 1,80 m")
    front = page_text(pdf_pages(render_card(model))[0])
    assert "Größe ≥ 180 and Ménière = yes" in front
    assert "Âge ≤ 30 and Température ≠ normal" in front
    assert "Risque de chute — Größe ≥ 1,80 m" in front


def test_markup_in_user_text_is_printed_literally():
    title = "**bold** <b>x</b> {} {nb} __u__"
    rules = [("<i>Age</i> >= 60 AND **Smoker** = {nb}", 0.6, 150), ("[link](http://x) AND ~~s~~", 0.2, 150)]
    model = make_model(rules, (0.05, 500), title=None, target="<b>Outcome</b>", data_name="<script>.csv")
    pdf = render_card(model, title=title)
    pages = pdf_pages(pdf)
    front, back = page_text(pages[0]), page_text(pages[1])
    assert title in front
    assert "<i>Age</i> ≥ 60 and **Smoker** = {nb}" in front
    assert "[link](http://x) and ~~s~~" in front
    assert "<script>.csv" in back and "<b>Outcome</b> = yes" in back


def test_control_and_bidi_characters_cannot_break_the_layout():
    rules = [("Age\n>= 60\tAND\u202eSmoker\u200b", 0.6, 150)]
    model = make_model(rules, (0.05, 500), title="Line one\nLine two\x00")
    lay = layout_card(model)
    texts = [t.text for p in lay.pages for t in p.texts]
    assert not any(ch in "".join(texts) for ch in "\n\t\x00\u202e\u200b")
    assert lay.title == "Line one Line two"
    _check_layout_inside(lay)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: [m], "expected a JSON object"),
        (lambda m: {**m, "format": "something-else"}, "Not a falling rule list model"),
        (lambda m: {k: v for k, v in m.items() if k != "format"}, "Not a falling rule list model"),
        (lambda m: {**m, "format_version": 2}, "version 2 is not supported"),
        (lambda m: {k: v for k, v in m.items() if k != "rules"}, "lacks 'rules'"),
        (lambda m: {k: v for k, v in m.items() if k != "default"}, "lacks 'default'"),
        (lambda m: {**m, "outcome": {}}, "lacks outcome.'target'"),
        (lambda m: {**m, "hyperparameters": {}}, "lacks hyperparameters.'lam'"),
        (lambda m: {**m, "training": {"data_name": "x"}}, "lacks training.'n_rows'"),
        (lambda m: {**m, "rules": [{**m["rules"][0], "probability": "high"}], "posterior": None}, "must be a number"),
        (lambda m: {**m, "rules": [{**m["rules"][0], "probability": 1.5}], "posterior": None}, "outside"),
        (lambda m: {**m, "rules": [{**m["rules"][0], "support": -3}], "posterior": None}, "whole number"),
        (lambda m: {**m, "rules": [m["rules"][3], m["rules"][0]], "posterior": None}, "do not fall"),
        (lambda m: {**m, "posterior": {**m["posterior"], "risk_lower": [0.1]}}, "posterior intervals"),
    ],
)
def test_bad_models_raise_model_file_error(mutate, message):
    bad = mutate(make_model())
    with pytest.raises(ModelFileError, match=re.escape(message)) as info:
        render_card(bad)
    assert "\n" not in str(info.value)


def test_unknown_size_and_bad_title():
    with pytest.raises(FRLError, match=re.escape("Unknown card size 'huge': choose pocket, index or a6")):
        render_card(make_model(), size="huge")
    assert issubclass(FRLError, ValueError)
    with pytest.raises(FRLError, match="title is empty"):
        render_card(make_model(), title="   ")
    with pytest.raises(FRLError, match="keep it to"):
        render_card(make_model(), title="x" * 500)


# --------------------------------------------------------------------------- CLI


def _cli():
    parser = argparse.ArgumentParser(prog="frl")
    register(parser.add_subparsers(dest="command"))
    return parser


def test_cli_writes_the_card(tmp_path, capsys):
    model_path = tmp_path / "model.json"
    model = make_model()
    model_path.write_text(json.dumps(model, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "card.pdf"
    args = _cli().parse_args(["card", str(model_path), "--out", str(out), "--size", "index", "--title", "Mammo"])
    assert args.handler(args) == 0
    pages = pdf_pages(out.read_bytes())
    assert len(pages) == 2
    assert page_text(pages[0]).startswith("Mammo")
    assert float(pages[0].trimbox.width) / MM == pytest.approx(127.0, abs=0.1)
    stdout = capsys.readouterr().out
    assert str(out) in stdout and model_identifier(model) in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.pdf", "model.json"]  # nothing else written


def test_letters_the_font_lacks_are_named_not_printed_silently(tmp_path, capsys):
    """Column names in Japanese print as U+FFFD on the card (its fonts are Latin, Greek and Cyrillic): the CLI
    warns with those letters; accents, Greek and the card's own symbols are printed and draw no warning."""
    from frl_engine.card import missing_glyphs

    model = make_model([("褥瘡 AND 年齢 >= 76", 0.5, 100)], (0.1, 900))
    assert missing_glyphs(model) == "褥瘡年齢"
    assert missing_glyphs(make_model([("Décès AND Âge ≥ 76 AND β-blocker", 0.5, 100)], (0.1, 900)),
                          title="Risque de décès") == ""
    assert missing_glyphs(make_model(), title="日本") == "日本"
    unprinted = make_model()
    unprinted["training"]["column_notes"] = "年齢"  # in the file, never drawn on the card: nothing to warn about
    assert missing_glyphs(unprinted) == ""
    model_path = tmp_path / "model.json"
    model_path.write_text(json.dumps(model, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "card.pdf"
    args = _cli().parse_args(["card", str(model_path), "--out", str(out)])
    assert args.handler(args) == 0
    stdout = capsys.readouterr().out
    assert "Warning: The card's font has no letters for 褥 瘡 年 齢: they print as \ufffd" in stdout
    assert "\ufffd" in page_text(pdf_pages(out.read_bytes())[0])  # what the warning says is what is printed


def test_cli_help_lists_options(capsys):
    with pytest.raises(SystemExit) as info:
        _cli().parse_args(["card", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for word in ("--out", "--size", "--title", "pocket", "index", "a6", "actual size"):
        assert word in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        (b"not json {", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b'{"format": "something"}', "not a falling rule list model"),
        (b"[1, 2]", "not a falling rule list model"),
        (b'{"format": "frl-model", "format_version": 1}', "lacks"),
    ],
)
def test_cli_bad_input_raises_frl_errors(tmp_path, content, message):
    model_path = tmp_path / "model.json"
    if content is not None:
        model_path.write_bytes(content)
    out = tmp_path / "card.pdf"
    args = _cli().parse_args(["card", str(model_path), "--out", str(out)])
    with pytest.raises(ModelFileError, match=re.escape(message)) as info:
        args.handler(args)
    assert "\n" not in str(info.value)
    assert not out.exists()


def test_cli_refuses_to_overwrite_the_model(tmp_path):
    model_path = tmp_path / "model.json"
    model_path.write_text(json.dumps(make_model()), encoding="utf-8")
    args = _cli().parse_args(["card", str(model_path), "--out", str(model_path)])
    with pytest.raises(FRLError, match="model file itself"):
        args.handler(args)
    assert json.loads(model_path.read_text(encoding="utf-8"))["format"] == "frl-model"
    # nor another model file (a slip for -o card.pdf); a PDF or a new name is written
    other = tmp_path / "other_model.json"
    other.write_text(json.dumps(make_model(title="Another")), encoding="utf-8")
    args = _cli().parse_args(["card", str(model_path), "-o", str(other)])
    with pytest.raises(FRLError, match="holds a JSON file"):
        args.handler(args)
    assert json.loads(other.read_text(encoding="utf-8"))["outcome"]["title"] == "Another"
    for name in ("card.pdf", "card"):
        args = _cli().parse_args(["card", str(model_path), "-o", str(tmp_path / name)])
        assert args.handler(args) == 0 and (tmp_path / name).read_bytes().startswith(b"%PDF")


# --------------------------------------------------------------------------- look at it


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) not installed")
def test_render_png_previews_for_a_human_look():
    ARTIFACTS.mkdir(exist_ok=True)
    cases = {
        "card-pocket": (make_model(), "pocket"),
        "card-readmission-index": (
            make_model(READMISSION_RULES, READMISSION_DEFAULT, target="Readmitted30d",
                       title="30-day readmission risk", data_name="readmission.csv", validation=False),
            "index",
        ),
        "card-long": (long_model(), "pocket"),
    }
    procs = {}
    for stem, (model, size) in cases.items():
        pdf_path = ARTIFACTS / f"{stem}.pdf"
        pdf_path.write_bytes(render_card(model, size=size))
        for old in ARTIFACTS.glob(f"{stem}-*.png"):
            old.unlink()
        procs[stem] = subprocess.Popen(["pdftoppm", "-png", "-r", "200", str(pdf_path), str(ARTIFACTS / stem)])
    for stem, proc in procs.items():  # the three conversions run in parallel
        assert proc.wait(timeout=60) == 0
        pngs = sorted(ARTIFACTS.glob(f"{stem}-*.png"))
        assert len(pngs) == len(pdf_pages((ARTIFACTS / f"{stem}.pdf").read_bytes()))
        for png in pngs:
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_unconverged_posterior_prints_no_intervals():
    """A posterior sample that did not converge supports no credible interval: the card shows none and says why."""
    model = make_model()
    model["posterior"]["converged"] = False
    model["posterior"]["verdict"] = "Posterior not converged (R-hat 1.380 > 1.01: the chains disagree)"
    pages = pdf_pages(render_card(model))
    front, back = page_text(pages[0]), page_text(pages[1])
    for lo, hi in zip(model["posterior"]["risk_lower"], model["posterior"]["risk_upper"]):
        assert f"{round(lo * 100)}–{round(hi * 100)}%" not in front
    assert "CrI" not in front and "credible" not in back
    assert "did not converge" in norm(back)
    # the same model with a converged sample keeps its intervals
    model["posterior"]["converged"] = True
    front = page_text(pdf_pages(render_card(model))[0])
    lo, hi = model["posterior"]["risk_lower"][0], model["posterior"]["risk_upper"][0]
    assert f"{round(lo * 100)}–{round(hi * 100)}%" in front


def test_risk_draws_with_too_few_independent_ones_print_no_intervals():
    """The intervals come from posterior draws of the MAP list's risks; when those draws hold fewer than 400
    independent ones (their ESS, ``risk_ess``), the card prints no interval and says why."""
    model = make_model()
    model["posterior"]["converged"] = True
    model["posterior"]["risk_ess"] = 37.0
    pages = pdf_pages(render_card(model))
    front, back = page_text(pages[0]), page_text(pages[1])
    lo, hi = model["posterior"]["risk_lower"][0], model["posterior"]["risk_upper"][0]
    assert f"{round(lo * 100)}–{round(hi * 100)}%" not in front and "CrI" not in front
    assert "too few independent" in norm(back) and "ESS 37" in norm(back)
    model["posterior"]["risk_ess"] = 2900.0
    front = page_text(pdf_pages(render_card(model))[0])
    assert f"{round(lo * 100)}–{round(hi * 100)}%" in front


def test_a_quoted_and_inside_a_column_or_level_is_one_condition_on_the_card():
    # what Rule.name writes for a column named "Score AND Risk" and a level "a AND b"
    rules = [('"Score AND Risk" >= 7 AND notes = "a AND b" AND Age >= 60', 0.6, 150)]
    model = make_model(rules, (0.05, 500))
    front = page_text(pdf_pages(render_card(model))[0])
    assert '"Score AND Risk" ≥ 7 and notes = "a AND b" and Age ≥ 60' in front


def test_a_narrow_interval_is_never_printed_as_one_number():
    """Regression: a large ELSE group's 95% CrI of 5.5% to 6.3% was printed "6–6%", as if the risk were certain."""
    from frl_engine.card import _format_interval

    assert _format_interval(0.055, 0.063, 13_375) == "5.5–6.3%"
    assert _format_interval(0.28, 0.34, 839) == "28–34%"  # bounds that differ keep whole percent
    # a bound short of certainty never prints as it: 96.6-99.9% read "97-100%", "up to certain"
    assert _format_interval(0.966, 0.9991, 120) == "97–99.9%" and _format_interval(0.0004, 0.031, 120) == "0–3%"
    assert _format_interval(0.97, 1.0, 120) == "97–100%"
    model = make_model()
    model["posterior"]["risk_lower"][-1], model["posterior"]["risk_upper"][-1] = 0.095, 0.104
    front = page_text(pdf_pages(render_card(model))[0])
    assert "9.5–10.4%" in front and "10–10%" not in front
