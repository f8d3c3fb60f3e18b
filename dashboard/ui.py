"""Streamlit pieces shared by the pages: headers, messages, prerequisites, job progress, the sidebar.

This module and :mod:`dashboard.state` load the engine (:mod:`dashboard.services`) only
inside the functions that need it: importing ``frl_engine`` pulls in scikit-learn and
numba (about 1.5 s on a cold server), and the navigation and the page header should
not wait for that.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time

import streamlit as st

from dashboard import jobs, state

log = logging.getLogger("frl_dashboard")

PAGES = {
    "data": "views/data.py",
    "fit": "views/fit.py",
    "rules": "views/rules.py",
    "posterior": "views/posterior.py",
    "validation": "views/validation.py",
    "external": "views/external.py",
    "card": "views/card.py",
    "compare": "views/compare.py",
    "models": "views/models.py",
    "explore": "views/explore.py",
}
POLL_SECONDS = 0.3
#: After :data:`FAST_POLL_FOR` seconds a running job is polled every this many seconds: each poll is a script run
#: on the server, and a validation polled 3 times a second (twice: the page and the sidebar) kept about 0.45 of a
#: core busy in the server process, competing with other users' pages for its one interpreter.
SLOW_POLL_SECONDS = 2.0
FAST_POLL_FOR = 4.0
WARM_UP_DELAY = 2.0


_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding: 2.2rem 3rem 3rem 3rem; }
h1 { font-size: 2.1rem !important; padding-bottom: 0.1rem !important; }
[data-testid="stMetricValue"] { font-size: 1.7rem; }
/* A row of figures wraps onto a second line in a narrow window instead of cutting them to "Hig..." and "2..." */
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stMetric"]) { flex-wrap: wrap; }
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stMetric"]) > [data-testid="stColumn"] {
  min-width: 8.5rem; }
/* The patient form's fields wrap to fewer a row in a narrow window instead of cutting their values ("unknow") */
[data-testid="stForm"] [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
[data-testid="stForm"] [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] { min-width: 10rem; }
/* Charts side by side go one under the other when a column would be too narrow to read (bars squashed, labels cut) */
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stPlotlyChart"]) { flex-wrap: wrap; }
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stPlotlyChart"]) > [data-testid="stColumn"] {
  min-width: 22rem; }
@media (max-width: 900px) { [data-testid="stMainBlockContainer"] { padding: 1.5rem 1rem 2rem 1rem; } }
</style>
"""


def file_stem(text: str | None, fallback: str) -> str:
    """A download's file name from a column or file name: letters (accents kept: ``Décès``), digits, ``-`` and ``_``;
    anything else becomes ``-`` (``Death 30d`` -> ``Death-30d``); ``fallback`` when nothing is left."""
    return re.sub(r"[^\w-]+", "-", str(text or "")).strip("-_") or fallback


def style() -> None:
    """A little CSS: less empty space above the title, smaller headings and metrics."""
    st.html(_CSS)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~$<>])")


def md(text) -> str:
    """User text (file, column and category names) made inert inside Streamlit markdown; a character the browser
    would obey rather than show (a right-to-left override in a category value) written visibly, ``<U+202E>``, as
    the command line writes it on a terminal."""
    from frl_engine.terminal import visible_controls

    return _MD_SPECIAL.sub(r"\\\1", visible_controls(str(text)))


# In a widget's label only these change what markdown shows (an underscore inside a word does not): escaping every
# special character there put backslashes into the accessible name a screen reader speaks ("number\_inpatient").
_LABEL_SPECIAL = re.compile(r"([\\`*\[\]<>$~|])")


def label(text) -> str:
    """A user's name (a column) as a widget's label: made inert as markdown with as few escapes as keep it so, so
    that the accessible name a screen reader speaks is the name (``number_inpatient``, not ``number\\_inpatient``)."""
    from frl_engine.terminal import visible_controls

    escaped = _LABEL_SPECIAL.sub(r"\\\1", visible_controls(str(text)))
    return re.sub(r"(^|\s)_|_($|\s)", lambda m: m.group(0).replace("_", "\\_"), escaped)   # _emphasis_ only


