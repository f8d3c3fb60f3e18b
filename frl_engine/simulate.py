"""The paper's simulation setting (section 4) and the edit distance between lists.

A data set is a random binary rule matrix (each of ``n_rules`` rules holds for
a row with probability ``density``), a true list of ``len(probabilities) - 1``
distinct random rules, and outcomes drawn from that list: row ``n`` gets the
risk of the first true rule it satisfies, or the default risk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PAPER_PROBABILITIES = (0.84, 0.70, 0.54, 0.40, 0.25, 0.14)


@dataclass(frozen=True)
class SimulatedData:
    """Rule matrix, outcomes and the list that generated them."""

    coverage: np.ndarray = field(repr=False)   # bool (n_rows, n_rules)
    y: np.ndarray = field(repr=False)          # bool (n_rows,)
    true_order: tuple[int, ...]
    probabilities: tuple[float, ...]


def simulate_rule_list_data(rng: np.random.Generator, n_rows: int, *, n_rules: int = 100, density: float = 0.25,
                            probabilities=PAPER_PROBABILITIES) -> SimulatedData:
    """Draw one replicate of the paper's simulation study (section 4)."""
    probabilities = tuple(float(p) for p in probabilities)
    length = len(probabilities) - 1
    coverage = rng.random((n_rows, n_rules)) < density
    true_order = rng.choice(n_rules, size=length, replace=False)
    position = np.full(n_rows, length)
    for index in range(length - 1, -1, -1):
        position[coverage[:, true_order[index]]] = index
    y = rng.random(n_rows) < np.asarray(probabilities)[position]
    return SimulatedData(coverage=coverage, y=y, true_order=tuple(int(i) for i in true_order), probabilities=probabilities)


def edit_distance(first, second) -> int:
    """Levenshtein distance between two ordered lists (insert, delete, substitute one rule)."""
    first, second = list(first), list(second)
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i]
        for j, b in enumerate(second, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]
