"""Conditions, rules and rule mining (frl_engine.rules)."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from frl_engine import mining as rules_module
from frl_engine.binarize import Binarizer
from frl_engine.datasets import load_spambase
from frl_engine.errors import DataError, ModelFileError, RuleMiningError
from frl_engine.rules import CandidateRules, Condition, Rule, mine_rules, rules_from_boolean_columns

SAMPLE_CSV = Path(__file__).resolve().parents[1] / "sample_data" / "readmission.csv"
SPAMBASE = Path("/work/shared/uci/spambase.data")


# --------------------------------------------------------------------------
# Conditions
# --------------------------------------------------------------------------


@pytest.fixture
def patients():
    return pd.DataFrame(
        {
            "Age": [70.0, 44.0, np.nan, 60.0, 59.9],
            "Shape": ["irregular", " round", None, "irregular", "oval"],
            "BedSores": ["Yes", "no", "YES", None, "n"],
            "Flag": [1, 0, 1, 0, 1],
            "AgeText": ["70", "44", "", "60", "59.9"],
        }
    )


@pytest.mark.parametrize(
    "condition, name",
    [
        (Condition("Age", ">=", 60), "Age >= 60"),
        (Condition("Age", "<", 45.0), "Age < 45"),
        (Condition("Creatinine", ">=", 0.1 + 0.14), "Creatinine >= 0.24"),
        (Condition("Shape", "==", "irregular"), "Shape = irregular"),
        (Condition("safety", "!=", "low"), "safety is not low"),
        (Condition("BedSores", "is true"), "BedSores"),
        (Condition("Age", "is missing"), "Age is missing"),
    ],
)
def test_condition_names_read_like_a_clinician_would_write_them(condition, name):
    assert condition.name == name


def test_condition_evaluate_each_op_and_missing_values_are_false(patients):
    def check(condition, expected):
        result = condition.evaluate(patients)
        assert result.dtype == bool and result.tolist() == expected, condition.name

    check(Condition("Age", ">=", 60), [True, False, False, True, False])
    check(Condition("Age", "<", 60), [False, True, False, False, True])
    check(Condition("AgeText", ">=", 60), [True, False, False, True, False])
    check(Condition("Shape", "==", "round"), [False, True, False, False, False])
    check(Condition("Shape", "==", "irregular"), [True, False, False, True, False])
    check(Condition("Shape", "!=", "irregular"), [False, True, False, False, True])  # row 2 is missing: False
    check(Condition("Shape", "!=", "hexagonal"), [True, True, False, True, True])
    check(Condition("BedSores", "is true"), [True, False, True, False, False])
    check(Condition("Flag", "is true"), [True, False, True, False, True])
    check(Condition("Age", "is missing"), [False, False, True, False, False])
    check(Condition("AgeText", "is missing"), [False, False, True, False, False])
    check(Condition("Shape", "is missing"), [False, False, True, False, False])


def test_condition_evaluate_refuses_what_it_cannot_read(patients):
    with pytest.raises(DataError, match="'Weight'"):
        Condition("Weight", ">=", 60).evaluate(patients)
    junk = patients.assign(AgeText=["70", "abc", "?", "60", "5"])
    with pytest.raises(DataError, match=r"'AgeText'.*'abc'"):
        Condition("AgeText", ">=", 60).evaluate(junk)
    with pytest.raises(DataError, match="'Shape'.*yes/no"):
        Condition("Shape", "is true").evaluate(patients)


def test_condition_normalises_thresholds_so_equal_conditions_compare_equal():
    assert Condition("Age", ">=", 60) == Condition("Age", ">=", 60.0)
    assert isinstance(Condition("Age", ">=", np.int64(60)).value, float)
    assert len({Condition("Age", ">=", 60), Condition("Age", ">=", 60.0)}) == 1


@pytest.mark.parametrize(
    "args",
    [("Age", "gt", 60), ("Age", ">=", None), ("Age", ">=", math.nan), ("Age", ">=", "60"), ("Age", ">=", True),
     ("Shape", "==", 3), ("Shape", "==", ""), ("Shape", "!=", None), ("Shape", "!=", 2), ("BedSores", "is true", 1),
     ("", "is true", None)],
)
def test_condition_refuses_inconsistent_fields(args):
    with pytest.raises(ValueError):
        Condition(*args)


@pytest.mark.parametrize(
    "condition",
    [Condition("Age", ">=", 60), Condition("Creatinine", "<", 1.25), Condition("Shape", "==", "oval"),
     Condition("Shape", "!=", "oval"), Condition("BedSores", "is true"), Condition("Age", "is missing")],
)
def test_condition_round_trips_through_json(condition):
    text = json.dumps(condition.to_dict(), allow_nan=False)
    assert Condition.from_dict(json.loads(text)) == condition


@pytest.mark.parametrize(
    "bad",
    [
        "Age >= 60",
        ["Age", ">=", 60],
        {"column": "Age", "value": 60},
        {"op": ">=", "value": 60},
        {"column": "Age", "op": "=>", "value": 60},
        {"column": "Age", "op": ">=", "value": "60"},
        {"column": "Age", "op": ">=", "value": True},
        {"column": "Age", "op": ">=", "value": None},
        {"column": "Age", "op": ">=", "value": float("inf")},
        {"column": "Shape", "op": "==", "value": 2},
        {"column": "BedSores", "op": "is true", "value": "yes"},
        {"column": "Age", "op": ">=", "value": 60, "extra": 1},
        {"column": 7, "op": "is true", "value": None},
    ],
)
def test_condition_from_dict_rejects_malformed_input(bad):
    with pytest.raises(ModelFileError):
        Condition.from_dict(bad)


# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------


def test_rule_is_the_and_of_its_conditions(patients):
    rule = Rule((Condition("Age", ">=", 60), Condition("Shape", "==", "irregular")))
    assert rule.name == "Age >= 60 AND Shape = irregular"
    expected = Condition("Age", ">=", 60).evaluate(patients) & Condition("Shape", "==", "irregular").evaluate(patients)
    assert rule.evaluate(patients).tolist() == expected.tolist() == [True, False, False, True, False]


def test_rule_round_trips_and_ignores_the_model_files_extra_keys():
    rule = Rule([Condition("BedSores", "is true"), Condition("Age", "<", 45)])
    assert isinstance(rule.conditions, tuple)
    entry = {**json.loads(json.dumps(rule.to_dict())), "probability": 0.6, "support": 230}
    assert entry["name"] == "BedSores AND Age < 45"
    assert Rule.from_dict(entry) == rule


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {"name": "BedSores"},
        {"conditions": []},
        {"conditions": "BedSores"},
        {"conditions": [{"column": "BedSores", "op": "is true"}], "name": "NoShow"},
        {"conditions": [{"column": "BedSores", "op": "maybe"}]},
    ],
)
def test_rule_from_dict_rejects_malformed_input(bad):
    with pytest.raises(ModelFileError):
        Rule.from_dict(bad)


def test_rule_needs_conditions():
    with pytest.raises(ValueError):
        Rule(())
    with pytest.raises(ValueError):
        Rule(Condition("BedSores", "is true"))


# --------------------------------------------------------------------------
# Mining: an independent brute-force oracle
# --------------------------------------------------------------------------


def _consistent(conditions):
    """The spec's same-column rule, written out plainly."""
    for a, b in itertools.combinations(conditions, 2):
        if a.column != b.column:
            continue
        ops = {a.op: a.value, b.op: b.value}
        if not (set(ops) == {">=", "<"} and ops[">="] < ops["<"]):
            return False
    return True


