"""Every session-state key of the dashboard, in one place, and the code that moves results into them.

Two kinds of keys:

* results (``DATA``, ``FIT``, ``HISTORY``, ``VALIDATION`` ...): plain values the
  app writes; the last good one stays until a new good one replaces it, so a bad
  upload or a failed fit never loses earlier work;
* widget keys (``W_*``): created with ``persist_state=PERSIST`` ("session") so a
  value survives page switches; :func:`init` sets their defaults once (widgets
  are then created without ``value=``).
"""

from __future__ import annotations

import itertools

import streamlit as st

from dashboard import jobs

# ---------------------------------------------------------------- results
DATA = "data"  # services.LoadedData: the last good table
DATA_ERROR = "data_error"  # message about the last upload that failed (None when fine)
UPLOAD_SEEN = "upload_seen"  # file id of the last upload processed
PENDING_UPLOAD = "pending_upload"  # (name, bytes) of an upload not read yet (the user may have left the page)
COLUMN_TABLES = "column_tables"  # data key -> the edited column table (DataFrame)
FIT = "fit"  # services.FitResult: the current list
FIT_ERROR = "fit_error"  # (message, detail) of the last fit that failed
HISTORY = "history"  # list of FitResult, oldest first: every fit of the session (Compare page)
VALIDATION = "validation"  # services.ValidationResult: the last cross-validation
VALIDATION_ERROR = "validation_error"
JOBS = "jobs"  # kind -> jobs.Job (at most one running per kind)
COLLECTED = "collected"  # job id -> number of its results already moved into the state
PATIENT = "patient_check"  # the last "which rule applies" answer
COMPARE = "compare_pair"  # (id A, id B) shown on the Compare page
MODEL_FILE_SEEN = "model_file_seen"
MODEL_FILE_ERROR = "model_file_error"
TIMINGS = "timings"  # measured durations (s) shown in the footer of the list page
REGISTRY_ERROR = "registry_error"  # why the last fit could not be kept in the model registry (None when fine)

# ---------------------------------------------------------------- widgets
W_SOURCE = "w_source"
W_UPLOAD = "w_upload"  # file uploader (its value cannot be set, only read)
W_TARGET = "w_target"
W_EVENT = "w_event"
W_EVENT_ALSO = "w_event_also"  # further outcome values that count as the event (an outcome of 3 or more values)
W_LAM = "w_lam"
W_SUPPORT = "w_support"  # percent
W_MAX_CONDITIONS = "w_max_conditions"
W_N_THRESHOLDS = "w_n_thresholds"  # quantile thresholds per numeric column
W_STEPS = "w_steps"
W_CHAINS = "w_chains"
W_SEED = "w_seed"
W_POSTERIOR = "w_posterior"
W_POST_SAMPLES = "w_post_samples"
#: The most samples per chain the Fit page takes.
MAX_POST_SAMPLES = 100_000
W_POST_CHAINS = "w_post_chains"
W_CV_FOLDS = "w_cv_folds"
W_CV_METHODS = "w_cv_methods"
W_CV_SEED = "w_cv_seed"
W_CARD_SIZE = "w_card_size"
W_CARD_TITLE = "w_card_title"
W_MODEL_FILE = "w_model_file"
W_COMPARE_A = "w_compare_a"
W_COMPARE_B = "w_compare_b"
W_VAR_LAM = "w_var_lam"
W_VAR_SUPPORT = "w_var_support"
W_VAR_MAX_CONDITIONS = "w_var_max_conditions"
W_VAR_STEPS = "w_var_steps"
W_VAR_SEED = "w_var_seed"
W_MODELS_FIND = "w_models_find"  # Models page: a model ID (prefix) typed from a card
W_MODELS_ALL = "w_models_all"  # Models page: also list retired models
W_MODELS_PICK = "w_models_pick"  # Models page: the entry shown in detail

SOURCE_SAMPLE = "Sample data (30-day readmissions)"
SOURCE_UPLOAD = "Upload a file"

WIDGET_DEFAULTS = {
    W_SOURCE: SOURCE_SAMPLE,
    W_LAM: 8.0,
    W_SUPPORT: 5.0,
    W_MAX_CONDITIONS: 2,
    W_N_THRESHOLDS: 3,
    W_STEPS: 5000,
    W_CHAINS: 4,
    W_SEED: 0,
    W_POSTERIOR: True,
    W_POST_SAMPLES: 1_000,
    W_POST_CHAINS: 4,
    W_CV_FOLDS: 5,
    W_CV_METHODS: ["frl", "logreg", "cart", "rf", "svm", "hgb"],
    W_CV_SEED: 0,
    W_CARD_SIZE: "index",
    W_CARD_TITLE: "",
    W_VAR_LAM: 3.0,
    W_VAR_SUPPORT: 10.0,
    W_VAR_MAX_CONDITIONS: 2,
    W_VAR_STEPS: 5000,
    W_VAR_SEED: 0,
    W_MODELS_FIND: "",
    W_MODELS_ALL: False,
}
# Widgets keep their value for the whole session, across page switches.
PERSIST = "session"

