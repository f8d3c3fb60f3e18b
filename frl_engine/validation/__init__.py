"""Validation of a fitted falling rule list: everything here looks down at the estimator, nothing looks up.

* :mod:`.metrics` -- pure functions: DeLong AUROC with its interval, Brier score,
  calibration intercept and slope, binomial intervals, net benefit.
* :mod:`.external` -- a saved model scored on a new table (a later period, another
  hospital): discrimination, calibration, each rule's observed rate, a decision curve,
  per subgroup (``frl validate``).
"""
