"""Text laid out in columns on a terminal, where some characters take two cells.

A clinic's export may name a column ``年齢`` (age) or ``褥瘡`` (pressure sores): each of
those characters takes two cells of a terminal, so padding by ``len`` misaligns every
column after it.  Combining accents (``é`` written as ``e`` + U+0301) take none.
"""

from __future__ import annotations

import unicodedata


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: 2 for East Asian wide and full-width characters, 0 for combining marks."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def pad_right(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` terminal cells (``str.ljust`` by cells)."""
    return text + " " * max(0, width - display_width(text))


def pad_left(text: str, width: int) -> str:
    """Spaces then ``text`` up to ``width`` terminal cells (``str.rjust`` by cells)."""
    return " " * max(0, width - display_width(text)) + text
