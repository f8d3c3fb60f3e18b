"""Unit tests of dashboard/services.py and dashboard/jobs.py (no Streamlit script run needed)."""

import io
import json
import logging
import time

import numpy as np
import pandas as pd
import pytest

from dashboard import jobs, services
from frl_engine.errors import DataError, FRLError, ModelFileError
from frl_engine.estimator import FallingRuleListClassifier

# Quiet: the cached services are called outside a Streamlit runtime here.
logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)  # "No runtime found"


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "PatientID": [f"P{i:04d}" for i in range(n)],
        "Age": rng.integers(20, 90, n),
        "BedSores": rng.choice(["yes", "no"], n, p=[0.3, 0.7]),
        "Ward": rng.choice(["A", "B", "C"], n),
        "Creatinine": np.where(rng.random(n) < 0.1, np.nan, rng.normal(1.0, 0.3, n).round(2)),
    })
    risk = 0.05 + 0.5 * (frame["BedSores"] == "yes") + 0.2 * (frame["Age"] > 70)
    frame["Outcome"] = np.where(rng.random(n) < risk, "readmitted", "home")
    return frame


def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode()


# ------------------------------------------------------------------ loading
def test_load_table_reads_csv_in_memory():
    data = services.load_table(_csv(_frame()), "patients.csv", limit_mb=10)
    assert data.n_rows == 400 and data.n_columns == 6 and data.name == "patients.csv" and not data.is_sample
    assert data.key == services.bytes_key(_csv(_frame()))


@pytest.mark.parametrize("raw, name, words", [
    (b"", "empty.csv", "is empty"),
    (b"a,b,c\n", "header.csv", "header but no rows"),
    (b"a,a,b\n1,2,3\n", "dups.csv", "duplicate column names"),
    (b"a,b\n1,2\n", "notes.rds", "unsupported file type"),
    (b"a,b\n1,2\n", "notes.sav", "it is not an SPSS data file but plain text"),
])
def test_load_table_refuses_bad_files_with_one_line(raw, name, words):
    with pytest.raises(DataError, match=words) as info:
        services.load_table(raw, name, limit_mb=10)
    assert "\n" not in str(info.value)


def test_load_table_refuses_files_over_the_limit():
    with pytest.raises(DataError, match="accepts files up to 1 MB"):
        services.load_table(b"a,b\n" + b"1,2\n" * 400_000, "big.csv", limit_mb=1)


def test_load_sample():
    if not services.SAMPLE_PATH.is_file():
        pytest.skip("sample data not generated yet")
    data = services.load_sample()
    assert data.is_sample and services.SAMPLE_TARGET in data.frame.columns


# ------------------------------------------------------------------ columns
@pytest.mark.parametrize("name", ["PatientID", "patient_id", "patient_nbr", "MRN", "EncounterId", "record number", "subject_no"])
def test_identifier_names_with_many_repeated_values_are_identifiers(name):
    repeated = pd.Series(np.repeat(np.arange(100, 400), 2))  # a patient number seen twice each
    assert services.looks_like_identifier(name, repeated) is not None


@pytest.mark.parametrize("name", ["admission_type_id", "discharge_disposition_id", "ward_id"])
def test_integer_codes_named_like_ids_are_not_identifiers(name):
    """Regression: the dashboard used to drop nominal codes such as admission_type_id as identifiers."""
    assert services.looks_like_identifier(name, pd.Series([1, 3, 2, 5, 1, 1, 2, 8] * 50)) is None


@pytest.mark.parametrize("name", ["Age", "Paid", "Valid", "Lipid", "Creatinine"])
def test_ordinary_names_are_not_identifiers(name):
    assert services.looks_like_identifier(name, pd.Series([1, 1, 2] * 10)) is None


