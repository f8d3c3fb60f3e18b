"""The training rows' fingerprint (``training.rows_sha256``): the same rows in any order give the same fingerprint,
other rows another one, and the fast row hashes are pandas' own, so model files written before keep matching."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from frl_engine.io import _row_hashes, rows_fingerprint


def _mixed_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "flag": rng.random(n) < 0.3, "lab": rng.normal(size=n), "count": rng.integers(0, 9, n),
        "ward": rng.choice(["A", "B", None], n), "small": rng.normal(size=n).astype(np.float32),
        "nullable": pd.array(rng.integers(0, 3, n), dtype="Int64"), "sex": pd.Categorical(rng.choice(["F", "M"], n)),
        "code": rng.integers(0, 9, n).astype(np.uint8), "flag2": rng.random(n) < 0.5, "lab2": rng.normal(size=n)})
    frame.loc[::7, "lab"] = np.nan
    frame.loc[::11, "lab2"] = -0.0
    frame.loc[::13, "nullable"] = pd.NA
    return frame


def _pandas_fingerprint(frame: pd.DataFrame) -> str:
    """The definition, written with pandas alone: each row's hash over the columns in name order, sorted, hashed."""
    hashes = pd.util.hash_pandas_object(frame[sorted(frame.columns)], index=False).to_numpy(dtype=np.uint64)
    return hashlib.sha256(np.sort(hashes).tobytes()).hexdigest()


@pytest.mark.parametrize("columns", [None, ["flag"], ["flag", "flag2"], ["lab", "count", "small", "code"],
                                     ["ward", "sex", "nullable"]])
def test_the_fast_row_hashes_are_pandas_own(columns):
    frame = _mixed_table(600, seed=1)
    block = frame if columns is None else frame[columns]
    assert np.array_equal(_row_hashes(block), pd.util.hash_pandas_object(block, index=False).to_numpy(np.uint64))
    assert rows_fingerprint(block, block.columns) == _pandas_fingerprint(block)


def test_a_wide_boolean_table_hashes_as_pandas_does():
    """The paper's simulation setting (boolean columns only), where the fast path matters."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((300, 120)) < 0.25, columns=[f"rule{j}" for j in range(120)])
    assert rows_fingerprint(frame, frame.columns) == _pandas_fingerprint(frame)


def test_the_same_rows_in_another_order_match_and_a_changed_cell_does_not():
    frame = _mixed_table(400, seed=2)
    shuffled = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)[list(reversed(frame.columns))]
    assert rows_fingerprint(shuffled, shuffled.columns) == rows_fingerprint(frame, frame.columns)
    changed = frame.copy()
    changed.loc[5, "flag"] = not changed.loc[5, "flag"]
    assert rows_fingerprint(changed, changed.columns) != rows_fingerprint(frame, frame.columns)


def test_no_fingerprint_without_the_columns_or_with_a_duplicated_name():
    frame = _mixed_table(50, seed=4)
    assert rows_fingerprint(frame, ["lab", "not a column"]) is None
    assert rows_fingerprint(frame, []) is None
    doubled = pd.concat([frame[["lab"]], frame[["lab"]], frame[["count"]]], axis=1)
    assert rows_fingerprint(doubled, ["lab", "count"]) is None


def test_hashes_made_a_block_at_a_time_are_the_same(monkeypatch):
    """Blocks of a few cells split runs of one dtype anywhere; the hashes do not change."""
    import frl_engine.io as io_module

    frame = _mixed_table(300, seed=5)
    block = frame[sorted(frame.columns)]
    expected = pd.util.hash_pandas_object(block, index=False).to_numpy(np.uint64)
    for cells in (1, 300, 700, 1 << 20):
        monkeypatch.setattr(io_module, "_HASH_CELLS", cells)
        assert np.array_equal(_row_hashes(block), expected), cells


def test_a_wide_table_never_holds_every_cells_hash_at_once():
    """20,000 rows x 200 boolean columns: 32 MB of hashes if made at once; the fingerprint needs far less."""
    import tracemalloc

    rng = np.random.default_rng(6)
    frame = pd.DataFrame(rng.random((20_000, 200)) < 0.25, columns=[f"c{j}" for j in range(200)])
    tracemalloc.start()
    try:
        rows_fingerprint(frame, frame.columns)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2 ** 20, f"peak {peak / 2 ** 20:.1f} MiB"


def test_the_rows_as_written_match_in_any_format_and_order():
    """``training.rows_text_sha256``: the rows re-read with every cell as text (a CSV saved as Excel), ``?`` as an
    empty cell, whole numbers as 5.0, and in another order, are the same rows; one changed cell is not."""
    from frl_engine.io import rows_text_fingerprint

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"age": rng.integers(20, 95, 300), "ward": rng.choice(["ICU", "medical", "?"], 300),
                          "lab": np.round(rng.normal(1, 0.3, 300), 2), "id": np.arange(300) + 10_000})
    as_text = frame.astype(str).sample(frac=1.0, random_state=1).replace("?", "")
    as_text["age"] = frame["age"].astype(float).astype(object)  # 62.0 where the CSV had 62
    assert rows_text_fingerprint(as_text, frame.columns) == rows_text_fingerprint(frame, frame.columns)
    assert rows_fingerprint(as_text, frame.columns) != rows_fingerprint(frame, frame.columns)  # as read: different
    changed = frame.copy()
    changed.loc[7, "lab"] += 0.01
    assert rows_text_fingerprint(changed, frame.columns) != rows_text_fingerprint(frame, frame.columns)
    assert rows_text_fingerprint(frame, ["age", "not a column"]) is None
