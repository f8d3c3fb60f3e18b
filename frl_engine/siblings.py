"""Sibling rules: candidate rules that share a condition, for the sampler's move between them.

Mining writes one group of patients many ways: ``insulin AND crp < 4.4``, ``insulin AND crp < 10``,
``insulin AND race is not Hispanic`` differ only in the condition that trims a few rows off ``insulin``.
Low in a list, where few rows are left, such rules are nearly interchangeable, and a chain that holds one
keeps it for thousands of sweeps: the list move draws the replacement from the focus set or the prior,
one rule in thousands.  The sampler's sibling move (:func:`frl_engine.sampler.sample_posterior`,
``siblings=``) replaces a rule by a rule drawn uniformly among its siblings instead.

The relation is symmetric (``a`` shares a condition with ``b`` exactly when ``b`` shares it with ``a``),
so the move's reverse draws among the new rule's siblings and the list part of the Hastings ratio is
``n_siblings(old) / n_siblings(new)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import scipy.sparse as sparse


def condition_ids(rules) -> tuple[tuple[int, ...], ...]:
    """Each rule's conditions as small integers (the same condition, the same integer).

    ``rules``: :class:`frl_engine.rules.Rule` objects, or any sequences of hashable conditions.
    """
    ids: dict[Hashable, int] = {}
    conditions = (getattr(rule, "conditions", rule) for rule in rules)
    return tuple(tuple(ids.setdefault(c, len(ids)) for c in rule_conditions) for rule_conditions in conditions)


def sibling_tables(rule_conditions: Sequence[Sequence[Hashable]]) -> tuple[np.ndarray, np.ndarray]:
    """Every rule's siblings, the rules other than itself that share at least one of its conditions.

    Returns ``(data, starts)`` (int64): rule ``j``'s siblings are ``data[starts[j]:starts[j + 1]]``,
    sorted, as the sampler's kernel reads them.  ``rule_conditions[j]`` holds rule ``j``'s conditions
    (any hashable keys: :func:`condition_ids`, names, :class:`~frl_engine.rules.Condition` objects).
    """
    ids = condition_ids(rule_conditions)
    n_rules = len(ids)
    n_conditions = 1 + max((c for rule in ids for c in rule), default=-1)
    rows = np.repeat(np.arange(n_rules), [len(rule) for rule in ids])
    columns = np.fromiter((c for rule in ids for c in rule), dtype=np.int64, count=len(rows))
    incidence = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, columns)),
                                  shape=(n_rules, max(n_conditions, 1)))
    shared = (incidence @ incidence.T).tocsr()
    shared.setdiag(0)
    shared.eliminate_zeros()
    shared.sort_indices()
    return shared.indices.astype(np.int64), shared.indptr.astype(np.int64)