def test_unique_text_or_integers_are_identifiers_but_unique_measurements_are_not():
    unique_text = pd.Series([f"x{i}" for i in range(50)])
    assert "different value in 100% of rows" in services.looks_like_identifier("Code", unique_text)
    assert services.looks_like_identifier("Number", pd.Series(range(50))) is not None
    assert services.looks_like_identifier("Weight", pd.Series(np.linspace(50, 90, 50))) is None
    assert services.looks_like_identifier("Code", pd.Series([f"x{i}" for i in range(10)])) is None  # too few rows


def test_profile_columns_defaults():
    frame = _frame()
    frame["Empty"] = np.nan
    frame["Zip"] = [f"Z{i % 200}" for i in range(len(frame))]
    frame["Junk"] = [str(v) for v in frame["Age"]]
    frame.loc[3, "Junk"] = "n/a?"
    profile = services.profile_columns(frame).set_index("column")
    assert list(profile.columns) == services.PROFILE_COLUMNS[1:]
    assert profile.loc["Age", "kind"] == "numeric" and profile.loc["Age", "use"]
    assert profile.loc["BedSores", "kind"] == "boolean" and profile.loc["Ward", "kind"] == "categorical"
    assert not profile.loc["PatientID", "use"] and "identifier" in profile.loc["PatientID", "note"]
    assert not profile.loc["Empty", "use"] and profile.loc["Empty", "note"] == "no values"
    assert profile.loc["Zip", "use"] and profile.loc["Zip", "kind"] == "code"  # Z0..Z199: codes with groups
    assert profile.loc["Junk", "kind"] == "numeric" and "'n/a?'" in profile.loc["Junk", "note"]
    assert profile.loc["Creatinine", "missing"] > 0


def test_parse_thresholds():
    assert services.parse_thresholds("60, 45", "Age") == (45.0, 60.0)
    assert services.parse_thresholds("45;60 75", "Age") == (45.0, 60.0, 75.0)
    assert services.parse_thresholds("  ", "Age") == ()
    with pytest.raises(DataError, match="'abc' is not a number"):
        services.parse_thresholds("45, abc", "Age")
    with pytest.raises(DataError, match="finite"):
        services.parse_thresholds("inf", "Age")


def test_the_column_table_says_what_each_edit_does_where_the_why_cell_still_gives_the_engines_reading():
    """The Why cell keeps the engine's reason; a changed Type, or Use ticked again on an identifier whose Type is
    still "left out" (which does nothing), gets a line saying what the fit will do."""
    table = services.profile_columns(_frame())
    assert services.column_edit_notes(table, "Outcome") == []  # untouched: nothing to say
    table.loc[table["column"] == "PatientID", "use"] = True
    table.loc[table["column"] == "BedSores", "kind"] = "categorical"
    table.loc[table["column"] == "Ward", "kind"] = "categorical"  # the engine's own reading: no line
    notes = services.column_edit_notes(table, "Outcome")
    assert notes == ["PatientID: Use is ticked, but its Type is still left out, so it makes no item. "
                     "Pick a type (numeric, categorical, ...) to use it.",
                     "BedSores: used as categorical (your choice; the engine reads it as boolean)."]
    table.loc[table["column"] == "PatientID", "kind"] = "categorical"
    table.loc[table["column"] == "BedSores", "use"] = False  # unticked: the fit leaves it out, as the box shows
    assert services.column_edit_notes(table, "Outcome") == [
        "PatientID: used as categorical (your choice; the engine would leave it out)."]
    assert services.column_choices(table, "Outcome").kinds == (("PatientID", "categorical"),)


def test_column_choices_from_the_edited_table():
    table = services.profile_columns(_frame())
    untouched = services.column_choices(table, "Outcome")
    assert untouched == services.ColumnChoices(exclude=("PatientID",))
    table.loc[table["column"] == "Ward", "kind"] = "categorical"  # same as detected: not passed on
    table.loc[table["column"] == "BedSores", "kind"] = "categorical"
    table.loc[table["column"] == "Age", "thresholds"] = "50, 70"
    table.loc[table["column"] == "Creatinine", "use"] = False
    choices = services.column_choices(table, "Outcome")
    assert choices.exclude == ("PatientID", "Creatinine")
    assert choices.kinds == (("BedSores", "categorical"),)
    assert choices.thresholds == (("Age", (50.0, 70.0)),)
    params = choices.params()
    assert params == {"exclude": ("PatientID", "Creatinine"), "column_kinds": {"BedSores": "categorical"},
                      "thresholds": {"Age": [50.0, 70.0]}}
    table.loc[table["column"] == "Ward", "thresholds"] = "3"
    with pytest.raises(DataError, match="treated as categorical"):
        services.column_choices(table, "Outcome")


