"""Does the MAP search find the MAP, and does the posterior sampler converge, at real size? (issue: search)

Prints, at the estimator's defaults (5000 annealing steps x 4 chains, restarts until two
chains agree; posterior 4 chains x 1000 kept samples, burn-in 1000, from the MAP list and the
other lists the search ended in):

1. The planted problem: 4,601 rows x 550 boolean candidate rules (density 0.25), a true
   6-rule falling list with risks .9/.75/.6/.5/.4/.3 over a default of .15 (one data set):
   how many of 25 seeds reach the true list's objective (or better), median fit time, and
   the same for the paper's plain annealing (no greedy start, no polish, no restarts).
2. Per-chain speed on that data: annealing steps/s (the kernel is unchanged), and sampler
   sweeps/s of the paper's Steps 1-4 alone vs. with the added list moves with fresh risks.
3. Real-size data: the generated raw hospital export (sample_data/make_raw_export.py, 20,000
   rows; when present), the logistic export (sample_data/make_logistic_export.py, 20,000 rows, data seed 3:
   an outcome logistic in its columns, not a planted list), the synthetic readmission table at 20,000 rows
   (sample_data/make_sample_data.py) and the UCI sets (/work/shared/uci or $FRL_UCI_DIR):
   five seeds of the default fit (spread of their objectives in nats, search reports), then the
   default posterior sample (split R-hat and ESS of the log posterior and of L, the verdict,
   the burn-in and thinning it took, time, how often the MAP list was visited, and the swap
   rates when parallel tempering ran; ``bench_tempering.py`` compares it with no tempering).

4. Spambase at the defaults: five seeds of the default fit (spread, distinct lists, median fit
   time), and the search alone with and without basin hopping on the same mined rules.

Run: ``.venv/bin/python benchmarks/bench_search.py`` (a few minutes; ``--quick`` skips parts 3
and 4; ``--spambase`` runs part 4 only, ``--logistic`` part 3 on the logistic export only).  Two more, on their own: ``--raw100k`` (five seeds of the
default fit on the raw export at 100,000 rows, data seeds 0 and 7) and ``--spambase-chains`` (one
round of 24 annealing chains from the prior on Spambase: how many end above the list the default
fit prints) and ``--budget`` (``sample_data/make_smooth_risk_table.py``: tables whose risk is smooth in
age, heart rate and creatinine: how many of six search seeds converge, and on which list, as before session 50
and at the default; docs/search.md section 1, steps 8 and 9), ``--smooth`` (part 3 on four such tables) and
``--tails`` (the search with and without the beam over the tail on every set above, the raw export at 100,000
rows and the smooth-risk tables: time, best objective, spread, converged; docs/search.md section 1, step 9),
``--wording`` (five seeds of the default fit on every set: how many cards they print with the search's wording
and with the simplest; docs/search.md section 1, step 10), ``--table PATH --target COL [--event VALUE]`` (five
seeds of the default fit on a table of your own, such as a real export that cannot ship with the repository, then
the default posterior of seed 0's fit).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))

from frl_engine.anneal import anneal, anneal_chain, temperature_schedule  # noqa: E402
from frl_engine.model import Hyperparameters, PackedProblem, fit_list  # noqa: E402
from frl_engine.sampler import DEFAULT_REFRESH, run_chain, run_chain_refresh  # noqa: E402
from frl_engine.simulate import simulate_rule_list_data  # noqa: E402

PLANTED_RISKS = (0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.15)
UCI_DIR = Path(os.environ.get("FRL_UCI_DIR", "/work/shared/uci"))


def planted_problem(seed: int = 0):
    """The planted problem of the issue: 4,601 x 550, density 0.25, a 6-rule falling list."""
    data = simulate_rule_list_data(np.random.default_rng(seed), 4601, n_rules=550, density=0.25,
                                   probabilities=PLANTED_RISKS)
    return data, PackedProblem.from_arrays(data.coverage, data.y, Hyperparameters())


def planted(n_seeds: int = 25) -> dict:
    from frl_engine import FallingRuleListClassifier

    data, problem = planted_problem()
    truth = fit_list(problem, data.true_order).log_posterior
    anneal(problem, n_steps=50, n_chains=1, random_state=0)  # compile / load the kernels
    out = {}
    for label, options in (("default search", {}),
                           ("paper's plain annealing", {"polish": False, "greedy_start": False})):
        reached, seconds, gaps, converged = 0, [], [], 0
        for seed in range(n_seeds):
            started = time.perf_counter()
            result = anneal(problem, n_steps=5000, n_chains=4, random_state=seed, **options)
            seconds.append(time.perf_counter() - started)
            gap = result.best.log_posterior - truth
            gaps.append(gap)
            reached += gap >= -1e-6
            converged += bool(result.report.converged)
        out[label] = {"reached": reached, "median_seconds": float(np.median(seconds)),
                      "worst_gap": float(min(gaps)), "converged": converged}
    # whole fit through the estimator (boolean columns as rules), 5 seeds
    frame = pd.DataFrame(data.coverage, columns=[f"r{j}" for j in range(data.coverage.shape[1])])
    seconds = []
    for seed in range(5):
        started = time.perf_counter()
        FallingRuleListClassifier(mine_rules=False, random_state=seed).fit(frame, data.y)
        seconds.append(time.perf_counter() - started)
    out["estimator_median_seconds"] = float(np.median(seconds))
    out["n_seeds"] = n_seeds
    return out


def chain_speed() -> dict:
    data, problem = planted_problem()
    args = (problem.rules, problem.y, problem.all_rows, problem.cum_weights, problem.log_weights, problem.consts)
    temperatures = temperature_schedule(20_000)
    start = np.asarray(data.true_order, dtype=np.int64)
    anneal_chain(np.random.default_rng(0), *args, start, temperatures[:10])
    best = np.inf
    for repeat in range(3):
        started = time.perf_counter()
        anneal_chain(np.random.default_rng(repeat), *args, start, temperatures)
        best = min(best, time.perf_counter() - started)
    fit = fit_list(problem, data.true_order)
    state = (start, fit.K, np.asarray(fit.gammas, dtype=float))
    speeds = {}
    for label, refresh in (("paper's Steps 1-4", 0), (f"with {DEFAULT_REFRESH} list moves with fresh risks",
                                                      DEFAULT_REFRESH)):
        n_sweeps = 10_000
        call = (lambda r, n: run_chain(r, *args, *state, 0, n, 1, False)) if refresh == 0 else \
            (lambda r, n: run_chain_refresh(r, *args, *state, 0, n, 1, False, refresh, problem.cum_weights,
                                            problem.log_weights))
        call(np.random.default_rng(0), 10)
        seconds = np.inf
        for repeat in range(3):
            started = time.perf_counter()
            call(np.random.default_rng(repeat), n_sweeps)
            seconds = min(seconds, time.perf_counter() - started)
        speeds[label] = n_sweeps / seconds
    return {"anneal_steps_per_second": 20_000 / best, "sampler_sweeps_per_second": speeds}


# ----------------------------------------------------------------------------------------
# Real-size data sets: (name, X, y, estimator options) or a reason they cannot run.


def _raw_export(n_rows: int = 20_000):
    try:
        from make_raw_export import make_raw_export
    except ImportError:
        return "sample_data/make_raw_export.py not on this branch yet (merge main)"
    frame = make_raw_export(n_rows=n_rows, seed=0)
    y = frame.pop("readmitted").astype(str) == "<30"
    exclude = [c for c in ("encounter_id", "patient_nbr") if c in frame.columns]
    return frame, y.to_numpy(), {"exclude": exclude}


def _logistic_export():
    from make_logistic_export import EVENT, TARGET, make_logistic_export

    frame = make_logistic_export(20_000, 3)
    y = frame.pop(TARGET).astype(str) == EVENT
    return frame, y.to_numpy(), {"exclude": [c for c in ("encounter_id", "patient_nbr") if c in frame.columns]}


def _readmission_20k():
    from make_sample_data import make_table

    frame = make_table(20_000, seed=1)
    y = frame.pop("Readmitted30d").astype(str) == "yes"
    return frame, y.to_numpy(), {"exclude": ["PatientID"]}


def _uci(key: str, **options):
    from frl_engine.datasets import dataset_file, load_dataset

    path = UCI_DIR / dataset_file(key).filename
    if not path.exists():
        return f"{path} not found"
    data = load_dataset(key, path)
    return data.X, data.y, options


DATASETS = {
    "raw export (20,000 rows)": _raw_export,
    "logistic export (20,000 rows)": _logistic_export,
    "readmission table (20,000 rows)": _readmission_20k,
    "UCI spambase": lambda: _uci("spam"),
    "UCI mammographic masses": lambda: _uci("mammo"),
    "UCI breast cancer": lambda: _uci("breast"),
    "UCI car": lambda: _uci("cars"),
}


def real_size(name: str, loader, n_seeds: int = 5) -> dict:
    from frl_engine import FallingRuleListClassifier

    try:
        loaded = loader()
    except Exception as exc:  # noqa: BLE001 - a benchmark reports what it could not run
        return {"skipped": f"{type(exc).__name__}: {exc}"}
    if isinstance(loaded, str):
        return {"skipped": loaded}
    X, y, options = loaded
    fits, seconds = [], []
    try:
        for seed in range(n_seeds):
            started = time.perf_counter()
            fits.append(FallingRuleListClassifier(random_state=seed, **options).fit(X, y))
            seconds.append(time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001
        return {"skipped": f"fit failed: {type(exc).__name__}: {exc}"}
    values = [m.log_posterior_ for m in fits]
    model = fits[0]
    model.sample_posterior(5, n_chains=2, burn_in=0, random_state=0)  # load the compiled kernels first
    started = time.perf_counter()
    sample = model.sample_posterior(1000, n_chains=4, random_state=1)
    sample_seconds = time.perf_counter() - started
    return {"rows": len(X), "rules": model.problem_.n_rules, "five_seed_spread": max(values) - min(values),
            "distinct_lists": len({tuple(m.map_fit_.order) for m in fits}),
            "search_converged": sum(bool(m.search_report_.converged) for m in fits),
            "chains_run": [m.search_report_.n_chains for m in fits], "median_fit_seconds": float(np.median(seconds)),
            "rhat": sample.rhat, "ess": sample.ess, "verdict": sample.verdict.message,
            "converged": sample.verdict.converged, "sample_seconds": sample_seconds,
            "map_frequency": sample.map_list_frequency, "map_groups_frequency": sample.map_groups_frequency,
            "map_length": len(model.rules_), "thin": sample.thin,
            "burn_in": sample.burn_in, "temperatures": sample.temperatures, "swap_acceptance": sample.swap_acceptance}


def spambase_search(n_seeds: int = 5) -> dict:
    """Spambase at the defaults: the MAP search with and without posterior walks and basin hopping.

    Five seeds of each on one mined problem: best objective, spread, distinct lists, search time,
    chains run, unseen share, and (default) the walks' gain.  "default" is the estimator's whole fit;
    "without walks" is the search before the posterior walks (``walks=0``); "polish only" the search
    before basin hopping (budget 4 x 4 chains), with today's polish.
    """
    from frl_engine import FallingRuleListClassifier

    loaded = _uci("spam")
    if isinstance(loaded, str):
        return {"skipped": loaded}
    X, y, _ = loaded
    seconds, fits = [], []
    for seed in range(n_seeds):
        started = time.perf_counter()
        fits.append(FallingRuleListClassifier(random_state=seed).fit(X, y))
        seconds.append(time.perf_counter() - started)
    problem = fits[0].problem_
    out = {"rows": len(X), "rules": problem.n_rules}

    def row(values, orders, times, reports):
        return {"best": max(values), "spread": max(values) - min(values), "distinct": len(set(orders)),
                "median_seconds": float(np.median(times)), "converged": sum(bool(r.converged) for r in reports),
                "chains": [r.n_chains for r in reports], "values": values,
                "unseen": [r.unseen_share for r in reports],
                "walk_gains": [r.walk_gain_nats for r in reports]}

    out["default fit (walks when unconverged)"] = row([m.log_posterior_ for m in fits],
                                                      [tuple(m.map_fit_.order) for m in fits], seconds,
                                                      [m.search_report_ for m in fits])
    for label, options in (("search without walks", {"walks": 0}),
                           ("search, polish only, 16-chain budget", {"hop_patience": None, "max_chains": 16})):
        values, orders, times, reports = [], [], [], []
        for seed in range(n_seeds):
            started = time.perf_counter()
            result = anneal(problem, n_steps=5000, n_chains=4, random_state=seed, **options)
            times.append(time.perf_counter() - started)
            values.append(result.best.log_posterior)
            orders.append(result.best.order)
            reports.append(result.report)
        out[label] = row(values, orders, times, reports)
    return out


SPAMBASE_ROWS = ("default fit (walks when unconverged)", "search without walks", "search, polish only, 16-chain budget")


def print_spambase(spam: dict) -> None:
    if "skipped" in spam:
        print(f"Spambase search: not run ({spam['skipped']})")
        return
    print(f"Spambase ({spam['rows']:,} rows x {spam['rules']} rules), five seeds each:")
    for label in SPAMBASE_ROWS:
        r = spam[label]
        gains = [g for g in r["walk_gains"] if g is not None]
        walks = f"; walks' gain {' '.join(f'{g:.2f}' for g in gains)} nats" if gains else ""
        print(f"  {label:<38s}: best {r['best']:.4f}; per seed {' '.join(f'{v:.2f}' for v in r['values'])}; "
              f"five-seed spread {r['spread']:.4f} nats, {r['distinct']} distinct list(s); converged "
              f"{r['converged']}/5 (chains {r['chains']}; unseen share {' '.join(f'{u:.2f}' for u in r['unseen'])}"
              f"{walks}); median {r['median_seconds']:.2f} s")


def run(quick: bool = False) -> dict:
    figures = {"planted": planted(), "speed": chain_speed()}
    p = figures["planted"]
    print("MAP search on the planted problem (4,601 rows x 550 rules, density 0.25, true 6-rule list "
          ".9/.75/.6/.5/.4/.3, default .15; 5000 steps x 4 chains per round)")
    for label in ("default search", "paper's plain annealing"):
        r = p[label]
        print(f"  {label:<24s}: reaches the true list's objective on {r['reached']} of {p['n_seeds']} seeds; "
              f"chains agree on {r['converged']}; worst seed {r['worst_gap']:+.2f} nats; "
              f"median {r['median_seconds']:.3f} s")
    print(f"  whole fit through the estimator (550 boolean columns, defaults): median {p['estimator_median_seconds']:.3f} s")
    s = figures["speed"]
    print("Per-chain speed on the same data (one thread)")
    print(f"  annealing: {s['anneal_steps_per_second']:,.0f} steps/s (kernel unchanged)")
    for label, value in s["sampler_sweeps_per_second"].items():
        per_sweep = 1 if label.startswith("paper") else 2 + DEFAULT_REFRESH  # list proposals in one sweep
        print(f"  sampler, {label}: {value:,.0f} sweeps/s = {value * per_sweep:,.0f} list/risk proposals/s")
    if quick:
        return figures
    figures["spambase"] = spambase_search()
    print_spambase(figures["spambase"])
    print("Real-size data: five seeds of the default fit, then the default posterior sample "
          "(4 chains x 1000 kept; burn-in 1000, continued with parallel tempering, then 2x, 4x and 8x longer, while not converged)")
    figures["data"] = {}
    for name, loader in DATASETS.items():
        print_real_size(name, real_size(name, loader), figures)
    return figures


def print_real_size(name: str, r: dict, figures: dict | None = None) -> None:
    if figures is not None:
        figures["data"][name] = r
    if "skipped" in r:
        print(f"  {name}: not run ({r['skipped']})")
        return
    print(f"  {name} ({r['rows']:,} rows x {r['rules']} rules, MAP length {r['map_length']}): five-seed spread "
          f"{r['five_seed_spread']:.3f} nats ({r['distinct_lists']} distinct list(s)); search converged on "
          f"{r['search_converged']}/5 (chains run {r['chains_run']}); median fit {r['median_fit_seconds']:.2f} s")
    print(f"      posterior: R-hat log posterior {r['rhat']['log_posterior']:.3f}, L {r['rhat']['length']:.3f}; "
          f"ESS {r['ess']['log_posterior']:.0f}, {r['ess']['length']:.0f}; MAP list in "
          f"{100 * r['map_frequency']:.1f}% of samples (its patient groups in "
          f"{100 * r['map_groups_frequency']:.1f}%); "
          f"burn-in {r['burn_in']:,}, thin {r['thin']} "
          f"(extended when not converged); {r['sample_seconds']:.1f} s; {r['verdict']}")
    if len(r["temperatures"]) > 1:
        print(f"      parallel tempering: {len(r['temperatures'])} replicas per chain, swap acceptance "
              f"{' '.join(f'{rate:.2f}' for rate in r['swap_acceptance'])}")


def raw_export_100k(data_seeds=(0, 7), n_seeds: int = 5) -> None:
    """Five seeds of the default fit on the raw export at 100,000 rows: spread, searches converged, time."""
    from make_raw_export import make_raw_export

    from frl_engine import FallingRuleListClassifier

    for data_seed in data_seeds:
        frame = make_raw_export(100_000, seed=data_seed)
        y = (frame.pop("readmitted").astype(str) == "<30").to_numpy()
        values, times, converged, chains = [], [], 0, []
        for seed in range(n_seeds):
            started = time.perf_counter()
            model = FallingRuleListClassifier(random_state=seed, exclude=["encounter_id", "patient_nbr"]).fit(frame, y)
            times.append(time.perf_counter() - started)
            values.append(model.map_fit_.log_posterior)
            converged += bool(model.search_report_.converged)
            chains.append(model.search_report_.n_chains)
        print(f"raw export, 100,000 rows (data seed {data_seed}): five-seed spread {max(values) - min(values):.4f} "
              f"nats; search converged on {converged}/{n_seeds} (chains run {chains}); median fit "
              f"{np.median(times):.2f} s (fits {', '.join(f'{t:.1f}' for t in times)} s)")


def own_table(path: str, target: str, event: str | None, n_seeds: int = 5) -> None:
    """Five seeds of the default fit on a table of your own (a real export that cannot ship with the repository):
    each seed's objective, list length, chains, walks and verdict, then the spread and the median time; then the
    default posterior sample of seed 0's fit (4 chains x 1,000 draws, sampler seed 1), as part 3 prints it."""
    from frl_engine import FallingRuleListClassifier
    from frl_engine.io import read_table, split_target

    X, y, positive = split_target(read_table(path), target, event)
    print(f"{Path(path).name}: {len(X):,} rows, event {target} = {positive}; five seeds of the default fit", flush=True)
    values, times, first = [], [], None
    for seed in range(n_seeds):
        started = time.perf_counter()
        model = FallingRuleListClassifier(random_state=seed).fit(X, y)
        first = first or model
        times.append(time.perf_counter() - started)
        values.append(model.map_fit_.log_posterior)
        report = model.search_report_
        print(f"  seed {seed}: {values[-1]:.3f} ({len(model.rules_)} rules, {model.problem_.n_rules:,} candidate rules), "
              f"{report.n_chains} chains, {report.n_walks} walk(s), {'converged' if report.converged else 'not converged'}"
              f", {times[-1]:.1f} s", flush=True)
    print(f"  five-seed spread {max(values) - min(values):.3f} nats, {len(set(np.round(values, 3)))} objective(s), "
          f"median fit {np.median(times):.1f} s", flush=True)
    first.sample_posterior(5, n_chains=2, burn_in=0, random_state=0)  # load the compiled kernels first
    started = time.perf_counter()
    sample = first.sample_posterior(1000, n_chains=4, random_state=1)
    seconds = time.perf_counter() - started
    print(f"  posterior of seed 0's fit: R-hat log posterior {sample.rhat['log_posterior']:.3f}, "
          f"L {sample.rhat['length']:.3f}; ESS {sample.ess['log_posterior']:.0f}, {sample.ess['length']:.0f}; "
          f"MAP list in {100 * sample.map_list_frequency:.1f}% of draws (its patient groups in "
          f"{100 * sample.map_groups_frequency:.1f}%); {seconds:.1f} s; {sample.verdict.message}")


