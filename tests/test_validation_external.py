"""External validation of a saved model on a new table: numbers against independent computations, flags, subgroups,
and one clear message per bad second file."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from frl_engine.errors import DataError
from frl_engine.validation.external import ExternalValidation, attach_to_model, subgroup_labels, validate_model

RISKS = (0.6, 0.25, 0.08)


def model_dict(risks=RISKS, posterior=None) -> dict:
    """A two-rule list written by hand, in the model-file format."""
    return {
        "format": "frl-model", "format_version": 1, "created_at": "2026-11-01T00:00:00+00:00",
        "outcome": {"target": "readmitted", "positive_class": "<30", "classes": ["not <30", "<30"], "title": None},
        "hyperparameters": {"lam": 8.0, "alpha": 1.0, "beta": 0.1, "alpha_K": 1.0, "beta_K": 0.1,
                            "min_support": 0.05, "max_conditions": 2, "n_steps": 5000, "n_chains": 4,
                            "temperature": 1.0, "cooling": "constant", "mine_rules": True, "random_state": 0},
        "training": {"n_rows": 2000, "n_positive": 300, "positive_rate": 0.15, "n_candidate_rules": 40,
                     "data_name": "2024.csv"},
        "rules": [
            {"name": "Age >= 70 AND BedSores",
             "conditions": [{"column": "Age", "op": ">=", "value": 70}, {"column": "BedSores", "op": "is true", "value": None}],
             "probability": risks[0], "support": 200, "n_positive": 120},
            {"name": "Ward = surgical", "conditions": [{"column": "Ward", "op": "==", "value": "surgical"}],
             "probability": risks[1], "support": 600, "n_positive": 150},
        ],
        "default": {"probability": risks[2], "support": 1200, "n_positive": 96},
        "parameters": {"K": 0.087, "gammas": [4.5, 3.8, 1.0], "log_posterior": -800.0},
        "binarizer": {"columns": [
            {"name": "Age", "kind": "numeric", "thresholds": [50, 70], "categories": [], "has_missing": False},
            {"name": "BedSores", "kind": "boolean", "thresholds": [], "categories": [], "has_missing": False},
            {"name": "Ward", "kind": "categorical", "thresholds": [], "categories": ["medical", "surgical", "icu"],
             "has_missing": False}]},
        "feature_names": ["Age", "BedSores", "Ward"], "n_features": 3,
        "posterior": posterior, "validation": None,
    }


def new_table(n=3000, seed=0, truth=(0.55, 0.3, 0.08)):
    """New patients with a three-valued outcome (NO, >30, <30): the event is <30 only, drawn at ``truth``."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "Age": rng.integers(20, 95, size=n),
        "BedSores": rng.choice(["yes", "no"], size=n, p=[0.3, 0.7]),
        "Ward": rng.choice(["medical", "surgical", "icu"], size=n),
        "Sex": rng.choice(["F", "M"], size=n),
        "Notes": rng.choice(["free text", "more text"], size=n),  # an extra column the model does not use
    })
    rule = hand_rules(frame)
    risk = np.asarray(truth)[rule]
    draw = rng.random(n)
    frame["readmitted"] = np.where(draw < risk, "<30", np.where(draw < risk + 0.2, ">30", "NO"))
    return frame


def hand_rules(frame):
    """The rule each patient falls into, computed directly (0, 1, 2 = ELSE)."""
    first = (frame["Age"] >= 70) & (frame["BedSores"] == "yes")
    second = frame["Ward"] == "surgical"
    return np.where(first, 0, np.where(second, 1, 2))


def test_the_numbers_equal_independent_computations():
    frame = new_table()
    result = validate_model(model_dict(), frame, data_name="2025.csv")
    event = (frame["readmitted"] == "<30").to_numpy()
    risk = np.asarray(RISKS)[hand_rules(frame)]
    assert result.n == 3000 and result.events == int(event.sum())
    assert result.auroc == pytest.approx(roc_auc_score(event, risk), abs=1e-12)
    assert result.auroc_ci[0] < result.auroc < result.auroc_ci[1]
    assert result.brier == pytest.approx(np.mean((risk - event) ** 2))
    refit = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(logit(risk).reshape(-1, 1), event)
    assert result.calibration_slope == pytest.approx(refit.coef_[0, 0], abs=1e-6)
    a = optimize.brentq(lambda a: np.sum(event - expit(a + logit(risk))), -5, 5, xtol=1e-14)
    assert result.calibration_intercept == pytest.approx(a, abs=1e-8)
    # per rule: patients captured and events, by hand
    rule = hand_rules(frame)
    for check in result.rules:
        inside = rule == check.position
        assert check.n == int(inside.sum()) and check.events == int(event[inside].sum())
        assert check.observed == pytest.approx(event[inside].mean())
        assert check.lower < check.observed < check.upper
    assert [c.rule for c in result.rules] == ["Age >= 70 AND BedSores", "Ward = surgical", ""]
    # the decision curve by hand at two thresholds
    curve = result.net_benefit
    for t in (0.1, 0.3):
        i = curve.thresholds.index(t)
        treated = risk >= t
        tp, fp = np.sum(treated & event), np.sum(treated & ~event)
        assert curve.model[i] == pytest.approx(tp / 3000 - fp / 3000 * t / (1 - t))
        assert curve.treat_all[i] == pytest.approx(event.mean() - (1 - event.mean()) * t / (1 - t))


