"""The rule prior draws each rule of a list from every rule mining found (eq. pc's B), also when the search keeps
only the strongest ``max_rules`` of them.

A conjunction picked as the strongest of 100,000 mined rules is, a priori, one of 100,000, not one of the 5,000
kept: charging it ``log 5,000`` let rules on noise columns onto the card, and made the model change with a
setting (``max_rules``) that was meant only to bound the search's work.
"""

import json

import numpy as np
import pandas as pd
import pytest

from frl_engine.cli import main
from frl_engine.errors import FRLError
from frl_engine.estimator import FallingRuleListClassifier
from frl_engine.model import fit_list


def wide_table_of_labs(seed, n_rows=3000, n_labs=80):
    """80 lab values of pure noise, and two real risk factors: heart failure and age (a logistic model)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"lab_{j:03d}": np.round(rng.normal(100, 15, n_rows), 1) for j in range(n_labs)})
    frame["heart_failure"] = rng.random(n_rows) < 0.2
    frame["age"] = rng.integers(20, 95, n_rows)
    logit = -2.2 + 1.6 * frame["heart_failure"] + 0.04 * (frame["age"] - 60)
    return frame, rng.random(n_rows) < 1 / (1 + np.exp(-logit))


def lab_conditions(model) -> int:
    return sum(c.column.startswith("lab_") for rule in model.rule_objects_ for c in rule.conditions)


def test_on_a_wide_table_of_noise_labs_fewer_labs_reach_the_list_than_with_the_prior_over_the_kept_rules():
    """Known truth: no lab carries any signal.  Seeds 0 and 1 (117,785 and 117,799 rules mined, 5,000 kept):
    the prior over the kept rules printed 2 lab conditions on each list; the prior over all mined rules 0 and 2,
    and never more (benchmarks/bench_rule_prior.py prints eight seeds)."""
    mined_total = kept_total = 0
    for seed in (0, 1):
        frame, y = wide_table_of_labs(seed)
        mined = FallingRuleListClassifier(random_state=seed).fit(frame, y)
        kept = FallingRuleListClassifier(random_state=seed, rule_prior="kept").fit(frame, y)
        assert mined.n_mined_rules_ > 100_000 and len(mined.candidate_names_) == 5000
        assert lab_conditions(mined) <= lab_conditions(kept)
        assert any(c.column == "heart_failure" for rule in mined.rule_objects_ for c in rule.conditions)
        # each list scored under the other's prior: the default's list is the better one under its own prior
        other = [mined.candidate_names_.index(str(r)) if str(r) in mined.candidate_names_ else None
                 for r in kept.rule_objects_]
        if None not in other:
            assert fit_list(mined.problem_, other).log_posterior <= mined.log_posterior_ + 1e-6
        mined_total += lab_conditions(mined)
        kept_total += lab_conditions(kept)
    assert mined_total < kept_total


def test_without_screening_both_priors_are_the_same_model():
    frame, y = wide_table_of_labs(3, n_rows=600, n_labs=4)
    mined = FallingRuleListClassifier(random_state=0).fit(frame, y)
    kept = FallingRuleListClassifier(random_state=0, rule_prior="kept").fit(frame, y)
    assert mined.n_mined_rules_ == len(mined.candidate_names_)  # nothing screened out
    assert mined.rules_ == kept.rules_ and mined.log_posterior_ == pytest.approx(kept.log_posterior_, abs=1e-9)


def test_a_bad_rule_prior_is_one_message():
    with pytest.raises(FRLError, match="rule_prior must be 'mined' or 'kept'"):
        FallingRuleListClassifier(rule_prior="all").fit(pd.DataFrame({"a": [0, 1] * 20}), [0, 1] * 20)


def test_the_cli_takes_the_rule_prior_and_the_model_file_records_it(tmp_path, capsys):
    frame, y = wide_table_of_labs(0, n_rows=800, n_labs=30)
    frame["died"] = np.where(y, "yes", "no")
    data = tmp_path / "labs.csv"
    frame.to_csv(data, index=False)
    for prior in ("kept", None):
        out = tmp_path / f"{prior}.json"
        args = ["fit", str(data), "--target", "died", "--out", str(out), "--seed", "0"]
        assert main(args + (["--rule-prior", prior] if prior else [])) == 0
        model = json.loads(out.read_text())
        assert model["hyperparameters"]["rule_prior"] == (prior or "mined")
        assert model["training"]["n_mined_rules"] > model["training"]["n_candidate_rules"] == 5000
        assert FallingRuleListClassifier.from_dict(model).rule_prior == (prior or "mined")
    printed = capsys.readouterr().out
    assert "Kept 5,000 of" in printed
    assert printed.count("the prior counts each rule of the list as one of all") == 1  # the default's fit only


def test_a_model_file_written_before_reads_as_the_prior_over_the_kept_rules(tmp_path):
    frame, y = wide_table_of_labs(1, n_rows=400, n_labs=3)
    model = FallingRuleListClassifier(random_state=0).fit(frame, y).to_dict()
    del model["hyperparameters"]["rule_prior"]
    del model["training"]["n_mined_rules"]
    assert FallingRuleListClassifier.from_dict(model).rule_prior == "kept"


def test_frl_explore_and_fit_tune_pass_the_rule_prior_to_every_cell():
    from frl_engine.cli import build_parser
    from frl_engine.cli_explore import _params_from_args
    from frl_engine.explore import SETTINGS

    assert "rule_prior" in SETTINGS  # explore takes it (it refused the setting before)
    parser = build_parser()
    for command in (["explore", "t.csv", "--target", "died"], ["fit", "t.csv", "--target", "died", "--tune"]):
        assert _params_from_args(parser.parse_args(command))["rule_prior"] == "mined"
        assert _params_from_args(parser.parse_args(command + ["--rule-prior", "kept"]))["rule_prior"] == "kept"


def test_an_unknown_rule_prior_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys):
    data = tmp_path / "t.csv"
    pd.DataFrame({"a": [0, 1] * 20, "died": ["no", "yes"] * 20}).to_csv(data, index=False)
    with pytest.raises(SystemExit) as info:
        main(["fit", str(data), "--target", "died", "--rule-prior", "all", "--out", str(tmp_path / "m.json")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--rule-prior" in err and "invalid choice: 'all'" in err and "Traceback" not in err
    assert not (tmp_path / "m.json").exists()
