"""Another user's first page while a validation runs on the dashboard server (issue 14: <= 3 s).

Starts ``streamlit run dashboard/app.py`` on a free local port (warm-up on, as in production),
then with Debian's Chromium through Playwright:

1. *idle*: opens the app in a fresh browser context ``--repeats`` times and times the Data page's
   header (the ``Data`` title) and the complete page (its items table drawn), as
   ``tests/test_browser.py`` does;
2. *under load*: one browser session loads the sample data, fits the list and starts the
   cross-validation with every default method (SVM, RF, HGB ... on both cores, in worker
   processes); while it runs, another fresh context opens the app ``--repeats`` times.  Should the
   validation finish meanwhile, it is started again with the next seed (so it is not a cached
   result), and the measurement waits until its workers run again.

Prints every time and the medians.  Run: ``python benchmarks/bench_dashboard_load.py [--repeats 5]``.
The machine's other load is printed too (``os.getloadavg``): on a shared 2-core machine other
people's processes compete with the server as much as the validation's workers do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
sys.path.insert(0, str(ROOT / "tests"))

from streamlit_server import server_workers, start_server, start_validation_in_browser  # noqa: E402  (the tests' server launcher)


def first_page(browser, url: str) -> tuple[float, float]:
    """A fresh browser context opens the app: seconds to the Data header, and to the complete page."""
    context = browser.new_context()
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        page.get_by_role("heading", name="Data", level=1).wait_for(timeout=120_000)
        header = time.perf_counter() - started
        page.locator('.st-key-items [data-testid="stDataFrame"]').wait_for(timeout=120_000)
        return header, time.perf_counter() - started
    finally:
        context.close()


def start_validation(page, url: str) -> None:
    start_validation_in_browser(page, url)
    page.get_by_role("button", name="Stop").first.wait_for(timeout=60_000)


def validation_running(page) -> bool:
    return page.get_by_role("button", name="Stop").count() > 0


def restart_validation(page, seed: int) -> None:
    box = page.get_by_role("spinbutton", name="Seed")
    box.fill(str(seed))
    box.press("Enter")
    page.wait_for_timeout(800)
    page.get_by_role("button", name="Run cross-validation").click(timeout=60_000)
    page.get_by_role("button", name="Stop").first.wait_for(timeout=60_000)


def _summary(name: str, times: list[tuple[float, float]]) -> str:
    headers = [h for h, _ in times]
    pages = [p for _, p in times]
    return (f"{name}: header median {statistics.median(headers):.2f} s (each {', '.join(f'{h:.1f}' for h in headers)}); "
            f"complete page median {statistics.median(pages):.2f} s (each {', '.join(f'{p:.1f}' for p in pages)})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--idle", action=argparse.BooleanOptionalAction, default=True, help="measure idle first")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "streamlit.log"
        process, url = start_server(log_path)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                try:
                    first_page(browser, url)  # the server's first session: engine import, warm-up
                    time.sleep(8)  # the background warm-up (kernels, a spare worker) is over
                    idle = []
                    if args.idle:
                        for _ in range(args.repeats):
                            idle.append(first_page(browser, url))
                        print(_summary("idle server", idle), f"· load {os.getloadavg()[0]:.1f}", flush=True)
                    busy = browser.new_context().new_page()
                    start_validation(busy, url)
                    loaded, seed, loads = [], 0, []
                    while len(loaded) < args.repeats:
                        if not validation_running(busy):
                            seed += 1
                            restart_validation(busy, seed)
                        deadline = time.monotonic() + 120
                        while len(server_workers(process.pid, busy=True)) < 2 and time.monotonic() < deadline:
                            time.sleep(0.2)
                        workers = len(server_workers(process.pid, busy=True))
                        loads.append(os.getloadavg()[0])
                        header, complete = first_page(browser, url)
                        if not validation_running(busy):
                            continue  # it finished during the measurement: not a page under load
                        loaded.append((header, complete))
                        print(f"  under load ({workers} busy workers, load {loads[-1]:.1f}): header {header:.2f} s, "
                              f"complete page {complete:.2f} s", flush=True)
                    print(_summary("while a validation runs", loaded),
                          f"· load {statistics.median(loads):.1f} (median)", flush=True)
                finally:
                    browser.close()
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
