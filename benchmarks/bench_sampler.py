"""Speed of the posterior sampler (issue: sampler).

* One chain, 10,000 full sweeps (Steps 1-4) of the compiled loop on data the
  size of the paper's Spambase run (4601 rows, 550 candidate rules, rule
  density 0.25, a planted 5-rule list with risks .84 .70 .54 .40 .25 and
  default .14, paper section 4), after warm-up; target: at most 2 s.
* ``sample_posterior`` end to end with 4 chains (parallel processes) on the
  same data: sweeps per second per chain and in total, wall time included
  (process start-up, result assembly, diagnostics, the fixed-list risk run).
* If ``sample_data/readmission.csv`` exists: the same through the estimator.

* ``--map-mass [breast,spam]``: on UCI breast cancer (default) or Spambase, how much posterior mass
  the MAP list carries (docs/search.md, section 4): each list's mass (the joint posterior integrated over its risks, by importance
  sampling) for the MAP list and for lists of a long plain sample, the sample's length
  posterior and its draws with the MAP list's captures, and plain chains started on the MAP list.

* ``--move-cost``: on UCI Spambase (the default fit of seed 0), one chain of the default sampler alone
  (``n_jobs=1``, from the MAP list, 5,000 sweeps): milliseconds a sweep, and the cost of one move with
  fresh risks from 100 against 300 of them a sweep, overall and per kind of move (docs/search.md
  section 4, "Cheaper moves").

Run: ``.venv/bin/python benchmarks/bench_sampler.py [--map-mass [breast,spam]] [--move-cost]``
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from frl_engine.anneal import anneal  # noqa: E402
from frl_engine.model import Hyperparameters, PackedProblem, fit_list  # noqa: E402
from frl_engine.sampler import run_chain, sample_posterior  # noqa: E402
from frl_engine.simulate import PAPER_PROBABILITIES, simulate_rule_list_data  # noqa: E402

READMISSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample_data", "readmission.csv")


def _chain_seconds(problem: PackedProblem, order, n_sweeps: int, seed: int) -> tuple[float, float]:
    """Seconds of ``n_sweeps`` sweeps of one compiled chain, and its Step 3 acceptance rate."""
    fit = fit_list(problem, order)
    args = (problem.rules, problem.y, problem.all_rows, problem.cum_weights, problem.log_weights, problem.consts,
            np.asarray(order, dtype=np.int64), fit.K, np.asarray(fit.gammas, dtype=float))
    run_chain(np.random.default_rng(0), *args, 10, 10, 1, False)  # warm-up: compile or load the cache
    best = np.inf
    acceptance = 0.0
    for repeat in range(3):
        start = time.perf_counter()
        out = run_chain(np.random.default_rng(seed + repeat), *args, 0, n_sweeps, 1, False)
        best = min(best, time.perf_counter() - start)
        acceptance = out[6].sum() / max(out[5].sum(), 1)
    return best, acceptance


def synthetic(n_rows: int = 4601, n_rules: int = 550, seed: int = 0) -> dict:
    data = simulate_rule_list_data(np.random.default_rng(seed), n_rows, n_rules=n_rules, density=0.25,
                                   probabilities=PAPER_PROBABILITIES)
    problem = PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())
    map_order = anneal(problem, n_steps=5000, n_chains=2, random_state=seed).best.order
    n_sweeps = 10_000
    seconds, acceptance = _chain_seconds(problem, map_order, n_sweeps, seed)
    sample_posterior(problem, n_samples=20, n_chains=4, burn_in=0, start=map_order, random_state=0)  # warm workers
    n_samples = 10_000
    start = time.perf_counter()
    result = sample_posterior(problem, n_samples=n_samples, n_chains=4, burn_in=n_samples, start=map_order,
                              random_state=1)
    wall = time.perf_counter() - start
    total_sweeps = 4 * 2 * n_samples
    return {"rows": n_rows, "rules": n_rules, "map_length": len(map_order),
            "true_list_recovered": tuple(map_order) == data.true_order,
            "one_chain_sweeps": n_sweeps, "one_chain_seconds": seconds, "one_chain_sweeps_per_second": n_sweeps / seconds,
            "one_chain_acceptance": float(acceptance),
            "four_chain_sweeps": total_sweeps, "four_chain_wall_seconds": wall,
            "four_chain_sweeps_per_second_total": total_sweeps / wall,
            "four_chain_sweeps_per_second_per_chain": total_sweeps / 4 / wall,
            "rhat": result.rhat, "ess": result.ess, "acceptance": result.acceptance["all"],
            "map_list_frequency": result.map_list_frequency}


def readmission() -> dict | None:
    if not os.path.exists(READMISSION):
        return None
    import pandas as pd

    from frl_engine.estimator import FallingRuleListClassifier

    frame = pd.read_csv(READMISSION)
    target = "Readmitted30d"
    X, y = frame.drop(columns=[target]), (frame[target] == "yes")
    model = FallingRuleListClassifier(random_state=0, exclude=("PatientID",)).fit(X, y)
    problem = model.problem_
    order = model.map_fit_.order
    n_sweeps = 10_000
    seconds, _ = _chain_seconds(problem, order, n_sweeps, 0)
    n_samples = 5_000
    model.sample_posterior(20, n_chains=4, burn_in=0, random_state=0)
    start = time.perf_counter()
    model.sample_posterior(n_samples, n_chains=4, burn_in=n_samples, random_state=1)
    wall = time.perf_counter() - start
    return {"rows": problem.n_rows, "rules": problem.n_rules, "target": target, "map_length": len(order),
            "one_chain_sweeps_per_second": n_sweeps / seconds, "one_chain_seconds": seconds,
            "four_chain_wall_seconds": wall, "four_chain_sweeps_per_second_total": 4 * 2 * n_samples / wall}


def run() -> dict:
    figures = {"synthetic": synthetic(), "readmission": readmission()}
    s = figures["synthetic"]
    print("Posterior sampler (full sweeps = Steps 1-4 of paper section 3.2)")
    print(f"  synthetic {s['rows']} rows x {s['rules']} rules (density 0.25, planted 5-rule list; MAP length "
          f"{s['map_length']}, planted list recovered: {s['true_list_recovered']})")
    print(f"    one chain, compiled loop: {s['one_chain_sweeps']} sweeps in {s['one_chain_seconds']:.3f} s = "
          f"{s['one_chain_sweeps_per_second']:,.0f} sweeps/s (target: 10,000 sweeps in <= 2 s; "
          f"MH acceptance {s['one_chain_acceptance']:.3f})")
    print(f"    sample_posterior, 4 chains x (10,000 burn-in + 10,000 kept) in parallel processes: "
          f"{s['four_chain_wall_seconds']:.2f} s wall = {s['four_chain_sweeps_per_second_total']:,.0f} sweeps/s total, "
          f"{s['four_chain_sweeps_per_second_per_chain']:,.0f} per chain (wall time includes result assembly)")
    print(f"    R-hat log posterior {s['rhat']['log_posterior']:.3f}, L {s['rhat']['length']:.3f}; "
          f"ESS {s['ess']['log_posterior']:.0f}, {s['ess']['length']:.0f}; MAP list in "
          f"{100 * s['map_list_frequency']:.1f}% of samples")
    r = figures["readmission"]
    if r is None:
        print("  sample_data/readmission.csv not found: skipped")
    else:
        print(f"  readmission.csv ({r['rows']} rows x {r['rules']} candidate rules, target {r['target']!r}, "
              f"MAP length {r['map_length']}): one chain {r['one_chain_sweeps_per_second']:,.0f} sweeps/s; "
              f"4 chains x 10,000 sweeps via the estimator in {r['four_chain_wall_seconds']:.2f} s = "
              f"{r['four_chain_sweeps_per_second_total']:,.0f} sweeps/s total")
    return figures


def _log_list_mass(problem, order, rng, n_draws=40_000, nu=5.0):
    """``log`` of the integral of ``pi(c, r)`` over the risks ``r`` of list ``c`` (refresh.log_target_r),
    by importance sampling from a Student-t at the mode with the inverse Hessian as scale (x1.5).
    Returns ``(log mass, log density at the mode, importance ESS)``."""
    from scipy import optimize, special

    from frl_engine.bits import capture_counts
    from frl_engine.refresh import log_target_r

    order = np.asarray(order, dtype=np.int64)
    length = len(order)
    n_cap, n_pos = capture_counts(problem.rules, problem.y, problem.all_rows, order)

    def f(r):
        return log_target_r(order, length, n_cap, n_pos, np.ascontiguousarray(r, dtype=float),
                            problem.cum_weights, problem.log_weights, problem.consts, 1.0)

    def to_r(h):  # falling log odds from (log gaps, last)
        return h[length] + np.concatenate([np.cumsum(np.exp(h[:length])[::-1])[::-1], [0.0]])

    h = np.concatenate([np.full(length, -0.5), [-1.0]])
    h = optimize.minimize(lambda x: -f(to_r(x)), h, method="Nelder-Mead",
                          options={"maxiter": 20_000, "xatol": 1e-8, "fatol": 1e-10}).x
    h = optimize.minimize(lambda x: -f(to_r(x)), h, method="BFGS").x
    mode = to_r(h)
    d, eps = length + 1, 1e-3
    hess = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            a, b = np.eye(d)[i] * eps, np.eye(d)[j] * eps
            hess[i, j] = (f(mode + a + b) - f(mode + a - b) - f(mode - a + b) + f(mode - a - b)) / (4 * eps * eps)
    cov = np.linalg.inv(-(hess + hess.T) / 2)
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    chol = np.linalg.cholesky(1.5 * (vectors * np.clip(values, 1e-8, None)) @ vectors.T)
    x = mode + (rng.standard_normal((n_draws, d)) / np.sqrt(rng.chisquare(nu, n_draws) / nu)[:, None]) @ chol.T
    log_q = (special.gammaln((nu + d) / 2) - special.gammaln(nu / 2) - d / 2 * np.log(nu * np.pi)
             - np.sum(np.log(np.diag(chol)))
             - (nu + d) / 2 * np.log1p(np.sum(np.linalg.solve(chol, (x - mode).T) ** 2, axis=0) / nu))
    log_w = np.array([f(row) for row in x]) - log_q
    w = np.exp(log_w - log_w.max())
    return special.logsumexp(log_w) - np.log(n_draws), f(mode), w.sum() ** 2 / (w ** 2).sum()


MAP_MASS_SETS = {"breast": "UCI breast cancer", "spam": "UCI Spambase"}


def map_mass(key: str = "breast") -> None:
    """Does the posterior visit the MAP list of a UCI set (``breast`` or ``spam``), and should it?"""
    from collections import Counter

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_search import _uci

    from frl_engine import FallingRuleListClassifier
    from frl_engine.bits import capture_counts
    from frl_engine.sampler import dispersed_starts, focus_rules

    title = MAP_MASS_SETS[key]
    loaded = _uci(key)
    if isinstance(loaded, str):
        print(f"{title}: not run ({loaded})")
        return
    X, y, options = loaded
    model = FallingRuleListClassifier(random_state=0, **options).fit(X, y)
    problem = model.problem_
    names = model.candidate_names_
    map_order = tuple(int(i) for i in model.map_fit_.order)
    chain_orders = model.anneal_result_.chain_orders
    rng = np.random.default_rng(0)
    mass, top, ess = _log_list_mass(problem, map_order, rng)
    print(f"{title}: MAP list of {len(map_order)} rules: log mass {mass:.2f} "
          f"(log density at its mode {top:.2f}; importance ESS {ess:.0f})")
    sample = sample_posterior(problem, n_samples=1000, n_chains=4, burn_in=0, thin=64, random_state=3, temperatures=1,
                              starts=dispersed_starts(map_order, chain_orders, 4),
                              focus=focus_rules(problem, (map_order, *chain_orders)))
    print(f"  plain sample, 4 chains x 64,000 sweeps (thin 64): R-hat {sample.rhat['log_posterior']:.3f} / "
          f"{sample.rhat['length']:.3f}, {len(set(sample.orders)):,} distinct lists in {sample.n_total:,} draws; "
          f"P(L): " + ", ".join(f"{k}: {v:.5f}" for k, v in sample.length_histogram().items()))

    def captures(order):
        n_cap, n_pos = capture_counts(problem.rules, problem.y, problem.all_rows, np.asarray(order, dtype=np.int64))
        return tuple(n_cap), tuple(n_pos)

    target = captures(map_order)
    same = [i for i, o in enumerate(sample.orders) if len(o) == len(map_order) and captures(o) == target]
    print(f"  draws with the MAP list's captures (the same card): {len(same)} of {sample.n_total:,} "
          f"(the MAP list itself: {sum(o == map_order for o in sample.orders)}); at draws {same}")
    for i in same:
        if sample.orders[i] != map_order:
            print("    " + " | ".join(names[j] for j in sample.orders[i]))
    for order, _ in Counter(sample.orders).most_common(8):
        try:
            m, t, e = _log_list_mass(problem, order, rng)
        except (np.linalg.LinAlgError, ValueError):
            continue
        print(f"  sampled list of {len(order)} rules: log mass {m:.2f} (mode {t:.2f}, importance ESS {e:.0f}); "
              f"the MAP list is {mass - m:.1f} nats more probable")
    stay = sample_posterior(problem, n_samples=5000, n_chains=4, burn_in=0, random_state=4, temperatures=1,
                            start=map_order)
    on = np.array([o == map_order for o in stay.orders]).reshape(4, 5000)
    first_off = [int(np.argmin(row)) if not row.all() else 5000 for row in on]
    print(f"  4 plain chains started on the MAP list, 5,000 sweeps each: sweeps before leaving {first_off}; "
          f"sweeps on it {int(on.sum())} ({100 * on.mean():.2f}%); joint log posterior at the start "
          f"{np.round(stay.log_posterior_trace[:, 0], 1).tolist()}, mean of the last 1,000 sweeps "
          f"{stay.log_posterior_trace[:, -1000:].mean():.1f} with {stay.lengths.reshape(4, 5000)[:, -1000:].mean():.1f} "
          "rules")


def move_cost() -> dict:
    """The default sampler's cost a sweep and a move with fresh risks, one chain alone, on UCI Spambase."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_search import _uci

    from frl_engine import FallingRuleListClassifier
    from frl_engine.sampler import focus_rules

    loaded = _uci("spam")
    if isinstance(loaded, str):
        print(f"UCI Spambase: not run ({loaded})")
        return {}
    X, y, options = loaded
    model = FallingRuleListClassifier(random_state=0, **options).fit(X, y)
    problem = model.problem_
    search = model.anneal_result_
    first = search.chain_orders[:search.round_size or None]
    base = dict(n_chains=1, n_samples=1000, burn_in=1000, thin=4, random_state=1, n_jobs=1, map_risk=False,
                starts=[model.map_fit_.order], focus=focus_rules(problem, (model.map_fit_.order, *first)),
                jumps=(model.map_fit_.order, *first), siblings=getattr(model, "candidate_conditions_", None))
    sample_posterior(problem, **{**base, "burn_in": 10, "n_samples": 10, "thin": 1})   # compiled and warm
    n_sweeps = base["burn_in"] + base["n_samples"] * base["thin"]

    def seconds(**kw) -> float:
        best = np.inf
        for _ in range(3):   # the fastest of three: the least disturbed by the machine's other work
            started = time.perf_counter()
            sample_posterior(problem, **{**base, **kw})
            best = min(best, time.perf_counter() - started)
        return best

    figures = {"sweep_ms": 1e3 * seconds() / n_sweeps}
    print(f"Default sampler on UCI Spambase ({problem.n_rows} rows x {problem.n_rules} rules, MAP list of "
          f"{len(model.map_fit_.order)} rules), one chain alone, {n_sweeps:,} sweeps:")
    print(f"  {figures['sweep_ms']:.3f} ms a sweep (100 moves with fresh risks, Steps 1-4, 3c and 3d)")
    kinds = {"all kinds (the default)": {}, "the paper's four, local window": dict(jump_share=0.0, sibling_share=0.0,
                                                                                  local_share=1.0),
             "the paper's four, risks from the change down": dict(jump_share=0.0, sibling_share=0.0, local_share=0.0),
             "sibling rules only": dict(jump_share=0.0, sibling_share=1.0)}
    for label, kw in kinds.items():
        extra = seconds(refresh=300, **kw) - seconds(refresh=100, **kw)
        figures[label] = 1e6 * extra / (200 * n_sweeps)
        print(f"  one move with fresh risks, {label}: {figures[label]:.2f} us")
    return figures


if __name__ == "__main__":
    if "--move-cost" in sys.argv[1:]:
        move_cost()
    elif "--map-mass" in sys.argv[1:]:
        at = sys.argv.index("--map-mass")
        keys = sys.argv[at + 1].split(",") if len(sys.argv) > at + 1 else ["breast"]
        for key in keys:
            map_mass(key)
    else:
        run()