def visible(value) -> str:
    """A user's value as a widget shows it (a select box's option, not markdown): a character the browser would
    obey rather than show written visibly, ``<U+202E>``, as :func:`md` does."""
    from frl_engine.terminal import visible_controls

    return visible_controls(str(value))


#: What the browser is asked to confirm before a reload or a closed tab ends a session holding work (browsers show
#: their own words, "Leave site? Changes you made may not be saved.").
LEAVE_TEXT = "Reloading or leaving this page ends your session: your table, your lists and any running work are lost."


def session_holds_work() -> bool:
    """Whether a reload would lose something the user made: an uploaded table, a list, or a running job."""
    ss = st.session_state
    data = ss.get(state.DATA)
    return bool((data is not None and not data.is_sample) or ss.get(state.FIT) is not None
                or state.busy() is not None)


def leave_warning() -> None:
    """Ask the browser to confirm a reload or a closed tab while the session holds work (:func:`session_holds_work`).

    A reload starts a new Streamlit session: the table, the lists and the settings of the old one are gone, and its
    running job is stopped (:data:`dashboard.jobs.SESSION_GRACE_SECONDS` later).  The script only sets the page's
    ``beforeunload`` handler once, and then whether it asks.
    """
    st.sidebar.html(leave_script(session_holds_work()), unsafe_allow_javascript=True)


def leave_script(holds_work: bool) -> str:
    """The page's one script (:func:`leave_warning`): constant text, never anything from the user's file."""
    import json

    text = json.dumps(LEAVE_TEXT if holds_work else None)
    return ("<script>(function () { var w = window; w.frlLeaveText = " + text + "; if (!w.frlLeaveGuard) {"
            " w.frlLeaveGuard = true; w.addEventListener('beforeunload', function (event) {"
            " if (w.frlLeaveText) { event.preventDefault(); event.returnValue = w.frlLeaveText;"
            " return w.frlLeaveText; } }); } })();</script>")


def event_md(event) -> str:
    """The event value(s) as inert markdown: ``<30``, or ``<30 or >30`` when several values count as the event."""
    from frl_engine.io import event_label

    return md(event_label(event))


def header(title: str, subtitle: str) -> None:
    st.title(title, anchor=False)
    st.caption(subtitle)


def show_error(exc: BaseException, *, what: str = "") -> None:
    """A readable message for any failure: the engine's own for FRLError, a friendly one otherwise."""
    from frl_engine.errors import FRLError

    if isinstance(exc, FRLError):
        st.error(str(exc), icon=":material/error:")
    else:
        log.exception("Unexpected error%s", f" while {what}" if what else "")
        st.error(jobs.GENERIC_ERROR, icon=":material/error:")


def show_message(message: str | None, detail: str | None = None) -> None:
    if message:
        st.error(message, icon=":material/error:")
        if detail:
            st.caption(f"Technical detail: {detail}")


def repeated_rows_warning(data, *, key: str, leave_out) -> None:
    """The warning that ``data`` holds copies of records (:mod:`frl_engine.repeated_rows`), with a button that
    calls ``leave_out(data)``; nothing when there are none.  The uploaded table itself is never changed."""
    from dashboard import services

    repeated = services.repeated_records_cached(data.key, data.frame)
    if repeated is None:
        return
    st.warning(repeated.note("dashboard", name=lambda column: f"**{md(column)}**"), icon=":material/content_copy:")
    st.button("Leave out the repeated rows", key=key, icon=":material/content_copy:", on_click=leave_out,
              args=(data,))


def link(page: str, label: str, icon: str | None = None) -> None:
    st.page_link(PAGES[page], label=label, icon=icon)


