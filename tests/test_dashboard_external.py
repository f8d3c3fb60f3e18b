"""The External validation page (AppTest): a saved model or the current list on a second table."""

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from streamlit.testing.v1 import AppTest

from dashboard import jobs, services, state
from frl_engine.validation.external import validate_model
from test_validation_external import RISKS, hand_rules, model_dict, new_table

logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.fixture
def at(monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    app.switch_page("views/external.py").run()
    assert not app.exception
    return app


def csv_bytes(frame) -> bytes:
    return frame.to_csv(index=False).encode()


def open_model_file(app, model=None):
    app.radio(key=state.W_EXT_SOURCE).set_value(state.EXT_SOURCE_FILE).run()
    raw = json.dumps(model or model_dict()).encode()
    app.file_uploader(key=state.W_EXT_MODEL_FILE).set_value(("model.json", raw, "application/json")).run()
    assert not app.exception
    return app


def upload_new(app, frame, name="2025.csv"):
    app.file_uploader(key=state.W_EXT_DATA).set_value((name, csv_bytes(frame), "text/csv")).run()
    assert not app.exception
    return app


def table_with(app, column):
    tables = [d.value for d in app.dataframe if column in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def test_without_a_list_the_page_says_what_to_do(at):
    assert [t.value for t in at.title] == ["External validation"]
    assert any("No list yet" in i.value for i in at.info)


def test_a_saved_model_on_a_new_table_shows_the_engines_numbers(at):
    open_model_file(at)
    assert any("needs the outcome column **readmitted**" in i.value for i in at.info)
    frame = new_table(n=2500, seed=3)
    upload_new(at, frame)
    assert not at.error
    event = (frame["readmitted"] == "<30").to_numpy()
    auroc = roc_auc_score(event, np.asarray(RISKS)[hand_rules(frame)])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["AUROC"] == f"{auroc:.3f}" and metrics["Patients (events)"] == f"2,500 ({int(event.sum()):,})"
    headline = (at.success or at.warning)[0].value
    assert headline.startswith(f"**Externally validated: AUROC {auroc:.2f} (95% CI ")
    rules = table_with(at, "observed 95% CI")
    assert list(rules["patients"]) == [int((hand_rules(frame) == k).sum()) for k in range(3)]
    observed = [100 * event[hand_rules(frame) == k].mean() for k in range(3)]   # in percent, as the intervals
    assert np.allclose(rules["observed"], observed)
    assert len(at.get("plotly_chart")) == 2
    # subgroups
    at.selectbox(key=state.W_EXT_BY).set_value("Sex").run()
    assert not at.exception
    groups = table_with(at, "AUROC 95% CI")
    assert list(groups["group"]) == ["F", "M"] and groups["patients"].sum() == 2500


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.assign(readmitted="NO"), "has no events"),
    (lambda f: f.head(1), "has 1 row of patients"),
    (lambda f: f.drop(columns=["Ward"]), "lacks the column the model uses: 'Ward'"),
])
def test_bad_second_files_get_one_message_on_the_page(at, change, expected):
    open_model_file(at)
    upload_new(at, change(new_table(n=400, seed=4)), name="bad.csv")
    messages = [e.value for e in at.error]
    assert len(messages) == 1 and expected in messages[0] and messages[0].startswith("bad.csv")
    assert not at.metric


def test_a_new_table_that_names_and_writes_its_outcome_differently_is_matched_by_the_users_picks(at):
    open_model_file(at)
    frame = new_table(n=2500, seed=3)
    expected = validate_model(model_dict(), frame).overall.auroc
    renamed = frame.assign(readmit_30d=(frame["readmitted"] == "<30").map({True: "Yes", False: "No"}))
    upload_new(at, renamed.drop(columns=["readmitted"]))
    assert any("no column **readmitted**" in w.value for w in at.warning) and not at.metric
    at.selectbox(key=state.W_EXT_TARGET).set_value("readmit_30d").run()
    assert any("No patient here has **readmit\\_30d = \\<30**" in w.value for w in at.warning) and not at.metric
    at.selectbox(key=state.W_EXT_EVENT).set_value("Yes").run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["AUROC"] == f"{expected:.3f}"