# ------------------------------------------------------------------ outcome
def test_suggest_target_and_default_event():
    frame = _frame()
    assert services.suggest_target(frame) == "Outcome"
    assert services.default_event(frame["BedSores"]) == "yes"
    assert services.default_event(frame["Ward"]) is None
    assert services.outcome_values(frame["Ward"]) == ["A", "B", "C"]
    assert services.outcome_values(frame["Creatinine"]) == []  # far too many values to pick from


def test_split_outcome_messages():
    frame = _frame()
    with pytest.raises(DataError, match="Pick the outcome column"):
        services.split_outcome(frame, None, None)
    with pytest.raises(DataError, match="not in this table"):
        services.split_outcome(frame, "Nope", None)
    with pytest.raises(DataError, match="has 3 values, not two: pick which value"):
        services.split_outcome(frame, "Ward", None)
    features, y, positive = services.split_outcome(frame, "Ward", "B")
    assert positive == "B" and y.sum() == (frame["Ward"] == "B").sum() and "Ward" not in features
    with pytest.raises(DataError, match="looks like a measurement"):
        services.split_outcome(frame, "Creatinine", None)
    with pytest.raises(DataError, match="only one value"):
        services.split_outcome(frame.assign(Outcome="home"), "Outcome", None)
    features, y, positive = services.split_outcome(frame, "Outcome", None)
    assert positive == "readmitted" and y.dtype == bool


# ------------------------------------------------------------------ items, fitting, jobs
def _spec(frame, **settings):
    features, y, positive = services.split_outcome(frame, "Outcome", None)
    choices = services.column_choices(services.profile_columns(frame), "Outcome")
    data = services.LoadedData("patients.csv", "k" + str(len(frame)), frame, 1000)
    spec = services.FitSpec(data.key, data.name, "Outcome", positive, choices,
                            services.FitSettings(n_steps=800, n_chains=2, **settings),
                            services.PosteriorSettings(n_samples=150, n_chains=2))
    return spec, data, features, y


def test_item_preview_and_candidate_count_match_the_engine():
    frame = _frame()
    spec, data, features, y = _spec(frame)
    preview = services.item_preview(data.key, "Outcome", spec.choices, features)
    assert "BedSores" in set(preview.table["item"]) and "PatientID" not in set(preview.table["column"])
    count = services.candidate_count(data.key, "Outcome", spec.choices, 0.05, 2, features)
    engine = FallingRuleListClassifier(min_support=0.05, max_conditions=2, n_steps=10, exclude=("PatientID",),
                                       random_state=0).fit(features, y)
    assert count.kept == count.mined == len(engine.candidate_names_)  # no screening on a small table
    assert not count.screened and not count.slow_search(5000, 8.0)


def test_the_fit_pages_screening_bound_is_the_estimators():
    assert services.MAX_RULES == FallingRuleListClassifier().max_rules


def test_a_search_over_thousands_of_rules_is_said_to_be_slow_exactly_when_the_engine_walks():
    """The Fit page's note follows the engine's own rule (``targeted_proposals`` below its threshold)."""
    from frl_engine.anneal import MIN_TARGETED_PROPOSALS, targeted_proposals

    for kept in (100, 1_000, 2_000, 3_000, 5_000):
        count = services.CandidateCount(kept=kept, mined=kept)
        assert count.slow_search(5000, 8.0) == (targeted_proposals(5000, kept, 8) < MIN_TARGETED_PROPOSALS)
    assert not services.CandidateCount(kept=500, mined=500).slow_search(5000, 8.0)
    assert services.CandidateCount(kept=5000, mined=90_000).slow_search(5000, 8.0)  # UCI Spambase's size


