"""The compiled counting of rule mining (frl_engine/mining_kernels.py) against numpy written plainly: what each
itemset covers, how many of those rows are events, and the hash that finds itemsets covering the same rows."""

import numpy as np
import pytest

import frl_engine.mining as mining
from frl_engine.bits import pack_columns, pack_vector, row_mask
from frl_engine.mining_kernels import itemset_counts, itemset_stats, pair_counts


def _packed(seed: int, n_rows: int, n_items: int, density: float = 0.4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    items = rng.random((n_rows, n_items)) < density
    return np.concatenate([pack_columns(items), row_mask(n_rows)[None, :]])   # the last item covers every row


def _reference(packed, itemsets, events, multipliers):
    bits = packed[itemsets[:, 0]].copy()
    for t in range(1, itemsets.shape[1]):
        bits &= packed[itemsets[:, t]]
    counts = np.bitwise_count(bits).sum(axis=1)
    positives = np.bitwise_count(bits & events).sum(axis=1)
    hashes = (bits * multipliers).sum(axis=1, dtype=np.uint64)
    return counts, positives, hashes


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("n_rows", [63, 64, 1000, 4601])
def test_itemset_counts_events_and_hashes_equal_numpy(size, n_rows):
    packed = _packed(size + n_rows, n_rows, 30)
    rng = np.random.default_rng(n_rows)
    itemsets = np.sort(rng.integers(0, len(packed), (500, size)), axis=1)
    events = pack_vector(rng.random(n_rows) < 0.3)
    multipliers = (np.arange(1, packed.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    counts, positives, hashes = itemset_stats(packed, itemsets, events, multipliers)
    expected = _reference(packed, itemsets, events, multipliers)
    np.testing.assert_array_equal(counts, expected[0])
    np.testing.assert_array_equal(positives, expected[1])
    np.testing.assert_array_equal(hashes, expected[2])
    np.testing.assert_array_equal(itemset_counts(packed, itemsets), expected[0])


def test_pair_counts_are_the_popcounts_of_every_pair():
    packed = _packed(1, 1000, 25)
    counts = pair_counts(packed)
    for i in range(len(packed)):
        for j in range(len(packed)):
            expected = int(np.bitwise_count(packed[i] & packed[j]).sum()) if i <= j else 0
            assert counts[i, j] == expected


def test_itemsets_covering_the_same_rows_are_kept_once_whether_compared_at_once_or_by_hash(monkeypatch):
    rng = np.random.default_rng(3)
    n_rows = 700
    base = rng.random((n_rows, 6)) < 0.5
    items = np.concatenate([base, base[:, :3], base[:, :2] & base[:, 2:4]], axis=1)    # copies: equal coverages
    packed = np.concatenate([pack_columns(items), row_mask(n_rows)[None, :]])
    everyone = items.shape[1]
    itemsets = np.array([[i, everyone] for i in range(everyone)] + [[i, j] for i in range(everyone)
                                                                     for j in range(i + 1, everyone)])
    _, _, hashes = mining._itemset_stats(packed, itemsets, None)
    at_once = mining._distinct_coverage(itemsets, packed, hashes)
    monkeypatch.setattr(mining, "_CHUNK_WORDS", 1)          # as on a wide export: one hash's itemsets at a time
    by_hash = mining._distinct_coverage(itemsets, packed, hashes)
    np.testing.assert_array_equal(at_once, by_hash)
    # the truth: the first itemset of each distinct coverage, in index order
    bits = packed[itemsets[:, 0]] & packed[itemsets[:, 1]]
    _, first = np.unique(bits, axis=0, return_index=True)
    np.testing.assert_array_equal(at_once, np.sort(first))
    assert len(at_once) < len(itemsets)
