"""An outcome of three or more values whose event is several of them: "any readmission" is ``<30`` or ``>30``
against ``NO`` (``frl fit --positive '<30' --positive '>30'``, the dashboard's "Also counts as the event").

The event vector must be exactly the rows holding any of the values, the model file must say so in a way that
validation on new patients reads back, and every printed place must name the event as ``<30 or >30``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from pypdf import PdfReader

from frl_engine.cli import main
from frl_engine.errors import DataError
from frl_engine.io import event_label, event_values, split_target
from frl_engine.validation.external import event_matches


def _readmissions(n=1500, seed=0) -> pd.DataFrame:
    """Prior admissions drive any readmission (risk .65 from 2 admissions, .25 below); a third of them are early."""
    rng = np.random.default_rng(seed)
    admissions = rng.integers(0, 5, n)
    readmitted = rng.random(n) < np.where(admissions >= 2, 0.65, 0.25)
    early = rng.random(n) < 1 / 3
    outcome = np.where(~readmitted, "NO", np.where(early, "<30", ">30"))
    return pd.DataFrame({"number_inpatient": admissions, "age": rng.integers(20, 90, n), "readmitted": outcome})


def run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_several_values_make_an_event_of_any_of_them():
    frame = _readmissions(200)
    anyone = (frame["readmitted"] != "NO").to_numpy()
    for positive in (["<30", ">30"], ("<30", ">30"), "<30,>30", [" <30", ">30 ", "<30"]):
        features, event, chosen = split_target(frame, "readmitted", positive)
        assert np.array_equal(event, anyone), positive
        assert chosen == ("<30", ">30") and "readmitted" not in features.columns
    features, event, chosen = split_target(frame, "readmitted", [">30"])   # one value in a list: that value
    assert chosen == ">30" and np.array_equal(event, (frame["readmitted"] == ">30").to_numpy())
    assert event_values(None) == () and event_values("<30") == ("<30",) and event_label(("<30", ">30")) == "<30 or >30"


def test_a_missing_value_or_every_value_is_refused_with_what_to_do():
    frame = _readmissions(200)
    with pytest.raises(DataError, match=r"Event value '<31' does not occur.*values: <30, >30, NO"):
        split_target(frame, "readmitted", ["<30", "<31"])
    with pytest.raises(DataError, match="every patient has one of these values; leave one out"):
        split_target(frame, "readmitted", ["<30", ">30", "NO"])
    with pytest.raises(DataError, match="does not occur"):   # a comma text whose parts are not all values
        split_target(frame, "readmitted", "<30,<31")


def test_validation_matches_any_of_the_models_event_values():
    values = pd.Series(["NO", "<30", " >30", "no", ">30"])
    assert event_matches(values, ["<30", ">30"]).tolist() == [False, True, True, False, True]
    assert event_matches(values, "<30").tolist() == [False, True, False, False, False]


def test_the_command_line_fits_validates_and_prints_a_card_for_any_readmission(tmp_path, capsys, monkeypatch):
    train, new = tmp_path / "export.csv", tmp_path / "next_year.csv"
    frame, later = _readmissions(), _readmissions(seed=1)
    frame.to_csv(train, index=False)
    later.to_csv(new, index=False)
    model = tmp_path / "any.json"
    monkeypatch.setenv("FRL_REGISTRY", str(tmp_path / "models.db"))
    status, out, err = run(["fit", str(train), "--target", "readmitted", "--positive", "<30", "--positive", ">30",
                            "--out", str(model), "--register"], capsys)
    assert status == 0, err
    n_any = int((frame["readmitted"] != "NO").sum())
    assert f"The event is readmitted = '<30' or '>30' ({n_any:,} patients); 'NO' counts as not the event." in out
    assert "THEN readmitted = <30 or >30 risk is" in out
    assert "number_inpatient >= 2" in out                       # the rule that drives any readmission
    saved = json.loads(model.read_text())
    assert saved["outcome"]["positive_class"] == "<30 or >30"
    assert saved["outcome"]["event_values"] == ["<30", ">30"]
    assert saved["training"]["n_positive"] == n_any

    model_id = re.search(r"Registered as model ID (\w+)", out).group(1)
    status, out, err = run(["models", "show", model_id], capsys)
    assert status == 0 and "<30 or >30" in out and "('<30'" not in out, err   # the registry's event

    status, out, err = run(["validate", str(model), str(new)], capsys)
    assert status == 0, err
    n_later = int((later["readmitted"] != "NO").sum())
    assert "readmitted = <30 or >30" in out and f"events {n_later:,} " in out

    card = tmp_path / "card.pdf"
    status, out, err = run(["card", str(model), "--out", str(card)], capsys)
    assert status == 0, err
    text = " ".join(page.extract_text() for page in PdfReader(str(card)).pages)
    assert "readmitted = <30 or >30" in " ".join(text.split())

    # cross-validation takes the same flags and says the same event
    status, out, err = run(["evaluate", str(train), "--target", "readmitted", "--positive", "<30", "--positive", ">30",
                            "--folds", "2", "--methods", "FRL,LogReg", "--jobs", "1"], capsys)
    assert status == 0 and "export.csv: event readmitted = <30 or >30" in out, err
    assert f"({n_any} events" in out

    # one text with a comma reads as the same two values; a value that is not there is named, no traceback
    status, out, err = run(["fit", str(train), "--target", "readmitted", "--positive", "<30,>30"], capsys)
    assert status == 0 and "readmitted = '<30' or '>30'" in out
    status, out, err = run(["fit", str(train), "--target", "readmitted", "--positive", "<30", "--positive", "<31"],
                           capsys)
    assert status == 2 and "Event value '<31' does not occur" in err and "Traceback" not in err


def test_one_positive_flag_is_still_one_value(tmp_path, capsys):
    train = tmp_path / "export.csv"
    frame = _readmissions()
    frame.to_csv(train, index=False)
    model = tmp_path / "early.json"
    status, out, err = run(["fit", str(train), "--target", "readmitted", "--positive", "<30", "--out", str(model)],
                           capsys)
    assert status == 0, err
    assert "The event is readmitted = '<30'" in out and "'NO', '>30' count as not the event." in out
    outcome = json.loads(model.read_text())["outcome"]
    assert outcome["positive_class"] == "<30" and "event_values" not in outcome


def test_the_python_api_says_how_to_make_an_event_of_several_values():
    from frl_engine import FallingRuleListClassifier

    frame = _readmissions(300)
    y = frame.pop("readmitted")
    with pytest.raises(ValueError, match=r"numpy\.isin\(y, \['<30', '>30'\]\).*Only binary classification"):
        FallingRuleListClassifier(n_steps=100, n_chains=1).fit(frame, y)
    model = FallingRuleListClassifier(n_steps=500, n_chains=2, random_state=0).fit(frame, np.isin(y, ["<30", ">30"]))
    assert "number_inpatient >= 2" in model.rules_[0]


def test_number_codes_that_are_not_the_event_are_said_in_order(tmp_path, capsys):
    """R's Melanoma status: 1 died of melanoma, 2 alive, 3 died of another cause; the file holds 3 first."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"thickness": np.round(rng.lognormal(0.5, 0.8, 200), 2),
                          "status": [3] + list(rng.choice([1, 2, 3], 199))})
    path = tmp_path / "melanoma.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(["fit", str(path), "--target", "status", "--positive", "1"], capsys)
    assert status == 0, err
    assert out.splitlines()[0].endswith("); 2, 3 count as not the event.")