def test_extra_columns_are_ignored_and_the_outcome_maps_event_against_the_rest():
    frame = new_table(seed=1)
    base = validate_model(model_dict(), frame)
    extra = frame.assign(Unused=np.arange(len(frame)).astype(str), Weird=np.nan)
    assert validate_model(model_dict(), extra).to_dict()["auroc"] == base.to_dict()["auroc"]
    # ">30" is not an event: relabelling it does not change anything
    relabelled = frame.assign(readmitted=frame["readmitted"].replace(">30", "later"))
    assert validate_model(model_dict(), relabelled).events == base.events == int((frame["readmitted"] == "<30").sum())


def test_flags_mark_rates_that_rise_and_rates_that_disagree_with_the_model():
    # the truth inverts the first two rules: the second rule's observed rate rises above the first's
    frame = new_table(n=6000, seed=2, truth=(0.2, 0.45, 0.08))
    result = validate_model(model_dict(), frame)
    first, second, default = result.rules
    assert "outside" in first.flags and first.upper < 0.6  # observed ~0.2 against a model risk of 0.6
    assert "rises" in second.flags and "outside" in second.flags
    assert default.flags == ()
    assert [r.position for r in result.overall.flagged] == [0, 1]


def test_a_well_calibrated_list_is_flagged_outside_about_as_often_as_a_95_percent_interval_misses():
    flags = []
    for seed in range(150):
        result = validate_model(model_dict(), new_table(n=1500, seed=100 + seed, truth=RISKS))
        flags += [r.flags for r in result.rules]
    outside = np.mean(["outside" in f for f in flags])
    assert 0.02 <= outside <= 0.09
    assert not any("rises" in f for f in flags)  # 60%, 25%, 8% on hundreds of patients each never swap


def test_with_a_credible_interval_the_flag_counts_both_uncertainties():
    """A risk of 6.0% known to 4.8-7.2% against 85 events in 977 new patients (8.7%, Wilson 7.1-10.6%): the two
    intervals overlap, yet the count is more than the uncertain risk explains (beta-binomial, p about 0.01), so
    the rule is flagged; 62 events (6.3%) are not.  A risk known exactly (a zero-width interval) is the point test."""
    from frl_engine.validation.external import _disagrees_with_interval
    from frl_engine.validation.metrics import wilson_interval

    lo, hi = wilson_interval(85, 977)
    assert lo < 0.072  # the intervals overlap: a test of overlap would say nothing
    assert _disagrees_with_interval(85, 977, 0.06, 0.048, 0.072)
    assert not _disagrees_with_interval(62, 977, 0.06, 0.048, 0.072)
    assert _disagrees_with_interval(40, 977, 0.06, 0.048, 0.072)  # fewer events than explained, too
    assert _disagrees_with_interval(85, 977, 0.06, 0.06, 0.06) == (not wilson_interval(85, 977)[0] <= 0.06)
    # calibrated: when the new patients' risk is drawn from the model's own uncertainty, about 1 in 20 is flagged
    rng = np.random.default_rng(0)
    truth = rng.beta(0.06 * 1515, 0.94 * 1515, 4000)  # sd 0.0061: the interval 4.8-7.2%
    flagged = np.mean([_disagrees_with_interval(int(rng.binomial(977, p)), 977, 0.06, 0.048, 0.072) for p in truth])
    assert 0.02 <= flagged <= 0.07, flagged


