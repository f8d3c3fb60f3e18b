"""Falling Rule Lists (Wang & Rudin, AISTATS 2015): monotone, interpretable risk models.

>>> from frl_engine import FallingRuleListClassifier
>>> model = FallingRuleListClassifier(random_state=0).fit(frame, outcome)   # doctest: +SKIP
>>> print(model.format_list())                                              # doctest: +SKIP
"""

from .errors import DataError, FRLError, ModelFileError, RuleMiningError
from .estimator import FallingRuleListClassifier

__all__ = ["FallingRuleListClassifier", "FRLError", "DataError", "RuleMiningError", "ModelFileError"]
__version__ = "0.1.0"
