r"""Convergence diagnostics for MCMC output: split R-hat and effective sample size.

The default estimators are those of Vehtari, Gelman, Simpson, Carpenter and
Bürkner (2021), "Rank-normalization, folding, and localization: an improved
R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2):

* every chain is split in half (a middle draw of an odd-length chain is dropped),
  so that a trend within a chain shows up as disagreement between halves;
* *rank normalisation*: all draws are replaced by ``Phi^{-1}((r - 3/8) / (S + 1/4))``
  where ``r`` is the draw's average rank among the ``S`` draws, which makes the
  diagnostics well defined for heavy tails and robust for discrete traces
  (such as the list length ``L``);
* split R-hat ``= sqrt(var^+ / W)`` with ``W`` the mean within-half variance,
  ``B/n`` the variance of the half means and ``var^+ = (n-1)/n W + B/n``;
  :func:`split_rhat` returns the maximum of the rank-normalised (bulk) value and
  the value for the rank-normalised *folded* draws ``|x - median|`` (tails);
* bulk ESS ``= M n / tau`` on the rank-normalised split chains, with
  ``tau = -1 + 2 sum_t rho_t`` from the multi-chain autocorrelation
  ``rho_t = 1 - (W - mean_m s_m^2 rho_{t,m}) / var^+`` truncated by Geyer's initial
  monotone positive-pair sequence (as in Stan).

``rank_normalize=False`` gives the classic split R-hat (Gelman et al., BDA3) and
the classic ESS on the raw draws.

Edge cases: with fewer than 4 draws per chain the diagnostics are not defined
and ``nan`` is returned; when every draw is identical R-hat and ESS are ``nan``
(nothing varies, so nothing can be diagnosed); when each chain is constant but
the chains disagree R-hat is ``inf``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .errors import FRLError


def _as_chains(chains) -> np.ndarray:
    x = np.asarray(chains, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise FRLError("chains must be a 2-D array (n_chains, n_draws)")
    if not np.all(np.isfinite(x)):
        raise FRLError("chains hold non-finite values; diagnostics are not defined")
    return x


def split_chains(chains) -> np.ndarray:
    """Split every chain in two halves: ``(M, n)`` -> ``(2M, n // 2)``."""
    x = _as_chains(chains)
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def rank_normal_scores(chains) -> np.ndarray:
    """Normal scores of the pooled average ranks (Blom's offsets 3/8, 1/4)."""
    x = np.asarray(chains, dtype=float)
    ranks = stats.rankdata(x, method="average").reshape(x.shape)
    return special.ndtri((ranks - 0.375) / (x.size + 0.25))


def _rhat_core(x: np.ndarray) -> float:
    n = x.shape[1]
    within = x.var(axis=1, ddof=1).mean()
    between_over_n = x.mean(axis=1).var(ddof=1)
    var_plus = (n - 1) / n * within + between_over_n
    if within <= 0:
        return float("nan") if var_plus <= 0 else float("inf")
    return float(np.sqrt(var_plus / within))


def split_rhat(chains, *, rank_normalize: bool = True) -> float:
    """Split R-hat of draws ``(n_chains, n_draws)``.

    ``rank_normalize=True`` (default): the maximum of the rank-normalised bulk and
    folded split R-hat (Vehtari et al. 2021).  ``False``: the classic split R-hat.
    """
    x = _as_chains(chains)
    if x.shape[1] < 4:
        return float("nan")
    halves = split_chains(x)
    if not rank_normalize:
        return _rhat_core(halves)
    if np.ptp(halves) == 0:
        return float("nan")
    bulk = _rhat_core(rank_normal_scores(halves))
    folded = np.abs(halves - np.median(halves))
    tail = _rhat_core(rank_normal_scores(folded)) if np.ptp(folded) > 0 else bulk
    return float(np.fmax(bulk, tail))


def autocovariance(x) -> np.ndarray:
    """Autocovariance of a 1-D series at every lag (biased, divided by n), by FFT."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    centred = x - x.mean()
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(centred, size)
    return np.fft.irfft(spectrum * np.conjugate(spectrum), size)[:n] / n


def _ess_core(x: np.ndarray) -> float:
    m, n = x.shape
    acov = np.stack([autocovariance(chain) for chain in x])
    chain_var = acov[:, 0] * n / (n - 1)
    within = chain_var.mean()
    var_plus = within * (n - 1) / n
    if m > 1:
        var_plus += x.mean(axis=1).var(ddof=1)
    if var_plus <= 0 or within <= 0:
        return float("nan")
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer's initial positive sequence on pairs, made monotone.
    pairs = rho[:-1:2] + rho[1::2] if n > 1 else np.array([1.0])
    total = 0.0
    previous = np.inf
    for value in pairs:
        if value <= 0:
            break
        value = min(value, previous)
        total += value
        previous = value
    tau = -1.0 + 2.0 * total
    tau = max(tau, 1.0 / np.log10(m * n + 10))  # Stan's cap for antithetic chains
    return float(m * n / tau)


def effective_sample_size(chains, *, rank_normalize: bool = True) -> float:
    """Effective sample size of draws ``(n_chains, n_draws)``.

    ``rank_normalize=True`` (default): bulk ESS of Vehtari et al. (2021), computed on
    the rank-normalised split chains.  ``False``: the classic multi-chain ESS
    (Geyer's initial monotone sequence) on the split raw draws.
    """
    x = _as_chains(chains)
    if x.shape[1] < 4:
        return float("nan")
    halves = split_chains(x)
    if np.ptp(halves) == 0:
        return float("nan")
    if rank_normalize:
        halves = rank_normal_scores(halves)
    return _ess_core(halves)


# Thresholds of the plain verdict (Vehtari et al. 2021, section 4: R-hat below 1.01 and a bulk ESS
# of at least 400, i.e. 100 per chain for 4 chains, before trusting summaries of the sample).
RHAT_TARGET = 1.01
ESS_TARGET = 400.0
# What to do when a sample has not converged.  A larger --samples lengthens every attempt of the default
# schedule (burn-in and kept sweeps scale with it); --burn-in or --thin given switch that schedule off
# (one untempered run), so the advice does not name them.
LONGER_ADVICE = "sample longer (a larger --samples) or with more chains (--sampler-chains)"


@dataclass(frozen=True)
class ConvergenceVerdict:
    """A plain verdict on a multi-chain sample, from its split R-hat and bulk ESS.

    Attributes
    ----------
    converged : bool
        Every monitored quantity has R-hat at most ``RHAT_TARGET`` and ESS at least
        ``ESS_TARGET`` (a quantity that is constant in every chain counts as converged:
        nothing varies, and ``nan`` is reported for it; but when no R-hat at all is
        defined, e.g. fewer than 4 draws per chain, the sample is not converged).
    worst_rhat : float
        The largest R-hat (``nan`` when none is defined).
    smallest_ess : float
        The smallest ESS (``nan`` when none is defined).
    message : str
        One sentence for the user; says what to do when not converged.
    longer : float
        When the ESS is too small: about how many times as many sweeps would give ``ESS_TARGET``
        (``ESS_TARGET / smallest_ess``, rounded up to a tenth below 10, to a whole number above); ``nan``
        otherwise.  More are needed while the chains disagree.
    """

    converged: bool
    worst_rhat: float
    smallest_ess: float
    message: str
    longer: float = math.nan


def convergence_verdict(rhat: dict, ess: dict, *, n_chains: int) -> ConvergenceVerdict:
    """The :class:`ConvergenceVerdict` of R-hat and ESS values keyed by quantity name."""
    rhats = [float(v) for v in rhat.values() if not np.isnan(v)]
    esses = [float(v) for v in ess.values() if not np.isnan(v)]
    worst = max(rhats) if rhats else float("nan")
    smallest = min(esses) if esses else float("nan")
    if n_chains < 2:
        return ConvergenceVerdict(False, worst, smallest,
                                  "Posterior not checked: one chain cannot show that chains agree; use 4 chains.")
    if not rhats:
        return ConvergenceVerdict(False, worst, smallest,
                                  "Posterior not checked: too few draws per chain to compute R-hat; "
                                  "sample longer (--samples).")
    bad_rhat = bool(rhats) and worst > RHAT_TARGET
    bad_ess = bool(esses) and smallest < ESS_TARGET
    if not (bad_rhat or bad_ess):
        return ConvergenceVerdict(True, worst, smallest,
                                  f"Posterior converged: R-hat {worst:.3f} (at most {RHAT_TARGET}), "
                                  f"ESS {smallest:.0f} (at least {ESS_TARGET:.0f}).")
    reasons = []
    if bad_rhat:
        reasons.append(f"R-hat {worst:.3f} > {RHAT_TARGET}: the chains disagree")
    longer = longer_factor(smallest) if bad_ess else math.nan
    if bad_ess:
        reasons.append(f"ESS {smallest:.0f} < {ESS_TARGET:.0f}: too few independent draws"
                       + (f", about {format_factor(longer)} times as many sweeps would give {ESS_TARGET:.0f}"
                          + (", more while the chains disagree" if bad_rhat else "") if math.isfinite(longer) else ""))
    return ConvergenceVerdict(False, worst, smallest,
                              f"Posterior not converged ({'; '.join(reasons)}): its intervals and frequencies are "
                              f"not reliable; {LONGER_ADVICE}.", longer)


def longer_factor(ess: float) -> float:
    """About how many times as many sweeps would give ``ESS_TARGET`` independent draws: ``ESS_TARGET / ess``.

    A stationary chain's ESS grows in proportion to its length, so that many times the sweeps give
    ``ESS_TARGET``; chains that still disagree (R-hat too high) are not yet stationary and need more.  Rounded up,
    to a tenth below 10 and to a whole number above; ``nan`` when the ESS is not a positive number."""
    if not ess > 0:
        return math.nan
    ratio = ESS_TARGET / ess
    return math.ceil(ratio * 10) / 10 if ratio < 10 else float(math.ceil(ratio))


def format_factor(factor: float) -> str:
    """A :func:`longer_factor` as the verdict prints it: ``6.7``, ``125``, ``1,000``."""
    return f"{factor:.1f}" if factor < 10 else f"{factor:,.0f}"


def longer_sample(factor: float, n_samples: int, seconds: float) -> tuple[int, str]:
    """A sample ``factor`` times as long as one of ``n_samples`` per chain that took ``seconds``: its samples per
    chain (rounded up to a hundred) and, at the same speed, its time (``"8 s"``, ``"3.4 minutes"``).

    More samples per chain lengthen every attempt of the default schedule in proportion (and its work budget with
    it), so the time scales with them too."""
    more = max(100, math.ceil(n_samples * factor / 100) * 100)
    total = seconds * more / max(n_samples, 1)   # the time of the sample asked for, rounded up as it is
    return more, (f"{total / 60:.1f} minutes" if total >= 120 else f"{total:.0f} s")


def longer_sample_advice(verdict: ConvergenceVerdict, n_samples: int, seconds: float, ask: str,
                         speed: str) -> tuple[int, str, str]:
    """The sentence that says how long a sample with ``ESS_TARGET`` independent draws would be, after its samples
    per chain and its time (:func:`longer_sample`).  ``ask`` names those samples where the user sets them (``"--samples {}"``,
    ``"{:,} Samples per chain on the Fit page"``); ``speed`` whose speed the time is at (``"this run's"``)."""
    more, took = longer_sample(verdict.longer, n_samples, seconds)
    tail = ", and more while the chains disagree" if verdict.worst_rhat > RHAT_TARGET else ""
    # the factor of the sample asked for (rounded up to a hundred a chain), so that it, the samples and the time agree
    return more, took, (f"About {format_factor(more / max(n_samples, 1))} times as long a sample ({ask.format(more)}) "
                        f"would take about {took} at {speed} speed{tail}.")


#: A rule is named where the chains disagree when the shares of two chains' lists holding it differ by this much.
DISAGREEMENT_SPREAD = 0.2


@dataclass(frozen=True)
class RuleDisagreement:
    """One rule that the chains of a sample hold in very different shares of their lists.

    ``per_chain[k]`` is the fraction of chain ``k``'s kept lists that contain ``rule``; ``spread`` is the
    largest minus the smallest of them.  Chains that sample the same posterior hold each rule in about
    the same share, so a large spread names what the chains have not yet agreed on.
    """

    rule: object
    per_chain: tuple
    spread: float


def rules_chains_disagree_on(lists, chain_ids, n_chains: int, *, top: int = 5,
                             min_spread: float = DISAGREEMENT_SPREAD) -> tuple[RuleDisagreement, ...]:
    """The rules whose share of each chain's lists differs most between chains, largest spread first.

    ``lists[i]`` is sample ``i``'s rule list and ``chain_ids[i]`` its chain (``0 .. n_chains - 1``).  For each
    rule in any list, the share of chain ``k``'s samples whose list holds it, ``f_k``; the rules with
    ``max_k f_k - min_k f_k >= min_spread`` (at most ``top``, ties by first appearance) are returned.  Empty
    with fewer than two chains.
    """
    chain_ids = np.asarray(chain_ids, dtype=np.int64)
    if n_chains < 2 or len(lists) != len(chain_ids):
        return ()
    sizes = np.bincount(chain_ids, minlength=n_chains).astype(float)
    if np.any(sizes == 0):
        return ()
    counts: dict = {}
    for rule_list, chain in zip(lists, chain_ids):
        for rule in dict.fromkeys(rule_list):   # each rule once, in list order (no hash order)
            counts.setdefault(rule, np.zeros(n_chains))[chain] += 1.0
    found = []
    for rule, count in counts.items():
        shares = count / sizes
        spread = float(shares.max() - shares.min())
        if spread >= min_spread:
            found.append(RuleDisagreement(rule, tuple(float(v) for v in shares), spread))
    found.sort(key=lambda d: -d.spread)   # stable: ties keep the order of first appearance
    return tuple(found[:top])