def read_pending_upload() -> None:
    """Read the upload the Data page kept (``state.PENDING_UPLOAD``) into the session's table.

    Called by every page before it uses the table, so a file is read even when the user left the
    Data page before it was; the bytes are dropped only once read (or refused with a message).
    """
    import logging

    from dashboard import services
    from frl_engine.errors import FRLError

    ss = st.session_state
    name, raw = ss[state.PENDING_UPLOAD]
    with st.spinner(f"Reading {name}..."):
        try:
            state.set_data(services.load_table(raw, name))
        except FRLError as exc:
            ss[state.DATA_ERROR] = str(exc)
        except Exception:  # noqa: BLE001 - never a traceback on the page
            logging.getLogger("frl_dashboard").exception("Reading %s failed", name)
            ss[state.DATA_ERROR] = (f"{name} could not be read as a table. Check that it is a CSV, Excel or "
                                    "Parquet file with a header row.")
    ss[state.PENDING_UPLOAD] = None


def require_data():
    if st.session_state.get(state.PENDING_UPLOAD) is not None:  # uploaded, then the Data page was left at once
        read_pending_upload()
        if st.session_state[state.DATA_ERROR]:
            st.error(st.session_state[state.DATA_ERROR], icon=":material/error:")
    data = st.session_state[state.DATA]
    if data is None:
        st.info("No data yet: start on the **Data** page (the sample data is there by default).",
                icon=":material/info:")
        link("data", "Go to Data", ":material/table:")
        st.stop()
    return data


def require_fit(message: str = "No rule list yet: fit one on the **Fit** page."):
    fit = st.session_state[state.FIT]
    if fit is None:
        st.info(message, icon=":material/info:")
        if state.running("fit"):
            job_progress("fit")
        link("fit", "Go to Fit", ":material/tune:")
        st.stop()
    return fit


def registry_note(model: dict) -> None:
    """A caption with the model's entry in the model registry (what it was fitted on, when, by what)."""
    from dashboard import services
    from frl_engine.errors import FRLError

    try:
        entry = services.registry_entry(model)
    except FRLError as exc:
        st.caption(f":material/warning: Model registry: {md(exc)}")
        return
    if entry is None:
        st.caption("This model is not in the model registry (lists fitted here are; a model file opened here "
                   "is kept only where it was fitted).")
    else:
        st.caption(f":material/inventory_2: {md(services.registry_caption(entry))}")


# ---------------------------------------------------------------- background jobs
def poll_interval(job) -> float:
    """How often a page asks a running job for news: every 0.3 s in the first seconds after the job started or
    published something (a fit is done in a second or two and its list should appear at once; its posterior
    follows a few seconds later), then every two seconds (a long job's bar need not move faster, and each poll
    is a script run in the server that another session's first page waits behind)."""
    return POLL_SECONDS if job.quiet_seconds() < FAST_POLL_FOR else SLOW_POLL_SECONDS


def job_progress(kind: str, *, compact: bool = False) -> None:
    """A progress bar for a running job, with its Stop button; reruns the app when it publishes a result or ends.

    The Stop button ends the job and kills its worker processes (:meth:`dashboard.jobs.Job.stop`);
    results published before (a fitted list whose posterior was still being sampled) are kept.
    """
    job = state.job(kind)
    if job is None:
        return
    if job.done:
        if job.stopped and not compact:
            st.info(f"{job.label}: stopped after {job.elapsed():.0f} s. Earlier results are kept.",
                    icon=":material/stop_circle:")
        return
    seen = job.version
    if not compact:
        if st.button("Stop", key=f"stop_{kind}", icon=":material/stop:", disabled=job.token.cancelled,
                     help="End this job now (its worker processes too); earlier results are kept."):
            job.stop()
    interval = poll_interval(job)

    @st.fragment(run_every=interval)
    def poll() -> None:
        current = state.job(kind)
        if current is None or current.id != job.id:
            return
        if current.done or current.version != seen or poll_interval(current) != interval:
            st.rerun(scope="app")
        fraction, text = current.progress()
        if compact:
            st.progress(fraction, text=text.split(" · step")[0] + f" · {current.elapsed():.0f} s")
        else:
            st.progress(fraction, text=text)

    poll()


