"""Tables printed on a terminal stay aligned when a column is named in a wide script."""

import numpy as np
import pandas as pd

from frl_engine import FallingRuleListClassifier
from frl_engine.cli_models import format_entries
from frl_engine.terminal import display_width, pad_left, pad_right


def test_wide_characters_take_two_cells_and_combining_marks_none():
    assert display_width("Age >= 60") == 9
    assert display_width("年齢 >= 76") == 10
    assert display_width("Cre\u0301atinine") == 10  # é written as e + combining acute
    assert display_width(pad_right("褥瘡", 6)) == 6 and pad_right("褥瘡", 6) == "褥瘡  "
    assert pad_left("年齢", 5) == " 年齢"


def _where(line: str, word: str) -> int:
    """The terminal column at which ``word`` starts in ``line``."""
    return display_width(line[: line.index(word)])


def test_the_printed_list_lines_up_with_japanese_column_names():
    rng = np.random.default_rng(0)
    n = 600
    sores = rng.random(n) < 0.25
    age = rng.integers(20, 95, n)
    risk = 0.05 + 0.6 * sores + 0.2 * (age >= 76)
    X = pd.DataFrame({"褥瘡": np.where(sores, "yes", "no"), "年齢": age, "Prior": rng.poisson(1.0, n)})
    y = rng.random(n) < risk
    model = FallingRuleListClassifier(random_state=0).fit(X, y)
    lines = model.format_list().splitlines()
    assert any("褥瘡" in line or "年齢" in line for line in lines[1:])
    risk_columns = {_where(line, "THEN") for line in lines[1:]}
    assert len(risk_columns) == 1, model.format_list()
    risk_ends = {_where(line, "%") + 1 for line in lines[1:]}
    assert risk_ends == {_where(lines[0], "Risk") + len("Risk")}, model.format_list()


def test_the_registry_table_lines_up_with_a_name_in_japanese():
    from frl_engine.registry import RegistryEntry
    import dataclasses
    fields = {f.name: None for f in dataclasses.fields(RegistryEntry)}
    entries = []
    for model_id, who in (("a1b2c3", "佐藤"), ("d4e5f6", "dr")):
        values = dict(fields, model_id=model_id, note="readmission", created_at="2026-11-24T10:00:00",
                      created_by=who, user_name=None, n_rules=3)
        entries.append(RegistryEntry(**values))
    text = format_entries(entries)
    lines = text.splitlines()
    assert {_where(line, "readmission") for line in lines[1:]} == {_where(lines[0], "Note")}, text