def test_candidate_count_explains_when_no_rule_reaches_the_support():
    frame = pd.DataFrame({"Ward": list("ABCD") * 25, "Outcome": [0, 1] * 50})
    features, y, _ = services.split_outcome(frame, "Outcome", None)
    with pytest.raises(FRLError) as info:
        services.candidate_count("x", "Outcome", services.ColumnChoices(), 0.5, 2, features)
    assert "\n" not in str(info.value)


def test_fit_job_publishes_the_list_then_the_posterior():
    frame = _frame()
    spec, data, features, y = _spec(frame, seed=3)
    job = jobs.start(jobs.Job("fit", "Fitting", services.FIT_STAGES),
                     services.fit_work(spec, data, features, y, "fit-x"))
    assert jobs.wait(job, 120) and not job.failed
    assert job.version == 2
    first, final = job._results
    assert first.posterior is None and first.model["posterior"] is None
    assert final.posterior is not None and len(final.model["posterior"]["risk_lower"]) == len(final.rules) + 1
    engine = FallingRuleListClassifier(n_steps=800, n_chains=2, random_state=3, exclude=("PatientID",)).fit(features, y)
    assert final.rules == engine.rules_
    assert final.model["outcome"]["positive_class"] == "readmitted"
    assert list(final.rule_index) == list(engine.apply(features))
    assert final.posterior.length_trace.shape == (2, 150)
    assert job.progress()[0] == 1.0


def test_a_fit_on_several_event_values_writes_them_and_validation_reads_them_back():
    """The Data page's "Also counts as the event": Ward B or C against A is one event of the model file."""
    from frl_engine.validation.external import validate_model

    frame = _frame(seed=2)
    features, y, positive = services.split_outcome(frame, "Ward", ("B", "C"))
    assert positive == ("B", "C") and y.sum() == frame["Ward"].isin(["B", "C"]).sum()
    choices = services.column_choices(services.profile_columns(frame), "Ward")
    data = services.LoadedData("wards.csv", "wards", frame, 1000)
    spec = services.FitSpec(data.key, data.name, "Ward", positive, choices,
                            services.FitSettings(n_steps=800, n_chains=2, seed=1), None)
    job = jobs.start(jobs.Job("fit", "Fitting", services.FIT_STAGES[:1]),
                     services.fit_work(spec, data, features, y, "fit-wards"))
    assert jobs.wait(job, 120) and not job.failed, job.error
    outcome = job.latest().model["outcome"]
    assert outcome["positive_class"] == "B or C" and outcome["event_values"] == ["B", "C"]
    later = _frame(seed=3)
    result = validate_model(job.latest().model, later, data_name="later.csv")
    assert result.event == "B or C" and result.events == later["Ward"].isin(["B", "C"]).sum()


def test_jobs_report_user_errors_verbatim_and_hide_bugs():
    def user_error(job):
        raise DataError("Column 'Age' is numeric but has non-numeric values such as 'abc': clean them")

    def bug(job):
        raise KeyError("internal")

    failed = jobs.start(jobs.Job("fit", "Fitting", ["a"]), user_error)
    jobs.wait(failed)
    assert failed.error.startswith("Column 'Age'") and failed.error_detail is None
    crashed = jobs.start(jobs.Job("fit", "Fitting", ["a"]), bug)
    jobs.wait(crashed)
    assert crashed.error == jobs.GENERIC_ERROR and "KeyError" in crashed.error_detail


