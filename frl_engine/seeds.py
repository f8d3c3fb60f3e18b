"""One reading of the user's ``random_state``: every random draw of the search and the sampler comes from it."""

from __future__ import annotations

import numbers

import numpy as np

from .errors import FRLError

__all__ = ["generator", "fixed_seed", "check_seed"]


def _spawnable(rng: np.random.Generator) -> bool:
    return isinstance(rng.bit_generator.seed_seq, np.random.SeedSequence)


def check_seed(random_state) -> None:
    """Refuse, before any work, what :func:`generator` cannot read.

    Raises
    ------
    FRLError
        For a float, a negative number, text..., naming what is accepted.
    """
    if random_state is None or isinstance(random_state, (np.random.SeedSequence, np.random.Generator,
                                                         np.random.RandomState, np.random.BitGenerator)):
        return
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return
    raise FRLError("random_state must be None, a whole number >= 0, a SeedSequence, a numpy Generator or a "
                   f"RandomState, got {random_state!r}")


def fixed_seed(random_state):
    """``random_state`` as something every later reading turns into the same generator.

    A legacy ``RandomState``, a bare ``BitGenerator`` or a Generator that cannot spawn the chains' generators is
    drawn from once, here, and replaced by that whole number (so the attempts of a posterior sample, each read
    afresh, start from one seed); anything else is returned as it is.
    """
    check_seed(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**63 - 1, dtype=np.int64))
    if isinstance(random_state, np.random.BitGenerator):
        random_state = np.random.Generator(random_state)
    if isinstance(random_state, np.random.Generator) and not _spawnable(random_state):
        return int(random_state.integers(2**63 - 1))
    return random_state


def generator(random_state) -> np.random.Generator:
    """The :class:`numpy.random.Generator` that a fit or a posterior sample draws from.

    - ``None``, a whole number >= 0 or a :class:`numpy.random.SeedSequence`:
      ``numpy.random.default_rng(random_state)``;
    - a ``Generator``: itself, when it can spawn the chains' generators (one made by ``default_rng``);
    - a legacy ``numpy.random.RandomState`` (scikit-learn's convention), a ``BitGenerator`` or a Generator that
      cannot spawn: a new Generator seeded with one draw from it (:func:`fixed_seed`), so ``RandomState(0)`` made
      afresh gives the same list.

    Raises
    ------
    FRLError
        For anything else (:func:`check_seed`).
    """
    random_state = fixed_seed(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)
