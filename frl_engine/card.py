"""The printable, laminated risk card (PDF).

Wang & Rudin close their paper on the point of the method: a falling rule list
is small enough to be "printed on laminated cards".  This module makes that
card from a model dict (the parsed ``model.json``, see docs/model-format.md).

Design (see docs/card.md for the user-facing version):

* Every page of the PDF is one side of one card: the card itself (its TrimBox,
  exactly the requested size) centred in a 10 mm margin that holds crop marks
  and a one-line printing note ("slug").  Coloured bands bleed 3 mm past the
  trim (BleedBox) so a slightly-off cut leaves no white sliver.  Pages come in
  pairs, front then back, so duplex printing puts every back behind its front.
* The layout is computed first (``layout_card``: every text line with its
  measured bounding box), checked to fit, and only then drawn.  Nothing is ever
  clipped: a list that does not fit the requested size moves to the next size up
  (pocket -> index -> A6); a list that does not even fit an A6 card continues on
  a second (third...) card, each with its own back.
* All text coming from the model (title, rule names, data name...) is drawn with
  ``FPDF.text`` -- no markdown, no HTML, no ``{nb}`` page-number alias -- after
  control and bidi-override characters are removed and glyphs missing from the
  bundled DejaVu fonts are replaced by U+FFFD; words too long for a line are
  broken.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import threading
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import FRLError, ModelFileError
from .rules import split_conditions
from .search_report import FEW_PATIENTS, few_patients_note

__all__ = [
    "CARD_SIZES",
    "CardLayout",
    "format_risk",
    "layout_card",
    "model_identifier",
    "model_sha256",
    "render_card",
    "render_layout",
]

#: Card sizes in mm, landscape (width, height).  The TrimBox of every page is exactly this.
CARD_SIZES: dict[str, tuple[float, float]] = {
    "pocket": (85.6, 54.0),  # ISO/IEC 7810 ID-1, bank-card size
    "index": (127.0, 76.2),  # 5 x 3 in index card
    "a6": (148.0, 105.0),  # ISO 216 A6
}
_SIZE_ORDER = ("pocket", "index", "a6")
_SIZE_NAMES = {"pocket": "pocket card", "index": "index card", "a6": "A6 card"}
_SIZE_DIMS = {"pocket": "85.6 × 54 mm", "index": "5 × 3 in", "a6": "148 × 105 mm"}

MARGIN_MM = 10.0  # page margin around the card (crop marks and printing note live here)
BLEED_MM = 3.0  # bands extend this far past the trim; crop marks start here
MARK_LEN_MM = 5.0  # crop mark length (from 3 mm to 8 mm outside the trim)

FONT_DIR = Path(__file__).resolve().parent / "fonts"
_FONT_FAMILY = "DejaVuSans"
_ASC = 1901 / 2048  # DejaVu Sans hhea ascent / descent, in em
_DESC = 483 / 2048
_PT = 25.4 / 72  # mm per point

_MAX_TITLE = 120  # characters: an explicit --title longer than this is refused
_MAX_FREE_TEXT = 90  # characters: longer free text from the model file is shortened with "…"

# Colours (RGB).
_INK = (33, 33, 33)
_MUTED = (100, 106, 112)
_BAND = (22, 50, 79)  # deep navy header band
_BAND_TEXT = (255, 255, 255)
_BAND_SUB = (200, 214, 229)
_KEYWORD = (22, 50, 79)
_RULE_LINE = (205, 210, 216)
_TRACK = (236, 238, 241)
_BAR_HIGH = (165, 15, 21)  # darkest red for the highest risk
_BAR_LOW = (252, 187, 161)  # pale salmon for the lowest
_CAVEAT = (150, 20, 25)
_MARK = (0, 0, 0)
_SLUG = (120, 120, 120)


# --------------------------------------------------------------------------- styles


@dataclass(frozen=True)
class _Style:
    title: float  # font sizes in pt
    body: float
    risk: float
    small: float
    pad: float  # safe margin inside the trim, mm
    row_pad: float  # space above and below each row's text, mm
    gap: float  # gap between columns, mm
    bar: float  # risk bar width, mm
    min_cond: float  # narrowest acceptable condition column, mm


@dataclass(frozen=True)
class _Geom:
    """One way to lay a card out: its size and the type/spacing scale."""

    name: str
    w: float
    h: float
    st: _Style


def _scaled(style: _Style, factor: float) -> _Style:
    return _Style(*(getattr(style, f) * factor for f in _Style.__dataclass_fields__))


_STYLES = {
    "pocket": _Style(title=8.5, body=6.7, risk=7.8, small=5.2, pad=3.0, row_pad=0.42, gap=1.4, bar=9.5, min_cond=26.0),
    "index": _Style(title=11.0, body=8.2, risk=9.8, small=6.3, pad=4.5, row_pad=0.75, gap=2.0, bar=15.0, min_cond=40.0),
    "a6": _Style(title=12.5, body=9.4, risk=11.0, small=7.0, pad=5.5, row_pad=0.85, gap=2.4, bar=17.0, min_cond=50.0),
}
# Type scales tried in turn before moving up a size.  Body text never goes below 6.7 pt on a
# pocket card, 7.4 pt on an index card, 8.2 pt on A6 (where continuation cards also use it).
_SCALES = {"pocket": (1.0,), "index": (1.0, 0.9), "a6": (1.0, 0.87)}


# --------------------------------------------------------------------------- layout records


@dataclass(frozen=True)
class TextBox:
    """One line of text, as drawn: ``x``/``top``/``w``/``h`` in mm on the page, baseline too."""

    x: float
    top: float
    w: float
    h: float
    baseline: float
    text: str
    bold: bool
    size: float  # pt
    color: tuple[int, int, int]
    role: str

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.top + self.h


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    color: tuple[int, int, int]
    role: str


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    color: tuple[int, int, int]
    role: str


@dataclass
class CardPage:
    side: str  # "front" or "back"
    card: int  # 1-based card number
    n_cards: int
    items: list = field(default_factory=list)

    @property
    def texts(self) -> list[TextBox]:
        return [i for i in self.items if isinstance(i, TextBox)]


@dataclass
class CardLayout:
    """The whole card, laid out: what ``render_layout`` draws, and what tests inspect."""

    size: str  # the size actually used
    requested_size: str
    title: str
    model_id: str
    card_w: float
    card_h: float
    page_w: float
    page_h: float
    pages: list[CardPage]

    @property
    def n_cards(self) -> int:
        return max(p.card for p in self.pages)

    @property
    def trim(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of the card on the page, mm, y down."""
        return (MARGIN_MM, MARGIN_MM, MARGIN_MM + self.card_w, MARGIN_MM + self.card_h)

    @property
    def bleed(self) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = self.trim
        return (x0 - BLEED_MM, y0 - BLEED_MM, x1 + BLEED_MM, y1 + BLEED_MM)

    def describe(self) -> str:
        cards = "" if self.n_cards == 1 else f" ({self.n_cards} cards)"
        return f"{_SIZE_NAMES[self.size]}, {_SIZE_DIMS[self.size]}{cards}"


# --------------------------------------------------------------------------- public helpers