def brute_force(items, conditions, min_support, max_conditions):
    """Every itemset, counted directly; then clean-up, order and de-duplication as specified."""
    n_rows = len(items)
    kept, seen = [], set()
    for size in range(1, max_conditions + 1):
        for combo in itertools.combinations(range(len(conditions)), size):
            covered = items[:, list(combo)].all(axis=1)
            if covered.sum() / n_rows < min_support - 1e-12:
                continue
            chosen = [conditions[i] for i in combo]
            if not _consistent(chosen):
                continue
            if any(items[:, i].mean() >= 0.99 for i in combo):  # a near-universal item is no condition
                continue
            if size > 1 and any(covered.sum() > 0.95 * items[:, [i for i in combo if i != drop]].all(axis=1).sum()
                                for drop in combo):  # each condition removes >= 5% of what the others cover
                continue
            key = covered.tobytes()
            if key in seen:
                continue
            seen.add(key)
            kept.append((Rule(tuple(chosen)), covered))
    return kept


@pytest.fixture(scope="module")
def small_table():
    rng = np.random.default_rng(7)
    n = 400
    return pd.DataFrame(
        {
            "Age": rng.integers(20, 95, n),
            "Shape": rng.choice(["round", "oval", "irregular", "lobular"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "BedSores": rng.choice(["yes", "no"], n, p=[0.3, 0.7]),
            "NoShow": rng.choice(["yes", "no"], n, p=[0.45, 0.55]),
            "Creatinine": np.where(rng.random(n) < 0.08, np.nan, rng.lognormal(0, 0.3, n).round(2)),
        }
    )


@pytest.mark.parametrize("method", ["bitset", "fpgrowth"])
@pytest.mark.parametrize("min_support, max_conditions", [(0.05, 1), (0.05, 2), (0.1, 3), (0.03, 3)])
def test_mined_rules_and_supports_equal_a_brute_force_count(small_table, method, min_support, max_conditions):
    binarizer = Binarizer()
    items = binarizer.fit_transform(small_table)
    mined = mine_rules(items, binarizer.conditions_, min_support=min_support, max_conditions=max_conditions,
                       max_rules=100_000, method=method)
    expected = brute_force(items, binarizer.conditions_, min_support, max_conditions)
    assert mined.rules == tuple(rule for rule, _ in expected)
    assert np.array_equal(mined.coverage, np.column_stack([covered for _, covered in expected]))
    # The coverage is what the rules say on the raw table, not only on the items.
    for j in range(0, len(mined.rules), 7):
        assert np.array_equal(mined.coverage[:, j], mined.rules[j].evaluate(small_table)), mined.rules[j].name
    assert np.all(mined.support >= min_support)


def test_support_count_is_not_fooled_by_floating_point():
    # 0.07 * 100 == 7.000000000000001: an item on exactly 7 of 100 rows still reaches 7%.
    items = np.zeros((100, 2), dtype=bool)
    items[:7, 0] = True
    items[:6, 1] = True
    conditions = [Condition("A", "is true"), Condition("B", "is true")]
    for method in ("bitset", "fpgrowth"):
        assert mine_rules(items, conditions, min_support=0.07, method=method).names == ["A"]


def test_order_is_by_size_then_item_order_and_repeatable(small_table):
    binarizer = Binarizer()
    items = binarizer.fit_transform(small_table)
    position = {c: j for j, c in enumerate(binarizer.conditions_)}
    mined = mine_rules(items, binarizer.conditions_, max_conditions=3, max_rules=100_000)
    keys = [(len(r.conditions), [position[c] for c in r.conditions]) for r in mined.rules]
    assert keys == sorted(keys)
    assert all(idx == sorted(idx) for _, idx in keys)
    assert mine_rules(items, binarizer.conditions_, max_conditions=3, max_rules=100_000).names == mined.names


# --------------------------------------------------------------------------
# Clean-up
# --------------------------------------------------------------------------


def test_same_column_conjunctions_are_dropped_except_ranges():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "Age": np.where(rng.random(500) < 0.1, np.nan, rng.integers(20, 90, 500)),
        "Shape": rng.choice(["round", "oval"], 500),
        "X": rng.choice(["yes", "no"], 500),
    })
    conditions = [Condition("Age", ">=", 45), Condition("Age", ">=", 60), Condition("Age", "<", 45),
                  Condition("Age", "<", 60), Condition("Age", "is missing"), Condition("Shape", "==", "round"),
                  Condition("Shape", "==", "oval"), Condition("X", "is true")]
    items = np.column_stack([c.evaluate(frame) for c in conditions])
    for method in ("bitset", "fpgrowth"):
        names = set(mine_rules(items, conditions, min_support=0.01, max_conditions=3, method=method).names)
        assert "Age >= 45 AND Age < 60" in names
        assert "Age >= 45 AND Age < 60 AND X" in names
        for dropped in ["Age >= 45 AND Age >= 60", "Age < 45 AND Age < 60", "Age >= 60 AND Age < 45",
                        "Shape = round AND Shape = oval", "Age >= 45 AND Age is missing",
                        "Age >= 45 AND Age >= 60 AND X"]:
            assert dropped not in names
        assert all(name.count("Age") <= 2 and name.count("Shape") <= 1 for name in names)