def test_with_a_wide_credible_interval_a_near_rate_is_not_flagged():
    frame = new_table(n=3000, seed=4, truth=(0.5, 0.25, 0.08))
    point = validate_model(model_dict(), frame)
    assert "outside" in point.rules[0].flags or point.rules[0].upper < 0.6
    # a wide credible interval on rule 1 that overlaps the observed interval: no "outside" flag
    wide = {"n_samples": 1000, "risk_median": list(RISKS), "risk_lower": [0.4, 0.2, 0.07], "risk_upper": [0.7, 0.3, 0.09]}
    with_interval = validate_model(model_dict(posterior=wide), frame)
    first = with_interval.rules[0]
    assert (first.model_lower, first.model_upper) == (0.4, 0.7)
    assert "outside" not in first.flags
    assert first.lower <= 0.7 and first.upper >= 0.4


def test_subgroups_equal_the_validation_of_each_group_alone():
    frame = new_table(n=4000, seed=5)
    result = validate_model(model_dict(), frame, by="Sex")
    assert [s.label for s in result.subgroups] == ["F", "M"]
    for s in result.subgroups:
        alone = validate_model(model_dict(), frame[frame["Sex"] == s.label].reset_index(drop=True))
        assert s.metrics.n == alone.n and s.metrics.auroc == pytest.approx(alone.auroc)
        assert s.metrics.calibration_slope == pytest.approx(alone.calibration_slope)
    assert sum(s.metrics.n for s in result.subgroups) == 4000


def test_a_numeric_by_column_is_cut_into_rounded_quartile_bands_and_missing_is_its_own_group():
    ages = pd.Series([23, 31, 38, 44, 47, 52, 58, 61, 66, 70, 74, 81, 88, np.nan])
    labels, order = subgroup_labels(ages, "Age")
    assert order[-1] == "Age missing" and labels[-1] == "Age missing"
    assert order[0].startswith("Age < ") and order[-2].startswith("Age >= ")
    assert len(order) == 5 and all((labels == label).any() for label in order)
    few, few_order = subgroup_labels(pd.Series([10, 2, 10, 2]), "Band")
    assert few_order == ["2", "10"]  # numbers in numeric order
    # numbers written as text with '?' markers are banded too; the markers are missing
    text = pd.Series([str(v) for v in range(20, 95)] + ["?"] * 5, dtype=object)
    labels, order = subgroup_labels(text, "Age")
    assert order[-1] == "Age missing" and (labels == "Age missing").sum() == 5 and len(order) == 5
    with pytest.raises(DataError, match="'Name' has 40 different values"):
        subgroup_labels(pd.Series([f"patient {i}" for i in range(40)]), "Name")


def test_a_subgroup_without_events_keeps_its_counts_and_says_why_there_is_no_auroc():
    frame = new_table(n=2000, seed=6)
    frame.loc[frame["Sex"] == "M", "readmitted"] = "NO"
    result = validate_model(model_dict(), frame, by="Sex")
    men = [s for s in result.subgroups if s.label == "M"][0].metrics
    assert men.events == 0 and np.isnan(men.auroc) and "no events" in men.notes[0]
    assert men.brier == pytest.approx(np.mean(np.asarray(RISKS)[hand_rules(frame[frame["Sex"] == "M"])] ** 2))


def test_the_result_round_trips_through_json_and_its_summary_goes_into_the_model():
    frame = new_table(seed=7)
    result = validate_model(model_dict(), frame, data_name="2025.csv", by="Ward")
    text = result.to_json()
    again = ExternalValidation.from_json(text)
    assert again.to_dict() == json.loads(text)
    assert again.auroc == result.auroc and again.rules == result.rules and again.net_benefit == result.net_benefit
    keys = set(json.loads(text))
    assert {"n", "events", "auroc", "auroc_ci", "brier", "calibration_intercept", "calibration_slope",
            "net_benefit", "rules", "subgroups"} <= keys
    model = attach_to_model(model_dict(), result)
    block = model["external_validation"]
    assert block["auroc"] == result.auroc and block["n"] == 3000 and block["data_name"] == "2025.csv"
    assert "external_validation" not in model_dict()
    assert result.headline().startswith(f"AUROC {result.auroc:.2f} (95% CI ")


# ------------------------------------------------------------------ bad second files: one line each
def message(frame, model=None, **kwargs):
    with pytest.raises(DataError) as info:
        validate_model(model or model_dict(), frame, data_name="new.csv", **kwargs)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_missing_outcome_column():
    text = message(new_table().drop(columns=["readmitted"]))
    assert "no outcome column 'readmitted'" in text and "new.csv" in text


def test_no_events_and_only_events():
    frame = new_table()
    assert "has no events" in message(frame.assign(readmitted="NO")) and "<30" in message(frame.assign(readmitted="NO"))
    assert "every patient has readmitted = <30" in message(frame.assign(readmitted="<30"))


def test_one_row():
    assert "has 1 row of patients" in message(new_table().head(1))