def _json_default(obj: Any) -> Any:
    # numpy scalars / arrays in an in-memory model hash like the JSON the engine writes
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


MODEL_ID_LENGTH = 10  # hex digits of the SHA-256 printed as the model ID


def model_identifier(model: dict) -> str:
    """First 10 hex digits of the SHA-256 of the model in canonical JSON form.

    Canonical form: ``json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    encoded as UTF-8.  Printed on the back of the card so a card can be traced to its model file
    (and to its entry in the model registry, :mod:`frl_engine.registry`, which matches on this prefix).
    """
    return model_sha256(model)[:MODEL_ID_LENGTH]


def model_sha256(model: dict) -> str:
    """The full SHA-256 (64 hex digits) of the model in the canonical JSON form of :func:`model_identifier`."""
    if not isinstance(model, dict):
        raise ModelFileError(f"A model must be a JSON object, not {type(model).__name__}")
    try:
        canonical = json.dumps(
            model, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
        )
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"The model cannot be written as JSON: {exc}") from None
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _round_half_up(value: float, places: int) -> Decimal:
    q = Decimal(1).scaleb(-places)
    return Decimal(repr(float(value))).quantize(q, rounding=ROUND_HALF_UP)


def _decimal_allowed(pct: float, support: int) -> bool:
    # A rule resolves risk in steps of one patient, 100/n percent: a 0.1% digit needs
    # n >= 1000.  And decimals are shown only where whole percent would lose the
    # information entirely (below 1%).
    return support >= 1000 and pct < 0.95


def format_risk(p: float, support: int) -> str:
    """Risk as printed on the card (the rounding rule, see docs/card.md).

    * whole percent (half up): ``85%``;
    * below 0.95%: one decimal only when the rule covers at least 1000 patients
      (one patient is then <= 0.1%): ``0.9%``, ``<0.1%``; otherwise ``<1%``;
    * never ``0%`` or ``100%``: ``<1%``, ``<0.1%``, ``>99%``.
    The printed column never rises where the risks fall.
    """
    pct = 100.0 * float(p)
    if _decimal_allowed(pct, support):
        tenths = _round_half_up(pct, 1)
        return "<0.1%" if tenths <= 0 else f"{tenths}%"
    if pct < 0.95:  # not "1%": a rule above with >= 1000 patients may print 0.9%
        return "<1%"
    whole = _round_half_up(pct, 0)
    if whole >= 100:
        return ">99%"
    return f"{whole}%"


def _format_bound(p: float, support: int) -> str:
    pct = 100.0 * float(p)
    if _decimal_allowed(pct, support) and _round_half_up(pct, 1) > 0:
        return f"{_round_half_up(pct, 1)}"
    whole = _round_half_up(pct, 0)
    # a bound short of certainty never prints as it: 99.9% is not "100", which reads as "up to certain" (a lower
    # bound of 0.04% printed "0" only widens the interval)
    if whole >= 100 and pct < 100:
        return f"{min(_round_half_up(pct, 1), 99.9)}"
    return f"{whole}"


def _format_interval(lo: float, hi: float, support: int) -> str:
    """The printed interval; when both bounds round to the same whole percent (5.5 and 6.3 -> "6–6%", which reads
    as no uncertainty at all) they get one decimal: "5.5–6.3%"."""
    low, high = _format_bound(lo, support), _format_bound(hi, support)
    if low == high and float(hi) > float(lo):
        low, high = (f"{_round_half_up(100.0 * float(v), 1)}" for v in (lo, hi))
    return f"{low}–{high}%"


# --------------------------------------------------------------------------- fonts and text


class _Fonts:
    """An FPDF document with the bundled fonts, used to measure text (and then to draw)."""

    def __init__(self) -> None:
        from fpdf import FPDF

        regular, bold = FONT_DIR / "DejaVuSans.ttf", FONT_DIR / "DejaVuSans-Bold.ttf"
        for f in (regular, bold):
            if not f.is_file():  # pragma: no cover - broken install
                raise FRLError(f"The card font {f.name} is missing from {FONT_DIR}: reinstall frl_engine")
        pdf = FPDF(unit="mm", format="A4")
        pdf.add_font(_FONT_FAMILY, "", str(regular))
        pdf.add_font(_FONT_FAMILY, "B", str(bold))
        self.pdf = pdf
        cmaps = [set(font.cmap) for font in pdf.fonts.values()]
        self.codepoints: frozenset[int] = frozenset(set.intersection(*cmaps))
        self._cache: dict[tuple[str, bool, float], float] = {}
        self._lock = threading.Lock()  # shared by the dashboard's threads: set_font + measure is one step

    def width(self, text: str, bold: bool, size: float) -> float:
        key = (text, bold, size)
        w = self._cache.get(key)
        if w is None:
            with self._lock:
                self.pdf.set_font(_FONT_FAMILY, "B" if bold else "", size)
                w = self.pdf.get_string_width(text)
            self._cache[key] = w
        return w

    def drawn(self, ch: str) -> str:
        """What the card draws for one character: itself, a space, nothing, or U+FFFD (no glyph)."""
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("Cc", "Zl", "Zp"):
            return " "
        if cat in ("Cf", "Cs", "Co", "Cn"):
            return ""  # zero-width, bidi overrides, soft hyphens, surrogates, unassigned
        return ch if ord(ch) in self.codepoints else "\ufffd"

    def clean(self, value: Any) -> str:
        """User text made safe to draw: one line, no control/format characters, only known glyphs."""
        s = unicodedata.normalize("NFC", str(value))
        return " ".join("".join(self.drawn(ch) for ch in s).split())


@lru_cache(maxsize=1)
def _measuring_fonts() -> _Fonts:
    return _Fonts()


_OPERATORS = ((">=", "≥"), ("<=", "≤"), ("!=", "≠"), ("==", "="))


def _symbolize(text: str) -> str:
    for ascii_op, symbol in _OPERATORS:
        text = text.replace(ascii_op, symbol)
    return text


def _shorten(text: str, limit: int, middle: bool = False) -> str:
    if len(text) <= limit:
        return text
    if middle:
        head = (limit - 1) * 2 // 3
        tail = limit - 1 - head
        return text[:head] + "…" + text[-tail:]
    return text[: limit - 1].rstrip() + "…"


# A word is (text, style); a unit is a list of words that should stay on one line if it can.
_WORD_STYLES = {
    # style: (bold, colour)
    "cond": (False, _INK),
    "joiner": (False, _MUTED),
    "muted": (False, _MUTED),
    "plain": (False, _INK),
    "bold": (True, _INK),
    "band": (True, _BAND_TEXT),
    "bandsub": (False, _BAND_SUB),
    "caveat": (True, _CAVEAT),
    "id": (True, _KEYWORD),
}
_BREAK_AFTER = set("_-/.,:;=)]}|+")