def test_job_progress_moves_through_stages():
    job = jobs.Job("validation", "Cross-validating", ["one", "two"])
    assert job.progress()[0] == 0.0 and "step 1 of 2: one" in job.progress()[1]
    job.stage(1, "5 folds")
    fraction, text = job.progress()
    assert fraction == 0.5 and "two (5 folds)" in text
    job.advance(0.4, "fold 2 of 5 done")  # within a stage the bar moves on
    fraction, text = job.progress()
    assert fraction == pytest.approx(0.7) and "fold 2 of 5 done" in text
    job.stage(2)
    assert job.progress()[0] == 0.99  # all stages passed but not published yet
    started = jobs.start(job, lambda j: time.sleep(0.05) or "done")
    jobs.wait(started)
    assert started.latest() == "done" and started.progress()[0] == 1.0


# ------------------------------------------------------------------ model files, scoring, patient
@pytest.fixture(scope="module")
def fitted():
    frame = _frame(600, seed=1)
    spec, data, features, y = _spec(frame)
    estimator = FallingRuleListClassifier(**spec.settings.params(), **spec.choices.params()).fit(features, y)
    result = services.fit_result(estimator, spec, data, features, 0.1, "fit-1")
    return result, estimator, features


def test_model_file_round_trip(fitted):
    result, estimator, _ = fitted
    raw = services.model_json(result.model)
    loaded = services.load_model_file(raw, "model.json", "file-1")
    assert loaded.source == "file" and loaded.rules == result.rules and loaded.data is None
    assert json.loads(raw)["format"] == "frl-model"


@pytest.mark.parametrize("raw, name, words", [
    (b'{"hello": 1}', "other.json", "not a falling rule list model"),
    (b"not json", "model.json", "not valid JSON"),
    (b"\xff\xfe", "model.json", "not UTF-8"),
    (b"{}", "model.csv", "not a model file"),
])
def test_model_files_that_are_not_ours(raw, name, words):
    with pytest.raises(ModelFileError, match=words):
        services.load_model_file(raw, name, "file-x")


def test_scored_frame(fitted):
    result, estimator, features = fitted
    scored = services.scored_frame(result.data.frame, result.rule_index, result.model)
    assert list(scored.columns[-3:]) == ["frl_rule", "frl_rule_text", "frl_risk"]
    assert np.allclose(scored["frl_risk"], estimator.predict_proba(features)[:, 1])
    assert scored["frl_rule"].min() >= 1 and scored["frl_rule"].max() <= len(result.rules) + 1
    back = pd.read_csv(io.BytesIO(services.scored_csv(result.data.frame, result.rule_index, result.model)))
    assert len(back) == len(features)


def test_patient_fields_and_explanation_agree_with_apply(fitted):
    result, estimator, features = fitted
    fields = services.patient_fields(result.model)
    assert [f.column for f in fields] == estimator.used_columns_
    for row in range(0, 60, 7):
        values = {}
        for field in fields:
            value = features.iloc[row][field.column]
            values[field.column] = None if pd.isna(value) else (value.item() if hasattr(value, "item") else value)
        check = services.explain_patient(result.model, values)
        assert check.position == estimator.apply(features.iloc[[row]])[0]
        assert check.risk == pytest.approx(estimator.probabilities_[check.position])
        assert [fired for _, fired, _ in check.steps][-1] is (check.position < len(result.rules))


def test_explain_patient_with_nothing_known_falls_to_else(fitted):
    result, _, _ = fitted
    check = services.explain_patient(result.model, {})
    assert check.position == len(result.rules) or all(not fired for _, fired, _ in check.steps[:-1])


def test_a_rule_kept_from_applying_only_by_unknown_values_is_named_with_its_risk(fitted):
    """Every field left unknown falls to the ELSE line, the lowest risk; each rule above it that an unknown value
    alone kept from applying is named, with its columns and risk, so the page can say the result rests on them.
    A patient whose known values fail a rule is not told it could apply."""
    result, estimator, features = fitted
    check = services.explain_patient(result.model, {})
    n_rules = len(result.rules)
    assert check.position == n_rules
    # each rule above missed only conditions on unknown columns (had they all been met, it would have applied)
    assert [position for position, _, _, _ in check.could_apply] == list(range(n_rules)) and n_rules
    for position, name, risk, columns in check.could_apply:
        rule = estimator.rule_objects_[position]
        assert name == rule.name and risk == pytest.approx(estimator.probabilities_[position])
        assert set(columns) == {c.column for c in rule.conditions}
    # a patient known in full: nothing rests on unknown values
    for row in range(0, 40, 7):
        values = {c: (None if pd.isna(v) else (v.item() if hasattr(v, "item") else v))
                  for c, v in features.iloc[row][estimator.used_columns_].items()}
        known = services.explain_patient(result.model, values)
        assert all(all(values.get(c) is None for c in columns) for _, _, _, columns in known.could_apply)