def test_a_handful_of_events_is_said_to_judge_nothing_and_the_card_says_so_too():
    """Three new patients with one event validate (the numbers are computed), but the result says they are too few to
    judge the model, and the card's back does not print "externally validated" from them; at 10 events it does."""
    from test_card_external import back_text
    from frl_engine.card import render_card  # noqa: F401  (back_text renders)

    frame = new_table(n=3000, seed=4)
    events = frame["readmitted"] == "<30"
    few = pd.concat([frame[events].head(1), frame[~events].head(2)])
    result = validate_model(model_dict(), few, data_name="three.csv")
    assert result.n == 3 and result.events == 1
    note = next(n for n in result.notes if "too few to judge" in n)
    assert note.startswith("only 1 of these patients has the event")
    # no interval can be computed from one event: the headline leaves it out rather than print "nan-nan"
    assert result.headline() == f"AUROC {result.auroc:.2f} on 3 patients (1 event)"
    back = back_text(attach_to_model(model_dict(), result))
    assert "only 1 event: too few to judge the list" in back and "externally validated" not in back
    from frl_engine.validation.report import validation_report_html

    report = validation_report_html(result)
    assert "Too few new patients to judge the list" in report and "Externally validated" not in report
    # nine of 400 without the event: the other side is counted too
    mostly = pd.concat([frame[events].head(391), frame[~events].head(9)])
    result = validate_model(model_dict(), mostly, data_name="mostly.csv")
    assert any(n.startswith("only 9 of these patients are without the event") for n in result.notes)
    enough = pd.concat([frame[events].head(10), frame[~events].head(200)])
    result = validate_model(model_dict(), enough, data_name="enough.csv")
    assert not any("too few to judge" in n for n in result.notes)
    assert "externally validated: AUROC" in back_text(attach_to_model(model_dict(), result))


def test_empty_outcome_cells():
    frame = new_table()
    frame.loc[[3, 9], "readmitted"] = np.nan
    assert "2 empty cells" in message(frame)


def test_missing_model_columns_are_named():
    text = message(new_table().drop(columns=["Ward", "BedSores"]))
    assert "lacks the columns the model uses: 'BedSores', 'Ward'" in text


def test_a_numeric_column_that_became_text():
    frame = new_table().astype({"Age": object})
    frame.loc[frame.index[::4], "Age"] = "seventy"  # a quarter of the ages: the column's type has changed
    text = message(frame)
    assert "'Age' holds text such as 'seventy'" in text and "Age >= 70" in text


def test_a_few_text_results_among_numbers_are_missing_and_the_result_says_so():
    frame = new_table().astype({"Age": object})
    frame.loc[[5, 9], "Age"] = "pending"  # 2 of 3,000: read as missing, not an error
    result = validate_model(model_dict(), frame, data_name="new.csv")
    assert any("'Age'" in note and "'pending'" in note and "2 patients" in note for note in result.overall.notes)
    ages = pd.to_numeric(frame["Age"], errors="coerce")
    rows = result.overall.n
    assert rows == len(frame)
    # the two patients match no Age threshold: they fall below the Age rule, as a missing age does
    clean = validate_model(model_dict(), frame.assign(Age=ages), data_name="new.csv")
    assert clean.overall.auroc == pytest.approx(result.overall.auroc)
    assert not any("'Age'" in note for note in clean.overall.notes)


def test_a_yes_no_column_that_no_longer_reads_yes_no():
    frame = new_table().assign(BedSores=lambda f: f["BedSores"].map({"yes": "grade 2", "no": "none"}))
    assert "'BedSores' holds" in message(frame) and "yes/no" in message(frame)


def test_a_recoded_category_column():
    frame = new_table().assign(Ward=lambda f: f["Ward"].map({"medical": "MED", "surgical": "SUR", "icu": "ITU"}))
    text = message(frame)
    assert "'Ward' has none of the categories the model knows" in text and "'ITU'" in text


def test_a_bad_by_column():
    assert "--by column 'Height' is not in new.csv" in message(new_table(), by="Height")


def test_a_rise_counts_only_when_chance_does_not_explain_it():
    from frl_engine.validation.external import population_metrics

    def checks(n_events):  # (patients, events) per rule, top first
        rule_index = np.concatenate([np.full(n, i) for i, (n, _) in enumerate(n_events)])
        event = np.concatenate([np.arange(n) < k for n, k in n_events])
        return population_metrics(model_dict(), rule_index, event).rules

    small = checks([(10, 3), (10, 4), (100, 8)])  # 30% then 40% on ten patients each: noise
    assert "rises" not in small[1].flags
    large = checks([(100, 30), (200, 120), (300, 24)])  # 30% then 60%: Fisher p ~ 1e-6
    assert "rises" in large[1].flags and "rises" not in large[2].flags


