"""The default posterior sample, and parallel tempering: does it converge? (issue 13)

For UCI breast cancer, UCI Spambase (and, when asked, UCI mammographic masses and car, the logistic
export at 20,000 and 100,000 rows and the raw export at 100,000 rows) and the generated raw hospital export (20,000 rows), fit the
default model (seed 0), then draw the posterior sample (4 chains x 1000 kept, burn-in 1000) for each
schedule asked (default ``1,default``):

* ``1``: one plain run, ``N``: one run with N replicas per chain (each also drawn again 4 and 16 times
  longer while not converged, as the estimator does when ``temperatures`` is given);
* ``default`` (:func:`frl_engine.sampler.sample_posterior_continued_until_converged`): the plain chains,
  continued 2, 4, ..., 64 times longer while not converged, within the work budget;
* ``tempered`` (:func:`frl_engine.sampler.sample_posterior_tempered_until_converged`, the default
  before): plain, then tempered on ``sampler.DEFAULT_TEMPERATURES`` replicas per chain, then
  continued 2x, 4x, 8x on that or the close ladder;
* ``afresh``: that tempered schedule with every attempt started afresh from the seed; ``global``,
  ``no3d``, ``prior``, ``nosiblings``: the default with every move with fresh risks drawing them for all
  the positions from the change down (``local_share=0``), without Step 3d (``risk_scans=0``), with every
  chain started from a draw of the prior instead of the MAP list and the search chains' lists, or without
  the moves between sibling rules (``sibling_share=0``, as before them).

Prints split R-hat and bulk ESS of the log posterior and of L, the verdict, the burn-in and
thinning it took, the wall time, the share of samples on the MAP list (and the share that group the
training patients as the MAP list does, ``map_groups_frequency``), the swap acceptance rate between
adjacent temperatures, and the attempts drawn.  The machine's other load slows the times.

Run: ``.venv/bin/python benchmarks/bench_tempering.py [--only breast,spam,mammo,cars,raw,raw100k,logistic,logistic100k]
[--ladders 1,default,tempered,afresh,global,no3d,prior,nosiblings] [--seeds 1,2,3]`` (``--seeds``: the sampler's seeds,
default 1).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_search import _raw_export, _uci  # noqa: E402

def _raw_export_100k():
    from make_raw_export import make_raw_export

    frame = make_raw_export(n_rows=100_000, seed=0)
    y = frame.pop("readmitted").astype(str) == "<30"
    return frame, y.to_numpy(), {"exclude": ["encounter_id", "patient_nbr"]}


def _logistic_export(n_rows: int = 20_000):
    from make_logistic_export import EVENT, TARGET, make_logistic_export

    frame = make_logistic_export(n_rows, 3)
    y = frame.pop(TARGET).astype(str) == EVENT
    return frame, y.to_numpy(), {"exclude": ["encounter_id", "patient_nbr"]}


DATASETS = {"breast": ("UCI breast cancer", lambda: _uci("breast")),
            "spam": ("UCI spambase", lambda: _uci("spam")),
            "mammo": ("UCI mammographic masses", lambda: _uci("mammo")),
            "cars": ("UCI car", lambda: _uci("cars")),
            "raw": ("raw export (20,000 rows)", _raw_export),
            "raw100k": ("raw export (100,000 rows)", _raw_export_100k),
            "logistic": ("logistic export (20,000 rows)", _logistic_export),
            "logistic100k": ("logistic export (100,000 rows)", lambda: _logistic_export(100_000))}


# The default schedule with one option changed: "tempered" (the tempered escalation, the default before the plain
# chains were continued instead), "afresh" (the tempered escalation with every attempt started afresh from the seed,
# as before the chains were continued), "global" (local_share=0: every move with fresh risks redraws all of them from the
# change down, as before the local proposals), "no3d" (risk_scans=0: no one-risk-at-a-time Step 3d, as before it).
# "prior": every chain starts from a draw of the prior instead of the MAP list and the search chains' lists.
# "nosiblings": no moves between sibling rules (sibling_share=0, frl_engine.siblings), as before them.
VARIANTS = {"afresh": {"tempered": True, "continue_chains": False}, "global": {"local_share": 0.0}, "no3d": {"risk_scans": 0},
            "prior": {"starts": None}, "nosiblings": {"sibling_share": 0.0},
            "tempered": {"tempered": True}}


def _default_variant(model, seed, variant):
    from frl_engine.sampler import (dispersed_starts, focus_rules, sample_posterior_continued_until_converged,
                                    sample_posterior_tempered_until_converged)

    # the search's first round only, as the estimator's sample_posterior uses (so that "default" and a variant
    # differ only in the variant's option)
    search = getattr(model, "anneal_result_", None)
    chain_orders = () if search is None else search.chain_orders[:search.round_size or None]
    options = {"starts": dispersed_starts(model.map_fit_.order, chain_orders, 4),
               "jumps": (model.map_fit_.order, *chain_orders), "siblings": getattr(model, "candidate_conditions_", None),
               **VARIANTS[variant]}
    schedule = sample_posterior_continued_until_converged
    if options.pop("tempered", False):
        schedule = sample_posterior_tempered_until_converged
    return schedule(
        model.problem_, n_samples=1000, n_chains=4, random_state=seed, rule_names=model.candidate_names_,
        focus=focus_rules(model.problem_, (model.map_fit_.order, *chain_orders)), **options)


def measure(key: str, ladders, seeds=(1,)) -> list[dict]:
    from frl_engine import FallingRuleListClassifier
    from frl_engine.sampler import same_groups_frequency

    name, loader = DATASETS[key]
    loaded = loader()
    if isinstance(loaded, str):
        print(f"  {name}: not run ({loaded})")
        return []
    X, y, options = loaded
    started = time.perf_counter()
    model = FallingRuleListClassifier(random_state=0, **options).fit(X, y)
    fit_seconds = time.perf_counter() - started
    print(f"  {name} ({len(X):,} rows x {model.problem_.n_rules} rules, MAP length {len(model.rules_)}; "
          f"fit {fit_seconds:.1f} s)", flush=True)
    model.sample_posterior(5, n_chains=2, burn_in=0, random_state=0, extend=False)  # load the kernels
    rows = []
    for ladder, seed in ((ladder, seed) for ladder in ladders for seed in seeds):
        kwargs = {} if ladder is None or ladder in VARIANTS else {"temperatures": ladder}
        started = time.perf_counter()
        if ladder in VARIANTS:
            sample = _default_variant(model, seed, ladder)
        else:
            sample = model.sample_posterior(1000, n_chains=4, random_state=seed, **kwargs)
        seconds = time.perf_counter() - started
        # the fitted MAP list's shares (the sample's own list is the most frequent one when chains start from the prior)
        map_order = tuple(int(i) for i in model.map_fit_.order)
        map_share = sum(o == map_order for o in sample.orders) / len(sample.orders)
        groups_share = same_groups_frequency(model.problem_, map_order, sample.orders)
        betas = getattr(sample, "temperatures", (1.0,))
        swaps = getattr(sample, "swap_acceptance", ())
        label = "default" if ladder is None else (ladder if ladder in VARIANTS else f"temperatures={ladder}")
        label = f"{label} (seed {seed})"
        print(f"    {label:<16s} {len(betas)} rung(s) (beta_min {min(betas):.3g}): R-hat log posterior "
              f"{sample.rhat['log_posterior']:.3f}, L {sample.rhat['length']:.3f}; ESS {sample.ess['log_posterior']:.0f}, "
              f"{sample.ess['length']:.0f}; burn-in {sample.burn_in:,}, thin {sample.thin}; {seconds:.1f} s; "
              f"MAP list in {100 * map_share:.1f}% (its patient groups in {100 * groups_share:.1f}%); swaps "
              f"{' '.join(f'{s:.2f}' for s in swaps) or '-'}; "
              f"{'converged' if sample.verdict.converged else 'NOT converged'}", flush=True)
        if sample.attempts:
            from frl_engine.sampler import _describe_attempt

            print(f"      runs drawn: {'; '.join(_describe_attempt(a) for a in sample.attempts)}", flush=True)
        rows.append({"dataset": name, "ladder": ladder, "seed": seed, "rhat": sample.rhat, "ess": sample.ess, "seconds": seconds,
                     "converged": sample.verdict.converged, "swap_acceptance": swaps, "thin": sample.thin,
                     "map_frequency": map_share, "map_groups_frequency": groups_share})
    return rows


def run(only=("breast", "spam", "raw"), ladders=(1, None), seeds=(1,)) -> list[dict]:
    print(f"Default posterior sample with and without parallel tempering ({os.cpu_count()} cores; "
          "4 chains x 1000 kept, continued longer while not converged)")
    rows = []
    for key in only:
        rows.extend(measure(key, ladders, seeds))
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    only = ("breast", "spam", "raw")
    ladders = (1, None)
    if "--only" in args:
        only = tuple(args[args.index("--only") + 1].split(","))
    if "--ladders" in args:
        ladders = tuple(None if v == "default" else (v if v in VARIANTS else int(v))
                        for v in args[args.index("--ladders") + 1].split(","))
    seeds = (1,)
    if "--seeds" in args:
        seeds = tuple(int(v) for v in args[args.index("--seeds") + 1].split(","))
    run(only, ladders, seeds)
