"""Judging a fitted model: the evaluation layer, above the estimator.

* :mod:`frl_engine.validation.crossval` -- cross-validation of the falling rule
  list against the baselines (``frl evaluate``);
* :mod:`frl_engine.validation.external` -- a saved model on patients it never saw.

Modules here import the estimator; the estimator never imports them.
"""