def test_rules_covering_the_same_rows_keep_the_simplest_earliest_wording():
    frame = pd.DataFrame({"A": [1, 1, 1, 0, 0, 0, 1, 0], "B": [1, 1, 1, 0, 0, 0, 1, 0],
                          "C": [1, 1, 0, 0, 1, 1, 1, 0], "D": [1, 1, 1, 1, 1, 1, 1, 1]})
    conditions = [Condition(c, "is true") for c in "ABCD"]
    items = frame.to_numpy(dtype=bool)
    for method in ("bitset", "fpgrowth"):
        mined = mine_rules(items, conditions, min_support=0.1, max_conditions=3, method=method)
        # B == A; D is true for everyone, so it is no condition; B AND C == A AND C;
        # every rule covers a different set of rows.
        assert mined.names == ["A", "C", "A AND C"]
        assert len({mined.coverage[:, j].tobytes() for j in range(len(mined.rules))}) == len(mined.rules)


# --------------------------------------------------------------------------
# Reference equality on real data
# --------------------------------------------------------------------------


@pytest.mark.parametrize("max_conditions", [2, 3])
def test_bitset_equals_fpgrowth_on_the_sample_data(max_conditions):
    table = pd.read_csv(SAMPLE_CSV)
    binarizer = Binarizer(exclude=["PatientID", "Readmitted30d"])
    items = binarizer.fit_transform(table)
    settings = dict(min_support=0.05, max_conditions=max_conditions, max_rules=100_000)
    bitset = mine_rules(items, binarizer.conditions_, method="bitset", **settings)
    reference = mine_rules(items, binarizer.conditions_, method="fpgrowth", **settings)
    assert len(bitset.rules) > 100
    assert bitset.rules == reference.rules
    assert np.array_equal(bitset.coverage, reference.coverage)


