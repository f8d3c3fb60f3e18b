"""Entry point of the clinician dashboard: ``streamlit run dashboard/app.py`` (``make run``).

It only sets the page up and routes between the pages (``st.navigation``); the
pages are thin, the engine is reached through :mod:`dashboard.services`, the
session-state keys live in :mod:`dashboard.state`.
"""

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # a plain checkout, not installed with `pip install -e .`
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402

from dashboard import state, ui  # noqa: E402

# The tab's icon is a file of the app's own: a Material icon there is fetched from fonts.gstatic.com on every page,
# which a hospital network without the internet refuses (and need not be told of each page a clinician opens).
st.set_page_config(page_title="Falling Rule Lists", page_icon=str(Path(__file__).with_name("favicon.png")),
                   layout="wide")

state.init()
state.collect_jobs()
ui.style()

PAGES = {
    "data": st.Page(ui.PAGES["data"], title="Data", icon=":material/table:", default=True),
    "fit": st.Page(ui.PAGES["fit"], title="Fit", icon=":material/tune:"),
    "rules": st.Page(ui.PAGES["rules"], title="Rule list", icon=":material/format_list_numbered:"),
    "posterior": st.Page(ui.PAGES["posterior"], title="Posterior", icon=":material/query_stats:"),
    "validation": st.Page(ui.PAGES["validation"], title="Validation", icon=":material/monitoring:"),
    "external": st.Page(ui.PAGES["external"], title="External validation", icon=":material/fact_check:"),
    "card": st.Page(ui.PAGES["card"], title="Card & downloads", icon=":material/badge:"),
    "compare": st.Page(ui.PAGES["compare"], title="Compare", icon=":material/compare_arrows:"),
    "models": st.Page(ui.PAGES["models"], title="Models", icon=":material/inventory_2:"),
    "explore": st.Page(ui.PAGES["explore"], title="Explore", icon=":material/grid_on:"),
}
page = st.navigation({
    "Build": [PAGES["data"], PAGES["fit"], PAGES["explore"]],
    "Read": [PAGES["rules"], PAGES["posterior"], PAGES["validation"], PAGES["external"]],
    "Use": [PAGES["card"], PAGES["compare"], PAGES["models"]],
})

status = ui.sidebar_status(page.url_path)
ui.wait_for_engine_imports()  # a cold server's warm-up imports scikit-learn: never two threads at once
try:
    page.run()
finally:  # after the first page is drawn (also when a page stops early)
    ui.warm_up_once()
    ui.leave_warning()  # a reload would end the session: the browser asks first while it holds work
ui.refresh_sidebar_status(status)  # the page may have loaded another table or model
