"""The dashboard and the model registry: every fit kept under its card's ID, the Models page, the entry shown
on the card and validation pages (Streamlit's AppTest; a throw-away registry file per test)."""

import hashlib
import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import services, state
from frl_engine.card import model_identifier
from frl_engine.registry import Registry

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

from test_dashboard import APP, SAMPLE, errors, finish_jobs, fit, shown_rules  # noqa: E402

pytestmark = pytest.mark.skipif(not SAMPLE.is_file(), reason="sample_data/readmission.csv is not generated yet")


@pytest.fixture
def registry_path(tmp_path, monkeypatch):
    path = tmp_path / "registry.db"
    monkeypatch.setenv("FRL_REGISTRY", str(path))
    return path


@pytest.fixture
def at(registry_path, monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    assert not app.exception
    return app


def captions(app):
    return " ".join(c.value for c in app.caption)


def test_a_dashboard_fit_is_registered_under_its_card_id_with_its_data_and_settings(at, registry_path):
    result = fit(at, **{state.W_POSTERIOR: False})
    [entry] = Registry(registry_path).entries()
    assert entry.model_id == model_identifier(result.model)
    assert entry.model_bytes == services.model_json(result.model)  # what the card page downloads
    assert entry.created_by == "dashboard" and entry.seed == 0 and entry.posterior is None
    assert entry.data.sha256 == hashlib.sha256(Path(SAMPLE).read_bytes()).hexdigest()
    assert (entry.data.name, entry.data.n_rows, entry.data.outcome, entry.data.event) == (
        "readmission.csv", result.data.n_rows, "Readmitted30d", "yes")
    assert "PatientID" in entry.hyperparameters["exclude"] and entry.hyperparameters["n_steps"] == 5000
    at.switch_page("views/card.py").run()
    assert not at.exception
    assert f"Registry: model ID {entry.model_id}" in captions(at) and "readmission.csv" in captions(at)
    # Its posterior sampled later changes the model (the card shows intervals): a new entry extending the first.
    at.switch_page("views/posterior.py").run()
    at.button(key="posterior_button").click().run()
    finish_jobs(at)
    sampled = at.session_state[state.FIT]
    latest, first = Registry(registry_path).entries()
    assert first.sha256 == entry.sha256 and latest.parent_sha256 == entry.sha256
    assert latest.model_id == model_identifier(sampled.model) and latest.posterior == sampled.model["posterior"]
    at.switch_page("views/card.py").run()
    assert f"Registry: model ID {latest.model_id}" in captions(at)


def test_the_models_page_finds_opens_and_retires(at, registry_path):
    result = fit(at, **{state.W_POSTERIOR: False})
    model_id = model_identifier(result.model)
    at.switch_page("views/models.py").run()
    assert not at.exception and not errors(at)
    table = at.dataframe[0].value
    assert list(table["Model ID"]) == [model_id]
    assert table["Data"][0] == f"readmission.csv ({result.data.n_rows:,} rows)"
    # Found by the first digits typed from a card.
    at.text_input(key=state.W_MODELS_FIND).set_value(model_id[:6].upper()).run()
    assert list(at.dataframe[0].value["Model ID"]) == [model_id]
    at.text_input(key=state.W_MODELS_FIND).set_value("0000000000").run()
    assert any("No model with ID" in e for e in errors(at))
    at.text_input(key=state.W_MODELS_FIND).set_value("").run()
    # A note written on the page is kept with the model.
    at.text_input(key=f"models_note_{model_id}").set_value("printed for ward 7").run()
    at.button(key="models_save_note").click().run()
    assert not at.exception and Registry(registry_path).get(model_id).note == "printed for ward 7"
    assert list(at.dataframe[0].value["Note"]) == ["printed for ward 7"]
    # A second fit; open the first again as the current list.
    second = fit(at, **{state.W_POSTERIOR: False, state.W_SEED: 7, state.W_STEPS: 1000})
    assert model_identifier(second.model) != model_id
    at.switch_page("views/models.py").run()
    assert len(at.dataframe[0].value) == 2
    at.selectbox(key=state.W_MODELS_PICK).set_value(model_id).run()
    at.button(key="models_open").click().run()
    assert not at.exception
    current = at.session_state[state.FIT]
    assert current.model == result.model and current.source == "file"
    at.switch_page("views/rules.py").run()
    assert shown_rules(at) == result.rules
    # Retire it: gone from the list, back with "Show retired models", still in the store.
    at.switch_page("views/models.py").run()
    at.selectbox(key=state.W_MODELS_PICK).set_value(model_id).run()
    at.button(key="models_retire").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value["Model ID"]) == [model_identifier(second.model)]
    at.toggle(key=state.W_MODELS_ALL).set_value(True).run()
    shown = at.dataframe[0].value
    assert set(shown["Model ID"]) == {model_id, model_identifier(second.model)}
    assert bool(shown.loc[shown["Model ID"] == model_id, "Retired"].iloc[0])
    assert Registry(registry_path).get(model_id).retired