def test_validating_a_model_that_already_carries_a_validation_names_the_same_model():
    frame = new_table(seed=8)
    first = validate_model(model_dict(), frame)
    again = validate_model(attach_to_model(model_dict(), first), frame)
    assert again.model_id == first.model_id and again.auroc == first.auroc


def test_a_list_without_rules_ranks_no_one_and_says_so():
    model = model_dict()
    model["rules"], model["parameters"]["gammas"] = [], [1.0]
    model["default"]["support"] = model["training"]["n_rows"]   # an empty list's ELSE holds every patient
    frame = new_table(seed=9)
    result = validate_model(model, frame)
    event = (frame["readmitted"] == "<30").to_numpy()
    assert result.auroc == 0.5 and np.isnan(result.calibration_slope) and "no ranking" in result.notes[0]
    a = optimize.brentq(lambda a: np.sum(event - expit(a + logit(RISKS[2]))), -5, 5, xtol=1e-14)
    assert result.calibration_intercept == pytest.approx(a, abs=1e-8)


def test_a_category_written_in_another_case_is_the_same_category():
    frame = new_table().assign(Ward=lambda f: f["Ward"].str.upper())  # "ICU" for the model's "icu"
    upper = validate_model(model_dict(), frame, data_name="new.csv")
    same = validate_model(model_dict(), new_table(), data_name="new.csv")
    assert upper.overall.auroc == pytest.approx(same.overall.auroc)


def _diagnosis_model() -> dict:
    """The hand-written list with its surgical rule on a diagnosis group instead: diag_1 starts with 428."""
    model = model_dict()
    model["rules"][1] = {"name": "diag_1 starts with 428",
                         "conditions": [{"column": "diag_1", "op": "starts with", "value": "428"}],
                         "probability": RISKS[1], "support": 600, "n_positive": 150}
    model["binarizer"]["columns"].append({"name": "diag_1", "kind": "code", "thresholds": [], "categories": ["428.0"],
                                          "prefixes": ["428", "42", "V"], "has_missing": False})
    return model


@pytest.mark.parametrize("n", [1, 2, 40, 120])
def test_a_few_patients_with_other_diagnosis_codes_are_not_called_recoded(n):
    """Each code group the model knows held at least min_support (5%) of the training patients, so 40 new
    patients all lacking them happen by chance 13% of the time: ordinary, not a recoded column."""
    from frl_engine.validation.external import check_columns
    rng = np.random.default_rng(n)
    frame = new_table(n=max(n, 1), seed=n).assign(diag_1=rng.choice(["250.01", "486", "E878", "038.9"], size=max(n, 1)))
    check_columns(_diagnosis_model(), frame)  # no DataError


def test_a_whole_table_of_icd10_codes_against_an_icd9_model_is_called_recoded():
    from frl_engine.validation.external import check_columns
    rng = np.random.default_rng(0)
    frame = new_table(n=300).assign(diag_1=rng.choice(["E11.9", "I50.9", "J18.9", "N18.3"], size=300))
    with pytest.raises(DataError, match="'diag_1' has none of the categories the model knows"):
        check_columns(_diagnosis_model(), frame)
    # one patient of a closed set of labels is enough: the model knew every ward
    with pytest.raises(DataError, match="'Ward' has none of the categories the model knows"):
        check_columns(model_dict(), new_table(n=1).assign(Ward="ITU"))


def test_a_ward_the_model_has_no_item_for_is_noted_and_a_rare_one_is_not():
    frame = new_table(n=2000, seed=3)
    assert not any("no item for" in note for note in validate_model(model_dict(), frame).overall.notes)
    opened = frame.copy()
    opened.loc[:299, "Ward"] = "oncology"  # 15%: a new ward
    opened.loc[300:304, "Ward"] = "day unit"  # 5 patients: below what any level needed to make an item
    notes = [n for n in validate_model(model_dict(), opened).overall.notes if "no item for" in n]
    assert len(notes) == 1
    assert "column 'Ward'" in notes[0] and "'oncology' (300 patients, 15.0%)" in notes[0]
    assert "they meet none of its '=' conditions" in notes[0] and "day unit" not in notes[0]


def test_a_column_renamed_in_case_is_named_in_the_message():
    frame = new_table(n=200).rename(columns={"Age": "AGE", "Ward": " ward "})
    with pytest.raises(DataError, match=r"did you mean 'AGE' for 'Age', ' ward ' for 'Ward'\? Rename them as at fit"):
        validate_model(model_dict(), frame)