# ---------------------------------------------------------------- external validation page (views/external.py)
EXT_DATA = "ext_data"  # services.LoadedData: the new patients' table
EXT_DATA_SEEN = "ext_data_seen"
EXT_DATA_ERROR = "ext_data_error"
EXT_MODEL = "ext_model"  # services.FitResult of a model file opened on that page (the current list is not replaced)
EXT_MODEL_SEEN = "ext_model_seen"
EXT_MODEL_ERROR = "ext_model_error"
W_EXT_SOURCE = "w_ext_source"
W_EXT_MODEL_FILE = "w_ext_model_file"
W_EXT_DATA = "w_ext_data"
W_EXT_BY = "w_ext_by"
W_EXT_TARGET = "w_ext_target"  # the new table's outcome column, when it is not named as at fit time
W_EXT_EVENT = "w_ext_event"  # the new table's event value, when it is not written as at fit time
EXT_SOURCE_CURRENT = "The current list"
EXT_SOURCE_FILE = "A saved model file"
WIDGET_DEFAULTS.update({W_EXT_SOURCE: EXT_SOURCE_CURRENT, W_EXT_BY: None, W_EXT_TARGET: None, W_EXT_EVENT: None})

RESULT_DEFAULTS = {
    DATA: None, DATA_ERROR: None, UPLOAD_SEEN: None, PENDING_UPLOAD: None, FIT: None, FIT_ERROR: None, VALIDATION: None,
    VALIDATION_ERROR: None, PATIENT: None, COMPARE: None, MODEL_FILE_SEEN: None,
    MODEL_FILE_ERROR: None, REGISTRY_ERROR: None,
}

RESULT_DEFAULTS.update({EXT_DATA: None, EXT_DATA_SEEN: None, EXT_DATA_ERROR: None, EXT_MODEL: None,
                        EXT_MODEL_SEEN: None, EXT_MODEL_ERROR: None})

_ids = itertools.count(1)


def init() -> None:
    """Set every key's default once per session."""
    ss = st.session_state
    for key, value in RESULT_DEFAULTS.items():
        if key not in ss:
            ss[key] = value
    for key, factory in ((COLUMN_TABLES, dict), (HISTORY, list), (JOBS, dict), (COLLECTED, dict), (TIMINGS, dict)):
        if key not in ss:
            ss[key] = factory()
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = list(value) if isinstance(value, list) else value


def new_id(prefix: str = "fit") -> str:
    return f"{prefix}-{next(_ids)}"


# ---------------------------------------------------------------- data
def set_data(data) -> None:
    """A new good table replaces the old one; the outcome picker starts from the suggested column."""
    from dashboard import services

    ss = st.session_state
    ss[DATA] = data
    ss[DATA_ERROR] = None
    target = services.suggest_target(data.frame)
    if data.is_sample and services.SAMPLE_TARGET in data.frame.columns:
        target = services.SAMPLE_TARGET
    ss[W_TARGET] = target
    reset_event()


def reset_event() -> None:
    from dashboard import services

    ss = st.session_state
    data, target = ss.get(DATA), ss.get(W_TARGET)
    ss[W_EVENT_ALSO] = []
    if data is not None and target in data.frame.columns:
        ss[W_EVENT] = services.plain(services.suggest_event(data.frame[target]))
    else:
        ss[W_EVENT] = None


def column_table(data):
    """The (possibly edited) column table of this data, starting from the engine's defaults."""
    from dashboard import services

    tables = st.session_state[COLUMN_TABLES]
    if data.key not in tables:
        tables[data.key] = services.profile_columns_cached(data.key, data.frame).copy()
    return tables[data.key]


def store_column_table(data, table) -> None:
    st.session_state[COLUMN_TABLES][data.key] = table


# ---------------------------------------------------------------- jobs
def job(kind: str) -> jobs.Job | None:
    return st.session_state[JOBS].get(kind)


def running(kind: str) -> bool:
    current = job(kind)
    return current is not None and not current.done


def busy() -> jobs.Job | None:
    """The session's running job, if any: a session runs one heavy job at a time."""
    candidates = list(st.session_state[JOBS].values())
    candidates += [v for v in st.session_state.values() if isinstance(v, jobs.Job)]  # e.g. the Explore page's
    for job_obj in candidates:
        if not job_obj.done:
            return job_obj
    return None


def busy_message(current: jobs.Job) -> str:
    return (f"{current.label} is still running in this session: stop it (the Stop button under its progress bar) "
            "or wait for it, then start this.")


def start_job(job_obj: jobs.Job, work) -> jobs.Job:
    """Start a background job of this session; FRLError if another one is still running (one heavy job at a time)."""
    from frl_engine.errors import FRLError

    current = busy()
    if current is not None:
        raise FRLError(busy_message(current))
    st.session_state[JOBS][job_obj.kind] = job_obj
    if job_obj.kind == "fit":
        st.session_state[FIT_ERROR] = None
    if job_obj.kind == "validation":
        st.session_state[VALIDATION_ERROR] = None
    return jobs.start(job_obj, work)