# ---------------------------------------------------------------- start-up and sidebar
#: Set when the warm-up thread has started, and when it has imported the heavy libraries (scikit-learn, joblib,
#: the engine).  Two threads importing scikit-learn at once can meet a half-imported joblib ("partially
#: initialized module ... resource_tracker": a user who uploads a model file while the warm-up imports the
#: estimator), so a page run that starts meanwhile waits for those imports (:func:`wait_for_engine_imports`).
WARM_UP_STARTED = threading.Event()
ENGINE_IMPORTED = threading.Event()
#: The longest a page run waits for them (seconds); they take a few seconds on a cold server.
ENGINE_IMPORT_WAIT = 120.0


@st.cache_resource(show_spinner=False)
def _warm_up_thread() -> threading.Thread:
    thread = threading.Thread(target=_warm, name="frl-warm-up", daemon=True)
    WARM_UP_STARTED.set()
    thread.start()
    return thread


def _import_engine() -> None:
    """Import what fits, samples and validation load lazily, in this one thread."""
    import joblib  # noqa: F401
    import sklearn  # noqa: F401

    import frl_engine.estimator  # noqa: F401
    import frl_engine.validation.external  # noqa: F401
    from frl_engine import stopping, workers  # noqa: F401


def wait_for_engine_imports(timeout: float = ENGINE_IMPORT_WAIT) -> bool:
    """Before a page runs: while the warm-up thread is importing the heavy libraries, wait for it (a few seconds,
    once per server process), so that no page imports them at the same time.  True when nothing is left to wait for."""
    if WARM_UP_STARTED.is_set() and not ENGINE_IMPORTED.is_set():
        return ENGINE_IMPORTED.wait(timeout)
    return True


def _warm() -> None:
    from dashboard import services

    time.sleep(WARM_UP_DELAY)  # let the first page finish drawing first
    try:
        _import_engine()
    except Exception:  # noqa: BLE001 - the page that needs them imports them again and says what failed
        log.exception("Importing the engine failed")
    finally:
        ENGINE_IMPORTED.set()
    # One idle, warmed worker process: a fit or a posterior runs there (so Stop can kill it) without
    # waiting a second or two for a new process.  Started first: it warms up in parallel with the below.
    from frl_engine import workers
    from frl_engine.stopping import prestart_spare

    prestart_spare(workers.warm_up)
    try:
        services.warm_up()
    except Exception:  # noqa: BLE001 - warming up is an optimisation only
        log.exception("Warm-up failed (the first fit will just be slower)")


def warm_up_once() -> None:
    """Load the engine's compiled kernels in the background once per server process."""
    if os.environ.get("FRL_DASHBOARD_WARMUP", "1") != "0":
        _warm_up_thread()


def fitted_on_other_table(fit, data) -> str | None:
    """The name of the table the current list was fitted on, when it is not the table now loaded; else None."""
    spec = getattr(fit, "spec", None)
    if fit is None or data is None or spec is None or spec.data_key == data.key:
        return None
    return spec.data_name


def columns_the_table_lacks(fit, data) -> list[str]:
    """The columns a list opened from a model file uses that the table now loaded lacks (empty for a list fitted
    here, whose table :func:`fitted_on_other_table` names, or when the table has them all)."""
    from frl_engine.io import rule_columns

    if fit is None or data is None or getattr(fit, "spec", None) is not None:
        return []
    present = {str(c) for c in data.frame.columns}
    return [column for column in rule_columns(fit.model) if column not in present]


def other_table_note(fit, data) -> None:
    """Say, next to a list, that it was fitted on another table than the one now loaded (after a new upload), or,
    for a list opened from a model file, which of its columns the table now loaded lacks."""
    other = fitted_on_other_table(fit, data)
    if other:
        st.info(f"This list was fitted on **{md(other)}** ({md(fit.spec.target)}), not on **{md(data.name)}**, the "
                "table now loaded. Fit again on the Fit page to get this table's list.", icon=":material/swap_horiz:")
        return
    lacks = columns_the_table_lacks(fit, data)
    if lacks:
        trained = (fit.model.get("training") or {}).get("data_name")
        shown = ", ".join(f"**{md(c)}**" for c in lacks[:6]) + (" ..." if len(lacks) > 6 else "")
        st.warning(f"This list, opened from a model file{f' fitted on **{md(trained)}**' if trained else ''}, uses "
                   f"{shown}, which **{md(data.name)}**, the table now loaded, does not have: it is not this table's "
                   "list, and its patients cannot be checked or validated with it. Load the table it was fitted on, "
                   "or one with those columns.", icon=":material/swap_horiz:")