def test_subgroups_of_a_coded_column_are_named_with_their_column():
    from frl_engine.validation.external import format_validation
    frame = new_table(n=2000).assign(Unit=lambda f: np.where(f.index % 2 == 0, 3, 12))
    text = format_validation(validate_model(model_dict(), frame, by="Unit"))
    assert "Subgroup Unit = 3:" in text and "Subgroup Unit = 12:" in text


@pytest.mark.parametrize("written", [("Y", "N"), ("1", "0"), (1, 0), ("TRUE", "FALSE")])
def test_a_yes_no_outcome_written_another_way_is_read_as_yes_and_no(written):
    from frl_engine.validation.external import event_matches
    yes, no = written
    values = pd.Series([yes, no, no, yes, no])
    assert event_matches(values, "Yes").tolist() == [True, False, False, True, False]
    # a value that is not yes/no keeps the old answer: no event found, and the message asks for --positive
    assert not event_matches(pd.Series([yes, no, "maybe"]), "Yes").any()


def _model_with_event(event: str) -> dict:
    """The test model, its event written ``event`` (against ``N``)."""
    model = model_dict()
    model["outcome"].update(positive_class=event, classes=sorted(["N", event]))
    return model


def _outcome_written(frame: pd.DataFrame, event: str, other: str) -> pd.DataFrame:
    """The table with its readmissions within 30 days written ``event`` and every other outcome ``other``."""
    return frame.assign(readmitted=np.where(frame["readmitted"] == "<30", event, other))


def test_an_event_read_another_way_is_named_in_the_report_and_changes_no_number():
    """A model fitted on Y / N, validated on a table that writes yes / no: the events are read as yes, and the
    report says which values were read as the event, so a clinician can check the figures rest on the right ones."""
    model, frame = _model_with_event("Y"), new_table(n=1500)
    literal, reworded = _outcome_written(frame, "Y", "N"), _outcome_written(frame, "yes", "no")
    as_written, as_yes = validate_model(model, literal), validate_model(model, reworded)
    assert as_yes.overall.auroc == as_written.overall.auroc and as_yes.overall.events == as_written.overall.events
    note = [n for n in as_yes.overall.notes if "as written" in n]
    assert note == ["no cell of 'readmitted' holds the model's event 'Y' as written: 'yes' was read as the event; if "
                    "that is not the event in this table, name it (--positive)"]
    assert not [n for n in as_written.overall.notes if "as written" in n]
    # the event named by the user as this table writes it: nothing was guessed, so nothing to say
    named = validate_model(model, reworded, positive="yes")
    assert not [n for n in named.overall.notes if "as written" in n] and named.overall.auroc == as_written.overall.auroc


def test_a_checkbox_outcome_counts_its_blanks_as_no_event_in_the_new_table_too():
    """Fitted with the event X on a column of X and blanks, validated on a later table written the same way: the
    blanks are no event, as at fit time (the same figures as the table written X / N), and the report says so; a '?'
    among them still means not known."""
    from frl_engine.errors import MissingOutcomeError

    model, frame = _model_with_event("X"), new_table(n=1500)
    written, boxed = _outcome_written(frame, "X", "N"), _outcome_written(frame, "X", "")
    full, checkbox = validate_model(model, written), validate_model(model, boxed)
    assert checkbox.overall.auroc == full.overall.auroc and checkbox.overall.events == full.overall.events
    n_blank = int((boxed["readmitted"] == "").sum())
    assert [n for n in checkbox.overall.notes if "blank" in n] == [
        f"readmitted holds X and blanks: the {n_blank:,} blank cells count as no event (a checkbox outcome)"]
    assert not [n for n in full.overall.notes if "blank" in n]
    unknown = boxed.copy()
    unknown.loc[unknown.index[:5], "readmitted"] = "?"
    with pytest.raises(MissingOutcomeError):
        validate_model(model, unknown)


