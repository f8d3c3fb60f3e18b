"""Validation of a fitted falling rule list: everything here looks down at the estimator, nothing looks up.

* :mod:`.crossval` -- cross-validation of the falling rule list against the
  baselines on the same folds (``frl evaluate``; ``frl_engine.evaluate`` re-exports it).
* :mod:`.metrics` -- pure functions: DeLong AUROC with its interval, Brier score,
  calibration intercept and slope, binomial intervals, net benefit.
* :mod:`.external` -- a saved model scored on a new table (a later period, another
  hospital): discrimination, calibration, each rule's observed rate, a decision curve,
  per subgroup (``frl validate``); :mod:`.report` draws it (figures, HTML).

The names below are loaded on first use, so importing one module of this package
does not import the others.
"""

_EXPORTS = {
    "validate_model": "external", "ExternalValidation": "external", "attach_to_model": "external",
    "delong_auroc": "metrics", "brier_score": "metrics", "calibration_intercept": "metrics",
    "calibration_slope": "metrics", "wilson_interval": "metrics", "exact_interval": "metrics",
    "net_benefit": "metrics", "net_benefit_treat_all": "metrics",
    "validation_report_html": "report",
}


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
