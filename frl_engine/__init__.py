"""Falling Rule Lists (Wang & Rudin, AISTATS 2015): monotone, interpretable risk models.

>>> from frl_engine import FallingRuleListClassifier
>>> model = FallingRuleListClassifier(random_state=0).fit(frame, outcome)   # doctest: +SKIP
>>> print(model.format_list())                                              # doctest: +SKIP

The estimator (and with it scikit-learn) is imported on first use, so that the
card, the binarizer or the CLI's ``--help`` start quickly.
"""

from .errors import DataError, FRLError, ModelFileError, RuleMiningError
from .kernel_cache import drop_stale_kernels

drop_stale_kernels()   # before any kernel is loaded: a kernel cached against another file's old code is dropped

__all__ = ["FallingRuleListClassifier", "FRLError", "DataError", "RuleMiningError", "ModelFileError"]
__version__ = "0.1.0"


def __getattr__(name):
    if name == "FallingRuleListClassifier":
        from .estimator import FallingRuleListClassifier

        return FallingRuleListClassifier
    raise AttributeError(f"module 'frl_engine' has no attribute {name!r}")
