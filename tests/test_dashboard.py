"""Page logic of the dashboard, driven by Streamlit's AppTest (no browser).

Widgets are found by key; every run must end without an exception; the list the
dashboard shows must be the list the engine fits directly with the same settings.
"""

import json
import logging
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from streamlit.testing.v1 import AppTest

from dashboard import jobs, services, state, ui
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.io import read_table, split_target

# Quiet: the cached services are called outside a Streamlit runtime here.
logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)  # "No runtime found"

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
SAMPLE = services.SAMPLE_PATH

pytestmark = pytest.mark.skipif(not SAMPLE.is_file(), reason="sample_data/readmission.csv is not generated yet")


@pytest.fixture
def at(monkeypatch):
    monkeypatch.setenv("FRL_DASHBOARD_WARMUP", "0")
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    assert not app.exception
    return app


def finish_jobs(app, timeout=180):
    """Wait for the background jobs, then rerun so their results reach the page."""
    for job in list(app.session_state[state.JOBS].values()):
        assert jobs.wait(job, timeout), f"job {job.label} did not finish"
    app.run()
    assert not app.exception


def errors(app):
    return [e.value for e in app.error]


def shown_rules(app):
    """The conditions column of the list table on the page, top first (ELSE left out)."""
    html = app.get("html")
    tables = [h.proto.body for h in html if "frl-list" in h.proto.body]
    assert tables, "no rule list on the page"
    cells = re.findall(r'<td class="frl-cond">(.*?)</td>', tables[0])
    rules = []
    for cell in cells:
        if "frl-else" in cell:
            continue
        parts = re.findall(r'<span class="frl-c">(.*?)</span>', cell)
        rules.append(" AND ".join(p.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&") for p in parts))
    return rules


def fit(app, **widgets):
    app.switch_page("views/fit.py").run()
    for key, value in {"w_post_samples": 200, **widgets}.items():
        app.session_state[key] = value
    app.run()
    assert not app.exception and not errors(app)
    app.button(key="fit_button").click().run()
    assert not app.exception
    assert [t.value for t in app.title] == ["Falling rule list"]  # pressing Fit opens the list page at once
    app.switch_page("views/rules.py")  # where the browser now is (AppTest's later runs keep their own page)
    finish_jobs(app)
    return app.session_state[state.FIT]


def engine_fit(**params):
    frame = read_table(SAMPLE)
    features, y, _ = split_target(frame, services.SAMPLE_TARGET)
    settings = dict(lam=8.0, min_support=0.05, max_conditions=2, n_steps=5000, n_chains=4, random_state=0,
                    exclude=("PatientID",))
    settings.update(params)
    return FallingRuleListClassifier(**settings).fit(features, y)


def upload(app, name, raw, mime="text/csv"):
    app.switch_page("views/data.py").run()
    app.radio(key=state.W_SOURCE).set_value(state.SOURCE_UPLOAD).run()
    app.file_uploader(key=state.W_UPLOAD).set_value((name, raw, mime)).run()
    assert not app.exception
    return app


# ------------------------------------------------------------------ data page
def test_data_page_starts_on_the_sample(at):
    assert [t.value for t in at.title] == ["Data"]
    data = at.session_state[state.DATA]
    assert data.is_sample and data.n_rows > 1000
    assert at.selectbox(key=state.W_TARGET).value == services.SAMPLE_TARGET
    assert at.selectbox(key=state.W_EVENT).value == "yes"
    columns = at.session_state[state.COLUMN_TABLES][data.key].set_index("column")
    assert not columns.loc["PatientID", "use"]  # identifiers are left out by default
    assert columns.loc["Age", "kind"] == "numeric"
    items = [d for d in at.dataframe if "item" in d.value.columns]
    assert items and "PatientID" not in set(items[0].value["column"])
    assert not errors(at)


def test_changing_the_outcome_resets_the_event(at):
    at.selectbox(key=state.W_TARGET).set_value("BedSores").run()
    assert not at.exception
    assert at.selectbox(key=state.W_EVENT).value == "yes"
    at.selectbox(key=state.W_TARGET).set_value("DischargeTo").run()
    assert at.selectbox(key=state.W_EVENT).value is None
    assert any("pick which value counts as the event" in e for e in errors(at))
    at.selectbox(key=state.W_EVENT).set_value("home").run()
    assert not errors(at) and not at.exception


# ------------------------------------------------------------------ fitting and the list
def test_fit_shows_the_engines_list(at):
    result = fit(at)
    assert [t.value for t in at.title] == ["Falling rule list"]  # the page switches to the list
    engine = engine_fit()
    assert result.rules == engine.rules_
    assert shown_rules(at) == engine.rules_
    risks = [r["probability"] for r in result.model["rules"]] + [result.model["default"]["probability"]]
    assert risks == pytest.approx(list(engine.probabilities_))
    assert result.has_posterior  # sampled after the list was published
    assert len(at.get("plotly_chart")) == 2


def test_changing_a_setting_does_not_refit(at):
    first = fit(at)
    at.switch_page("views/fit.py").run()
    at.slider(key=state.W_LAM).set_value(3.0).run()
    assert not at.exception
    assert at.session_state[state.FIT] is first and not state_running(at)
    assert any("Nothing refits until you press" in c.value for c in at.caption)


def state_running(app):
    job = app.session_state[state.JOBS].get("fit")
    return job is not None and not job.done


def test_other_settings_give_the_engines_list_too(at):
    result = fit(at, **{state.W_LAM: 3.0, state.W_SUPPORT: 10.0, state.W_SEED: 7, state.W_POSTERIOR: False})
    assert result.rules == engine_fit(lam=3.0, min_support=0.1, random_state=7).rules_
    assert not result.has_posterior


def test_thresholds_per_number_on_the_fit_page_reach_the_engine(at):
    at.switch_page("views/fit.py").run()
    counts = {}
    for n in (1, 9):
        at.session_state[state.W_N_THRESHOLDS] = n
        at.run()
        line = next(m.value for m in at.markdown if ":material/rule:" in m.value)
        counts[n] = int(re.search(r"\*\*([\d,]+) candidate rules", line).group(1).replace(",", ""))
    assert counts[1] < counts[9]  # more cut points per number, more candidate rules
    result = fit(at, **{state.W_N_THRESHOLDS: 9, state.W_POSTERIOR: False})
    assert result.spec.settings.n_thresholds == 9
    assert result.rules == engine_fit(n_thresholds=9).rules_


def charts_pct(p):
    from dashboard import charts

    return charts.pct(p)


def test_patient_lookup_finds_the_rule(at):
    result = fit(at)
    at.switch_page("views/rules.py").run()  # AppTest keeps requesting the page it last switched to
    model = result.model
    first = model["rules"][0]
    # Fill in a patient who satisfies the top rule's conditions.
    for cond in first["conditions"]:
        key = "pt_" + cond["column"]
        if cond["op"] == "is true":
            at.selectbox(key=key).set_value("yes")
        elif cond["op"] == "==":
            at.selectbox(key=key).set_value(cond["value"])
        elif cond["op"] == ">=":
            at.number_input(key=key).set_value(float(cond["value"]) + 1)
        elif cond["op"] == "<":
            at.number_input(key=key).set_value(float(cond["value"]) - 1)
    at.button(key="patient_submit").click().run()
    assert not at.exception
    assert any(s.value.startswith("**Rule 1 applies: IF") for s in at.success)
    html = [h.proto.body for h in at.get("html") if "frl-list" in h.proto.body][0]
    assert html.count('<tr class="frl-hit">') == 1
    assert not any("rests on values left unknown" in w.value for w in at.warning)   # rule 1: nothing above it
    # every field left unknown: the ELSE line, the lowest risk, with a caution naming the top rule and its risk
    for cond in first["conditions"]:
        widget = (at.number_input(key="pt_" + cond["column"]) if cond["op"] in (">=", "<")
                  else at.selectbox(key="pt_" + cond["column"]))
        widget.set_value(None)
    at.button(key="patient_submit").click().run()
    assert any(s.value.startswith("**No rule matched, so the ELSE line applies**") for s in at.success)
    caution = [w.value for w in at.warning if "rests on values left unknown" in w.value]
    top = charts_pct(model["rules"][0]["probability"])
    assert len(caution) == 1 and f"rule 1 (" in caution[0] and f"risk **{top}**" in caution[0], caution


def test_a_failed_posterior_keeps_the_new_list_and_says_what_failed(at, monkeypatch):
    def broken(*args, **kwargs):
        raise services.FRLError("simulated: the sampler refused")

    monkeypatch.setattr(services, "sample_posterior", broken)
    result = fit(at)
    assert result is not None and not result.has_posterior
    at.switch_page("views/fit.py").run()
    assert any(e.startswith("The list was fitted, but its posterior could not be sampled: simulated")
               for e in errors(at))


def test_a_failed_fit_keeps_the_earlier_list(at, monkeypatch):
    first = fit(at)

    def broken(*args, **kwargs):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(services, "fit_estimator", broken)
    at.switch_page("views/fit.py").run()
    at.session_state[state.W_SEED] = 99
    at.run()
    at.button(key="fit_button").click().run()
    finish_jobs(at)
    assert at.session_state[state.FIT] is first
    assert jobs.GENERIC_ERROR in errors(at)
    assert "simulated crash" not in " ".join(errors(at))  # no internals in the message itself
    # The Rule list page, where pressing Fit took the user, says so too, above the list fitted before.
    at.switch_page("views/rules.py").run()
    assert jobs.GENERIC_ERROR in errors(at) and not at.exception
    assert any("the one fitted before" in c.value for c in at.caption)
    assert shown_rules(at) == first.rules


# ------------------------------------------------------------------ bad input
BAD_FILES = [
    ("empty.csv", b"", "is empty"),
    ("header.csv", b"Age,Outcome\n", "header but no rows"),
    ("dups.csv", b"Age,Age,Outcome\n1,2,yes\n", "duplicate column names"),
    ("notes.rds", b"Age,Outcome\n1,yes\n", "unsupported file type"),
    ("garbage.xlsx", b"this is not a spreadsheet", "could not be read"),
]


@pytest.mark.parametrize("name, raw, words", BAD_FILES)
def test_bad_files_show_a_message_and_keep_the_data(at, name, raw, words):
    before = at.session_state[state.DATA]
    upload(at, name, raw)
    assert any(words in e for e in errors(at)), errors(at)
    assert at.session_state[state.DATA] is before
    assert any("Still using" in c.value for c in at.caption)


def _table(n=300, seed=0, **extra):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"Age": rng.integers(20, 90, n), "Smoker": rng.choice(["yes", "no"], n),
                          "Outcome": rng.choice(["yes", "no"], n, p=[0.3, 0.7])})
    for name, values in extra.items():
        frame[name] = values
    return frame