def spambase_chains(n_chains: int = 24, n_steps: int = 5000, random_state: int = 100) -> None:
    """One round of annealing chains from the prior on Spambase: where they end, against the default fit."""
    spam = _uci("spam")
    if isinstance(spam, str):
        print(f"Spambase chains: not run ({spam})")
        return
    from frl_engine import FallingRuleListClassifier

    X, y, options = spam
    model = FallingRuleListClassifier(random_state=0, **options).fit(X, y)
    fitted = model.map_fit_.log_posterior
    started = time.perf_counter()
    result = anneal(model.problem_, n_steps=n_steps, n_chains=n_chains, max_chains=n_chains,
                    random_state=random_state, walks=0)
    values = np.array(result.chain_values)
    print(f"Spambase, {n_chains} chains x {n_steps} steps from the prior (one round, seed {random_state}, "
          f"{time.perf_counter() - started:.1f} s): the default fit (seed 0) prints a list at {fitted:.4f}; "
          f"{int(np.sum(values > fitted + 0.1))} chain(s) end above it (best {values.max():.4f}, "
          f"{values.max() - fitted:+.2f} nats), {int(np.sum(np.abs(values - fitted) <= 0.1))} within 0.1 nats, "
          f"{int(np.sum(values < fitted - 0.1))} below")