def _later_patients(n):
    """Patients drawn as the bundled sample's were, with another seed (``sample_data/make_sample_data.py``)."""
    import importlib.util

    folder = Path(__file__).resolve().parents[1] / "sample_data"
    spec = importlib.util.spec_from_file_location("make_sample_data", folder / "make_sample_data.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    return generator.make_table(n, seed=7)


def test_the_current_list_is_validated_and_its_card_gets_the_line(at):
    frame = services.load_sample().frame
    at.switch_page("views/fit.py").run()
    at.session_state[state.W_POSTERIOR] = False
    at.run()
    at.button(key="fit_button").click().run()
    for job in at.session_state[state.JOBS].values():
        assert jobs.wait(job, 180)
    at.switch_page("views/external.py").run()
    at.radio(key=state.W_EXT_SOURCE).set_value(state.EXT_SOURCE_CURRENT).run()
    later = _later_patients(1000)   # new patients (the sample table's last rows were fitted on: not external)
    upload_new(at, later, name="later.csv")
    assert not at.error and not at.exception
    at.button(key="ext_keep").click().run()
    assert not at.exception
    block = at.session_state[state.FIT].model["external_validation"]
    assert block["n"] == 1000 and block["data_name"] == "later.csv" and "training_share" not in block
    fit_model = at.session_state[state.FIT].model
    from frl_engine.estimator import FallingRuleListClassifier

    risk = FallingRuleListClassifier.from_dict(fit_model).predict_proba(later.drop(columns=["Readmitted30d"]))
    assert block["auroc"] == pytest.approx(roc_auc_score(later["Readmitted30d"] == "yes", risk[:, 1]))
    assert any("card reads: externally validated" in c.value for c in at.caption)
    # the card's model ID (the model with its validation) is in the registry, linked to the fit's entry
    entry = services.registry_entry(fit_model)
    assert entry is not None and entry.external_validation["data_name"] == "later.csv"
    assert entry.parent_sha256 is not None
    # new patients on whom the top rule fails (none of them had the event): the page says what the card will
    # print, rule 1 flagged, not "every rule" (it read the block without the list)
    from frl_engine.card import external_line

    failing = later.copy()
    top = FallingRuleListClassifier.from_dict(fit_model).apply(later.drop(columns=["Readmitted30d"])) == 0
    failing.loc[top, "Readmitted30d"] = "no"
    upload_new(at, failing, name="later_top_rule.csv")
    at.button(key="ext_keep").click().run()
    validated = at.session_state[state.FIT].model
    flagged = validated["external_validation"]["flagged_rules"]
    assert 1 in flagged and len(flagged) < len(validated["rules"]) + 1, flagged
    caption = next(c.value for c in at.caption if "card reads:" in c.value).replace("\\", "")
    assert caption.endswith(external_line(validated)) and "every rule" not in caption, caption
    assert "there the observed risk disagrees with rule" in caption and "check" in caption
    # the very patients it was fitted on (the sample table, rows in another order): said, and not external
    upload_new(at, frame.sample(frac=1.0, random_state=1), name="training.csv")
    assert not at.error and not at.exception
    assert any(w.value.startswith("**Not an external validation: AUROC") for w in at.warning)
    assert sum("fitted on" in w.value for w in at.warning) == 1  # said once, not in two boxes
    assert "Each rule on its training patients" in [h.value for h in at.subheader]
    assert not any("Externally validated" in m.value for m in [*at.success, *at.warning])
    at.button(key="ext_keep").click().run()
    assert at.session_state[state.FIT].model["external_validation"]["same_as_training"] is True
    assert any("card reads: not externally validated (checked only on its training patients)" in c.value.replace("\\", "")
               for c in at.caption)
    # the training patients with a few cells corrected: no longer the very rows, but nearly all training patients
    edited = frame.copy()
    column = next(c for c in edited.columns if pd.api.types.is_numeric_dtype(edited[c]) and c != "PatientID")
    edited.loc[edited.index[:25], column] = edited.loc[edited.index[:25], column] + 1
    upload_new(at, edited, name="corrected.csv")
    assert not at.error and not at.exception
    share = next(w.value for w in at.warning if w.value.startswith("**Not an external validation: AUROC"))
    assert "of whom about 99% are patients the model was fitted on" in share.replace("\\", ""), share
    assert "Each rule on these patients" in [h.value for h in at.subheader]
    at.button(key="ext_keep").click().run()
    assert at.session_state[state.FIT].model["external_validation"]["training_share"] == pytest.approx(0.99, abs=0.01)
    assert any("card reads: not externally validated (about 99% of the patients it was checked on are its training "
               "patients)" in c.value.replace("\\", "") for c in at.caption)


def test_an_external_validation_on_the_card_survives_the_posterior_arriving_after_it():
    """The list arrives, the user validates it on a later table, then the same fit arrives with its posterior."""
    base = services.FitResult(id="fit-1", model=model_dict(), source="fit", label="first list")
    block = {"n": 1000, "auroc": 0.71, "data_name": "later.csv"}
    validated = services.FitResult(id="fit-1", model={**model_dict(), "external_validation": block},
                                   source="fit", label="first list")
    with_posterior = services.FitResult(id="fit-1", model={**model_dict(), "posterior": {"n_samples": 10}},
                                        source="fit", label="first list")
    kept = state.keep_external_validation(with_posterior, [validated])
    assert kept.model["external_validation"] == block and kept.model["posterior"] == {"n_samples": 10}
    assert "external_validation" not in with_posterior.model  # a copy: the arriving result is not changed
    # nothing to keep: another fit, or an earlier version that was never validated
    other = services.FitResult(id="fit-2", model=model_dict(), source="fit", label="second list")
    assert state.keep_external_validation(other, [validated]) is other
    assert state.keep_external_validation(with_posterior, [base]) is with_posterior
    # a newer validation on the arriving result wins over the earlier one
    newer = services.FitResult(id="fit-1", model={**model_dict(), "external_validation": {**block, "n": 5}},
                               source="fit", label="first list")
    assert state.keep_external_validation(newer, [validated]).model["external_validation"]["n"] == 5


def test_a_model_of_several_event_values_counts_any_of_them_on_the_new_table(at):
    """A model fitted on readmitted = <30 or >30 (``outcome.event_values``): every such patient is an event."""
    model = model_dict()
    model["outcome"] = {"target": "readmitted", "positive_class": "<30 or >30",
                        "classes": ["not <30 or >30", "<30 or >30"], "title": None, "event_values": ["<30", ">30"]}
    open_model_file(at, model)
    frame = new_table(n=2500, seed=4)
    upload_new(at, frame)
    assert not at.error and not at.exception
    event = frame["readmitted"].isin(["<30", ">30"]).to_numpy()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Patients (events)"] == f"2,500 ({int(event.sum()):,})"
    auroc = roc_auc_score(event, np.asarray(RISKS)[hand_rules(frame)])
    assert metrics["AUROC"] == f"{auroc:.3f}"
    assert not any("No patient here has" in w.value for w in at.warning)   # no event value to pick


def test_an_event_written_another_way_is_read_and_said_under_the_figures(at):
    model = model_dict()
    model["outcome"].update(positive_class="Y", classes=["N", "Y"])
    open_model_file(at, model)
    frame = new_table(n=1500, seed=6)
    event = (frame["readmitted"] == "<30").to_numpy()
    upload_new(at, frame.assign(readmitted=np.where(event, "yes", "no")))
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Patients (events)"] == f"1,500 ({int(event.sum()):,})"
    notes = [c.value for c in at.caption if "as written" in c.value]
    assert notes == ["Note: no cell of 'readmitted' holds the model's event 'Y' as written: 'yes' was read as the "
                     "event; if that is not the event in this table, name it (**Event value in this table**, above)."]
    # the page names its own control, not the command line's --positive, and the control is there
    picker = at.selectbox(key=state.W_EXT_EVENT)
    assert picker.value is None and set(picker.options) >= {"yes", "no"}
    picker.set_value("yes").run()
    assert not at.error and not [c.value for c in at.caption if "as written" in c.value]
    assert {m.label: m.value for m in at.metric}["Patients (events)"] == f"1,500 ({int(event.sum()):,})"
    picker.set_value("no").run()   # the user says the event is the other value: the figures follow
    assert {m.label: m.value for m in at.metric}["Patients (events)"] == f"1,500 ({int((~event).sum()):,})"


def test_repeated_records_in_the_new_table_are_said_and_left_out_on_request(at):
    import pandas as pd

    open_model_file(at)
    frame = new_table(n=1000, seed=4)
    frame["encounter_id"] = np.arange(1000) + 70_000
    upload_new(at, pd.concat([frame, frame.iloc[:100]]))
    assert any("100 of 1,100 rows" in w.value and "**encounter\\_id** included" in w.value for w in at.warning)
    assert {m.label: m.value for m in at.metric}["Patients (events)"].startswith("1,100 ")
    at.button(key="w_ext_drop_repeated_rows").click().run()
    assert not at.exception and not at.error
    assert not any("repeat an earlier row" in w.value for w in at.warning)
    event = (frame["readmitted"] == "<30").to_numpy()
    assert {m.label: m.value for m in at.metric}["Patients (events)"] == f"1,000 ({int(event.sum()):,})"


def test_a_handful_of_new_patients_is_said_to_be_too_few_to_judge_the_list(at):
    """Three new patients, one with the event: the figures are shown, but the banner says they are too few to judge
    the list instead of "Externally validated", and the note says why."""
    open_model_file(at)
    frame = new_table(n=500, seed=5)
    events = frame["readmitted"] == "<30"
    upload_new(at, pd.concat([frame[events].head(1), frame[~events].head(2)]), name="three.csv")
    assert not at.error and not at.exception
    assert any(w.value.startswith("**Too few new patients to judge the list: AUROC") for w in at.warning)
    assert not any("Externally validated" in m.value for m in [*at.success, *at.warning])
    assert any("only 1 of these patients has the event" in c.value for c in at.caption)
    upload_new(at, frame, name="enough.csv")
    assert not any("Too few new patients" in w.value for w in at.warning)


def test_a_table_without_the_rules_columns_is_said_before_its_outcome_is_asked_for(at):
    """A table left from another data set (no 'readmitted', no 'Ward'): the page asked for its outcome and event
    first, and only then said that it lacks the columns the rules use."""
    open_model_file(at)
    other = pd.DataFrame({"age": np.arange(60) % 40 + 30, "chd69": np.arange(60) % 2})
    upload_new(at, other, name="wcgs.csv")
    assert any("wcgs.csv lacks the columns the model uses: 'Age', 'BedSores', 'Ward'" in e.value
               and "did you mean 'age' for 'Age'" in e.value for e in at.error), [e.value for e in at.error]
    assert not any("Outcome column in this table" == s.label for s in at.selectbox)
