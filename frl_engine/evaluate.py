"""Kept for compatibility: the cross-validation layer lives in :mod:`frl_engine.validation.crossval`.

``from frl_engine.evaluate import cross_validate_models`` (and every other name
below) keeps working.
"""

from .validation.crossval import *  # noqa: F401,F403
from .validation.crossval import __all__  # noqa: F401
from .validation.crossval import (  # noqa: F401  (names outside __all__ that callers use)
    BASELINE_PREPROCESSING, CV_DESCRIPTION, METHOD_DESCRIPTIONS, RESULT_FORMAT_VERSION, _baseline_frame,
    _baseline_model,
)