def test_a_rule_catching_a_far_different_share_or_no_one_is_named_with_its_columns(tmp_path, capsys):
    """The hand list's surgical rule caught 30% at fit time (600 of 2,000).  New patients whose ward is written
    'Surgical ward' reach it never, the largest shift there is: named, as a rule catching half as many is, by
    validation and by ``frl predict``, which has no population figures to show it otherwise."""
    from frl_engine.cli import main

    same = validate_model(model_dict(), new_table())
    assert not [n for n in same.notes if "at fit time: check" in n]      # about a third: no note
    renamed = new_table().assign(Ward=lambda f: f["Ward"].replace({"surgical": "Surgical ward"}))
    result = validate_model(model_dict(), renamed)
    said = [n for n in result.notes if "at fit time: check" in n]
    assert said == ["rule 2 (Ward = surgical) catches none of these patients against 30.0% at fit time: check that "
                    "Ward is recorded in the same units and coding"]
    few = new_table()
    few.loc[few.index[few["Ward"].eq("surgical")][: int(0.6 * few["Ward"].eq("surgical").sum())], "Ward"] = "medical"
    share = 100 * (hand_rules(few) == 1).mean()
    assert 10 < share < 15
    assert [n for n in validate_model(model_dict(), few).notes if "at fit time: check" in n] == [
        f"rule 2 (Ward = surgical) catches {share:.1f}% of these patients against 30.0% at fit time: check that Ward "
        "is recorded in the same units and coding"]
    model, table = tmp_path / "model.json", tmp_path / "new.csv"
    model.write_text(json.dumps(model_dict()))
    renamed.drop(columns="readmitted").to_csv(table, index=False)
    assert main(["predict", str(model), str(table), "--out", str(tmp_path / "scored.csv")]) == 0
    assert "rule 2 (Ward = surgical) catches none of these patients against 30.0% at fit time" in capsys.readouterr().err


def test_a_column_as_empty_as_at_fit_time_is_not_reported_and_one_much_emptier_is():
    """UCI's diabetes export leaves A1Cresult empty ('None') for most encounters: a list fitted on such patients
    reads new ones the same way, so 'their risk is read too low' would be a false alarm every time.  The model file
    keeps each column's missing share; a new table is reported when it is 1.5 times as empty and 5 points more."""
    from frl_engine.binarize import Binarizer

    model = model_dict()
    ward = next(c for c in model["binarizer"]["columns"] if c["name"] == "Ward")
    ward["missing"] = 0.6
    rng = np.random.default_rng(3)

    def emptied(share):
        frame = new_table(seed=4)
        frame.loc[rng.random(len(frame)) < share, "Ward"] = None
        return frame

    def empty_notes(frame):
        return [n for n in validate_model(model, frame).notes if "'Ward' is empty" in n]

    assert empty_notes(emptied(0.6)) == []
    said = empty_notes(emptied(0.95))
    assert len(said) == 1 and "against 60.0% at fit time" in said[0]
    ward.pop("missing")                                    # an older model file: no share kept, said as before
    assert len(empty_notes(emptied(0.6))) == 1
    # the share is what a fit keeps: a column empty for a third of the rows
    frame = pd.DataFrame({"A1C": rng.choice([">8", "Norm", None], size=900, p=[0.3, 0.37, 0.33]),
                          "Age": rng.integers(20, 90, size=900)})
    specs = {s.name: s.to_dict() for s in Binarizer().fit(frame).specs_}
    assert specs["A1C"]["missing"] == pytest.approx(frame["A1C"].isna().mean(), abs=1e-4)
    assert "missing" not in specs["Age"]


def test_encounters_of_repeated_patients_are_counted_as_rows_of_patients_as_fit_counts_them():
    """A model fitted on encounters (training.patient_column: the patient number repeats) validated on 3,000 new
    encounters of 2,000 patients: the result, its text, the model block and the card say 3,000 rows of 2,000
    patients, not 3,000 patients. A table without that column, or with one row per patient, is counted as before."""
    from frl_engine.card import external_line

    model = model_dict()
    model["training"].update(patient_column="pid", n_patients=1500)
    frame = new_table(n=3000, seed=6)
    frame["pid"] = np.arange(3000) % 2000
    result = validate_model(model, frame, data_name="2025.csv")
    assert result.patients == ("pid", 2000) and result.n == 3000
    assert "rows 3,000 of 2,000 patients (pid)" in result.format_text()
    assert result.headline().endswith(f"on 3,000 rows of 2,000 patients ({result.events:,} events)")
    assert ExternalValidation.from_json(result.to_json()).patients == ("pid", 2000)
    line = external_line(attach_to_model(model, result))
    assert "on 3,000 rows of 2,000 patients (2025.csv)" in line
    for table in (frame.drop(columns="pid"), frame.assign(pid=np.arange(3000))):
        again = validate_model(model, table, data_name="2025.csv")
        assert again.patients is None and "patients 3,000" in again.format_text()