def test_cross_validation_in_the_dashboard_is_registered_and_shown(at, registry_path):
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/validation.py").run()
    at.session_state[state.W_CV_FOLDS] = 3
    at.session_state[state.W_CV_METHODS] = ["frl"]
    at.run()
    at.button(key="cv_button").click().run()
    finish_jobs(at)
    validated = at.session_state[state.FIT]
    entry = Registry(registry_path).get(model_identifier(validated.model))
    assert entry.cross_validation == validated.model["validation"] and entry.cv_auroc is not None
    assert f"Registry: model ID {entry.model_id}" in captions(at) and f"AUROC {entry.cv_auroc:.3f} cv" in captions(at)


def test_a_broken_registry_never_stops_a_fit(at, registry_path):
    registry_path.write_bytes(b"this is not a database " * 100)
    result = fit(at, **{state.W_POSTERIOR: False})
    assert result is not None and result.rules
    assert "not an SQLite database" in at.session_state[state.REGISTRY_ERROR]
    at.switch_page("views/models.py").run()
    assert not at.exception and any("not an SQLite database" in e for e in errors(at))
    at.switch_page("views/card.py").run()
    assert not at.exception and "Model registry:" in captions(at)
    assert registry_path.read_bytes() == b"this is not a database " * 100


def test_opening_a_model_while_a_job_runs_links_to_the_list_instead_of_switching_pages(at, registry_path):
    """A page switch made by the server while a progress poll ticks in the browser can blank the page
    (``ui.go_to``): with a job running, Open makes the model current and offers a link to the list."""
    import threading

    from dashboard import jobs

    result = fit(at, **{state.W_POSTERIOR: False})
    second = fit(at, **{state.W_POSTERIOR: False, state.W_SEED: 7, state.W_STEPS: 1000})
    release = threading.Event()

    def validation_under_way(job):  # a real background job of this session, running until released
        while not release.wait(0.05):
            job.token.check()

    job = jobs.Job("validation", "Cross-validating", ["folds"])
    at.session_state[state.JOBS]["validation"] = jobs.start(job, validation_under_way)
    try:
        at.switch_page("views/models.py").run()
        at.selectbox(key=state.W_MODELS_PICK).set_value(model_identifier(result.model)).run()
        at.button(key="models_open").click().run()
        assert not at.exception and not job.done
        assert [t.value for t in at.title] == ["Models"]  # not switched while the job's poll ticks
        assert any(link.proto.label == "Read the rule list" for link in at.get("page_link"))
        assert at.session_state[state.FIT].source == "file"
    finally:
        release.set()
        assert jobs.wait(job, 10)
    at.run()  # with nothing running, Open switches to the list at once
    at.selectbox(key=state.W_MODELS_PICK).set_value(model_identifier(second.model)).run()
    at.button(key="models_open").click().run()
    assert [t.value for t in at.title] == ["Falling rule list"] and not at.exception


def test_the_models_page_opens_on_this_sessions_list_not_the_newest_of_a_shared_registry(at, registry_path):
    """On a shared server the newest entry may be another user's fit: the page shows this session's list first."""
    import copy

    result = fit(at, **{state.W_POSTERIOR: False})
    other = copy.deepcopy(result.model)
    other["default"]["probability"] *= 0.5  # another user's model (its risks still fall), registered after ours
    newer = Registry(registry_path).register(other, created_by="cli", note="another user's fit")
    assert Registry(registry_path).entries()[0].model_id == newer.model_id  # the newest is listed first
    at.switch_page("views/models.py").run()
    assert not at.exception
    assert at.selectbox(key=state.W_MODELS_PICK).value == model_identifier(result.model)
    assert any("the current list" in m.value for m in at.markdown)