def _smooth_risk(variant: str, n_rows: int = 3_000, seed: int = 0):
    from frl_engine.io import read_table, split_target
    from make_smooth_risk_table import TARGET, make_smooth_risk_table

    X, y, _ = split_target(read_table(make_smooth_risk_table(variant, n_rows, seed), "table.csv"), TARGET, None)
    return X, y, {}


SMOOTH_RISK_TABLES = {
    "smooth risk, NULL cells (3,000 rows)": lambda: _smooth_risk("null"),
    "smooth risk, 95% and $ (3,000 rows)": lambda: _smooth_risk("percent"),
    "smooth risk, NULL cells (20,000 rows, data seed 1)": lambda: _smooth_risk("null", 20_000, 1),
    "smooth risk, 95% and $ (50,000 rows, data seed 1)": lambda: _smooth_risk("percent", 50_000, 1),
}


def _loaded_tables(tables: dict):
    """``(name, X, y, options)`` of each table that loads; the others are named as not run."""
    for name, load in tables.items():
        loaded = load()
        if isinstance(loaded, str):
            print(f"{name}: not run ({loaded})")
            continue
        yield (name, *loaded)


def search_budget(n_seeds: int = 6) -> None:
    """Converged searches of ``n_seeds`` seeds as before session 50 (16 chains, tail cuts only, unseen-share bar
    0.2), as after it (drops, the budget of ``default_chain_budget``, bar 0.1) and at the default (the same and
    the beam over the tail, session 51), on smooth-risk tables (3,000 rows written three ways, 20,000 and 50,000
    rows) and UCI breast cancer and mammographic masses (docs/search.md section 1, steps 8 and 9)."""
    import frl_engine.basin as basin
    import frl_engine.search_report as search_report_module
    from frl_engine import FallingRuleListClassifier
    from frl_engine.anneal import default_chain_budget

    tables = {**SMOOTH_RISK_TABLES, "smooth risk, semicolons and decimal commas (3,000 rows)": lambda: _smooth_risk("euro"),
              "UCI breast cancer": lambda: _uci("breast"), "UCI mammographic masses": lambda: _uci("mammo")}
    drop_cells, bar, tail_cuts = basin.DROP_CELLS_MAX, search_report_module.UNSEEN_SHARE_MAX, basin.TAIL_CUTS
    for name, X, y, options in _loaded_tables(tables):
        problem = FallingRuleListClassifier(random_state=0, **options).fit(X, y).problem_
        budget = default_chain_budget(problem.n_rows, problem.n_rules, 4)
        cells = []
        for label, max_chains, drops, unseen, cuts in (("before", 16, 0, 0.2, 0),
                                                       ("session 50", None, drop_cells, bar, 0),
                                                       ("default", None, drop_cells, bar, tail_cuts)):
            basin.DROP_CELLS_MAX, search_report_module.UNSEEN_SHARE_MAX, basin.TAIL_CUTS = drops, unseen, cuts
            try:
                rows = []
                for seed in range(n_seeds):
                    started = time.perf_counter()
                    result = anneal(problem, n_chains=4, random_state=seed, max_chains=max_chains)
                    rows.append((result.report.converged, len(result.chain_values), result.best.log_posterior,
                                 time.perf_counter() - started))
            finally:
                basin.DROP_CELLS_MAX, search_report_module.UNSEEN_SHARE_MAX, basin.TAIL_CUTS = drop_cells, bar, tail_cuts
            cells.append(f"{label}: {sum(r[0] for r in rows)} of {n_seeds} converged ({min(r[1] for r in rows)} "
                         f"to {max(r[1] for r in rows)} chains, {min(r[3] for r in rows):.2f} to "
                         f"{max(r[3] for r in rows):.2f} s, best {max(r[2] for r in rows):.2f}, spread "
                         f"{max(r[2] for r in rows) - min(r[2] for r in rows):.3f})")
        print(f"{name} ({problem.n_rows:,} x {problem.n_rules:,}, budget {budget} chains):\n  " + "\n  ".join(cells),
              flush=True)