def _status_lines() -> str:
    ss = st.session_state
    data = ss[state.DATA]
    fit = ss[state.FIT]
    lines = []
    if data is not None:
        lines.append(f":material/table: **{md(data.name)}** · {data.n_rows:,} rows")
    if fit is not None:
        n = len(fit.model["rules"])
        extra = " · posterior" if fit.has_posterior else ""
        other = fitted_on_other_table(fit, data)
        extra += f" · fitted on {md(other)}" if other else ""
        if not other and columns_the_table_lacks(fit, data):   # a model file of another table
            trained = (fit.model.get("training") or {}).get("data_name")
            extra += f" · fitted on {md(trained)}" if trained else " · from another table"
        lines.append(f":material/format_list_numbered: **{n} rule{'s' if n != 1 else ''}** + ELSE{extra}")
    return "  \n".join(lines)


#: The job each page always shows in full (its own progress bar): the sidebar does not poll it a second time.
PAGE_JOBS = {"fit": "fit", "validation": "validation"}


def sidebar_status(page: str | None = None):
    """The sidebar: current table and list, job progress. Returns the slot :func:`refresh_sidebar_status` redraws.

    ``page``: the url path of the page being drawn; the job it shows in full gets no second bar here.
    """
    with st.sidebar:
        slot = st.empty()
        text = _status_lines()
        if text:
            slot.markdown(text)
        for kind in ("fit", "validation"):
            if PAGE_JOBS.get(page) != kind:
                job_progress(kind, compact=True)
        st.caption("Falling rule lists · Wang & Rudin, AISTATS 2015")
    return slot


def refresh_sidebar_status(slot) -> None:
    """Redraw the table and list lines after the page ran: it may have loaded another file or model.

    The sidebar is drawn before the page, so without this it named the previous file after an upload.
    """
    text = _status_lines()
    if text:
        slot.markdown(text)
    else:
        slot.empty()


# ---------------------------------------------------------------- what a fit is made of
class TrainingInputs:
    """The current data, outcome and column choices, ready for the engine."""

    def __init__(self, data, target, event, features, y, choices):
        self.data, self.target, self.event = data, target, event
        self.features, self.y, self.choices = features, y, choices

    @property
    def n_events(self) -> int:
        return int(self.y.sum())


def training_inputs(data, columns: bool = True) -> TrainingInputs:
    """Split the outcome off the current data and read the column table (raises FRLError with what to fix).

    ``columns=False``: the outcome only (``choices`` is None).  The Data page reads the column table after its
    editor has stored this run's edit, so a threshold just mended is not still refused as the one before it.
    """
    from dashboard import services

    ss = st.session_state
    target = ss.get(state.W_TARGET)
    event, also = ss.get(state.W_EVENT), [v for v in ss.get(state.W_EVENT_ALSO) or () if v != ss.get(state.W_EVENT)]
    features, y, positive = services.split_outcome(data.frame, target, (event, *also) if event is not None and also
                                                   else event)
    choices = services.column_choices(state.column_table(data), target) if columns else None
    return TrainingInputs(data, target, services.plain(positive), features, y, choices)


def fit_settings_from_widgets():
    from dashboard import services

    ss = st.session_state
    settings = services.FitSettings(
        lam=float(ss[state.W_LAM]), min_support=round(float(ss[state.W_SUPPORT]) / 100.0, 6),
        max_conditions=int(ss[state.W_MAX_CONDITIONS] or 2),  # None: the selected segment was clicked off
        n_thresholds=int(ss.get(state.W_N_THRESHOLDS) or 3),
        n_steps=int(ss[state.W_STEPS]),
        n_chains=int(ss[state.W_CHAINS]), seed=int(ss[state.W_SEED]))
    posterior = (services.PosteriorSettings(int(ss[state.W_POST_SAMPLES]), int(ss[state.W_POST_CHAINS]))
                 if ss[state.W_POSTERIOR] else None)
    return settings, posterior


