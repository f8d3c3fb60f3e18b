"""The card's back says when and how the list was externally validated (`frl validate --model-out`)."""

import pytest

from frl_engine.card import render_card
from frl_engine.errors import ModelFileError
from frl_engine.validation.external import attach_to_model, validate_model
from test_card import make_model, page_text, pdf_pages
from test_validation_external import model_dict, new_table


def back_text(model) -> str:
    return page_text(pdf_pages(render_card(model))[1])


def test_the_back_prints_the_external_auroc_with_its_interval_and_patients():
    model = make_model()
    model["external_validation"] = {"data_name": "2025.csv", "n": 5000, "events": 600, "auroc": 0.781,
                                    "auroc_ci": [0.744, 0.812], "brier": 0.1}
    back = back_text(model)
    assert "externally validated: AUROC 0.78 (95% CI 0.74–0.81) on 5,000 patients (2025.csv)" in back
    assert "AUROC 0.80 ± 0.02" in back  # the cross-validation stays
    assert "not externally validated" not in back


def test_without_cross_validation_the_external_line_stands_alone():
    model = make_model(validation=False)
    model["external_validation"] = {"n": 1200, "auroc": 0.7, "auroc_ci": [0.65, 0.75]}
    back = back_text(model)
    assert "externally validated: AUROC 0.70 (95% CI 0.65–0.75) on 1,200 patients" in back
    assert "not externally validated" not in back


def test_frl_validate_model_block_reaches_the_card():
    result = validate_model(model_dict(), new_table(n=2000, seed=0), data_name="2025.csv")
    back = back_text(attach_to_model(model_dict(), result))
    lo, hi = result.auroc_ci
    assert f"externally validated: AUROC {result.auroc:.2f} (95% CI {lo:.2f}–{hi:.2f}) on 2,000 patients" in back


def test_a_damaged_block_is_refused():
    model = make_model()
    model["external_validation"] = {"n": 100, "auroc": 1.7}
    with pytest.raises(ModelFileError, match="external_validation.auroc"):
        render_card(model)


def test_a_validation_that_flagged_rules_is_said_on_the_back_not_hidden_behind_its_auroc():
    """New patients ranked well (AUROC 0.81) but the observed rates disagreed with some or all of the card's risks:
    the back says which, so the risks on the front are not read as validated (found by an outside-in sweep)."""
    model = make_model(validation=False)
    n_rules = len(model["rules"])
    block = {"data_name": "2025.csv", "n": 4000, "events": 249, "auroc": 0.81, "auroc_ci": [0.79, 0.83]}
    model["external_validation"] = dict(block, flagged_rules=[1, n_rules + 1])
    back = " ".join(back_text(model).split())
    assert "on 4,000 patients (2025.csv); there the observed risk disagrees with rules 1 and ELSE: check them" in back
    model["external_validation"] = dict(block, flagged_rules=list(range(1, n_rules + 2)))
    assert "disagrees with every rule: recalibrate before use" in " ".join(back_text(model).split())
    model["external_validation"] = dict(block, flagged_rules=[])
    back = " ".join(back_text(model).split())
    assert "on 4,000 patients (2025.csv)" in back and "disagrees" not in back


def test_the_flagged_rules_are_named_as_a_reader_says_them():
    from frl_engine.card import _flagged_text

    assert _flagged_text([4], 3) == "; there the observed risk disagrees with the ELSE rule: check it before use"
    assert _flagged_text([2], 3) == "; there the observed risk disagrees with rule 2: check it before use"
    assert _flagged_text([1, 4], 3) == "; there the observed risk disagrees with rules 1 and ELSE: check them before use"
    assert _flagged_text([1, 2, 3, 4], 3) == "; there the observed risk disagrees with every rule: recalibrate before use"
    assert _flagged_text([7], 3) == "" and _flagged_text([], 3) == ""