def test_rules_each_within_chance_but_the_whole_list_too_high_is_said():
    """A list whose every risk is a little too high for the new patients: no rule alone is flagged on a small table,
    yet the calibration intercept's interval leaves out 0, and the verdict said 'agrees with the model'."""
    frame = new_table(n=900, seed=5, truth=(0.48, 0.2, 0.055))   # each rule about a fifth lower than printed
    result = validate_model(model_dict(), frame, data_name="2025.csv")
    o = result.overall
    assert not o.flagged and o.calibration_intercept_ci[1] < 0
    note = o.overall_calibration_note()
    assert note.startswith("but overall its risks are too high for these patients (calibration intercept -0.")
    assert f"within chance of its printed risk and the rates fall down the list, {note}" in result.format_text()
    calibrated = validate_model(model_dict(), new_table(n=900, seed=5, truth=RISKS)).overall
    assert calibrated.overall_calibration_note() is None
    assert "within chance of its printed risk and the rates fall down the list\n" in (
        validate_model(model_dict(), new_table(n=900, seed=5, truth=RISKS)).format_text() + "\n")


def test_a_subgroup_with_too_few_events_says_its_figures_say_little():
    """`frl validate ... --by sex` on R's pbc printed 'sex = m: patients 17, events 4 ... AUROC 0.654' with no note,
    where the whole table of that size gets one."""
    frame = new_table(n=2000, seed=1)
    frame["Site"] = np.where(np.arange(2000) < 30, "small clinic", "university hospital")
    result = validate_model(model_dict(), frame, by="Site")
    small = next(s for s in result.subgroups if s.label == "small clinic")
    large = next(s for s in result.subgroups if s.label == "university hospital")
    assert small.metrics.too_few_to_judge and any("too few to judge the model" in n for n in small.metrics.notes)
    assert not any("too few" in n for n in large.metrics.notes)
    assert "note: only " in result.format_text().split("Subgroup Site = small clinic:")[1]


def test_a_decision_curve_useful_at_one_threshold_says_so_not_a_range_of_one():
    """'for thresholds 26.0% to 26.0%' read as a range."""
    import dataclasses

    from frl_engine.validation.external import DecisionCurve, format_metrics

    overall = validate_model(model_dict(), new_table(n=900, seed=5)).overall
    one = DecisionCurve((0.25, 0.26, 0.27), (0.01, 0.05, 0.0), (0.02, 0.01, -0.01))
    lines = format_metrics(dataclasses.replace(overall, net_benefit=one))
    assert "decision curve: the list beats treating everyone and no one at the threshold 26.0% only" in lines
    two = DecisionCurve((0.25, 0.26, 0.27), (0.03, 0.05, 0.0), (0.02, 0.01, -0.01))
    assert ("decision curve: the list beats treating everyone and no one for thresholds 25.0% to 26.0%"
            in format_metrics(dataclasses.replace(overall, net_benefit=two)))


def test_a_decision_curve_with_a_gap_names_each_range_where_the_list_helps():
    """WCGS: the list helped at 4% to 17% and 29% to 38%, did harm between, and the caption said '4% to 38%'."""
    from frl_engine.validation.external import DecisionCurve

    thresholds = tuple(round(0.01 * t, 2) for t in range(1, 11))
    model = (0.10, 0.09, 0.08, -0.01, -0.02, 0.05, 0.04, 0.0, 0.02, -0.03)   # beats both at 1-3%, 6-7%, 9%
    curve = DecisionCurve(thresholds, model, tuple(0.05 - 0.01 * t for t in range(1, 11)))
    assert curve.useful_intervals() == [(0.01, 0.03), (0.06, 0.07), (0.09, 0.09)]
    assert curve.useful_text() == "thresholds 1% to 3%, 6% to 7% and 9%"
    assert curve.useful_range() == (0.01, 0.09)   # the outer bounds, as before
    assert DecisionCurve((0.1, 0.2), (-0.1, -0.2), (0.0, -0.1)).useful_text() is None
    assert DecisionCurve((0.1, 0.2), (0.1, 0.1), (0.0, -0.1)).useful_text() == "thresholds 10% to 20%"


def test_a_renamed_column_is_offered_by_its_spelling():
    """'chronic' renamed 'n_chronic' in the new export: refused, as before, now with the column it may be."""
    from frl_engine.validation.external import check_columns_present

    model = {"rules": [{"conditions": [{"column": "chronic"}]}]}
    with pytest.raises(DataError, match="did you mean 'n_chronic' for 'chronic'\\? Rename it as at fit time"):
        check_columns_present(model, pd.DataFrame({"n_chronic": [1], "age": [60]}), "new.csv")
    with pytest.raises(DataError) as unrelated:
        check_columns_present(model, pd.DataFrame({"age": [60]}), "new.csv")
    assert "did you mean" not in str(unrelated.value)
