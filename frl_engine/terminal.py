"""Text laid out in columns on a terminal, where some characters take two cells.

A clinic's export may name a column ``年齢`` (age) or ``褥瘡`` (pressure sores): each of
those characters takes two cells of a terminal, so padding by ``len`` misaligns every
column after it.  Combining accents (``é`` written as ``e`` + U+0301) take none.
"""

from __future__ import annotations

import unicodedata

# Characters a terminal does not print but obeys: the bidirectional embeddings, overrides and isolates (U+202A to
# U+202E, U+2066 to U+2069; "Trojan Source", CVE-2021-42574) and the C0 / C1 controls other than the line breaks and
# the tab (an ESC from a category value would start a terminal escape sequence).  A value holding U+202E would print
# the rest of its line reversed: `THEN risk is 81%` read right to left.
_OBEYED = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_KEPT_CONTROLS = frozenset("\n\r\t")


def _obeyed(char: str) -> bool:
    return ord(char) in _OBEYED or (unicodedata.category(char) == "Cc" and char not in _KEPT_CONTROLS)


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: 2 for East Asian wide and full-width characters, 0 for combining marks.

    A character a terminal would obey (:func:`visible_controls`) takes the cells of its visible form,
    ``<U+202E>``, as a terminal is shown it, so the columns after it still line up.
    """
    width = 0
    for char in text:
        if _obeyed(char):
            width += len(f"<U+{ord(char):04X}>")
            continue
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


def visible_controls(text: str) -> str:
    """``text`` with each character a terminal would obey rather than print written as ``<U+202E>``.

    Right-to-left letters (Arabic, Hebrew) are kept: only the invisible controls that reorder or restyle the
    line are made visible, so an analyst sees that a value holds one (the card removes them, ``frl_engine.card``).
    """
    if text.isprintable():   # the common case, one C-level scan
        return text
    return "".join(f"<U+{ord(char):04X}>" if _obeyed(char) else char for char in text)


class CommandLineWriter:
    """The command line's standard output or error, written through to ``stream``.

    On a terminal (``visible``), :func:`visible_controls` is applied; a file or a pipe gets the text unchanged,
    so a scored table written to standard output keeps its values.  A reader that stops reading
    (``frl fit ... | head -1``) closes the pipe: the rest of the text is dropped and the command goes on, so the
    files it was asked to write and the model it was asked to register are still made (the pipe's error used to
    end the command there, with status 0).
    """

    def __init__(self, stream, visible: bool):
        self._stream = stream
        self._visible = visible
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                self._stream.write(visible_controls(text) if self._visible else text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        import os

        self.reader_gone = True
        try:   # what the stream still holds goes nowhere, also when Python flushes it at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):   # fileno, isatty, encoding, buffer ... as the stream has them
        return getattr(self._stream, name)
