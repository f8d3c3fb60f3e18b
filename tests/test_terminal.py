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


def test_controls_a_terminal_would_obey_are_written_visibly_and_letters_kept():
    from frl_engine.terminal import visible_controls

    assert visible_controls("smokes\u202eX") == "smokes<U+202E>X"          # right-to-left override
    assert visible_controls("a\u2067b\u2069") == "a<U+2067>b<U+2069>"      # isolates
    assert visible_controls("ward\x1b[31m") == "ward<U+001B>[31m"          # an escape sequence's start
    assert visible_controls("الطوارئ = פנימית\tx\r\n") == "الطوارئ = פנימית\tx\r\n"  # letters, tab, line breaks kept
    assert visible_controls("Age >= 60") == "Age >= 60"
    # padded by the cells a terminal shows: the columns after such a value still line up
    assert display_width("smokes\u202eX") == len("smokes<U+202E>X") and display_width("ward\x1b[") == len("ward<U+001B>[")
    assert display_width(visible_controls("年齢\u202e")) == display_width("年齢\u202e") == 12


def test_a_right_to_left_override_in_a_value_is_shown_on_a_terminal_and_kept_in_a_pipe(tmp_path):
    """A category value holding U+202E printed the rest of its line reversed on a terminal (`THEN ... risk is 81%`
    read backwards). On a terminal (a real pseudo-terminal here) `frl show` writes it as <U+202E>; into a pipe or a
    file it is written as it is, so `frl predict` to standard output keeps the values."""
    import os
    import pty
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    n = 400
    smokes = rng.random(n) < 0.3
    table = pd.DataFrame({"smoking": np.where(smokes, "smokes\u202eX", "never"), "age": rng.integers(20, 90, n)})
    table["stroke"] = (rng.random(n) < 0.05 + 0.6 * smokes).astype(int)
    data, model = tmp_path / "rlo.csv", tmp_path / "rlo.json"
    table.to_csv(data, index=False)
    frl = [sys.executable, "-m", "frl_engine.cli"]
    fitted = subprocess.run(frl + ["fit", str(data), "--target", "stroke", "--steps", "1000", "--out", str(model)],
                            capture_output=True, text=True, timeout=300)
    assert fitted.returncode == 0, fitted.stderr
    assert "\u202e" in fitted.stdout and "<U+202E>" not in fitted.stdout   # a pipe: the value as it is

    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(frl + ["show", str(model)], stdout=follower, stderr=follower, timeout=120)
        os.close(follower)
        follower = None
        printed = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:   # the terminal closed: everything was read
                break
            if not chunk:
                break
            printed += chunk
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    text = printed.decode("utf-8")
    assert shown.returncode == 0, text
    assert "smokes<U+202E>X" in text
    assert "\u202e" not in text and "THEN stroke = 1 risk is" in text


def test_a_reader_that_stops_reading_does_not_stop_the_command(tmp_path):
    """`frl fit ... --register | head -1`: the pipe closes after one line. The command used to end at the next
    print, with status 0, having registered nothing; the rest of its output is now dropped and the command goes
    on, so the model file and the registration it was asked for are made."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(2)
    n = 400
    table = pd.DataFrame({"age": rng.integers(20, 90, n), "ward": rng.choice(["icu", "medical"], n)})
    table["died"] = (rng.random(n) < 0.05 + 0.5 * (table["ward"] == "icu")).astype(int)
    data, model = tmp_path / "t.csv", tmp_path / "m.json"
    table.to_csv(data, index=False)
    env = dict(os.environ, FRL_REGISTRY=str(tmp_path / "registry.db"))
    command = [sys.executable, "-m", "frl_engine.cli", "fit", str(data), "--target", "died", "--steps", "500",
               "--out", str(model), "--register"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    process.stdout.close()   # the reader is gone before the command prints its first line
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert model.exists()
    listed = subprocess.run([sys.executable, "-m", "frl_engine.cli", "models", "list"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert "1 model in use" in listed.stdout, listed.stdout + listed.stderr
