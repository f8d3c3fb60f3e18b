"""Split R-hat and effective sample size against cases with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from frl_engine.diagnostics import (autocovariance, effective_sample_size, rank_normal_scores, split_chains,
                                    split_rhat)
from frl_engine.errors import FRLError


def ar1(rng, rho, n_chains, n, sigma=1.0):
    """Stationary AR(1) chains: x_t = rho x_{t-1} + e_t."""
    x = np.empty((n_chains, n))
    x[:, 0] = rng.normal(0, sigma / np.sqrt(1 - rho**2), n_chains)
    noise = rng.normal(0, sigma, (n_chains, n))
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


@pytest.mark.parametrize("rank_normalize", [True, False])
def test_iid_normal_chains(rank_normalize):
    rng = np.random.default_rng(0)
    draws = rng.normal(size=(4, 4000))
    rhat = split_rhat(draws, rank_normalize=rank_normalize)
    ess = effective_sample_size(draws, rank_normalize=rank_normalize)
    assert abs(rhat - 1) < 0.01
    assert 0.85 * draws.size < ess < 1.15 * draws.size


@pytest.mark.parametrize("rank_normalize", [True, False])
def test_chains_with_different_means(rank_normalize):
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 1000)) + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    assert split_rhat(draws, rank_normalize=rank_normalize) > 1.3


def test_trend_within_chains_is_caught_by_splitting():
    rng = np.random.default_rng(2)
    n = 2000
    drift = np.linspace(0, 4, n)
    draws = rng.normal(size=(2, n)) + np.stack([drift, drift])  # both chains agree, but neither is stationary
    assert split_rhat(draws) > 1.3


def test_different_scales_caught_by_folded_rhat():
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(4, 2000)) * np.array([1.0, 1.0, 1.0, 4.0])[:, None]  # same mean, one wider chain
    assert split_rhat(draws, rank_normalize=False) < 1.05  # the classic R-hat looks only at means
    assert split_rhat(draws) > 1.1


@pytest.mark.parametrize("rho", [0.5, 0.9])
@pytest.mark.parametrize("rank_normalize", [True, False])
def test_ar1_ess(rho, rank_normalize):
    rng = np.random.default_rng(4)
    draws = ar1(rng, rho, 4, 20_000)
    expected = draws.size * (1 - rho) / (1 + rho)
    ess = effective_sample_size(draws, rank_normalize=rank_normalize)
    assert 0.85 * expected < ess < 1.15 * expected, (ess, expected)
    assert abs(split_rhat(draws, rank_normalize=rank_normalize) - 1) < 0.02


def test_antithetic_chain_has_ess_above_n():
    rng = np.random.default_rng(5)
    draws = ar1(rng, -0.5, 4, 5000)
    assert effective_sample_size(draws, rank_normalize=False) > draws.size


def test_discrete_trace():
    """A list-length-like trace with ties: rank normalisation must cope."""
    rng = np.random.default_rng(6)
    draws = rng.poisson(2.0, size=(4, 3000)).astype(float)
    assert abs(split_rhat(draws) - 1) < 0.01
    assert effective_sample_size(draws) > 0.8 * draws.size


def test_edge_cases():
    assert np.isnan(split_rhat(np.ones((4, 100))))
    assert np.isnan(effective_sample_size(np.ones((4, 100))))
    constant_but_different = np.repeat(np.array([[1.0], [2.0]]), 50, axis=1)
    assert split_rhat(constant_but_different) == np.inf
    assert np.isnan(split_rhat(np.zeros((2, 3))))
    with pytest.raises(FRLError):
        split_rhat(np.array([[1.0, np.nan, 2.0, 3.0]]))
    one_chain = np.random.default_rng(7).normal(size=1000)
    assert abs(split_rhat(one_chain) - 1) < 0.05  # a 1-D array is one chain


def test_helpers():
    x = np.arange(10.0).reshape(2, 5)
    halves = split_chains(x)
    assert halves.shape == (4, 2)
    np.testing.assert_array_equal(halves[0], [0, 1])
    np.testing.assert_array_equal(halves[2], [3, 4])  # the middle draw of an odd chain is dropped
    scores = rank_normal_scores(np.array([[3.0, 1.0, 2.0, 2.0]]))
    assert scores[0, 1] < scores[0, 2] == scores[0, 3] < scores[0, 0]
    series = np.random.default_rng(8).normal(size=257)
    acov = autocovariance(series)
    centred = series - series.mean()
    for lag in (0, 1, 5, 100):
        assert acov[lag] == pytest.approx(np.dot(centred[: len(series) - lag], centred[lag:]) / len(series))


def test_convergence_verdict():
    from frl_engine.diagnostics import convergence_verdict

    good = convergence_verdict({"log_posterior": 1.004, "length": float("nan")}, {"log_posterior": 900.0,
                                                                                 "length": float("nan")}, n_chains=4)
    assert good.converged and good.worst_rhat == 1.004 and "converged" in good.message
    for rhat, ess in ((1.02, 900.0), (1.004, 120.0)):
        bad = convergence_verdict({"log_posterior": rhat, "length": 1.0}, {"log_posterior": ess, "length": 5000.0},
                                  n_chains=4)
        assert not bad.converged and bad.message.startswith("Posterior not converged")
    assert not convergence_verdict({"a": float("nan")}, {"a": float("nan")}, n_chains=4).converged  # < 4 draws
    assert not convergence_verdict({"a": 1.0}, {"a": 5000.0}, n_chains=1).converged  # one chain proves nothing


def test_the_advice_of_an_unconverged_verdict_keeps_the_default_schedule():
    """The verdict tells the user what to do, with options `frl sample` has, and not --burn-in or --thin, which
    switch the default's longer tempered attempts off (one untempered run as asked)."""
    from frl_engine.cli import build_parser
    from frl_engine.diagnostics import convergence_verdict

    bad = convergence_verdict({"log_posterior": 1.07, "length": 1.1}, {"log_posterior": 40.0, "length": 25.0},
                              n_chains=4)
    assert "--samples" in bad.message and "--sampler-chains" in bad.message
    assert "--burn-in" not in bad.message and "--thin" not in bad.message
    parser = build_parser()
    args = parser.parse_args(["sample", "data.csv", "--target", "y", "--samples", "4000", "--sampler-chains", "8"])
    assert (args.samples, args.sampler_chains, args.burn_in, args.thin) == (4000, 8, None, 1)


