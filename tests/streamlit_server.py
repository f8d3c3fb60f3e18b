"""A real ``streamlit run dashboard/app.py`` for the browser tests and the dashboard benchmark."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(log_path: Path, env_extra: dict | None = None, timeout: float = 60.0):
    """Start the dashboard on a free local port and wait until it answers its health check.

    Returns ``(process, url)``; the server's output goes to ``log_path``.  Raises RuntimeError with
    the end of the log if it does not come up within ``timeout`` seconds.
    """
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env_extra or {}))
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return process, url
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"streamlit did not start:\n{Path(log_path).read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)


def stop_server(process, timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if the server has not ended within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def server_workers(pid: int, *, busy: bool = False) -> list[int]:
    """The server's worker processes (children other than loky's resource tracker); ``busy``: only
    those using more than 20% of a core right now."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for child in children:
        try:
            if "resource_tracker" in " ".join(child.cmdline()):
                continue
            if not busy or child.cpu_percent(0.05) > 20:
                out.append(child.pid)
        except psutil.NoSuchProcess:
            pass
    return out


def nav(page, title: str) -> None:
    """Open a page of the dashboard from the sidebar (Playwright) and wait for its title."""
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True).click()
    page.get_by_role("heading", level=1).filter(has_text=title).wait_for(timeout=60_000)


def start_validation_in_browser(page, url: str) -> None:
    """Open the app (sample data), fit the list, then start the cross-validation with every default method."""
    page.goto(url)
    page.get_by_role("heading", name="Data", level=1).wait_for(timeout=60_000)
    page.locator('.st-key-items [data-testid="stDataFrame"]').wait_for(timeout=120_000)
    nav(page, "Fit")
    # The page counts the candidate rules before it draws the button: click once that run has finished, or the
    # click can land on a page Streamlit is drawing again and be lost (a CI run once waited 180 s for no fit).
    page.locator("strong", has_text=re.compile(r"^[\d,]+ candidate rules$")).first.wait_for(timeout=120_000)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=60_000)
    page.get_by_role("button", name="Fit the rule list").click(timeout=60_000)
    page.locator("table.frl-list td.frl-cond").first.wait_for(timeout=180_000)
    nav(page, "Validation")
    # enabled once the fit's posterior is sampled (one heavy job per session)
    page.get_by_role("button", name="Run cross-validation").click(timeout=180_000)
