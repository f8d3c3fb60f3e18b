"""The Explore page in a real browser (Chromium via Playwright): run a small grid, click a row of the
table, and that cell's list becomes the current fit (the Rule list page shows the engine's list).

Saves test-artifacts/browser-explore*.png; with FRL_UPDATE_SCREENSHOT=1 also docs/explore.png.
"""

import os
import time

import pytest

from dashboard import services
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import read_table, split_target
from test_browser import CHROMIUM, ROOT, _nav, _shot, app_url, chromium  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.skipif(not services.SAMPLE_PATH.is_file(), reason="sample data missing"),
]


def _pill(page, key: str, label: str):
    page.locator(f".st-key-{key}").get_by_role("button", name=label, exact=True).click()
    page.wait_for_timeout(400)


def test_a_clicked_row_of_the_explore_table_becomes_the_current_fit(app_url, chromium):  # noqa: F811
    page = chromium()
    page.goto(app_url)
    page.get_by_role("heading", name="Data", level=1).wait_for()
    page.locator('.st-key-items [data-testid="stDataFrame"]').wait_for(timeout=60_000)
    _nav(page, "Explore")
    page.get_by_text("Runs on this machine", exact=False).wait_for()
    # A small grid: λ 2, 8 x support 5%, 10% x 2 conditions (deselect the other defaults), 3 folds.
    _pill(page, "w_ex_lam", "4")
    _pill(page, "w_ex_support", "2%")
    _pill(page, "w_ex_conditions", "1")
    folds = page.locator(".st-key-w_ex_folds input")
    folds.fill("3")
    folds.press("Enter")
    page.get_by_text("4 cells × 3 folds", exact=False).wait_for()
    page.get_by_role("button", name="Run the grid").click()
    page.get_by_text("Recommended:", exact=False).wait_for(timeout=180_000)
    page.locator('.st-key-explore_table [data-testid="stDataFrame"]').wait_for()
    page.wait_for_timeout(1500)  # the charts draw
    _shot(page, "explore", 1500)
    if os.environ.get("FRL_UPDATE_SCREENSHOT") == "1":
        page.set_viewport_size({"width": 1440, "height": 1150})
        page.wait_for_timeout(800)
        page.screenshot(path=str(ROOT / "docs" / "explore.png"))
        page.set_viewport_size({"width": 1440, "height": 1000})

    # The table is in grid order: row 1 is λ 8, support 5%, 2 conditions.  Click its row selector.
    grid = page.locator('.st-key-explore_table [data-testid="stDataFrame"]')
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 35 * 1 + 17)
    started = time.perf_counter()
    page.get_by_text("Current list:", exact=False).wait_for(timeout=120_000)
    caption = page.get_by_text("Current list:", exact=False).inner_text()
    assert "λ 8 · support 5%" in caption and "≤2 conditions" in caption, caption
    print(f"\nclick to current fit: {time.perf_counter() - started:.1f} s")

    frame = read_table(services.SAMPLE_PATH)
    features, y, _ = split_target(frame, services.SAMPLE_TARGET, "yes")
    engine = FallingRuleListClassifier(lam=8.0, min_support=0.05, max_conditions=2, n_steps=5000, n_chains=4,
                                       random_state=0, exclude=("PatientID",)).fit(features, y)
    _nav(page, "Rule list")
    page.locator("table.frl-list td.frl-cond").first.wait_for()
    shown = " ".join(page.locator("table.frl-list td.frl-cond").first.inner_text().split())
    assert shown == engine.rules_[0]
    assert page.locator("table.frl-list tbody tr").count() == len(engine.rules_) + 1
    _shot(page, "explore-rule-list", 1500)