@pytest.fixture(scope="module")
def spambase():
    if not SPAMBASE.exists():
        pytest.skip(f"{SPAMBASE} is not available")
    return load_spambase(SPAMBASE).X


# mlxtend's pure-Python FP-Growth needs about 4 minutes for all 57 Spambase columns (see
# benchmarks/bench_mining.py), so the comparison uses every row and a spread of the columns.
@pytest.mark.parametrize(
    "columns, max_conditions",
    [(list(range(0, 57, 6)), 2), (list(range(0, 57, 6)), 3), (list(range(47, 57)), 2)],
)
def test_bitset_equals_fpgrowth_on_spambase(spambase, columns, max_conditions):
    binarizer = Binarizer()
    items = binarizer.fit_transform(spambase.iloc[:, columns])
    settings = dict(min_support=0.05, max_conditions=max_conditions, max_rules=100_000)
    bitset = mine_rules(items, binarizer.conditions_, method="bitset", **settings)
    reference = mine_rules(items, binarizer.conditions_, method="fpgrowth", **settings)
    assert len(bitset.rules) > 200
    assert bitset.rules == reference.rules
    assert np.array_equal(bitset.coverage, reference.coverage)


def test_bitset_mines_all_of_spambase_and_finds_only_frequent_distinct_rules(spambase):
    binarizer = Binarizer()
    items = binarizer.fit_transform(spambase)
    mined = mine_rules(items, binarizer.conditions_, min_support=0.05, max_conditions=2, max_rules=100_000)
    counts = mined.coverage.sum(axis=0)
    assert counts.min() >= math.ceil(0.05 * len(spambase))
    assert len({mined.coverage[:, j].tobytes() for j in range(len(mined.rules))}) == len(mined.rules)
    # Spot-check supports against the items directly.
    position = {c: j for j, c in enumerate(binarizer.conditions_)}
    for j in range(0, len(mined.rules), 97):
        idx = [position[c] for c in mined.rules[j].conditions]
        assert counts[j] == items[:, idx].all(axis=1).sum()


