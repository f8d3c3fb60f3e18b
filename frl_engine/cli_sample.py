"""``frl sample``: fit the MAP list, then sample the posterior (paper section 3.2).

    frl sample DATA.csv --target COL [--positive VALUE] [fit options] \\
        --samples N --chains C --burn-in B --thin T --seed S [--temperatures N [--temper-prior]] --out posterior.json

Prints the fitted list and the posterior summary (length histogram, rule
inclusion frequencies, acceptance rates, R-hat and ESS, the MAP list's risks
with 95% credible intervals) and writes ``PosteriorSample.to_dict()`` as JSON.

``--chains`` and ``--seed`` are the fit options of the same name: one value
serves both the annealing restarts and the sampler's chains (``--sampler-chains``
sets the sampler's separately), and one seed makes the whole run reproducible.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from .cli_evaluate import jobs_per_chain
from .errors import FRLError


def register(subparsers) -> None:
    """Add the ``sample`` sub-command."""
    from .cli import add_fit_arguments

    parser = subparsers.add_parser(
        "sample", help="fit a falling rule list, then sample its posterior",
        description="Fit the MAP falling rule list, then run the posterior sampler of Wang & Rudin (2015, "
                    "section 3.2) from it: print a summary and optionally write every sample as JSON.")
    add_fit_arguments(parser)
    for action in parser._actions:  # the shared options also drive the sampler: say so in --help
        if "--chains" in action.option_strings:
            action.help = "annealing restarts, and sampler chains unless --sampler-chains is given (default 4)"
        elif "--seed" in action.option_strings:
            action.help = "random seed of the fit and of the sampler (default 0)"
    parser.add_argument("--samples", type=int, default=1000, help="samples kept per chain (default 1000); the default's attempts, and its work budget "
                             "of about a minute on 2 cores, grow with it")
    parser.add_argument("--sampler-chains", type=int, default=None, metavar="C",
                        help="sampler chains, if different from --chains")
    parser.add_argument("--burn-in", type=int, default=None,
                        help="sweeps discarded at the start of each chain (default: --samples). Given, it runs "
                             "one sample as asked, without the default's longer attempts")
    parser.add_argument("--thin", type=int, default=1,
                        help="keep every T-th sweep (default 1). Above 1, it runs one sample as asked, without the "
                             "default's longer attempts")
    parser.add_argument("--jobs", type=jobs_per_chain, default=None, help="worker processes (default: one per chain)")
    parser.add_argument("--temperatures", type=int, default=None, metavar="N",
                        help="parallel tempering: replicas per sampler chain, at inverse temperatures from 1 down "
                             "to 0.1 evenly in log scale; only the one at temperature 1 is kept; 1: no tempering "
                             "(default: the chains are continued 2, 4 and 8 times longer while they have not "
                             "converged, then with 4 replicas that temper the list prior too, beta 1 down to 0.8, "
                             "within a work budget of about a minute; docs/search.md)")
    parser.add_argument("--temper-prior", action="store_true",
                        help="with --temperatures: the replicas temper the list prior (length and rules) with the "
                             "likelihood, so a hot replica pays less for each rule it holds (the default's replicas "
                             "always do; docs/search.md section 2)")
    parser.add_argument("--out", "-o", help="write the samples and summaries to this JSON file")
    parser.add_argument("--model-out", metavar="MODEL.json",
                        help="also write the MAP model with its risks' 95%% credible intervals (for `frl card`)")
    from .cli_models import add_register_arguments

    add_register_arguments(parser)
    parser.set_defaults(handler=cmd_sample)


def cmd_sample(args) -> int:
    from .cli import SlowFitProgress, _model_dict, fit_from_args, print_model, search_warning

    # Check the sampler's numbers before spending time on the fit.
    for name, value, low in (("--samples", args.samples, 1), ("--thin", args.thin, 1),
                             ("--burn-in", args.burn_in, 0), ("--sampler-chains", args.sampler_chains, 1),
                             ("--temperatures", args.temperatures, 1)):
        if value is not None and value < low:
            raise FRLError(f"{name} must be at least {low}, got {value}")
    if args.temper_prior and (args.temperatures is None or args.temperatures < 2):
        raise FRLError("--temper-prior tempers the replicas of --temperatures: give --temperatures 2 or more "
                       "(the default's replicas already temper the list prior)")
    from .cli_models import register_fit, registry_for
    from .diagnostics import ESS_TARGET

    n_chains = args.sampler_chains if args.sampler_chains is not None else args.chains
    if args.samples * n_chains < ESS_TARGET:  # the verdict asks for an ESS this sample cannot reach
        print(f"Note: {args.samples} samples x {n_chains} chains = {args.samples * n_chains} draws seldom show an ESS "
              f"of {ESS_TARGET:.0f} (an ESS above the number of draws is rare), so the verdict will most likely be "
              f"'not converged': ask for --samples {int(-(-ESS_TARGET // n_chains))} at the very least; the end of "
              "the run says how many this run's chains need.")
    registry = registry_for(args)  # before the fit: a bad registry fails at once
    started = time.perf_counter()
    estimator, features = fit_from_args(args)
    if getattr(args, "explain_columns", False) and estimator.binarizer_ is not None:   # as frl fit prints it
        from .binarize import format_column_table

        print(format_column_table(estimator.column_table()) + "\n")
    print_model(_model_dict(estimator, args))
    if search_warning(estimator):
        print(search_warning(estimator))
    print(f"Fitted in {time.perf_counter() - started:.2f} s.\n")
    started = time.perf_counter()
    # Left at the defaults, an unconverged sample is drawn again longer (tempered, or 4x, 16x with --temperatures);
    # given, --burn-in/--thin are kept.
    extend = args.burn_in is None and args.thin == 1
    result = estimator.sample_posterior(args.samples, n_chains=n_chains, burn_in=args.burn_in, thin=args.thin,
                                        random_state=args.seed, n_jobs=args.jobs, extend=extend,
                                        temperatures=args.temperatures, temper_prior=args.temper_prior,
                                        progress=SlowFitProgress())   # at a terminal, each longer attempt
    print(result.summary())
    elapsed = time.perf_counter() - started
    print(f"\nSampled in {elapsed:.2f} s.")
    if not result.verdict.converged:
        print(f"Warning: {result.verdict.message}")
        if math.isfinite(result.verdict.longer):
            print(longer_sample_line(result.verdict, args.samples, elapsed))
    if args.out:
        data = result.to_dict()
        data["data"] = Path(args.data).name
        data["target"] = args.target
        Path(args.out).write_text(json.dumps(data, allow_nan=False) + "\n", encoding="utf-8")
        print(f"Posterior sample written to {args.out}")
    if args.model_out:
        from .io import save_model

        save_model(_model_dict(estimator, args), args.model_out)
        print(f"Model with credible intervals written to {args.model_out}")
    if registry is not None:  # the model with its credible intervals (the --model-out file)
        register_fit(registry, args, estimator, features, _model_dict(estimator, args))
    return 0


def longer_sample_line(verdict, samples: int, seconds: float) -> str:
    """What a sample long enough for the ESS asked would be: its ``--samples`` and, at this run's speed, its time
    (:func:`frl_engine.diagnostics.longer_sample_advice`); more while the chains still disagree."""
    from .diagnostics import longer_sample_advice

    return longer_sample_advice(verdict, samples, seconds, "--samples {}", "this run's")[2]