def _split_long_word(word: str, bold: bool, size: float, max_w: float, fonts: _Fonts,
                     first_w: float | None = None) -> list[str]:
    """Break a word wider than ``max_w`` into pieces that fit, preferring breaks after punctuation.

    The first piece fits ``first_w`` instead when given (the room left on a line already begun).
    """
    pieces = []
    rest = word
    while len(rest) > 1:
        room = max_w if pieces or first_w is None else first_w
        if fonts.width(rest, bold, size) <= room:
            break
        lo, hi = 1, len(rest)  # largest prefix length that fits (at least one character)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fonts.width(rest[:mid], bold, size) <= room:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        for i in range(lo, max(1, lo // 2), -1):
            if rest[i - 1] in _BREAK_AFTER:
                cut = i
                break
        pieces.append(rest[:cut])
        rest = rest[cut:]
    pieces.append(rest)
    return pieces


def _wrap(units: list[list[tuple[str, str]]], max_w: float, size: float, fonts: _Fonts) -> list[list[tuple[str, str]]]:
    """Greedy line breaking of units of words; units kept whole when they fit on a line.

    A unit too long for a line is broken between its words, but never right after a connective ("and", style
    "joiner"): the connective starts the next line with the word it introduces (``_glued``).
    """
    lines: list[list[tuple[str, str]]] = []
    cur: list[tuple[str, str]] = []
    cur_w = 0.0

    def wlen(word: tuple[str, str]) -> float:
        return fonts.width(word[0], _WORD_STYLES[word[1]][0], size)

    def space(style: str) -> float:
        return fonts.width(" ", _WORD_STYLES[style][0], size)

    def span(words: list[tuple[str, str]]) -> float:  # width of words set on one line
        return sum(wlen(w) for w in words) + sum(space(w[1]) for w in words[:-1])

    def add(chunk: list[tuple[str, str]]) -> None:
        nonlocal cur, cur_w
        w = span(chunk)
        if cur and cur_w + space(cur[-1][1]) + w <= max_w:  # the space is drawn in the previous word's style
            cur_w += space(cur[-1][1]) + w
            cur.extend(chunk)
            return
        if cur:
            lines.append(cur)
            cur, cur_w = [], 0.0
        if w <= max_w:
            cur, cur_w = list(chunk), w
            return
        # too wide even for a line of its own: the words before the last (a connective) begin the line and the
        # last word is broken, its first piece fitting the rest of that line
        *lead, (text, style) = chunk
        first_w = max_w - span(lead) - space(lead[-1][1]) if lead else None
        pieces = _split_long_word(text, _WORD_STYLES[style][0], size, max_w, fonts, first_w)
        line = list(lead)
        for piece in pieces[:-1]:
            lines.append([*line, (piece, style)])
            line = []
        cur = [*line, (pieces[-1], style)]
        cur_w = span(cur)

    for unit in units:
        unit = [w for w in unit if w[0]]
        if not unit:
            continue
        unit_w = span(unit)
        if cur and cur_w + space(cur[-1][1]) + unit_w <= max_w:
            cur_w += space(cur[-1][1]) + unit_w
            cur.extend(unit)
        elif unit_w <= max_w:
            if cur:
                lines.append(cur)
            cur, cur_w = list(unit), unit_w
        else:
            for chunk in _glued(unit):
                add(chunk)
    if cur:
        lines.append(cur)
    return lines