# --------------------------------------------------------------------------
# Errors and guards
# --------------------------------------------------------------------------


def test_more_rules_than_max_rules_are_screened_not_refused(small_table):
    """Every one-condition rule stays; conjunctions are kept by their G statistic for a higher event rate."""
    binarizer = Binarizer()
    items = binarizer.fit_transform(small_table)
    rng = np.random.default_rng(3)
    event = rng.random(len(small_table)) < np.where(items[:, 0], 0.6, 0.1)
    settings = dict(min_support=0.02, max_conditions=3, event=event)
    everything = mine_rules(items, binarizer.conditions_, max_rules=100_000, **settings)
    n_rules = len(everything.rules)
    assert n_rules > 100 and everything.note == ""
    screened = mine_rules(items, binarizer.conditions_, max_rules=100, **settings)
    assert len(screened.rules) == 100 and screened.n_mined == n_rules
    assert screened.note.startswith(f"Kept 100 of {n_rules:,} candidate rules") and "\n" not in screened.note
    singles = {r.name for r in everything.rules if len(r.conditions) == 1}
    assert singles <= set(screened.names)
    # The kept conjunctions are the ones with the largest signed G statistic.
    def g(coverage):
        n1, k1 = coverage.sum(), (coverage & event).sum()
        n0, k0 = len(event) - n1, event.sum() - (coverage & event).sum()
        p = event.mean()
        def part(k, n):
            q = k / n if n else p
            return n * ((q * np.log(q / p) if q > 0 else 0) + ((1 - q) * np.log((1 - q) / (1 - p)) if q < 1 else 0))
        value = 2 * (part(k1, n1) + part(k0, n0))
        return value if k1 / max(n1, 1) > k0 / max(n0, 1) else -value
    scores = {name: g(everything.coverage[:, j]) for j, name in enumerate(everything.names)}
    kept = [scores[n] for n in screened.names if n not in singles]
    dropped = [scores[n] for n in everything.names if n not in set(screened.names)]
    assert min(kept) >= max(dropped) - 1e-9
    assert len(mine_rules(items, binarizer.conditions_, max_rules=n_rules, **settings).rules) == n_rules


def test_the_rules_do_not_depend_on_how_the_itemsets_are_chunked(monkeypatch, small_table):
    """Mining ANDs the itemsets' bit vectors in chunks of bounded memory (at most _CHUNK_WORDS words): chunks
    of one or a few itemsets give the same rules, bits and screening as the default."""
    binarizer = Binarizer()
    items = binarizer.fit_transform(small_table)
    event = np.random.default_rng(3).random(len(small_table)) < np.where(items[:, 0], 0.6, 0.1)
    settings = dict(min_support=0.02, max_conditions=3, event=event, max_rules=60)
    whole = mine_rules(items, binarizer.conditions_, **settings)
    n_words = whole.packed.shape[1]
    assert len(whole.rules) == 60 and whole.note                   # the screening ran too
    real_chunks = rules_module._chunks
    # at 100,000 rows a chunk holds 2,683 itemsets (32 MB of words), not 16,384 (205 MB)
    assert [len(c) for _, c in real_chunks(np.zeros((20_000, 2), dtype=np.int64), 1_563)][0] == 2_683
    sizes = []

    def recorded(itemsets, words):
        for start, chunk in real_chunks(itemsets, words):
            sizes.append(len(chunk))
            yield start, chunk

    monkeypatch.setattr(rules_module, "_chunks", recorded)
    for words in (n_words, 3 * n_words):
        monkeypatch.setattr(rules_module, "_CHUNK_WORDS", words)
        sizes.clear()
        chunked = mine_rules(items, binarizer.conditions_, **settings)
        assert max(sizes) == words // n_words                     # one or three itemsets at a time
        assert chunked.names == whole.names and chunked.n_mined == whole.n_mined
        assert np.array_equal(chunked.packed, whole.packed)


