"""Driving Streamlit widgets from Playwright without racing the app's reruns.

While Streamlit runs a script again it keeps the elements of the run before on the page, marked
``data-stale="true"`` on their ``stElementContainer``, until the new run has drawn its own.  When a
widget moves (a warning appears above it in the new run), the stale copy and the new one are both on
the page for a moment, and a run can start again just after the status widget has gone (an uploader
or a data editor reporting its state).  Playwright's strict locators then see two select boxes.
"""

import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

LIVE = '[data-testid="stElementContainer"]:not([data-stale="true"])'


def choose_option(page, label: str, option: str, timeout_s: float = 90.0) -> None:
    """Pick ``option`` in the select box labelled ``label``, on the page as the latest run drew it.

    Waits for the app to be idle and for exactly one live (not stale) select box with that label, opens
    it and clicks the option; if a rerun replaces the box in between, it tries again until ``timeout_s``.
    """
    box = page.locator(f'{LIVE} [data-testid="stSelectbox"]').filter(has_text=label)
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=30_000)
            expect(box).to_have_count(1, timeout=10_000)
            box.click(timeout=5_000)
            page.get_by_role("option", name=option, exact=True).click(timeout=5_000)
            return
        except (PlaywrightError, AssertionError) as exc:  # a rerun replaced the box: look again
            last = exc
            page.keyboard.press("Escape")
            page.wait_for_timeout(500)
    raise AssertionError(f"could not choose {option!r} in the select box {label!r} within {timeout_s:.0f} s: {last}")
