"""Kept for compatibility: the cross-validation layer lives in :mod:`frl_engine.validation.crossval`.

``from frl_engine.evaluate import cross_validate_models`` (and every other name of
that module, helpers included) keeps working.
"""

from .validation import crossval as _crossval
from .validation.crossval import *  # noqa: F401,F403
from .validation.crossval import __all__  # noqa: F401

globals().update({name: value for name, value in vars(_crossval).items()
                  if not name.startswith("__") and name not in globals()})