def test_no_rule_reaching_min_support_is_an_error():
    items = np.eye(40, 4, dtype=bool)
    conditions = [Condition(c, "is true") for c in "ABCD"]
    with pytest.raises(RuleMiningError, match=r"No rule covers at least 5% of the 40 rows .*'A'.*lower min_support"):
        mine_rules(items, conditions, min_support=0.05)


@pytest.mark.parametrize(
    "settings, pattern",
    [
        (dict(min_support=0), "min_support"),
        (dict(min_support=1.5), "min_support"),
        (dict(min_support=float("nan")), "min_support"),
        (dict(min_support="0.05"), "min_support"),
        (dict(min_support=True), "min_support"),
        (dict(max_conditions=0), "max_conditions"),
        (dict(max_conditions=2.0), "max_conditions"),
        (dict(max_conditions=True), "max_conditions"),
        (dict(max_rules=0), "max_rules"),
        (dict(method="apriori"), "method"),
    ],
)
def test_bad_settings_are_refused_with_a_message_naming_them(settings, pattern):
    items = np.ones((10, 1), dtype=bool)
    with pytest.raises(RuleMiningError, match=pattern):
        mine_rules(items, [Condition("A", "is true")], **settings)


def test_memory_guards_trip_before_the_work(monkeypatch, small_table):
    binarizer = Binarizer()
    items = binarizer.fit_transform(small_table)
    monkeypatch.setattr(rules_module, "MAX_ITEM_PAIRS", 10)
    with pytest.raises(RuleMiningError, match="pairs of the"):
        mine_rules(items, binarizer.conditions_, method="fpgrowth")
    assert len(mine_rules(items, binarizer.conditions_, max_conditions=1).rules) > 0
    monkeypatch.setattr(rules_module, "MAX_ITEM_PAIRS", 10**9)
    monkeypatch.setattr(rules_module, "MAX_CANDIDATES", 10)
    with pytest.raises(RuleMiningError, match="candidate rules of 3 conditions"):
        mine_rules(items, binarizer.conditions_, max_conditions=3)


def test_items_must_match_the_conditions():
    with pytest.raises(ValueError):
        mine_rules(np.ones((5, 2), dtype=bool), [Condition("A", "is true")])
    with pytest.raises(ValueError):
        mine_rules(np.full((5, 1), 2), [Condition("A", "is true")])


# --------------------------------------------------------------------------
# Boolean columns as rules (the paper's simulation setting)
# --------------------------------------------------------------------------


def test_rules_from_boolean_columns_keeps_every_column_as_is():
    frame = pd.DataFrame({"r1": [True, False, True, False], "r0": [1, 0, 1, 0], "never": [0.0, 0.0, 0.0, 0.0],
                          "always": [True] * 4})
    candidates = rules_from_boolean_columns(frame)
    assert candidates.names == ["r1", "r0", "never", "always"]
    assert candidates.rules[1] == Rule((Condition("r0", "is true"),))
    assert np.array_equal(candidates.coverage, frame.to_numpy(dtype=float) == 1)
    assert np.array_equal(candidates.coverage[:, 0], candidates.rules[0].evaluate(frame))