def test_card_pdf_and_preview(fitted):
    result, _, _ = fitted
    text = json.dumps(result.model, sort_keys=True)
    pdf = services.card_pdf(text, "index", None)
    assert pdf.startswith(b"%PDF")
    if services.pdftoppm_available():
        pages = services.card_png_pages(pdf)
        assert len(pages) == 2 and pages[0].startswith(b"\x89PNG")


def test_card_preview_without_pdftoppm(fitted, monkeypatch):
    monkeypatch.setattr(services.shutil, "which", lambda name: None)
    assert services.card_png_pages(b"%PDF-1.4") == []


def test_validation_merge_per_method_runs(fitted):
    result, _, features = fitted
    y = np.asarray(result.data.frame["Outcome"] == "readmitted")
    X, params = services.validation_inputs(result.spec, features)
    assert "PatientID" not in X.columns and params["exclude"] == () and "random_state" not in params
    runs = [services.cross_validate_method("k", m, 3, 0, X, y, {**params, "n_steps": 200}, "patients.csv")
            for m in ("frl", "cart")]
    merged = services.merge_evaluations(runs)
    assert merged.methods == ("frl", "cart") and len(merged.folds) == 6
    assert list(merged.auroc_table()["method"]) == ["FRL", "CART"]
    assert set(merged.validation_summary("frl")) >= {"auroc_mean", "auroc_std", "n_folds"}


def test_the_posterior_view_knows_when_the_default_sample_stopped_at_its_work_budget():
    """The Posterior page's note about the work budget comes from the sample's last attempt."""
    from frl_engine.sampler import sample_posterior_continued_until_converged

    frame = _frame(n=600, seed=3)
    y = (frame.pop("Outcome") == "readmitted").to_numpy()
    model = FallingRuleListClassifier(random_state=0, exclude=["PatientID"]).fit(frame, y)
    kwargs = dict(n_samples=12, n_chains=4, burn_in=3, random_state=0, refresh=2, n_jobs=1,
                  starts=[model.map_fit_.order, []])
    stopped = sample_posterior_continued_until_converged(model.problem_, work_budget=1.0, **kwargs)
    assert not stopped.verdict.converged   # 48 draws can never reach an ESS of 400
    assert len(stopped.attempts) == 1 and services.posterior_view(stopped).over_budget
    whole = sample_posterior_continued_until_converged(model.problem_, work_budget=None, **kwargs)
    assert not services.posterior_view(whole).over_budget


def test_the_posterior_view_names_the_rules_the_chains_disagree_on():
    """Chains started at different lists and stopped early hold different rules: the view carries them, by name."""
    from frl_engine.sampler import sample_posterior

    frame = _frame(n=600, seed=3)
    y = (frame.pop("Outcome") == "readmitted").to_numpy()
    model = FallingRuleListClassifier(random_state=0, exclude=["PatientID"]).fit(frame, y)
    sample = sample_posterior(model.problem_, n_samples=20, n_chains=2, burn_in=0, random_state=0, refresh=0,
                              n_jobs=1, starts=[model.map_fit_.order, []], rule_names=model.candidate_names_)
    view = services.posterior_view(sample)
    assert view.disagreement, "a chain at the MAP list and one at the empty list must disagree"
    names = set(model.candidate_names_)
    for rule, shares in view.disagreement:
        assert rule in names and len(shares) == 2 and max(shares) - min(shares) >= 0.2