def test_none_is_the_no_event_value_of_an_outcome_without_another_no():
    """WCGS as a 3-valued outcome: none / arcus / CHD. 'None' was read as missing (by pandas, and by the outcome's
    markers): 2,058 of 3,154 patients 'missing', and leaving them out skewed every risk. Beside another no-event
    word (Yes / No / None) it is still missing; in a finding's column it is missing as before."""
    from frl_engine.columns import read_column
    from frl_engine.io import read_table, split_target

    text = "age,sex,outcome\n" + "".join(f"{50 + i % 30},{'None' if i % 7 == 0 else 'MF'[i % 2]},"
                                         f"{['None', 'None', 'arcus', 'CHD'][i % 4]}\n" for i in range(200))
    frame = read_table(text.encode(), "wcgs.csv")
    features, event, positive = split_target(frame, "outcome", "CHD")
    assert positive == "CHD" and len(features) == 200 and int(event.sum()) == 50
    assert read_column("sex", features["sex"]).missing_share == pytest.approx(29 / 200)
    yes_no = read_table(b"age,died\n61,Yes\n70,No\n55,None\n80,Yes\n", "yn.csv")
    with pytest.raises(DataError, match="1 missing values"):
        split_target(yes_no, "died")


def test_a_grade_whose_mild_end_is_named_takes_the_other_end_as_the_event():
    """HSAUR3's toenail: 'none or mild' / 'moderate or severe'; the event was 'none or mild', first in sorted order."""
    from frl_engine.io import default_event_reason, default_positive

    assert default_positive(["none or mild", "moderate or severe"]) == "moderate or severe"
    assert default_event_reason(["none or mild", "moderate or severe"]) == \
        "the other value, 'none or mild', names no event"
    assert default_positive(["Normal ECG", "ST elevation"]) == "ST elevation"
    assert default_positive(["A", "B"]) == "B"   # nothing says: the later, as before
