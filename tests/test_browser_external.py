"""External validation in a real browser: the dashboard page (model file + new table uploaded through the real
uploaders) and the HTML report of ``frl validate``, both opened in Debian's Chromium.

Screenshots go to test-artifacts/; FRL_UPDATE_SCREENSHOT=1 also refreshes docs/external-validation-*.png.
"""

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sklearn.metrics import roc_auc_score

from browser_widgets import choose_option
from dashboard import services
from frl_engine.cli import main
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import read_table, split_target
from test_browser import ARTIFACTS, CHROMIUM, _shot, app_url, chromium  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
    pytest.mark.skipif(not services.SAMPLE_PATH.is_file(), reason="sample_data/readmission.csv is not generated yet"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A list fitted (with its posterior) on the sample's first 2,000 patients; the last 1,000 as the new table."""
    folder = tmp_path_factory.mktemp("external")
    frame = read_table(services.SAMPLE_PATH)
    train, later = frame.iloc[:2000], frame.iloc[2000:].reset_index(drop=True)
    features, y, positive = split_target(train, services.SAMPLE_TARGET)
    model = FallingRuleListClassifier(exclude=["PatientID"], random_state=0).fit(features, y)
    model.sample_posterior(2000, random_state=0)
    model_path, data_path = folder / "model.json", folder / "2025.csv"
    model.save(model_path, target=services.SAMPLE_TARGET, data_name="2024.csv", event_label=positive)
    later.to_csv(data_path, index=False)
    risk = model.predict_proba(later.drop(columns=[services.SAMPLE_TARGET]))[:, 1]
    return model_path, data_path, roc_auc_score(later[services.SAMPLE_TARGET] == "yes", risk)


def _update_docs(path: Path, name: str) -> None:
    """With FRL_UPDATE_SCREENSHOT=1, the screenshot becomes the docs' picture (1100 px wide, 128 colours)."""
    if os.environ.get("FRL_UPDATE_SCREENSHOT") != "1":
        return
    from PIL import Image

    image = Image.open(path).convert("RGB")
    image = image.resize((1100, round(image.height * 1100 / image.width)), Image.LANCZOS)
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(ROOT / "docs" / name, optimize=True)


def test_the_page_validates_an_uploaded_model_on_an_uploaded_table(app_url, chromium, files):  # noqa: F811
    model_path, data_path, auroc = files
    page = chromium()
    page.goto(f"{app_url}/external")
    page.get_by_role("heading", name="External validation", level=1).wait_for()
    page.get_by_text("A saved model file", exact=True).click()
    page.get_by_text("Model file (.json)", exact=True).wait_for()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(0).set_input_files(str(model_path))
    page.get_by_text("needs the outcome column", exact=False).wait_for()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(1).set_input_files(str(data_path))
    headline = page.get_by_text("Externally validated: AUROC", exact=False).first
    headline.wait_for()
    assert f"AUROC {auroc:.2f} (95% CI" in headline.inner_text()
    # Two charts, the second drawn (a single plotly chart holds two .main-svg layers, so waiting for the second
    # .main-svg on the page could pass before the second chart existed: CI saw a count of 1 there)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(1).locator(".main-svg").first.wait_for()
    expect(charts).to_have_count(2)
    # subgroups through the real select box
    choose_option(page, "Subgroups by", "Age")
    page.get_by_role("heading", name="By Age").wait_for()
    page.wait_for_timeout(1500)  # let the figures finish drawing
    body = page.locator("body").inner_text()
    assert "Traceback" not in body and "Error" not in body
    _update_docs(_shot(page, "external-validation"), "external-validation-page.png")


def test_the_html_report_renders_offline(chromium, files, tmp_path, capsys):  # noqa: F811
    model_path, data_path, _ = files
    report = tmp_path / "report.html"
    assert main(["validate", str(model_path), str(data_path), "--by", "Age", "--html", str(report)]) == 0
    capsys.readouterr()
    page = chromium()
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    page.set_viewport_size({"width": 1320, "height": 1000})
    page.goto(report.as_uri())
    page.locator(".plotly-graph-div .main-svg").first.wait_for()
    assert page.locator(".plotly-graph-div").count() == 3  # calibration, decision curve, AUROC by age
    assert page.locator(".plotly-graph-div .scatterlayer .trace").count() >= 4  # rules, recalibration, 3 curves
    assert page.locator("table.rules").first.locator("tbody tr").count() == len(json.loads(model_path.read_text())["rules"]) + 1
    assert page.locator("details table.rules").count() == 4  # one per age band, folded
    assert page.locator("table.subgroups tbody tr").count() == 4  # age quartile bands
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "external-validation-report.png"
    page.screenshot(path=str(path), full_page=True)
    _update_docs(path, "external-validation-report.png")