def start_fit(spec, data, features, y, *, navigate: str | None = "rules", make_current: bool = True,
              compare_slot: str | None = None, result_id: str | None = None) -> None:
    """Start a fit job (MAP list, then the posterior when asked); ``result_id`` updates an existing fit.

    ``navigate``: the page the user is taken to at once, to watch the search there and read the list when it
    lands (the Rule list page waits for it: :func:`list_on_its_way`).  The page is switched here, in the run
    of the click, and never later from a run a progress poll started: see :func:`go_to`.
    """
    from dashboard import services

    stages = services.FIT_STAGES if spec.posterior is not None else services.FIT_STAGES[:1]
    label = "Fitting the list" if make_current else "Fitting the variant"
    job = jobs.Job("fit", label, stages, meta={"navigate": navigate, "make_current": make_current,
                                                 "compare_slot": compare_slot})
    from frl_engine.errors import FRLError

    try:
        state.start_job(job, services.fit_work(spec, data, features, y, result_id or state.new_id()))
    except FRLError as exc:  # another job of this session is still running
        st.warning(str(exc), icon=":material/hourglass_top:")
        return
    if navigate:
        # Safe although the job now runs: no other job ran (start_job refuses one), so no progress poll was
        # drawn in this run or the one before, and the browser has no poll timer that could fire late.
        st.switch_page(PAGES[navigate])


def go_to(page: str, label: str, icon: str | None = None) -> None:
    """Open ``page`` now, unless a progress poll may be ticking in the browser: then offer a link to it.

    A page switch made by the server while a ``run_every`` fragment polls in the browser can blank the
    page (Streamlit 1.67): the poll's timer may fire once more before the browser hears of the switch, and
    that request, queued behind the switch, runs as a fragment run of the *old* page.  The browser takes
    it for a page change and clears the new page; the next poll's element then lands in an empty page
    ("Bad delta path index"), the page throws and closes its connection.  A click on a link stops the
    browser's timers before it asks for the new page, so it is safe at any time.
    """
    if state.busy() is None:
        st.switch_page(PAGES[page])
    link(page, label, icon)


def list_on_its_way() -> jobs.Job | None:
    """The fit started from the Fit page whose list has not reached this session yet (the Rule list page waits for it).

    Judged by what this session has collected (:func:`dashboard.state.collect_jobs`), not by the job's own count:
    a list the job publishes after this run collected the jobs' results is still on its way until a run takes
    it.  Judged by the job's count, that gap showed "No rule list yet" without the page's title on a loaded
    machine.  A job that ended before its list (stopped, failed) is not on its way: :func:`fit_problem_note`.
    """
    job = state.job("fit")
    if job is None or not job.meta.get("navigate") or st.session_state[state.COLLECTED].get(job.id, 0) > 0:
        return None
    if job.done and job.version == 0:
        return None
    return job


def fit_problem_note() -> None:
    """Why the last fit started from the Fit page gave no new list (or no posterior): its error, or that it was
    stopped; the list fitted before (if any) stays the current one."""
    job = state.job("fit")
    if job is None or not job.done or not job.meta.get("navigate"):
        return
    error = st.session_state[state.FIT_ERROR]
    if job.stopped and job.version == 0:
        st.info(f"{job.label}: stopped after {job.elapsed():.0f} s, before the list was found.",
                icon=":material/stop_circle:")
    elif error:
        show_message(*error)
    else:
        return
    if st.session_state[state.FIT] is None:
        return  # the page goes on with "No rule list yet" and its link to the Fit page
    if job.version == 0:
        st.caption("The list below is the one fitted before.")
    link("fit", "Back to Fit", ":material/tune:")