def test_a_code_field_shows_an_example_from_the_datas_own_codes():
    """Regression: the form always suggested '428.0' (an ICD-9 code of the sample data), also for ICD-10 exports."""
    model = {"binarizer": {"columns": [{"name": "diag_1", "kind": "code", "categories": ["E11.9", "I21.4", "I50.1",
                                                                                          "I50.9", "J18.9"],
                                        "prefixes": ["E11", "I21", "I50", "J18"]}]},
             "rules": [{"conditions": [{"column": "diag_1", "op": "starts with", "value": "I50"}]}]}
    (field,) = services.patient_fields(model)
    assert field.kind == "code" and field.example == "I50.1"
    model["rules"][0]["conditions"][0]["value"] = "Z99"  # a group no training code is in: the group itself
    assert services.patient_fields(model)[0].example == "Z99"


def test_a_page_run_waits_while_the_warm_up_imports_the_engine():
    """Regression: a model file uploaded while the warm-up thread imported scikit-learn met a half-imported joblib
    ("partially initialized module ... resource_tracker"); page runs now wait for those imports."""
    import threading

    from dashboard import ui

    started, imported = ui.WARM_UP_STARTED.is_set(), ui.ENGINE_IMPORTED.is_set()
    try:
        ui.WARM_UP_STARTED.clear()
        ui.ENGINE_IMPORTED.clear()
        assert ui.wait_for_engine_imports(timeout=0.01)            # no warm-up (FRL_DASHBOARD_WARMUP=0): no wait
        ui.WARM_UP_STARTED.set()
        assert not ui.wait_for_engine_imports(timeout=0.05)        # importing: the run waits
        threading.Timer(0.3, ui.ENGINE_IMPORTED.set).start()
        t0 = time.perf_counter()
        assert ui.wait_for_engine_imports(timeout=10)
        assert time.perf_counter() - t0 >= 0.25
        assert ui.wait_for_engine_imports(timeout=0.01)            # done: every later run goes straight on
    finally:
        for event, was in ((ui.WARM_UP_STARTED, started), (ui.ENGINE_IMPORTED, imported)):
            event.set() if was else event.clear()


def test_download_names_keep_the_outcome_readable():
    from dashboard.ui import file_stem

    assert file_stem("Décès à 30 jours", "model") == "Décès-à-30-jours"  # accents kept, spaces become -
    assert file_stem("readmitted/30d?", "model") == "readmitted-30d"
    assert file_stem("", "model") == "model" and file_stem(None, "external") == "external"
    assert file_stem("../../etc/passwd", "model") == "etc-passwd"  # never a path


def test_a_column_whose_type_is_left_out_is_left_out_even_with_use_ticked():
    """"left out" is a Type of the column table (an identifier's, by default): chosen for a column, or kept when Use
    is ticked again on an identifier without picking a type, the column makes no item, as the cell says."""
    table = services.profile_columns(_frame())
    assert table.set_index("column").loc["PatientID", "kind"] == "left out"
    table.loc[table["column"] == "PatientID", "use"] = True
    table.loc[table["column"] == "Creatinine", "kind"] = "left out"
    assert services.column_choices(table, "Outcome").exclude == ("PatientID", "Creatinine")
    table.loc[table["column"] == "PatientID", "kind"] = "categorical"  # a type picked: used as that type
    assert services.column_choices(table, "Outcome") == services.ColumnChoices(
        exclude=("Creatinine",), kinds=(("PatientID", "categorical"),))


def test_an_identifier_picked_as_the_outcome_is_called_an_identifier_as_the_column_table_calls_it():
    """PatientID picked as the outcome was called "a measurement" while the column table beside it says identifier."""
    frame = _frame()
    with pytest.raises(DataError, match="'PatientID' has 400 different values: it is an identifier"):
        services.split_outcome(frame, "PatientID", None)
    frame["Creatinine"] = frame["Creatinine"].fillna(1.0)
    with pytest.raises(DataError, match="looks like a measurement"):
        services.split_outcome(frame, "Creatinine", None)