def test_a_good_upload_replaces_the_data_and_a_bad_one_then_keeps_it(at):
    upload(at, "mine.csv", _table().to_csv(index=False).encode())
    assert at.session_state[state.DATA].name == "mine.csv"
    assert at.selectbox(key=state.W_TARGET).value == "Outcome" and not errors(at)
    at.file_uploader(key=state.W_UPLOAD).set_value(("bad.csv", b"", "text/csv")).run()
    assert at.session_state[state.DATA].name == "mine.csv"
    assert any("is empty" in e for e in errors(at))


def test_excel_and_parquet_uploads(at):
    frame = _table()
    buffer = __import__("io").BytesIO()
    frame.to_excel(buffer, index=False)
    upload(at, "mine.xlsx", buffer.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert at.session_state[state.DATA].name == "mine.xlsx" and not errors(at)
    upload(at, "mine.parquet", frame.to_parquet(index=False), "application/octet-stream")
    assert at.session_state[state.DATA].name == "mine.parquet" and not errors(at)


def test_one_class_outcome(at):
    frame = _table()
    frame["Outcome"] = "no"
    upload(at, "one.csv", frame.to_csv(index=False).encode())
    # Regression: the page offered the yes/no column Smoker as the outcome, and a "risk of Smoker" list could be
    # fitted; it keeps the column named like the outcome and says why nothing can be fitted
    assert at.selectbox(key=state.W_TARGET).value == "Outcome"
    assert any("only one value" in e for e in errors(at))
    at.switch_page("views/fit.py").run()
    assert any("only one value" in e for e in errors(at)) and not at.exception
    assert not at.button  # no Fit button until the outcome is usable


def test_a_few_text_results_in_a_numeric_column_are_missing_and_said(at):
    frame = _table()
    frame["Age"] = frame["Age"].astype(str)
    frame.loc[5, "Age"] = "abc"
    upload(at, "junk.csv", frame.to_csv(index=False).encode())
    table = at.session_state[state.COLUMN_TABLES][at.session_state[state.DATA].key].set_index("column")
    assert table.loc["Age", "kind"] == "numeric" and "'abc': read as missing" in table.loc["Age", "note"]
    assert not errors(at)
    # and said in a box above the column table, not only in its cut-off Why column
    said = [i.value for i in at.info if i.value.startswith("Text in columns of numbers, read as missing")]
    assert len(said) == 1 and "**Age**: 0.3% text such as 'abc'" in said[0].replace("\\", "")
    at.switch_page("views/fit.py").run()
    assert not errors(at) and not at.exception


def test_empty_columns_and_identifiers_are_left_out_and_wide_categories_kept_with_a_note(at):
    n = 3000
    frame = _table(n, Empty=[None] * n, Specialty=[f"Spec{i % 60}" if i % 3 else "Cardiology" for i in range(n)],
                   Visit=[f"V-{i:05d}" for i in range(n)])
    upload(at, "wide.csv", frame.to_csv(index=False).encode())
    table = at.session_state[state.COLUMN_TABLES][at.session_state[state.DATA].key].set_index("column")
    assert not table.loc["Empty", "use"] and table.loc["Empty", "note"] == "no values"
    assert not table.loc["Visit", "use"] and table.loc["Visit", "detected"] == "identifier"
    assert table.loc["Specialty", "use"] and table.loc["Specialty", "kind"] == "categorical"
    assert "41 values" in table.loc["Specialty", "note"]  # 40 Spec levels and Cardiology
    assert not errors(at)


def test_names_from_the_file_cannot_inject_html(at):
    n = 300
    rng = np.random.default_rng(1)
    marked = rng.choice(["<b>yes</b>", "no"], n)
    outcome = np.where((marked == "no") ^ (rng.random(n) < 0.1), "no", "yes")  # the odd column predicts it
    frame = pd.DataFrame({"<img src=x onerror=alert(1)>": marked, "Age*": rng.integers(20, 90, n), "Outcome": outcome})
    upload(at, "<script>.csv", frame.to_csv(index=False).encode())
    assert not at.exception
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/rules.py").run()
    # Only st.html and markdown with HTML allowed could run markup; in both the names must arrive escaped. The one
    # script the page runs is its own constant text (the reload warning), never the file's.
    own = {ui.leave_script(True), ui.leave_script(False)}
    assert all(h.proto.body in own for h in at.get("html") if h.proto.unsafe_allow_javascript)
    bodies = ([h.proto.body for h in at.get("html") if h.proto.body not in own]
              + [m.value for m in at.markdown if m.proto.allow_html])
    at.switch_page("views/data.py").run()
    bodies += [m.value for m in at.markdown if m.proto.allow_html]
    assert any("&lt;b&gt;yes" in b or "&lt;img" in b for b in bodies)
    for body in bodies:
        assert "<img" not in body and "<script" not in body and "<b>yes" not in body


def test_no_rule_reaching_the_support(at):
    frame = pd.DataFrame({"Ward": list("ABCDEFGH") * 50, "Outcome": ["yes", "no"] * 200})
    upload(at, "wards.csv", frame.to_csv(index=False).encode())
    at.switch_page("views/fit.py").run()
    at.slider(key=state.W_SUPPORT).set_value(40.0).run()
    assert errors(at) and not at.exception
    assert at.button(key="fit_button").disabled


def test_a_handful_of_patients_fits_with_a_warning_beside_the_list(at):
    """Twelve uploaded patients, four with the event: the list page shows the fitted list and warns that so few
    patients say little; the session stays usable."""
    upload(at, "twelve.csv", _table(12, seed=2, Outcome=["yes"] * 4 + ["no"] * 8).to_csv(index=False).encode())
    assert not errors(at)
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/rules.py").run()
    warned = [w.value for w in at.warning if "too few to fit a list" in w.value]
    assert warned and warned[0].startswith("Only 12 patients, 4 of them with the event")
    assert shown_rules(at) is not None and not at.exception


# ------------------------------------------------------------------ posterior, validation, card, compare
def test_posterior_page(at):
    fit(at)
    at.switch_page("views/posterior.py").run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 5  # L histogram, acceptance, inclusion, two traces
    labels = [m.label for m in at.metric]
    assert "R-hat, log posterior" in labels and "R-hat, length L" in labels


def test_posterior_can_be_sampled_later_and_keeps_the_validation(at):
    first = fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/validation.py").run()
    at.session_state[state.W_CV_METHODS] = ["frl"]
    at.session_state[state.W_CV_FOLDS] = 2
    at.run()
    at.button(key="cv_button").click().run()
    finish_jobs(at)
    assert at.session_state[state.FIT].model["validation"]["n_folds"] == 2
    at.switch_page("views/posterior.py").run()
    at.button(key="posterior_button").click().run()
    finish_jobs(at)
    fit_now = at.session_state[state.FIT]
    assert fit_now.has_posterior and fit_now.id == first.id and fit_now.rules == first.rules
    assert fit_now.model["validation"]["n_folds"] == 2  # still on the model (and the card)
    assert len(at.session_state[state.HISTORY]) == 1  # the same fit, updated
    at.switch_page("views/posterior.py").run()
    assert len(at.get("plotly_chart")) == 5


def test_validation_runs_on_a_button(at):
    result = fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/validation.py").run()
    assert at.session_state[state.VALIDATION] is None  # nothing runs by itself
    at.session_state[state.W_CV_METHODS] = ["frl", "cart"]
    at.session_state[state.W_CV_FOLDS] = 3
    at.run()
    at.button(key="cv_button").click().run()
    finish_jobs(at)
    validation = at.session_state[state.VALIDATION]
    assert validation.fit_id == result.id and validation.evaluation.methods == ("frl", "cart")
    table = [d.value for d in at.dataframe if "AUROC (mean)" in d.value.columns][0]
    assert set(table["Method"]) == {"FRL", "CART"}
    assert len(at.get("plotly_chart")) == 2  # ROC and calibration
    model = at.session_state[state.FIT].model
    assert model["validation"]["n_folds"] == 3  # written to the model file and the card


def test_cross_validation_of_another_table_is_said_to_be_of_it(at):
    """Pima's cross-validation stayed on the Validation page after a fit on WCGS, labelled as 'an earlier list's
    settings': it was another table and outcome."""
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/validation.py").run()
    at.session_state[state.W_CV_METHODS] = ["cart"]
    at.session_state[state.W_CV_FOLDS] = 2
    at.run()
    at.button(key="cv_button").click().run()
    finish_jobs(at)
    upload(at, "wcgs.csv", _table(n=300, seed=2).to_csv(index=False).encode())
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/validation.py").run()
    [said] = [w.value for w in at.warning if "These results are for" in w.value]
    assert "for another table or outcome (**Readmitted30d** in **" in said and "earlier list" not in said


def test_card_page_downloads(at):
    result = fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/card.py").run()
    assert not at.exception
    labels = [d.label for d in at.get("download_button")]
    assert labels == ["Card (PDF)", "Model (JSON)", "Scored data (CSV)"]
    pdf = services.card_pdf(json.dumps(result.model, sort_keys=True), "index", None)
    assert pdf.startswith(b"%PDF")
    if services.pdftoppm_available():
        assert len(at.image) >= 1
    else:
        assert any("pdftoppm" in i.value for i in at.info)


def test_model_files_open_and_foreign_files_are_refused(at, tmp_path):
    result = fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/card.py").run()
    at.file_uploader(key=state.W_MODEL_FILE).set_value(("other.json", b'{"hello": "world"}', "application/json")).run()
    assert any("not a falling rule list model" in e for e in errors(at))
    assert at.session_state[state.FIT] is result
    raw = services.model_json(result.model)
    at.file_uploader(key=state.W_MODEL_FILE).set_value(("saved.json", raw, "application/json")).run()
    assert not errors(at) and not at.exception
    loaded = at.session_state[state.FIT]
    assert loaded.source == "file" and loaded.rules == result.rules
    at.switch_page("views/rules.py").run()
    assert shown_rules(at) == result.rules and not at.exception
    for page in ("views/posterior.py", "views/validation.py", "views/compare.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    assert "support 5%" in loaded.label   # as every page writes it, not 0.05
    # the same model file while another table is loaded: the page says which of its columns that table lacks
    rng = np.random.default_rng(0)
    other = pd.DataFrame({"age": rng.integers(20, 90, 300), "died": rng.choice(["yes", "no"], 300)})
    upload(at, "other.csv", other.to_csv(index=False).encode())
    at.switch_page("views/card.py").run()
    at.file_uploader(key=state.W_MODEL_FILE).set_value(("saved2.json", raw + b" ", "application/json")).run()
    at.switch_page("views/rules.py").run()
    [said] = [w.value for w in at.warning if "opened from a model file" in w.value]
    assert "which **other.csv**, the table now loaded, does not have" in said
    assert "fitted on" in " ".join(m.value for m in at.sidebar.markdown)


def test_compare_two_fits_side_by_side(at):
    first = fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/compare.py").run()
    at.session_state[state.W_VAR_LAM] = 2.0
    at.session_state[state.W_VAR_SUPPORT] = 15.0
    at.run()
    at.button(key="variant_button").click().run()
    finish_jobs(at)
    assert at.session_state[state.FIT] is first  # a variant does not replace the current list
    history = at.session_state[state.HISTORY]
    assert len(history) == 2
    variant = history[-1]
    assert variant.rules == engine_fit(lam=2.0, min_support=0.15).rules_
    lists = [h.proto.body for h in at.get("html") if "frl-list" in h.proto.body]
    assert len(lists) == 2
    assert at.selectbox(key=state.W_COMPARE_A).value == first.id
    assert at.selectbox(key=state.W_COMPARE_B).value == variant.id
    assert not any("different tables or outcomes" in w.value for w in at.warning)   # one table, one outcome
    at.button(key="make_b_current").click().run()
    assert at.session_state[state.FIT] is variant


def test_compare_says_when_the_two_lists_are_of_different_tables(at):
    """'Risk of outcome = CHD' beside 'Risk of death = 1', log posteriors compared, and no word of the data."""
    fit(at, **{state.W_POSTERIOR: False})
    upload(at, "other.csv", _table(n=300, seed=2).to_csv(index=False).encode())
    fit(at, **{state.W_POSTERIOR: False})
    at.switch_page("views/compare.py").run()
    assert any("A and B were fitted on different tables or outcomes" in w.value for w in at.warning)
    summary = next(d.value for d in at.dataframe if "Data" in d.value.index)
    assert sorted(summary.loc["Outcome"].tolist()) == ["Outcome = yes", "Readmitted30d = yes"]
    assert "other.csv" in summary.loc["Data"].tolist()


def test_every_page_without_a_fit(at):
    for page in ("views/fit.py", "views/rules.py", "views/posterior.py", "views/validation.py", "views/card.py",
                 "views/compare.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        assert not errors(at), page


def test_fit_page_survives_odd_widget_values(at):
    at.switch_page("views/fit.py").run()
    at.session_state[state.W_MAX_CONDITIONS] = None  # the selected segment clicked off
    at.run()
    assert not at.exception and not errors(at)
    assert "up to 2 item(s)" in " ".join(m.value for m in at.markdown)


def test_pages_say_whether_the_search_and_the_sampler_converged(at):
    """Issue 13: the verdicts sit next to the list and the posterior plots; unconverged ones are warnings."""
    result = fit(at)
    at.switch_page("views/rules.py").run()
    assert not at.exception
    # a plain line a clinician reads; the figures (spread in nats, basin hopping) inside it, for who opens it
    [search] = [e for e in at.expander if e.label.startswith("Search converged")]
    assert "independent searches found this same list" in search.label and "nats" not in search.label
    assert any(c.value.startswith("Search converged") and "nats" in c.value for c in search.caption)
    at.switch_page("views/posterior.py").run()
    notes = [c.value for c in at.caption] + [w.value for w in at.warning]
    assert any(n.startswith("Posterior converged") or n.startswith("Posterior not") for n in notes)
    # the same list from a search whose chains disagreed, and a sample that did not converge
    result.model["search"] = {**result.model["search"], "converged": False, "n_reached_best": 1}
    result.model["posterior"] = {**result.model["posterior"], "converged": False}
    at.switch_page("views/rules.py").run()
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Search not converged") for w in warnings)
    assert any("did not converge" in w for w in warnings)
    # chains that agreed on the best list but ended at many different lists (UCI Spambase at the defaults)
    result.model["search"] = {**result.model["search"], "converged": False, "n_reached_best": 8, "n_chains": 16,
                              "n_distinct": 8, "unseen_share": 0.3}
    at.switch_page("views/rules.py").run()
    scattered = [w.value for w in at.warning if w.value.startswith("Search not converged")]
    assert scattered and "8 different lists" in scattered[0] and "raise Chains on the Fit page" in scattered[0]
    # an unconverged sample: the posterior page says what to do with the Fit page's own controls
    at.session_state[state.FIT] = replace(result, posterior=replace(result.posterior,
                                                                    rhat={"log_posterior": 1.07, "length": 1.1}))
    at.switch_page("views/posterior.py").run()
    advice = [w.value for w in at.warning if w.value.startswith("Posterior not converged")]
    assert advice and "more Samples per chain on the Fit page" in advice[0]
    assert "Sampler chains on the Fit page" in advice[0] and "--" not in advice[0]
    budget_note = "The sampler did not go on to a longer attempt by itself"
    assert not any(budget_note in c.value for c in at.caption)
    # a large export: the default schedule stopped at its work budget, and the page says so under the advice
    at.session_state[state.FIT] = replace(result, posterior=replace(result.posterior, over_budget=True,
                                                                    rhat={"log_posterior": 1.07, "length": 1.1}))
    at.run()
    assert any(budget_note in c.value and "more than about a minute" in c.value for c in at.caption)
    # too few independent draws: how many Samples per chain would give 400, and about how long that takes
    longer = [c.value for c in at.caption if "times as long a sample" in c.value]
    assert not longer or result.posterior.ess["length"] < 400 or result.posterior.ess["log_posterior"] < 400
    at.session_state[state.FIT] = replace(result, posterior=replace(
        result.posterior, seconds=12.0, rhat={"log_posterior": 1.07, "length": 1.1},
        ess={"log_posterior": 900.0, "length": 60.0}))
    at.run()
    n_samples = result.posterior.n_samples
    more = max(100, math.ceil(n_samples * 6.7 / 100) * 100)   # 6.7 times as many, rounded up to a hundred
    from frl_engine.diagnostics import format_factor

    assert [c.value for c in at.caption if "times as long a sample" in c.value] == [
        f"About {format_factor(more / n_samples)} times as long a sample ({more:,} Samples per chain on the Fit page) "
        f"would take about {12.0 * more / n_samples:.0f} s at this sample's speed, and more while the chains "
        "disagree."]
    # a sample so short of independent draws that the Fit page cannot ask for enough: the page says so
    at.session_state[state.FIT] = replace(result, posterior=replace(
        result.posterior, seconds=12.0, rhat={"log_posterior": 1.07, "length": 1.1},
        ess={"log_posterior": 900.0, "length": 400 * n_samples / (state.MAX_POST_SAMPLES + 1000)}))
    at.run()
    [beyond] = [c.value for c in at.caption if "times as long a sample would be needed" in c.value]
    assert f"more than the Fit page's {state.MAX_POST_SAMPLES:,}" in beyond and "frl sample --samples" in beyond
    # chains that hold different rules: the page names them, with each chain's share, under the advice
    assert at.dataframe and not any("rule" in df.value.columns for df in at.dataframe)   # no disagreement yet
    at.session_state[state.FIT] = replace(result, posterior=replace(
        result.posterior, rhat={"log_posterior": 1.07, "length": 1.3},
        disagreement=(("Age >= 75 AND NoShow", (1.0, 0.0, 0.05, 0.9)), ("BedSores", (0.2, 0.9, 0.8, 0.3)))))
    at.run()
    assert not at.exception and not errors(at)
    assert any(c.value.startswith("Where the chains disagree most") for c in at.caption)
    [table] = [df.value for df in at.dataframe if "rule" in df.value.columns]
    assert list(table["rule"]) == ["Age >= 75 AND NoShow", "BedSores"]
    assert list(table.iloc[0, 1:]) == [1.0, 0.0, 0.05, 0.9]


def test_the_posterior_page_says_why_the_list_shown_is_rarely_sampled(at):
    """On data where the posterior spreads over many similar lists (UCI breast cancer: 0.0%), the page explains."""
    result = fit(at)
    why = "That is expected when the posterior spreads over many similar lists"
    at.switch_page("views/posterior.py").run()
    assert result.posterior.map_groups_frequency >= 0.01  # the sample data's list is sampled often
    assert not any(why in c.value for c in at.caption)
    at.session_state[state.FIT] = replace(result, posterior=replace(result.posterior, map_list_frequency=0.0,
                                                                    map_groups_frequency=0.001))
    at.run()
    assert not at.exception
    note = next(c.value for c in at.caption if why in c.value)
    assert note.startswith("The list shown is 0.0% of the sampled lists, and 0.1% group the training patients")


def test_a_list_that_uses_race_is_flagged_on_the_rule_list_page(at):
    rng = np.random.default_rng(5)
    n = 1500
    race = rng.choice(["Caucasian", "AfricanAmerican", "Hispanic"], n)
    outcome = np.where(rng.random(n) < np.where(race == "Hispanic", 0.6, 0.1), "yes", "no")
    frame = _table(n, seed=5, race=race)
    frame["Outcome"] = outcome
    upload(at, "race.csv", frame.to_csv(index=False).encode())
    result = fit(at, w_posterior=False)
    assert any("race" in c["column"] for r in result.model["rules"] for c in r["conditions"])
    at.switch_page("views/rules.py").run()
    assert any("The list uses 'race'" in w.value and "to leave it out, untick it on the Data page and fit again."
               in w.value for w in at.warning)


def test_an_upload_kept_by_the_data_page_is_read_by_the_next_page_when_the_user_left_at_once(at):
    """A user who uploads and clicks Fit before the table is read gets their table, never the sample."""
    raw = _table(n=400, seed=3).to_csv(index=False).encode()
    at.session_state[state.W_SOURCE] = state.SOURCE_UPLOAD
    at.session_state[state.PENDING_UPLOAD] = ("left_at_once.csv", raw)  # what the Data page keeps at once
    at.switch_page("views/fit.py").run()
    assert not at.exception and not errors(at)
    assert at.session_state[state.DATA].name == "left_at_once.csv"
    assert at.session_state[state.PENDING_UPLOAD] is None
    assert any("left_at_once.csv" in c.value for c in at.caption) or any(
        "400" in m.value for m in at.markdown)  # the Fit page describes the uploaded table


def test_patients_without_an_outcome_can_be_left_out_from_the_data_page(at):
    frame = _table(n=300, seed=4)
    frame.loc[:19, "Outcome"] = "?"
    upload(at, "lost.csv", frame.to_csv(index=False).encode())
    assert any("20 missing values" in e and "pick the outcome column above" in e for e in errors(at)), errors(at)
    # '?' is no outcome value: the event offered is 'yes', not the first value in the list ('no')
    assert at.selectbox(key=state.W_EVENT).value == "yes"
    assert sorted(at.selectbox(key=state.W_EVENT).options) == ["no", "yes"]
    at.button(key="w_drop_missing_outcome").click().run()
    assert not at.exception and not errors(at)
    data = at.session_state[state.DATA]
    assert data.n_rows == 280 and "without the 20 patients whose Outcome is empty or not known" in data.name
    assert at.selectbox(key=state.W_TARGET).value == "Outcome"
    assert at.selectbox(key=state.W_EVENT).value == "yes"  # kept: leaving patients out changes no event


def test_the_event_the_user_picked_stays_picked_when_patients_without_an_outcome_are_left_out(at):
    """WCGS as a 3-valued outcome: the user picked CHD, left out the patients without an outcome, and the event
    went back to the engine's suggestion (arcus)."""
    frame = _table(n=300, seed=4)
    frame["Outcome"] = np.array(["arcus", "arcus", "CHD", "none"] * 75)
    frame.loc[:19, "Outcome"] = "?"
    upload(at, "lost3.csv", frame.to_csv(index=False).encode())
    at.selectbox(key=state.W_EVENT).set_value("CHD").run()
    at.button(key="w_drop_missing_outcome").click().run()
    assert not at.exception and at.session_state[state.DATA].n_rows == 280
    assert at.selectbox(key=state.W_EVENT).value == "CHD"


def test_a_german_yes_no_outcome_takes_ja_and_a_1_2_outcome_waits_for_the_user(at):
    frame = _table(n=300, seed=5)
    frame["Wiederaufnahme"] = np.where(frame.pop("Outcome") == "yes", "ja", "nein")
    frame["lab_1"] = np.where(np.arange(300) % 3 == 0, "n/a", np.where(np.arange(300) % 2, "pos", "neg"))
    upload(at, "de.csv", frame.to_csv(index=False).encode())
    assert at.selectbox(key=state.W_TARGET).value == "Wiederaufnahme"
    assert at.selectbox(key=state.W_EVENT).value == "ja" and not errors(at)
    coded = _table(n=300, seed=6)
    coded["Outcome"] = np.where(coded["Outcome"] == "yes", 1, 2)
    upload(at, "coded.csv", coded.to_csv(index=False).encode())
    assert at.selectbox(key=state.W_EVENT).value is None
    assert any("coded 1 and 2" in e for e in errors(at)), errors(at)


def test_an_outcome_column_with_one_value_and_a_tiny_table_are_said(at):
    frame = _table(n=60, seed=7)
    frame["readmitted"] = "no"  # an export filtered on the outcome
    upload(at, "filtered.csv", frame.to_csv(index=False).encode())
    warnings = [w.value for w in at.warning]
    assert any("readmitted" in w and "every patient in this file has 'no'" in w for w in warnings), warnings
    assert any("60 patients are very few" in w for w in warnings), warnings


def test_the_posterior_defaults_are_the_engines():
    """The dashboard draws the sample `frl sample` and `sample_posterior()` draw: a page shows the same
    verdict as the CLI, and its time is the engine's (4 x 10,000 took 2 minutes on UCI breast cancer)."""
    import inspect

    engine = inspect.signature(FallingRuleListClassifier.sample_posterior).parameters
    assert state.WIDGET_DEFAULTS[state.W_POST_SAMPLES] == engine["n_samples"].default == 1000
    assert state.WIDGET_DEFAULTS[state.W_POST_CHAINS] == engine["n_chains"].default
    assert services.PosteriorSettings() == services.PosteriorSettings(engine["n_samples"].default,
                                                                      engine["n_chains"].default)


def test_an_encounter_table_is_said_as_rows_of_patients_as_on_the_card(at):
    """A patient number that repeats makes the rows encounters: the Fit page and the list say "rows of N patients"
    (the CLI and the card say so too), not that every row is a patient."""
    n = 400
    rng = np.random.default_rng(4)
    frame = _table(n, seed=4, patient_nbr=rng.integers(1, 251, n))
    n_patients = frame["patient_nbr"].nunique()
    assert n_patients < n
    upload(at, "encounters.csv", frame.to_csv(index=False).encode())
    at.switch_page("views/fit.py").run()
    assert any(f"among {n:,} rows of {n_patients:,} patients (patient\\_nbr)" in c.value for c in at.caption)
    fit(at)
    assert any(f"{n:,} rows of {n_patients:,} patients" in c.value for c in at.caption)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Rows"] == f"{n:,}" and "Patients" not in shown


def test_repeated_records_are_said_on_the_data_page_and_left_out_on_request(at):
    rng = np.random.default_rng(5)
    frame = _table(300, seed=5, encounter_id=rng.permutation(300) + 5000)
    table = pd.concat([frame, frame.iloc[:30]]).reset_index(drop=True)
    upload(at, "joined.csv", table.to_csv(index=False).encode())
    at.selectbox(key=state.W_EVENT).set_value("yes").run()
    shown = [w.value for w in at.warning]
    assert any("30 of 330 rows" in w and "**encounter\\_id** included" in w for w in shown), shown
    at.button(key="w_drop_repeated_rows").click().run()
    assert not at.exception and not errors(at)
    data = at.session_state[state.DATA]
    assert data.n_rows == 300 and "without 30 repeated rows" in data.name
    assert at.session_state[state.W_TARGET] == "Outcome" and at.session_state[state.W_EVENT] == "yes"
    assert not any("repeat an earlier row" in w.value for w in at.warning)


def test_a_list_fitted_on_an_earlier_table_says_so_after_a_new_upload(at):
    """After a fit on the sample data, uploading another table keeps the list (nothing is lost) but the Fit page,
    the Rule list page and the sidebar say that the list belongs to the earlier table, not to the one loaded."""
    fit(at, w_posterior=False)
    assert not [i.value for i in at.info if "was fitted on" in i.value]
    upload(at, "second.csv", _table().to_csv(index=False).encode())
    for page in ("views/fit.py", "views/rules.py"):
        at.switch_page(page).run()
        assert not at.exception
        notes = [i.value for i in at.info if "was fitted on" in i.value]
        assert notes == ["This list was fitted on **readmission.csv** (Readmitted30d), not on **second.csv**, the "
                         "table now loaded. Fit again on the Fit page to get this table's list."], (page, notes)
    sidebar = " ".join(m.value for m in at.sidebar.markdown)
    assert "second.csv" in sidebar and "fitted on readmission.csv" in sidebar


def _recoded_table(n=400, seed=4):
    """gender Female / Male and, beside it, sex F / M of the same patients (a recoding exported twice); the outcome
    depends on them and on age."""
    rng = np.random.default_rng(seed)
    gender = rng.choice(["Female", "Male"], n)
    age = rng.integers(20, 90, n)
    risk = 0.1 + 0.4 * (gender == "Male") + 0.2 * (age > 65)
    return pd.DataFrame({"Age": age, "gender": gender, "Ward": rng.choice(["A", "B", "C"], n),
                         "sex": np.where(gender == "Female", "F", "M"),
                         "Outcome": np.where(rng.random(n) < risk, "yes", "no")})


def test_a_column_copying_another_is_said_to_make_no_rule_beside_its_items_and_the_list(at):
    """sex F / M holds the patients of gender Female / Male: mining keeps gender's rules, so sex is in no candidate
    rule. The Data page showed sex's items with nothing saying that no rule will use them; after the fit, the Data
    page (beside the items) and the Rule list page say it, in the command line's words, naming both columns."""
    upload(at, "recoded.csv", _recoded_table().to_csv(index=False).encode())
    said = "In no candidate rule, as each of their values holds the same patients as a value of another column"
    assert not any(said in c.value for c in at.caption)  # before any fit: nothing is known yet
    fit(at, w_posterior=False)
    for page in ("views/rules.py", "views/data.py"):
        at.switch_page(page).run()
        assert not at.exception
        notes = [c.value for c in at.caption if said in c.value]
        assert len(notes) == 1 and "'sex' (the same as 'gender')" in notes[0], (page, notes)
    # the Data page speaks of the list fitted on these columns: leave gender out and the note goes
    table = at.session_state[state.COLUMN_TABLES][at.session_state[state.DATA].key]
    table.loc[table["column"] == "gender", "use"] = False
    at.run()
    assert not at.exception and not any(said in c.value for c in at.caption)


def test_a_one_chain_posterior_is_said_to_be_unchecked_and_shows_no_r_hat(at):
    """With one sampler chain the verdict is "not checked", yet the page showed R-hat 1.030 and the list's page said
    "did not converge": R-hat (which compares chains) now reads n/a, and the list's page says not checked."""
    result = fit(at, **{state.W_POSTERIOR: True, state.W_POST_CHAINS: 1, state.W_POST_SAMPLES: 100})
    assert result.posterior is not None and result.posterior.n_chains == 1
    at.run()
    [said] = [w.value for w in at.warning if "posterior sample" in w.value]
    assert "was not checked (one chain cannot show that chains agree)" in said and "did not converge" not in said
    at.switch_page("views/posterior.py").run()
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    assert values["R-hat, log posterior"] == "n/a" and values["R-hat, length L"] == "n/a"