@pytest.mark.parametrize(
    "frame, pattern",
    [
        (pd.DataFrame({"ok": [0, 1], "bad": [0, 2]}), r"Column 'bad'.*'2'"),
        (pd.DataFrame({"ok": [0, 1], "gaps": [1.0, np.nan]}), r"Column 'gaps'.*NaN"),
        (pd.DataFrame({"ok": [0, 1], "text": ["yes", "no"]}), r"Column 'text'"),
        (pd.DataFrame({0: [0, 1]}), "text names"),
        (pd.DataFrame({"a": [0, 1], "b": [1, 0]}).rename(columns={"b": "a"}), "'a' appears 2 times"),
        (pd.DataFrame(), "empty"),
        (pd.DataFrame({"ok": [True, False], "gaps": pd.array([True, pd.NA], dtype="boolean")}), r"Column 'gaps'.*NaN"),
    ],
)
def test_rules_from_boolean_columns_refuses_other_columns(frame, pattern):
    with pytest.raises(DataError, match=pattern):
        rules_from_boolean_columns(frame)


def test_an_all_bool_table_and_its_mixed_twins_give_the_same_rules():
    """The fast path (every column bool) and the column-by-column path agree, whatever the dtypes."""
    rng = np.random.default_rng(3)
    bools = pd.DataFrame(rng.random((50, 4)) < 0.4, columns=["a", "b", "c", "d"])
    mixed = bools.astype({"b": int, "c": "boolean", "d": object})
    fast, slow = rules_from_boolean_columns(bools), rules_from_boolean_columns(mixed)
    assert fast.rules == slow.rules and np.array_equal(fast.packed, slow.packed)
    assert np.array_equal(fast.coverage, bools.to_numpy())


def test_candidate_rules_are_read_only_and_shape_checked():
    candidates = rules_from_boolean_columns(pd.DataFrame({"a": [True, False]}))
    with pytest.raises(ValueError):
        candidates.coverage[0, 0] = False
    with pytest.raises(ValueError):
        CandidateRules(rules=candidates.rules, coverage=np.ones((2, 2), dtype=bool))


def test_a_column_name_holding_and_is_quoted_so_the_rule_reads_as_its_conditions():
    from frl_engine.rules import split_conditions
    rule = Rule((Condition("Score AND Risk", ">=", 7), Condition("notes", "==", "a AND b"),
                 Condition("Bed sores AND ulcers", "is true"), Condition("Age", ">=", 60)))
    assert rule.name == '"Score AND Risk" >= 7 AND notes = "a AND b" AND "Bed sores AND ulcers" AND Age >= 60'
    assert split_conditions(rule.name) == [c.name for c in rule.conditions]
    assert Condition("Score and risk", ">=", 7).name == "Score and risk >= 7"  # lower-case "and" reads fine
    # a name that reads as a test of its own, or breaks the line
    assert Condition("Age >= 65", ">=", 74).name == '"Age >= 65" >= 74'
    assert Condition("ward=ICU", "==", "12").name == '"ward=ICU" = 12'
    assert Condition("length of\nstay", ">=", 8).name == '"length of stay" >= 8'
    assert Condition("BMI (kg/m2)", ">=", 30).name == "BMI (kg/m2) >= 30"


@pytest.mark.parametrize("seed", range(20))
def test_splitting_a_rule_name_gives_back_its_conditions(seed):
    from frl_engine.rules import split_conditions
    rng = np.random.default_rng(seed)
    words = ["Age", "AND", "a", '"', "\\", "=", ">=", "is not", "x AND y", " ", "\n", "é"]
    def text():
        return "".join(rng.choice(words, size=rng.integers(1, 5))).strip() or "z"
    conditions = []
    for _ in range(rng.integers(1, 4)):
        op = rng.choice(["==", "!=", ">=", "is true", "is missing"])
        value = float(rng.integers(0, 100)) if op == ">=" else (text() if op in ("==", "!=") else None)
        conditions.append(Condition(text(), str(op), value))
    rule = Rule(tuple(conditions))
    assert split_conditions(rule.name) == [c.name for c in conditions]
