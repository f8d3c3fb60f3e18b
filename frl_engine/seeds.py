"""One reading of the user's ``random_state``: every random draw of the search and the sampler comes from it."""

from __future__ import annotations

import numbers

import numpy as np

from .errors import FRLError

__all__ = ["generator"]


def generator(random_state) -> np.random.Generator:
    """The :class:`numpy.random.Generator` that a fit or a posterior sample draws from.

    - ``None``, a whole number >= 0 or a :class:`numpy.random.SeedSequence`:
      ``numpy.random.default_rng(random_state)``;
    - a ``Generator``: itself, when it can spawn the chains' generators (one made by ``default_rng``);
    - a legacy ``numpy.random.RandomState`` (scikit-learn's convention) or a Generator that cannot spawn:
      a new Generator seeded with one draw from it, so ``RandomState(0)`` made afresh gives the same list.

    Raises
    ------
    FRLError
        For anything else (a float, a negative number, text), naming what is accepted.
    """
    if isinstance(random_state, np.random.Generator):
        if isinstance(random_state.bit_generator.seed_seq, np.random.SeedSequence):
            return random_state
        return np.random.default_rng(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(2**63 - 1, dtype=np.int64)))
    if random_state is None or isinstance(random_state, np.random.SeedSequence) or (
            isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0):
        return np.random.default_rng(random_state)
    raise FRLError("random_state must be None, a whole number >= 0, a SeedSequence, a numpy Generator or a "
                   f"RandomState, got {random_state!r}")