def _glued(unit: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The words of a unit as the chunks a line may break between: a connective (style "joiner") with the word after it."""
    chunks: list[list[tuple[str, str]]] = []
    for word in unit:
        if chunks and chunks[-1][-1][1] == "joiner":
            chunks[-1].append(word)
        else:
            chunks.append([word])
    return chunks


def _words(text: str, style: str) -> list[list[tuple[str, str]]]:
    """Plain text as units of one word each."""
    return [[(w, style)] for w in text.split(" ") if w]


def _items(text: str, style: str) -> list[list[tuple[str, str]]]:
    """A " · "- or "; "-separated list as units, one per item, each keeping its trailing "·" on its line."""
    chunks = text.split(" · ")
    units = []
    for i, chunk in enumerate(chunks):
        clauses = chunk.split("; ")
        for j, clause in enumerate(clauses):
            words = [(w, style) for w in clause.split(" ") if w]
            if words and j < len(clauses) - 1:
                words[-1] = (words[-1][0] + ";", style)
            if words and j == len(clauses) - 1 and i < len(chunks) - 1:
                words.append(("·", style))
            units.append(words)
    return units


def _emit_line(
    items: list, line: list[tuple[str, str]], x: float, baseline: float, size: float, fonts: _Fonts, role: str,
    align_right: float | None = None,
) -> float:
    """Append the runs of one wrapped line (consecutive same-style words merged); return its width."""
    runs: list[list] = []
    for i, (text, style) in enumerate(line):
        prefix = " " if i else ""
        if runs and runs[-1][1] == style:
            runs[-1][0] += prefix + text
        else:
            if runs:
                runs[-1][0] += prefix  # the space belongs to the previous run
            runs.append([text, style])
    total = sum(fonts.width(t, _WORD_STYLES[s][0], size) for t, s in runs)
    if align_right is not None:
        x = align_right - total
    mm = size * _PT
    for text, style in runs:
        bold, color = _WORD_STYLES[style]
        w = fonts.width(text, bold, size)
        items.append(TextBox(x, baseline - _ASC * mm, w, (_ASC + _DESC) * mm, baseline, text, bold, size, color, role))
        x += w
    return total


def _text(items: list, text: str, x: float, baseline: float, size: float, bold: bool, color, role: str,
          fonts: _Fonts, align_right: float | None = None) -> TextBox:
    w = fonts.width(text, bold, size)
    if align_right is not None:
        x = align_right - w
    mm = size * _PT
    box = TextBox(x, baseline - _ASC * mm, w, (_ASC + _DESC) * mm, baseline, text, bold, size, color, role)
    items.append(box)
    return box


# --------------------------------------------------------------------------- the model, checked


@dataclass
class _Row:
    keyword: str
    conditions: list[str]
    probability: float
    support: int
    risk: str
    interval: str | None
    n: str


@dataclass
class _CardData:
    title: str
    rows: list[_Row]
    has_interval: bool
    back: list[tuple[str, str, str]]  # (label, value, style)
    model_id: str
    missing_glyphs: str = ""  # letters of the drawn text the fonts lack (drawn as U+FFFD)


def _need(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise ModelFileError(f"The model lacks {where}{key!r}: not a complete frl-model file")
    return mapping[key]


def _number(value: Any, what: str, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelFileError(f"The model's {what} must be a number, not {_brief(value)}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ModelFileError(f"The model's {what} is {value}, outside [{lo}, {hi}]")
    return float(value)


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer() or value < 0:
        raise ModelFileError(f"The model's {what} must be a whole number of patients, not {_brief(value)}")
    return int(value)


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fmt_number(value: Any) -> str:
    return _shorten(_fmt_value(value), 24)


def _fmt_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:g}"
    return str(value)


def _fit_date(created_at: str) -> str:
    try:
        stamp = datetime.fromisoformat(created_at.strip().replace("Z", "+00:00"))
    except ValueError:
        return created_at
    return stamp.date().isoformat()


def external_line(model: dict) -> str | None:
    """The line the card's back prints on the model's external validation (``frl validate --model-out``), or None
    when it has none: ``externally validated: AUROC 0.78 (95% CI 0.74–0.81) on 1,000 patients (2025.csv)``."""
    return _external_text(model, str)


def _external_text(model: dict, clean) -> str | None:
    """``externally validated: AUROC 0.78 (95% CI 0.75-0.81) on 1,000 patients (2025.csv)``, or None.

    From the model's ``external_validation`` block (``frl validate --model-out``).
    """
    block = model.get("external_validation")
    if not isinstance(block, dict) or block.get("auroc") is None:
        return None
    if block.get("same_as_training"):  # validated on the rows it was fitted on: no external validation
        return "not externally validated (checked only on its training patients)"
    share = block.get("training_share")
    if isinstance(share, (int, float)) and not isinstance(share, bool) and 0 < share <= 1:   # many of them
        return (f"not externally validated (about {100 * share:.0f}% of the patients it was checked on are its "
                "training patients)")
    auc = _number(block["auroc"], "external_validation.auroc", 0.0, 1.0)
    n = _count(_need(block, "n", "external_validation."), "external_validation.n")
    interval = ""
    ci = block.get("auroc_ci")
    if isinstance(ci, list) and len(ci) == 2 and all(v is not None for v in ci):
        lo = _number(ci[0], "external_validation.auroc_ci", 0.0, 1.0)
        hi = _number(ci[1], "external_validation.auroc_ci", 0.0, 1.0)
        interval = f" (95% CI {lo:.2f}–{hi:.2f})"
    where = block.get("data_name")
    where = f" ({_shorten(clean(where), 40, middle=True)})" if where else ""
    events = block.get("events")
    few = min(events, n - events) if isinstance(events, int) and 0 <= events <= n else None
    if few is not None and few < FEW_PATIENTS:   # a handful of events judges nothing: say so on the card itself
        side = (("event" if few == 1 else "events") if events <= n - events
                else ("patient" if few == 1 else "patients") + " without the event")
        return (f"validated on {n:,} new patients{where} with only {few:,} {side}: "
                f"too few to judge the list (AUROC {auc:.2f})")
    flagged = _flagged_text(block.get("flagged_rules"), len(model.get("rules") or []))
    people = block.get("n_patients")
    who = (f"{n:,} rows of {people:,} patients" if isinstance(people, int) and not isinstance(people, bool)
           and 0 < people < n else f"{n:,} patients")
    # the new table lacked columns of the model's sample of training rows: whether they are new was not checked
    what = "validated (not checked for training patients)" if block.get("training_unchecked") else "externally validated"
    return f"{what}: AUROC {auc:.2f}{interval} on {who}{where}{flagged}"


def _flagged_text(flagged, n_rules: int) -> str:
    """``; there the observed risk disagrees with rules 1, 3 and ELSE: check before use`` for the rules an external
    validation flagged (1-based, ``n_rules + 1`` the ELSE rule), else "": the card must not print its risks as
    validated when the new patients did not bear them out."""
    if not isinstance(flagged, list) or not flagged:
        return ""
    numbers = sorted({int(k) for k in flagged
                      if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n_rules + 1})
    if not numbers:
        return ""
    names = [("ELSE" if k == n_rules + 1 else str(k)) for k in numbers]
    shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    if len(numbers) == n_rules + 1:
        return "; there the observed risk disagrees with every rule: recalibrate before use"
    if names == ["ELSE"]:
        return "; there the observed risk disagrees with the ELSE rule: check it before use"
    return (f"; there the observed risk disagrees with rule{'s' if len(numbers) > 1 else ''} {shown}: check "
            f"{'them' if len(numbers) > 1 else 'it'} before use")


def intervals_refused(posterior) -> str | None:
    """Why a model's posterior block supports no credible interval, else None: ``"unconverged"`` (the sample did
    not converge) or ``"few draws"`` (the fixed-list draws of the risks behind the intervals hold too few
    independent ones, ``risk_ess``).  The card prints no interval then, nor does ``frl show``."""
    if not isinstance(posterior, dict):
        return None
    if posterior.get("converged") is False:
        return "unconverged"
    from .diagnostics import ESS_TARGET  # here: the card module stays light to import

    risk_ess = posterior.get("risk_ess")
    if isinstance(risk_ess, (int, float)) and not isinstance(risk_ess, bool) and risk_ess < ESS_TARGET:
        return "few draws"
    return None


def _check_model(model: Any, title: str | None, fonts: _Fonts) -> _CardData:
    if not isinstance(model, dict):
        raise ModelFileError(f"Not a falling rule list model: expected a JSON object, got {type(model).__name__}")
    if model.get("format") != "frl-model":
        raise ModelFileError(
            f"Not a falling rule list model: 'format' is {_brief(model.get('format'))}, expected 'frl-model'"
        )
    version = model.get("format_version")
    if version != 1:
        raise ModelFileError(f"Model format version {_brief(version)} is not supported: this frl_engine reads version 1")

    missing: dict[str, None] = {}  # letters drawn as U+FFFD, in order (missing_glyphs)

    def clean(value: Any) -> str:
        for ch in unicodedata.normalize("NFC", str(value)):
            if ch != "\ufffd" and fonts.drawn(ch) == "\ufffd":
                missing[ch] = None
        return fonts.clean(value)

    outcome = _need(model, "outcome", "")
    named = _need(outcome, "target", "outcome.")
    positive = clean(_need(outcome, "positive_class", "outcome."))
    # a model fitted in Python on a y without a name records no target: "the outcome", never "None = Yes"
    outcome_words = f"{clean(named)} = {positive}" if named not in (None, "") else f"the outcome ({positive})"
    if title is not None:
        if not isinstance(title, str) or not clean(title):
            raise FRLError("The card title is empty: give a title or leave it out to use the model's")
        card_title = clean(title)
        if len(card_title) > _MAX_TITLE:
            raise FRLError(f"The card title is {len(card_title)} characters long: keep it to {_MAX_TITLE}")
    else:
        model_title = clean(outcome.get("title") or "") if isinstance(outcome, dict) else ""
        card_title = model_title or f"Risk of {outcome_words}"
        card_title = _shorten(card_title, _MAX_TITLE)

    rules = _need(model, "rules", "")
    if not isinstance(rules, list):
        raise ModelFileError("The model's 'rules' must be a list of rules")
    default = _need(model, "default", "")
    posterior = model.get("posterior")
    lower = upper = None
    refusal = intervals_refused(posterior)
    unconverged, few_draws = refusal == "unconverged", refusal == "few draws"
    risk_ess = posterior.get("risk_ess") if few_draws else None
    if posterior is not None and refusal is None:
        lower = _need(posterior, "risk_lower", "posterior.")
        upper = _need(posterior, "risk_upper", "posterior.")
        if not (isinstance(lower, list) and isinstance(upper, list) and len(lower) == len(upper) == len(rules) + 1):
            raise ModelFileError(
                f"The model's posterior intervals must hold {len(rules) + 1} values (one per rule and the default)"
            )

    rows: list[_Row] = []
    entries = [*rules, default]
    previous = math.inf
    for i, rule in enumerate(entries):
        is_default = i == len(rules)
        where = "default." if is_default else f"rule {i + 1} "
        if not isinstance(rule, dict):
            raise ModelFileError(f"The model's {where.strip('. ')} must be an object")
        p = _number(_need(rule, "probability", where), f"{where}probability", 0.0, 1.0)
        support = _count(_need(rule, "support", where), f"{where}support")
        if p > previous + 1e-9:
            raise ModelFileError(
                f"The risks in the model do not fall down the list (rule {i + 1} is above rule {i}): not a falling rule list"
            )
        previous = p
        if is_default:
            keyword, conditions = ("ELSE" if rules else "ALL"), []
        else:
            name = _need(rule, "name", where)
            if not isinstance(name, str) or not clean(name):
                raise ModelFileError(f"The model's rule {i + 1} has no name")
            conditions = [_symbolize(part.strip()) for part in split_conditions(clean(name)) if part.strip()]
            keyword = "IF" if i == 0 else "ELSE IF"
        interval = None
        if lower is not None:
            lo = _number(lower[i], "posterior risk_lower", 0.0, 1.0)
            hi = _number(upper[i], "posterior risk_upper", 0.0, 1.0)
            interval = _format_interval(lo, hi, support)
        rows.append(_Row(keyword, conditions, p, support, format_risk(p, support), interval, f"{support:,}"))

    # ---- the back
    training = _need(model, "training", "")
    n_rows = _count(_need(training, "n_rows", "training."), "training.n_rows")
    n_patients = _count(training["n_patients"], "training.n_patients") if training.get("n_patients") else None
    n_pos = training.get("n_positive")
    rate = training.get("positive_rate")
    if rate is None and n_pos is not None and n_rows:
        rate = _count(n_pos, "training.n_positive") / n_rows
    if rate is None:
        raise ModelFileError("The model lacks 'training.positive_rate': not a complete frl-model file")
    rate = _number(rate, "training.positive_rate", 0.0, 1.0)
    data_name = training.get("data_name")
    population = _shorten(clean(data_name), _MAX_FREE_TEXT, middle=True) if data_name else ""
    created = _need(model, "created_at", "")
    if not isinstance(created, str) or not clean(created):
        raise ModelFileError("The model's 'created_at' must be a date-time string")
    fitted = _shorten(clean(_fit_date(created)), 40)

    hyper = _need(model, "hyperparameters", "")
    lam = _need(hyper, "lam", "hyperparameters.")
    min_support = _need(hyper, "min_support", "hyperparameters.")
    max_conditions = _need(hyper, "max_conditions", "hyperparameters.")
    n_steps = _need(hyper, "n_steps", "hyperparameters.")
    seed = _need(hyper, "random_state", "hyperparameters.")
    if isinstance(min_support, float) and 0 < min_support < 1:
        min_support_text = f"min support {min_support * 100:g}%"
    else:
        min_support_text = f"min support {_fmt_number(min_support)}"
    settings = " · ".join(
        [
            f"λ = {_fmt_number(lam)}",
            min_support_text,
            f"max {_fmt_number(max_conditions)} condition{'' if max_conditions == 1 else 's'}",
            f"{_fmt_number(n_steps)} steps",
            f"seed {_fmt_number(seed)}",
        ]
    )

    validation = model.get("validation")
    if isinstance(validation, dict) and validation.get("auroc_mean") is not None:
        auc = _number(validation["auroc_mean"], "validation.auroc_mean", 0.0, 1.0)
        sd = ""
        if validation.get("auroc_std") is not None:
            sd = f" ± {_number(validation['auroc_std'], 'validation.auroc_std', 0.0):.2f}"
        method = validation.get("method")
        if not method and validation.get("n_folds"):
            method = f"{_fmt_number(validation['n_folds'])}-fold cross-validation"
        if method:
            text = f"AUROC {auc:.2f}{sd} by {_shorten(clean(method), 60)}"
        else:
            text = f"cross-validated AUROC {auc:.2f}{sd}"
        validated = text + "; " + (_external_text(model, clean) or "not externally validated")
    else:
        validated = _external_text(model, clean) or "not externally validated"

    if unconverged:
        risk_text = "none: the posterior sample did not converge, so risks are point estimates"
    elif few_draws:
        risk_text = (f"none: the posterior draws of the risks hold too few independent ones (ESS {risk_ess:.0f}), "
                     "so risks are point estimates")
    elif posterior is not None:
        n_samples = posterior.get("n_samples") if isinstance(posterior, dict) else None
        samples = f", {_fmt_number(n_samples)} posterior samples" if n_samples else " from the posterior"
        risk_text = f"95% credible intervals (CrI){samples}"
    else:
        risk_text = "none: risks are point estimates (no posterior sample)"

    outcome_text = _shorten(outcome_words, _MAX_FREE_TEXT)
    back = [
        ("Population", population or "not recorded", "plain"),
        ("Fitted", fitted, "plain"),
        ("Patients", (f"N = {n_rows:,} rows of {n_patients:,} patients" if n_patients else f"N = {n_rows:,}")
         + f"; {format_risk(rate, n_rows)} had {outcome_text}"
         # fewer than 10 with the event, or without it: the card does not let the risks pass as evidence
         + ("; too few to rely on" if few_patients_note(model) else ""), "plain"),
        ("Validation", validated, "plain"),
        ("Intervals", risk_text, "plain"),
        *((("Not recorded", "a value not recorded meets no condition on it, 'is not' included: that patient goes on "
                            "to the next rule", "plain"),)
          if any(c.get("op") == "!=" for r in rules if isinstance(r, dict) for c in (r.get("conditions") or [])
                 if isinstance(c, dict)) else ()),
        ("Settings", settings, "plain"),
        ("Model ID", model_identifier(model), "id"),
    ]
    back = [(label, clean(value), style) for label, value, style in back]
    return _CardData(card_title, rows, lower is not None, back, model_identifier(model), "".join(missing))


# --------------------------------------------------------------------------- front


@dataclass
class _Columns:
    kw_x: float
    cond_x: float
    cond_w: float
    bar_x: float
    risk_right: float
    ci_right: float | None
    n_right: float
    n_header: str
    scale: float  # risk at full bar length


def _columns(data: _CardData, g: _Geom, fonts: _Fonts) -> _Columns | None:
    st = g.st
    w, _ = (g.w, g.h)
    left = MARGIN_MM + st.pad
    right = MARGIN_MM + w - st.pad
    kw_w = max(fonts.width(k, True, st.body) for k in ("IF", "ELSE IF", "ELSE", "ALL"))
    risk_w = max(max(fonts.width(r.risk, True, st.risk) for r in data.rows), fonts.width("Risk", False, st.small))
    ci_w = 0.0
    if data.has_interval:
        ci_w = max(max(fonts.width(r.interval or "", False, st.small) for r in data.rows),
                   fonts.width("95% CrI", False, st.small))
    n_vals = max(fonts.width(r.n, False, st.small) for r in data.rows)
    n_header = "Patients" if fonts.width("Patients", False, st.small) <= max(n_vals, fonts.width("n", False, st.small)) + st.gap else "n"
    n_w = max(n_vals, fonts.width(n_header, False, st.small))
    n_right = right
    ci_right = n_right - n_w - st.gap if data.has_interval else None
    risk_right = (ci_right - ci_w - st.gap) if ci_right is not None else (n_right - n_w - st.gap)
    bar_x = risk_right - risk_w - st.gap * 0.7 - st.bar
    cond_x = left + kw_w + st.gap
    cond_w = bar_x - st.gap - cond_x
    if cond_w < st.min_cond:
        return None
    top = max(r.probability for r in data.rows)
    scale = min(1.0, math.ceil(top * 10 - 1e-9) / 10) if top >= 0.1 else max(0.01, math.ceil(top * 100 - 1e-9) / 100)
    return _Columns(left, cond_x, cond_w, bar_x, risk_right, ci_right, n_right, n_header, scale)


def _bar_color(fraction: float) -> tuple[int, int, int]:
    f = min(1.0, max(0.0, fraction))
    return tuple(round(lo + (hi - lo) * f) for lo, hi in zip(_BAR_LOW, _BAR_HIGH))  # type: ignore[return-value]


def _row_items(row: _Row, cols: _Columns, g: _Geom, top: float, fonts: _Fonts) -> tuple[list, float]:
    """Items of one rule row starting at ``top``; returns (items, bottom)."""
    st = g.st
    body_mm, risk_mm, small_mm = st.body * _PT, st.risk * _PT, st.small * _PT
    items: list = []
    if row.conditions:
        units = [[("and", "joiner"), *[(w, "cond") for w in c.split(" ")]] if i else [(w, "cond") for w in c.split(" ")]
                 for i, c in enumerate(row.conditions)]
    else:
        units = _words("all other patients" if row.keyword == "ELSE" else "all patients", "muted")
    lines = _wrap(units, cols.cond_w, st.body, fonts)
    base = top + st.row_pad + _ASC * risk_mm
    _text(items, row.keyword, cols.kw_x, base, st.body, True, _KEYWORD, "keyword", fonts)
    for i, line in enumerate(lines):
        _emit_line(items, line, cols.cond_x, base + i * body_mm * 1.18, st.body, fonts, "condition" if row.conditions else "default")
    # risk bar: a track and a fill proportional to the risk, darker when higher
    bar_h = body_mm * 0.78
    bar_y = base - body_mm * 0.36 - bar_h / 2
    items.append(Rect(cols.bar_x, bar_y, st.bar, bar_h, _TRACK, "track"))
    fraction = row.probability / cols.scale
    items.append(Rect(cols.bar_x, bar_y, max(0.35, st.bar * min(1.0, fraction)), bar_h, _bar_color(fraction), "bar"))
    _text(items, row.risk, 0, base, st.risk, True, _INK, "risk", fonts, align_right=cols.risk_right)
    if row.interval is not None and cols.ci_right is not None:
        _text(items, row.interval, 0, base, st.small, False, _MUTED, "interval", fonts, align_right=cols.ci_right)
    _text(items, row.n, 0, base, st.small, False, _MUTED, "support", fonts, align_right=cols.n_right)
    last_base = base + (len(lines) - 1) * body_mm * 1.18
    bottom = max(base + _DESC * risk_mm, last_base + _DESC * body_mm) + st.row_pad
    return items, bottom


def _band(items: list, g: _Geom, lines: list[tuple[str, str, float]], fonts: _Fonts) -> float:
    """The navy header band: wrapped (text, style, pt) paragraphs; returns its bottom (mm)."""
    st = g.st
    w, _ = (g.w, g.h)
    x0, y0 = MARGIN_MM, MARGIN_MM
    inner = w - 2 * st.pad
    rect_index = len(items)
    y = y0 + st.pad * 0.65
    prev_mm = 0.0
    for text, style, pt in lines:
        mm = pt * _PT
        for i, line in enumerate(_wrap(_words(text, style), inner, pt, fonts)):
            if not prev_mm:
                y += _ASC * mm  # first line of the band
            elif i == 0:
                y += _DESC * prev_mm + _ASC * mm + 0.1 * mm  # next paragraph: no overlap whatever the sizes
            else:
                y += mm * 1.2
            _emit_line(items, line, x0 + st.pad, y, pt, fonts, "band")
            prev_mm = mm
    bottom = y + _DESC * prev_mm + st.pad * 0.5
    items.insert(rect_index, Rect(x0 - BLEED_MM, y0 - BLEED_MM, w + 2 * BLEED_MM, bottom - (y0 - BLEED_MM), _BAND, "band"))
    return bottom


def _front_header(data: _CardData, g: _Geom, card: int, n_cards: int, cols: _Columns, fonts: _Fonts) -> tuple[list, float]:
    st = g.st
    if n_cards == 1:
        sub = "Start at the top: the first rule that matches the patient gives the risk."
    elif card == 1:
        sub = f"Card 1 of {n_cards}. Start at the top: the first rule that matches the patient gives the risk."
    else:
        sub = f"Card {card} of {n_cards} (continued): use only if no rule on the previous cards matched."
    items: list = []
    title = data.title
    bottom = _band(items, g, [(title, "band", st.title), (sub, "bandsub", st.small)], fonts)
    # column headings
    small_mm = st.small * _PT
    base = bottom + st.gap * 0.8 + _ASC * small_mm
    _text(items, "Condition", cols.cond_x, base, st.small, False, _MUTED, "heading", fonts)
    _text(items, "Risk", 0, base, st.small, False, _MUTED, "heading", fonts, align_right=cols.risk_right)
    if cols.ci_right is not None:
        _text(items, "95% CrI", 0, base, st.small, False, _MUTED, "heading", fonts, align_right=cols.ci_right)
    _text(items, cols.n_header, 0, base, st.small, False, _MUTED, "heading", fonts, align_right=cols.n_right)
    y = base + _DESC * small_mm + 0.5
    w, _ = (g.w, g.h)
    items.append(Line(MARGIN_MM + st.pad, y, MARGIN_MM + w - st.pad, y, 0.25, _MUTED, "rule-line"))
    return items, y


def _front_pages(data: _CardData, g: _Geom, fonts: _Fonts, allow_continuation: bool) -> list[CardPage] | None:
    st = g.st
    w, h = (g.w, g.h)
    cols = _columns(data, g, fonts)
    if cols is None:
        return None
    limit = MARGIN_MM + h - st.pad
    small_mm = st.small * _PT
    footer_h = st.gap + (_ASC + _DESC) * small_mm
    # heights of rows (independent of position)
    blocks = [_row_items(row, cols, g, 0.0, fonts)[1] for row in data.rows]

    if allow_continuation:
        n_guess = 1
        for _ in range(6):  # "Card k of n" text can change the band height: iterate to a fixed point
            groups = _greedy_groups(data, g, blocks, cols, fonts, n_guess, limit, footer_h)
            if len(groups) == n_guess:
                break
            n_guess = len(groups)
    else:
        groups = [list(range(len(blocks)))]
    for k, group in enumerate(groups, start=1):
        _, y = _front_header(data, g, k, len(groups), cols, fonts)
        room = limit - (footer_h if k < len(groups) else 0.0)
        if y + sum(blocks[i] for i in group) > room + 1e-9:
            if not allow_continuation:
                return None
            raise FRLError(f"Rule {group[0] + 1} is too long to print even on an A6 card: shorten its conditions")
    if len(groups) > 1:  # the greedy split fills the first cards and may leave the last one a row or two
        groups = _fewest_even_groups(data, g, blocks, cols, fonts, len(groups), limit, footer_h) or groups
    n_cards = len(groups)
    pages = []
    for k, group in enumerate(groups, start=1):
        page = CardPage("front", k, n_cards)
        header, y = _front_header(data, g, k, n_cards, cols, fonts)
        page.items.extend(header)
        for pos, i in enumerate(group):
            items, bottom = _row_items(data.rows[i], cols, g, y, fonts)
            page.items.extend(items)
            if pos < len(group) - 1:
                page.items.append(Line(MARGIN_MM + st.pad, bottom, MARGIN_MM + w - st.pad, bottom, 0.12, _RULE_LINE, "separator"))
            y = bottom
        if k < n_cards:
            base = limit - _DESC * small_mm
            _text(page.items, f"No rule matched? Continue on card {k + 1} →", 0, base, st.small, True, _KEYWORD,
                  "continued", fonts, align_right=MARGIN_MM + w - st.pad)
        pages.append(page)
    return pages


def _greedy_groups(data, g, blocks, cols, fonts, n_cards, limit, footer_h) -> list[list[int]]:
    groups: list[list[int]] = [[]]
    _, y = _front_header(data, g, 1, n_cards, cols, fonts)
    for i, height in enumerate(blocks):
        last = i == len(blocks) - 1
        room = limit - (0.0 if last else footer_h)
        if y + height <= room or not groups[-1]:
            groups[-1].append(i)
            y += height
            continue
        groups.append([i])
        _, y = _front_header(data, g, len(groups), n_cards, cols, fonts)
        y += height
    return groups


def _fewest_even_groups(data, g, blocks, cols, fonts, most, limit, footer_h) -> list[list[int]] | None:
    """The rows over the fewest cards (at most ``most``) that hold them, spread evenly (``_even_groups``)."""
    for n_cards in range(1, most + 1):
        rooms = [limit - (footer_h if k < n_cards else 0.0) - _front_header(data, g, k, n_cards, cols, fonts)[1]
                 for k in range(1, n_cards + 1)]
        groups = _even_groups(blocks, rooms)
        if groups is not None:
            return groups
    return None


def _even_groups(blocks: list[float], rooms: list[float]) -> list[list[int]] | None:
    """Split rows of heights ``blocks`` into one run of consecutive rows per card, as evenly as they go.

    Card ``k`` has ``rooms[k]`` mm for its rows.  The split returned is, of those in which every card holds at
    least one row and every card's rows fit, the one whose shares of the rooms filled have the least sum of
    squares: moving the row at the boundary of two neighbouring cards across never evens them out further, so no
    card is left with the ELSE row alone while the others are full.  None when no split fits.
    """
    m = len(blocks)
    ends = [0.0]
    for height in blocks:
        ends.append(ends[-1] + height)
    best = [0.0] + [math.inf] * m  # best[j]: least cost of rows 0..j-1 on the cards so far
    starts: list[list[int]] = []  # starts[k][j]: first row of card k when it ends before row j
    for room in rooms:
        cost, start = [math.inf] * (m + 1), [0] * (m + 1)
        for j in range(1, m + 1):
            for i in range(j - 1, -1, -1):  # card's first row, moving up while its rows still fit
                filled = ends[j] - ends[i]
                if filled > room + 1e-9:
                    break
                c = best[i] + (filled / room) ** 2
                if c < cost[j]:
                    cost[j], start[j] = c, i
        best = cost
        starts.append(start)
    if not rooms or best[m] == math.inf:
        return None
    groups, j = [], m
    for start in reversed(starts):
        groups.append(list(range(start[j], j)))
        j = start[j]
    return groups[::-1]


# --------------------------------------------------------------------------- back


def _back_page(data: _CardData, g: _Geom, card: int, n_cards: int, fonts: _Fonts) -> CardPage | None:
    st = g.st
    w, h = (g.w, g.h)
    page = CardPage("back", card, n_cards)
    items = page.items
    sub = data.title if n_cards == 1 else f"{data.title} · card {card} of {n_cards}"
    y = _band(items, g, [("About this card", "band", st.title * 0.9), (sub, "bandsub", st.small)], fonts)
    left = MARGIN_MM + st.pad
    right = MARGIN_MM + w - st.pad
    body_mm = st.body * _PT
    label_size = st.small
    label_w = max(fonts.width(label, True, label_size) for label, _, _ in data.back)
    value_x = left + label_w + st.gap
    value_w = right - value_x
    y += st.gap * 0.9
    for label, value, style in data.back:
        size_pt = st.body * 1.15 if style == "id" else st.body
        mm = size_pt * _PT
        base = y + _ASC * mm
        _text(items, label, left, base, label_size, True, _MUTED, "label", fonts)
        lines = _wrap(_items(value, style), value_w, size_pt, fonts)
        for i, line in enumerate(lines):
            _emit_line(items, line, value_x, base + i * mm * 1.18, size_pt, fonts, "model-id" if style == "id" else "value")
        y = base + (len(lines) - 1) * mm * 1.18 + _DESC * mm + st.row_pad * 1.1
    # caveat and credit, anchored to the bottom of the card
    small_mm = st.small * _PT
    credit = f"Falling rule list (Wang & Rudin, AISTATS 2015) · {_software()}"
    caveat = "Decision support only; does not replace clinical judgement."
    credit_lines = _wrap(_words(credit, "muted"), right - left, st.small, fonts)
    caveat_lines = _wrap(_words(caveat, "caveat"), right - left, st.body, fonts)
    bottom_base = MARGIN_MM + h - st.pad - _DESC * small_mm
    needed = (len(credit_lines) - 1) * small_mm * 1.2 + len(caveat_lines) * body_mm * 1.18 + _ASC * small_mm + st.gap * 0.6
    caveat_top = bottom_base - needed
    line_y = caveat_top - st.gap * 0.3
    if line_y < y:
        return None
    items.append(Line(left, line_y, right, line_y, 0.2, _RULE_LINE, "separator"))
    base = caveat_top + st.gap * 0.3 + _ASC * body_mm
    for line in caveat_lines:
        _emit_line(items, line, left, base, st.body, fonts, "caveat")
        base += body_mm * 1.18
    base = bottom_base - (len(credit_lines) - 1) * small_mm * 1.2
    for line in credit_lines:
        _emit_line(items, line, left, base, st.small, fonts, "credit")
        base += small_mm * 1.2
    return page


def _software() -> str:
    package = sys.modules.get(__package__ or "frl_engine")
    version = getattr(package, "__version__", None)
    return f"frl_engine {version}" if isinstance(version, str) else "frl_engine"


# --------------------------------------------------------------------------- print furniture


def _furniture(page: CardPage, g: _Geom, fonts: _Fonts) -> None:
    """Crop marks at the four corners and a one-line printing note under the card."""
    w, h = (g.w, g.h)
    x0, y0, x1, y1 = MARGIN_MM, MARGIN_MM, MARGIN_MM + w, MARGIN_MM + h
    a, b = BLEED_MM, BLEED_MM + MARK_LEN_MM
    for x, sx in ((x0, -1), (x1, 1)):
        for y, sy in ((y0, -1), (y1, 1)):
            page.items.append(Line(x + sx * a, y, x + sx * b, y, 0.2, _MARK, "crop"))
            page.items.append(Line(x, y + sy * a, x, y + sy * b, 0.2, _MARK, "crop"))
    side = "FRONT" if page.side == "front" else "BACK"
    parts = [
        f"{side} · card {page.card} of {page.n_cards}" if page.n_cards > 1 else side,
        f"{_SIZE_NAMES[g.name]} {_SIZE_DIMS[g.name]}",
        "print at 100% (actual size)",
        "cut on the marks",
    ]
    pt = 4.5
    max_w = w - 4.0
    while len(parts) > 1 and fonts.width("  ·  ".join(parts), False, pt) > max_w:
        parts.pop()
    text = "  ·  ".join(parts)
    base = y1 + BLEED_MM + (MARGIN_MM - BLEED_MM) / 2 + 0.5
    _text(page.items, text, x0 + (w - fonts.width(text, False, pt)) / 2, base, pt, False, _SLUG, "slug", fonts)


# --------------------------------------------------------------------------- entry points


def _check_size(size: Any) -> str:
    if not isinstance(size, str) or size.lower() not in CARD_SIZES:
        raise FRLError(f"Unknown card size {str(size)!r}: choose pocket, index or a6")
    return size.lower()


def layout_card(model: dict, *, size: str = "pocket", title: str | None = None) -> CardLayout:
    """Lay the card out (no PDF yet): choose the size that fits and place every line.

    The requested size is used when the list fits on one card of that size;
    otherwise the next size up (pocket -> index -> A6); a list too long for one
    A6 card continues on further A6 cards.  Each card is a front and a back page.
    """
    requested = _check_size(size)
    fonts = _measuring_fonts()
    data = _check_model(model, title, fonts)
    candidates = [
        _Geom(name, *CARD_SIZES[name], _scaled(_STYLES[name], factor))
        for name in _SIZE_ORDER[_SIZE_ORDER.index(requested):]
        for factor in _SCALES[name]
    ]
    chosen = None
    for candidate in candidates:
        fronts = _front_pages(data, candidate, fonts, allow_continuation=False)
        if fronts is not None and _back_page(data, candidate, 1, 1, fonts) is not None:
            chosen = candidate
            break
    if chosen is None:
        chosen = candidates[-1]
        fronts = _front_pages(data, chosen, fonts, allow_continuation=True)
        if fronts is None:  # pragma: no cover - columns always fit on A6
            raise FRLError("The rule list cannot be laid out on a card")
    pages: list[CardPage] = []
    n_cards = len(fronts)
    for front in fronts:
        back = _back_page(data, chosen, front.card, n_cards, fonts)
        if back is None:  # pragma: no cover - back text is bounded in length
            raise FRLError("The model's description does not fit on the back of the card")
        for page in (front, back):
            _furniture(page, chosen, fonts)
            pages.append(page)
    chosen, w, h = chosen.name, chosen.w, chosen.h
    return CardLayout(chosen, requested, data.title, data.model_id, w, h, w + 2 * MARGIN_MM, h + 2 * MARGIN_MM, pages)


def _page_class(layout: CardLayout):
    """A PDFPage subclass whose pages carry /TrimBox and /BleedBox (fpdf2 serialises class attributes)."""
    from fpdf.output import PDFPage

    k = 72 / 25.4
    page_h = layout.page_h

    def box(x0: float, y0: float, x1: float, y1: float) -> str:
        return f"[{x0 * k:.4f} {(page_h - y1) * k:.4f} {x1 * k:.4f} {(page_h - y0) * k:.4f}]"

    return type(
        "_CardPDFPage",
        (PDFPage,),
        {"__slots__": (), "trim_box": box(*layout.trim), "bleed_box": box(*layout.bleed)},
    )


def render_layout(layout: CardLayout) -> bytes:
    """Draw a laid-out card as PDF bytes."""
    from fpdf import FPDF, ViewerPreferences

    pdf = FPDF(unit="mm", format=(layout.page_w, layout.page_h))
    pdf.alias_nb_pages(None)  # user text such as "{nb}" must print literally
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.c_margin = 0
    pdf.add_font(_FONT_FAMILY, "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font(_FONT_FAMILY, "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_title(f"{layout.title} (risk card, model {layout.model_id})")
    pdf.set_subject(f"Falling rule list risk card, {layout.describe()}")
    pdf.set_creator("frl_engine")
    pdf.viewer_preferences = ViewerPreferences(print_scaling="None")  # print at actual size
    page_cls = _page_class(layout)
    for page in layout.pages:
        pdf.add_page()
        pdf.pages[pdf.page].__class__ = page_cls
        for item in page.items:
            if isinstance(item, Rect):
                pdf.set_fill_color(*item.color)
                pdf.rect(item.x, item.y, item.w, item.h, style="F")
            elif isinstance(item, Line):
                pdf.set_draw_color(*item.color)
                pdf.set_line_width(item.width * _PT)
                pdf.line(item.x1, item.y1, item.x2, item.y2)
            else:
                pdf.set_font(_FONT_FAMILY, "B" if item.bold else "", item.size)
                pdf.set_text_color(*item.color)
                pdf.text(item.x, item.baseline, item.text)
    return bytes(pdf.output())


def missing_glyphs(model: dict, title: str | None = None) -> str:
    """The letters of the text the card draws (from ``model`` and ``title``) that its fonts lack, in order.

    The card draws each of them as U+FFFD (module docstring); the CLI and the dashboard say so, with
    these letters, so that a card with ``IF ��`` is never printed without a word.  Found while the
    model's text is cleaned for drawing, so a name the card does not print is not named.
    """
    return _check_model(model, title, _measuring_fonts()).missing_glyphs


def missing_glyphs_note(model: dict, title: str | None = None) -> str | None:
    """One sentence saying which characters the card prints as U+FFFD and what to do, else None."""
    chars = missing_glyphs(model, title)
    if not chars:
        return None
    shown = " ".join(chars[:12]) + (" ..." if len(chars) > 12 else "")
    return (f"The card's font has no letters for {shown}: they print as \ufffd. Name the columns, values and title "
            "in Latin, Greek or Cyrillic letters to print them.")


def render_card(model: dict, *, size: str = "pocket", title: str | None = None) -> bytes:
    """The printable risk card of ``model`` as PDF bytes (front and back page per card).

    ``size`` is "pocket" (85.6 x 54 mm), "index" (5 x 3 in) or "a6" (148 x 105 mm); a list
    that does not fit moves up a size, or continues on a second card.  ``title`` overrides
    the model's outcome title.  Raises ``ModelFileError`` for a dict that is not a complete
    frl-model, ``FRLError`` for an unknown size or an unusable title.
    """
    return render_layout(layout_card(model, size=size, title=title))