def collect_jobs() -> bool:
    """Move results the background jobs published into the session state (script thread only).

    Returns True when something new arrived.
    """
    ss = st.session_state
    changed = False
    for kind, job_obj in list(ss[JOBS].items()):
        seen = ss[COLLECTED].get(job_obj.id, 0)
        version = job_obj.version
        if version > seen:
            result = job_obj.latest()
            ss[COLLECTED][job_obj.id] = version
            changed = True
            if kind == "fit":
                _accept_fit(result, first=(seen == 0), job_obj=job_obj)
            elif kind == "validation":
                _accept_validation(result)
        if job_obj.done and job_obj.failed and not ss[COLLECTED].get(job_obj.id + ":error"):
            ss[COLLECTED][job_obj.id + ":error"] = 1
            changed = True
            if kind == "fit":
                message = job_obj.error
                if job_obj.version:  # the list itself arrived; only the posterior failed
                    message = f"The list was fitted, but its posterior could not be sampled: {message}"
                ss[FIT_ERROR] = (message, job_obj.error_detail)
            else:
                ss[VALIDATION_ERROR] = (job_obj.error, job_obj.error_detail)
    return changed


def keep_external_validation(result, history):
    """``result`` carrying the external validation that an earlier version of the same fit had.

    A fit arrives twice: the list, then the list with its posterior.  An external validation put on the
    card in between belongs to the same list, so the second arrival keeps it (a copy; nothing is changed
    in place).  Any other result is returned as it is.
    """
    earlier = next((old for old in history if old.id == result.id), None)
    if earlier is None or not earlier.model.get("external_validation") or result.model.get("external_validation"):
        return result
    import copy
    import dataclasses

    model = copy.deepcopy(result.model)
    model["external_validation"] = earlier.model["external_validation"]
    return dataclasses.replace(result, model=model)


def _accept_fit(result, *, first: bool, job_obj: jobs.Job) -> None:
    ss = st.session_state
    validation = ss[VALIDATION]
    if validation is not None and validation.fit_id == result.id and not result.model.get("validation"):
        result = result.with_validation(validation.model_block())  # a posterior sampled after validating
    result = keep_external_validation(result, ss[HISTORY])
    if job_obj.meta.get("make_current", True):
        ss[FIT] = result
        ss[PATIENT] = None
    history = ss[HISTORY]
    for index, old in enumerate(history):
        if old.id == result.id:
            history[index] = result
            register(result, parent=old)
            break
    else:
        history.append(result)
        del history[:-12]  # keep the last dozen fits
        register(result)
    if first:
        ss[TIMINGS]["fit_to_result"] = job_obj.elapsed()
        if job_obj.meta.get("compare_slot"):
            ss[W_COMPARE_B if job_obj.meta["compare_slot"] == "B" else W_COMPARE_A] = result.id


def _accept_validation(result) -> None:
    ss = st.session_state
    ss[VALIDATION] = result
    fit = ss[FIT]
    if fit is not None and fit.id == result.fit_id and "frl" in result.evaluation.methods:
        updated = fit.with_validation(result.model_block())
        ss[FIT] = updated
        ss[HISTORY] = [updated if f.id == fit.id else f for f in ss[HISTORY]]
        register(updated, parent=fit)


def register(result, parent=None) -> None:
    """Keep a fit made here in the model registry; a registry that cannot be used is reported, not fatal."""
    from dashboard import services
    from frl_engine.errors import FRLError

    if result.source != "fit":
        return
    try:
        services.register_fit(result, parent)
        st.session_state[REGISTRY_ERROR] = None
    except FRLError as exc:
        st.session_state[REGISTRY_ERROR] = f"This fit could not be kept in the model registry: {exc}"


def accept_model_file(result) -> None:
    """A model loaded from a file becomes the current list (and joins the history)."""
    ss = st.session_state
    ss[FIT] = result
    ss[PATIENT] = None
    ss[HISTORY].append(result)
    del ss[HISTORY][:-12]


def find_fit(fit_id: str):
    for fit in st.session_state[HISTORY]:
        if fit.id == fit_id:
            return fit
    return None


def attach_external_validation(fit_id: str, block: dict) -> None:
    """Keep an external validation in the model of fit ``fit_id`` (current list and history), for the card; the
    model with it (the card's model ID) is registered, linked to the fit's entry, as cross-validation's is."""
    import copy
    import dataclasses

    ss = st.session_state

    def updated(fit):
        model = copy.deepcopy(fit.model)
        model["external_validation"] = block
        return dataclasses.replace(fit, model=model)

    before = next((f for f in [ss[FIT], *ss[HISTORY]] if f is not None and f.id == fit_id), None)
    if ss[FIT] is not None and ss[FIT].id == fit_id:
        ss[FIT] = updated(ss[FIT])
    ss[HISTORY] = [updated(f) if f.id == fit_id else f for f in ss[HISTORY]]
    if before is not None:   # the card now prints another model ID: kept in the registry, linked to the fit
        register(updated(before), parent=before)
