"""Moves between sibling rules (frl_engine.siblings): a rule replaced by one sharing a condition with it.

The claims: the sibling relation is symmetric and is exactly "shares a condition" (checked against an
enumeration of the pairs); the sampler with the move still draws the paper's posterior exactly
(against quadrature), with every move with fresh risks a sibling move, risks drawn locally or from the
change down; the move off leaves the sampler as it was; the draws do not depend on the workers; and
the estimator gives the sampler its mined rules' conditions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from frl_engine.errors import FRLError
from frl_engine.model import PackedProblem
from frl_engine.rules import Condition, Rule
from frl_engine.sampler import sample_posterior
from frl_engine.siblings import condition_ids, sibling_tables
from test_sampler import SETTINGS, assert_frequencies_match, exact_posterior, small_data, total_variation

# Rule 0 shares a condition with rules 1 and 2, which share none with each other: the rules have 2, 1 and 1
# siblings, so the list part of the ratio is not 1 (a move 0 -> 1 is proposed half as often as 1 -> 0).
SMALL_CONDITIONS = [("a", "b"), ("a",), ("b", "c")]


def _small_problem(setting: str = "paper-priors-equal-weights") -> PackedProblem:
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    return PackedProblem.from_arrays(coverage, y, hyper, rule_weights=weights)


def test_siblings_are_the_rules_sharing_a_condition_and_the_relation_is_symmetric():
    rng = np.random.default_rng(3)
    conditions = [tuple(rng.choice(12, size=rng.integers(1, 4), replace=False)) for _ in range(60)]
    data, starts = sibling_tables(conditions)
    assert starts.shape == (61,) and data.dtype == np.int64 and starts.dtype == np.int64
    for j, k in itertools.product(range(60), repeat=2):
        listed = k in data[starts[j]:starts[j + 1]]
        assert listed == (j != k and bool(set(conditions[j]) & set(conditions[k]))), (j, k)
    for j in range(60):
        own = data[starts[j]:starts[j + 1]]
        assert np.all(np.diff(own) > 0)   # sorted, no repeats


def test_conditions_are_numbered_by_what_they_test():
    assert condition_ids([("x", "y"), ("y",), ("z",)]) == ((0, 1), (1,), (2,))
    old = Condition("Age", ">=", 60)
    rules = [Rule((old, Condition("Ward", "==", "C"))), Rule((Condition("Age", ">=", 60.0),)),
             Rule((Condition("Age", ">=", 70),))]
    assert condition_ids(rules) == ((0, 1), (0,), (2,))   # the same test, the same number; another threshold, another


@pytest.mark.parametrize("local_share", [0.0, 1.0])
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_sampler_with_sibling_moves_draws_the_papers_posterior(setting, local_share):
    """Every move with fresh risks a sibling move (sibling_share=1): the list posterior stays exact."""
    hyper, weights = SETTINGS[setting]
    coverage, y = small_data()
    exact = exact_posterior(coverage, y, hyper, weights)
    probabilities = {o: v["prob"] for o, v in exact.items()}
    problem = _small_problem(setting)
    result = sample_posterior(problem, n_samples=30_000, n_chains=2, burn_in=1000, thin=2, start=[0],
                              random_state=7, n_jobs=1, refresh=5, siblings=SMALL_CONDITIONS, sibling_share=1.0,
                              local_share=local_share)
    assert result.refresh_acceptance["siblings_proposed"] > 100_000
    assert result.refresh_acceptance["siblings"] > 0.02
    assert total_variation(probabilities, result.orders) <= 0.03
    assert_frequencies_match(probabilities, result.orders, 2, f"siblings, {setting}, local {local_share}")


def test_a_sample_with_sibling_moves_is_the_same_whatever_n_jobs():
    problem = _small_problem()
    runs = [sample_posterior(problem, n_samples=300, n_chains=3, burn_in=50, start=[0], random_state=4,
                             n_jobs=n_jobs, refresh=5, siblings=SMALL_CONDITIONS, sibling_share=0.5)
            for n_jobs in (1, 2)]
    assert runs[0].lists == runs[1].lists
    np.testing.assert_array_equal(runs[0].log_posterior_trace, runs[1].log_posterior_trace)
    assert runs[0].refresh_acceptance == runs[1].refresh_acceptance
    assert "sibling rules" in runs[0].summary()


def test_sibling_moves_off_leave_the_sampler_as_it_was():
    problem = _small_problem()
    kwargs = dict(n_samples=200, n_chains=2, burn_in=20, start=[0], random_state=2, n_jobs=1, refresh=5)
    plain = sample_posterior(problem, **kwargs)
    off = sample_posterior(problem, **kwargs, siblings=SMALL_CONDITIONS, sibling_share=0.0)
    assert off.lists == plain.lists and "siblings" not in off.refresh_acceptance
    on = sample_posterior(problem, **kwargs, siblings=SMALL_CONDITIONS)
    assert on.refresh_acceptance["siblings_proposed"] > 0 and on.lists != plain.lists


@pytest.mark.parametrize("kwargs", [{"sibling_share": 1.5}, {"sibling_share": -0.1}, {"sibling_share": True},
                                    {"siblings": [("a",), ("b",)]}])
def test_bad_sibling_arguments_are_refused(kwargs):
    problem = _small_problem()
    kwargs = {"siblings": SMALL_CONDITIONS, **kwargs}
    with pytest.raises(FRLError, match="sibling"):
        sample_posterior(problem, n_samples=10, n_chains=1, start=[0], random_state=0, **kwargs)


def test_the_estimator_replaces_rules_by_their_siblings():
    from frl_engine import FallingRuleListClassifier

    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"age": rng.integers(20, 90, n), "ward": rng.choice(["A", "B", "C"], n),
                      "insulin": rng.choice(["Y", "N"], n)})
    risk = 0.1 + 0.5 * (X["age"] >= 70) + 0.2 * (X["ward"] == "C")
    y = rng.random(n) < risk
    model = FallingRuleListClassifier(random_state=0).fit(X, y)
    assert len(model.candidate_conditions_) == model.problem_.n_rules
    names = model.candidate_names_
    for rule, conditions in zip(names, model.candidate_conditions_):
        assert len(conditions) == len(rule.split(" AND "))
    sample = model.sample_posterior(200, n_chains=2, random_state=1, extend=False)
    assert sample.refresh_acceptance["siblings_proposed"] > 0