def tail_beam(n_seeds: int = 5) -> None:
    """The search with and without the beam over the tail (``basin.TAIL_CUTS`` 4 and 0), from the same mined
    problem of each data set: median search time of ``n_seeds`` seeds, the best objective, the spread, and how
    many seeds converged (docs/search.md section 1, step 9)."""
    import frl_engine.basin as basin
    from frl_engine import FallingRuleListClassifier

    tables = {"planted problem (4,601 x 550)": lambda: planted_problem()[1], **DATASETS,
              "raw export (100,000 rows)": lambda: _raw_export(100_000), **SMOOTH_RISK_TABLES}
    tail_cuts = basin.TAIL_CUTS
    for name, load in tables.items():
        loaded = load()
        if isinstance(loaded, str):
            print(f"{name}: not run ({loaded})")
            continue
        if isinstance(loaded, PackedProblem):
            problem = loaded
        else:
            X, y, options = loaded
            problem = FallingRuleListClassifier(random_state=0, **options).fit(X, y).problem_
        cells = []
        for label, cuts in (("without the beam", 0), ("with it (default)", tail_cuts)):
            basin.TAIL_CUTS = cuts
            try:
                rows = []
                for seed in range(n_seeds):
                    started = time.perf_counter()
                    result = anneal(problem, n_chains=4, random_state=seed)
                    rows.append((time.perf_counter() - started, result.best.log_posterior, result.report.converged))
            finally:
                basin.TAIL_CUTS = tail_cuts
            values = [row[1] for row in rows]
            cells.append(f"{label}: median {np.median([row[0] for row in rows]):.2f} s, best {max(values):.3f}, "
                         f"spread {max(values) - min(values):.3f}, {sum(row[2] for row in rows)} of {n_seeds} converged")
        print(f"{name} ({problem.n_rows:,} x {problem.n_rules:,}):\n  " + "\n  ".join(cells), flush=True)


