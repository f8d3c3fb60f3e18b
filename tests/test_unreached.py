"""A rule of the MAP list that no training patient reaches is removed (and said so), not printed with n = 0.

Under the paper's model a rule whose capture count is 0 leaves the likelihood unchanged, but the
prior of the risks (gamma_l ~ Gamma_1(alpha, beta)) can still prefer two smaller steps down to one
large one, so the exact MAP may keep such a "spacer".  It would print on a card with support 0 and a
risk set by the prior alone.
"""

from pathlib import Path

import numpy as np
import pytest

from frl_engine.cli import main
from frl_engine.datasets import load_dataset
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.model import Hyperparameters, PackedProblem, drop_unreached_rules, fit_list

UCI = Path(__file__).resolve().parents[2] / "shared" / "uci"
needs_uci = pytest.mark.skipif(not UCI.is_dir(), reason=f"UCI files not found at {UCI}")


def nested_problem():
    """40 rows; rule 0 covers rows 0-19, rule 1 rows 0-9 (inside rule 0), rule 2 rows 20-29."""
    coverage = np.zeros((40, 3), dtype=bool)
    coverage[:20, 0] = True
    coverage[:10, 1] = True
    coverage[20:30, 2] = True
    y = np.zeros(40, dtype=bool)
    y[:15] = True
    y[20:24] = True
    return PackedProblem.from_arrays(coverage, y, Hyperparameters(lam=8.0))


def test_a_rule_inside_an_earlier_one_is_dropped_and_the_risks_refitted():
    problem = nested_problem()
    with_spacer = fit_list(problem, [0, 1, 2])
    assert with_spacer.supports.tolist() == [20, 0, 10, 10]
    fit, dropped = drop_unreached_rules(problem, with_spacer)
    assert dropped == (1,)
    expected = fit_list(problem, [0, 2])
    assert fit.order == (0, 2)
    assert fit.log_posterior == pytest.approx(expected.log_posterior, abs=1e-12)
    assert np.allclose(fit.probabilities, expected.probabilities)
    assert fit.supports.tolist() == [20, 10, 10]
    assert np.all(np.diff(fit.probabilities) <= 1e-12)


def test_a_list_whose_rules_are_all_reached_is_returned_as_it_is():
    problem = nested_problem()
    reached = fit_list(problem, [1, 0, 2])  # the narrower rule first: everyone is reached
    fit, dropped = drop_unreached_rules(problem, reached)
    assert fit is reached and dropped == ()


@needs_uci
def test_the_car_list_at_a_low_support_loses_its_unreachable_rule_and_no_training_row_moves(capsys, tmp_path):
    """On UCI car evaluation (lam 8, support 1%, 2 conditions) the MAP list keeps a rule that earlier
    rules contain (`persons is not 2 AND safety = high`, `... safety = med`, then one that catches no car:
    two steps down cost the gamma prior less than one); the default fit removes it, every training car stays
    with the same group of cars, and `frl fit` says what it removed. (3 conditions show the same in 30 s.)"""
    data = load_dataset("cars", UCI / "car.data")
    settings = dict(lam=8, min_support=0.01, max_conditions=2, random_state=0)
    as_found = FallingRuleListClassifier(**settings, drop_unreached=False).fit(data.X, data.y)
    empty = [name for name, n in zip(as_found.rules_, as_found.supports_[:-1]) if n == 0]
    assert empty, "the MAP list at these settings has a rule no car reaches"

    # The default fit, through the command line (one search: the same seed and settings give the same list).
    csv, out = tmp_path / "car.csv", tmp_path / "car-model.json"
    data.frame().to_csv(csv, index=False)
    status = main(["fit", str(csv), "--target", data.target, "--positive", "True", "--lam", "8",
                   "--min-support", "0.01", "--max-conditions", "2", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert status == 0, err
    model = FallingRuleListClassifier.load(out)
    assert model.unreached_rules_ == empty
    assert model.rules_ == [name for name in as_found.rules_ if name not in empty]
    assert np.all(model.supports_ > 0) and model.log_posterior_ <= as_found.log_posterior_ + 1e-9
    assert np.all(np.diff(model.probabilities_) <= 1e-12)
    # The same cars fall together: the groups of training rows are unchanged.
    features = data.frame().drop(columns=[data.target])
    before, after = as_found.apply(features), model.apply(features)
    assert len(set(zip(before, after))) == len(set(before)) == len(set(after))
    assert "Removed 1 rule of the MAP list that no training patient reaches" in printed and empty[0] in printed