def test_the_rules_chains_disagree_on_are_counted_chain_by_chain():
    """Shares by hand: chain 0 holds a in 4 of 4 lists, b in 2, c in 1; chain 1 holds a in none, b in 3, c in 2."""
    from frl_engine.diagnostics import rules_chains_disagree_on

    lists = [("a", "b"), ("a",), ("a", "c"), ("b", "a"), ("b",), ("b", "c"), ("c",), ("b",)]
    chains = [0, 0, 0, 0, 1, 1, 1, 1]
    found = rules_chains_disagree_on(lists, chains, 2)
    assert [d.rule for d in found] == ["a", "b", "c"]            # spreads 1.0, 0.25, 0.25 (ties: first seen)
    assert found[0].per_chain == (1.0, 0.0) and found[0].spread == 1.0
    assert found[1].per_chain == (0.5, 0.75) and found[2].per_chain == (0.25, 0.5)
    assert [d.rule for d in rules_chains_disagree_on(lists, chains, 2, min_spread=0.3)] == ["a"]
    assert [d.rule for d in rules_chains_disagree_on(lists, chains, 2, top=1)] == ["a"]
    assert rules_chains_disagree_on(lists, [0] * 8, 1) == ()      # one chain: nothing to compare
    # equal spreads keep the order in which the rules first appear, list by list and within a list
    tied = rules_chains_disagree_on([("z", "y", "x"), ()], [0, 1], 2)
    assert [d.rule for d in tied] == ["z", "y", "x"] and all(d.spread == 1.0 for d in tied)
    # chains that hold every rule equally often disagree on nothing
    assert rules_chains_disagree_on([("a",), ("b",), ("a",), ("b",)], [0, 0, 1, 1], 2) == ()


def _ar1_chains(rng, n_chains: int, n_draws: int, phi: float) -> np.ndarray:
    """Stationary AR(1) chains (autocorrelation time (1 + phi) / (1 - phi)), started from the stationary law."""
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.normal(size=n_chains) / np.sqrt(1 - phi ** 2)
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=n_chains)
    return x


def test_the_verdict_says_how_much_longer_a_sample_must_run_and_that_many_sweeps_give_the_ess_asked():
    """Too few independent draws: the verdict says how many times as many sweeps give ESS 400.  On stationary
    AR(1) chains (autocorrelation time 39; 4 chains of 1,000 draws, ESS about 100) running that many times as
    many draws gives about 400: the median over nine data sets within 20%, each within a factor of 2.5 (the
    short run's ESS is itself an estimate, about 50 to 120 here)."""
    import math

    from frl_engine.diagnostics import ESS_TARGET, convergence_verdict, effective_sample_size, split_rhat

    reached = []
    for seed in range(9):
        rng = np.random.default_rng(seed)
        short = _ar1_chains(rng, 4, 1000, 0.95)
        ess = effective_sample_size(short)
        verdict = convergence_verdict({"x": split_rhat(short)}, {"x": ess}, n_chains=4)
        factor = math.ceil(ESS_TARGET / ess * 10) / 10
        assert not verdict.converged and f"about {factor:.1f} times as many sweeps would give 400" in verdict.message
        reached.append(effective_sample_size(_ar1_chains(rng, 4, math.ceil(1000 * factor), 0.95)))
    assert np.median(reached) == pytest.approx(ESS_TARGET, rel=0.2)
    assert all(ESS_TARGET / 2.5 < value < ESS_TARGET * 2.5 for value in reached), reached
    # chains that disagree are not stationary yet: the verdict says they need more
    apart = convergence_verdict({"x": 1.2}, {"x": 40.0}, n_chains=4)
    assert "about 10 times as many sweeps would give 400, more while the chains disagree" in apart.message
    assert "about 1,000 times" in convergence_verdict({"x": 1.0}, {"x": 0.4}, n_chains=4).message
    assert "times as many" not in convergence_verdict({"x": 1.2}, {"x": 900.0}, n_chains=4).message
    # the same figure as a number, for the CLI's concrete --samples
    assert apart.longer == 10.0 and convergence_verdict({"x": 1.0}, {"x": 60.0}, n_chains=4).longer == 6.7
    assert math.isnan(convergence_verdict({"x": 1.2}, {"x": 900.0}, n_chains=4).longer)