def wording(n_seeds: int = 5) -> None:
    """How many different cards ``n_seeds`` seeds of the default fit print with the search's own wording and with
    the simplest one (frl_engine.wording), on every set above: the spread of the objectives, how many rules the
    wording rewrote, and what it cost (docs/search.md section 1, step 10)."""
    from frl_engine import FallingRuleListClassifier
    from frl_engine.model import drop_unreached_rules
    from frl_engine.wording import simplest_wording

    tables = {**DATASETS, "raw export (100,000 rows)": lambda: _raw_export(100_000), **SMOOTH_RISK_TABLES}
    for name, X, y, options in _loaded_tables(tables):
        searched, printed, values, rewritten, seconds = set(), set(), [], 0, []
        for seed in range(n_seeds):
            model = FallingRuleListClassifier(random_state=seed, **options).fit(X, y)
            own = drop_unreached_rules(model.problem_, model.anneal_result_.best)[0]
            sizes = [len(conditions) for conditions in model.candidate_conditions_]
            started = time.perf_counter()
            worded = simplest_wording(model.problem_, own, sizes)
            seconds.append(time.perf_counter() - started)
            assert worded.order == model.map_fit_.order
            searched.add(own.order)
            printed.add(model.map_fit_.order)
            values.append(model.log_posterior_)
            rewritten += sum(a != b for a, b in zip(own.order, worded.order))
        print(f"{name} ({model.problem_.n_rows:,} x {model.problem_.n_rules:,}): spread {max(values) - min(values):.3f} "
              f"nats; the search's wording {len(searched)} card(s), the simplest {len(printed)}; {rewritten} rule(s) "
              f"rewritten over {n_seeds} seeds; the wording took {1000 * float(np.median(seconds)):.1f} ms (median)",
              flush=True)


if __name__ == "__main__":
    if "--table" in sys.argv:   # --table PATH --target COL [--event VALUE]
        def _flag(name, default=None):
            return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
        own_table(_flag("--table"), _flag("--target"), _flag("--event"))
    elif "--wording" in sys.argv:
        wording()
    elif "--raw100k" in sys.argv:
        raw_export_100k()
    elif "--budget" in sys.argv:
        search_budget()
    elif "--tails" in sys.argv:
        anneal(planted_problem()[1], n_steps=50, n_chains=1, random_state=0)  # compile / load the kernels
        tail_beam()
    elif "--smooth" in sys.argv:
        print("Tables whose risk is smooth (sample_data/make_smooth_risk_table.py): five seeds, then the default posterior")
        for name, loader in SMOOTH_RISK_TABLES.items():
            print_real_size(name, real_size(name, loader))
    elif "--spambase-chains" in sys.argv:
        spambase_chains()
    elif "--logistic" in sys.argv:
        name = "logistic export (20,000 rows)"
        print_real_size(name, real_size(name, DATASETS[name]))
    elif "--spambase" in sys.argv:
        anneal(planted_problem()[1], n_steps=50, n_chains=1, random_state=0)  # compile / load the kernels
        print_spambase(spambase_search())
    else:
        run(quick="--quick" in sys.argv)
