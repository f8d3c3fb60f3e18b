"""Loaders of the raw UCI files of the paper's section 5."""

import re
from pathlib import Path

import numpy as np
import pytest

from frl_engine.datasets import (DATASET_FILES, MAMMOGRAPHIC_MARGINS, MAMMOGRAPHIC_SHAPES, load_breast_cancer,
                                 load_car, load_dataset, load_mammographic, load_spambase)
from frl_engine.errors import DataError
from frl_engine.reproduce import check_data_dir

UCI = Path(__file__).resolve().parents[2] / "shared" / "uci"
needs_uci = pytest.mark.skipif(not UCI.is_dir(), reason=f"UCI files not found at {UCI}")


@needs_uci
def test_spambase():
    data = load_spambase(UCI)
    assert data.X.shape == (4601, 57)
    assert data.y.dtype == bool and data.y.sum() == 1813  # 39.4% spam
    assert round(100 * data.positive_rate, 1) == 39.4
    assert data.X.columns[0] == "word_freq_make" and data.X.columns[-1] == "capital_run_length_total"
    assert data.X["capital_run_length_longest"].dtype.kind == "i"
    assert not data.X.isna().any().any()


@needs_uci
def test_mammographic_masses():
    data = load_mammographic(UCI)
    assert len(data.X) == 961 and list(data.X.columns) == ["Age", "Shape", "Margin", "Density"]
    assert data.y.sum() == 445 and round(100 * data.positive_rate, 1) == 46.3
    assert set(data.X["Shape"].dropna()) == set(MAMMOGRAPHIC_SHAPES.values())
    assert set(data.X["Margin"].dropna()) == set(MAMMOGRAPHIC_MARGINS.values())
    assert set(data.X["Density"].dropna()) == {1.0, 2.0, 3.0, 4.0}
    # The .names file's counts of missing values (BI-RADS is left out).
    assert data.X.isna().sum().to_dict() == {"Age": 5, "Shape": 31, "Margin": 48, "Density": 76}
    # First line: 5,67,3,5,3,1
    assert data.X.iloc[0].tolist() == [67.0, "lobular", "spiculated", 3.0] and data.y[0]

    filled = load_mammographic(UCI, impute=True)
    assert len(filled.X) == 961 and not filled.X.isna().any().any()
    kept = data.X.notna()
    assert (filled.X[kept] == data.X[kept]).sum().sum() == kept.sum().sum()  # present values untouched
    assert filled.X.loc[data.X["Age"].isna(), "Age"].unique().tolist() == [float(data.X["Age"].median())]
    assert filled.X.loc[data.X["Shape"].isna(), "Shape"].unique().tolist() == [data.X["Shape"].mode()[0]]
    assert any("imputed" in n for n in filled.notes)


@needs_uci
def test_breast_cancer_wisconsin():
    data = load_breast_cancer(UCI)
    assert data.X.shape == (683, 9) and "Bare Nuclei" in data.X.columns
    assert data.y.sum() == 239 and round(100 * data.positive_rate, 1) == 35.0
    assert data.X.min().min() == 1 and data.X.max().max() == 10
    everything = load_breast_cancer(UCI, complete_rows=False)
    assert len(everything.X) == 699 and everything.y.sum() == 241
    assert everything.X["Bare Nuclei"].isna().sum() == 16 and everything.X.drop(columns="Bare Nuclei").notna().all().all()


@needs_uci
def test_car_evaluation():
    data = load_car(UCI)
    assert data.X.shape == (1728, 6) and list(data.X.columns) == ["buying", "maint", "doors", "persons", "lug_boot",
                                                                   "safety"]
    assert data.y.sum() == 384 + 69 + 65  # acc + good + vgood
    assert sum(data.X[c].nunique() for c in data.X.columns) == 21  # the paper's p
    assert (load_car(UCI, event="unacceptable").y == ~data.y).all()
    assert load_car(UCI, event="good").y.sum() == 134
    assert set(np.unique(data.raw_label)) == {"unacc", "acc", "good", "vgood"}


@needs_uci
def test_load_dataset_and_frame():
    for key, info in DATASET_FILES.items():
        data = load_dataset(key, UCI)
        frame = data.frame()
        assert frame.shape == (data.n_rows, data.X.shape[1] + 1) and frame[data.target].dtype == bool
        assert load_dataset(key, UCI / info.filename).n_rows == data.n_rows  # the file itself works too


def _car_lines(n=20):
    values = [("vhigh", "high", "2", "2", "small", "low", "unacc"), ("low", "med", "4", "more", "big", "high", "vgood"),
              ("med", "low", "5more", "4", "med", "med", "acc")]
    return [",".join(values[i % 3]) for i in range(n)]


def test_car_file_with_a_short_line_names_the_line(tmp_path):
    lines = _car_lines()
    lines[16] = "vhigh,vhigh,2,2,small"  # line 17
    (tmp_path / "car.data").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as info:
        load_car(tmp_path)
    assert str(info.value) == "car.data line 17: expected 7 comma-separated values, got 5"


def test_car_file_with_an_unknown_value_names_the_line(tmp_path):
    lines = _car_lines()
    lines[3] = lines[3].replace("small", "huge")
    (tmp_path / "car.data").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"^car\.data line 4: lug_boot is 'huge', expected one of small, med, big$"):
        load_car(tmp_path)
    good = tmp_path / "good"
    good.mkdir()
    (good / "car.data").write_text("\n".join(_car_lines()) + "\n\n")  # a trailing blank line is fine
    assert load_car(good).n_rows == 20


@needs_uci
def test_corrupted_copies_of_the_real_files(tmp_path):
    spam = (UCI / "spambase.data").read_text().splitlines()
    spam[2] = spam[2].replace("0.71", "0.7x1", 1)
    (tmp_path / "spambase.data").write_text("\n".join(spam) + "\n")
    with pytest.raises(DataError, match=r"^spambase\.data line 3: word_freq_all is '0\.7x1', not a number$"):
        load_spambase(tmp_path)

    mammo = (UCI / "mammographic_masses.data").read_text().splitlines()
    mammo[9] = "4,60,7,1,3,0"  # line 10: shape code 7 does not exist
    (tmp_path / "mammographic_masses.data").write_text("\n".join(mammo) + "\n")
    with pytest.raises(DataError, match=r"^mammographic_masses\.data line 10: Shape is '7', expected one of"):
        load_mammographic(tmp_path)

    breast = (UCI / "breast-cancer-wisconsin.data").read_text().splitlines()
    breast[99] = breast[99] + ",1"
    (tmp_path / "breast-cancer-wisconsin.data").write_text("\n".join(breast) + "\n")
    with pytest.raises(DataError, match=r"^breast-cancer-wisconsin\.data line 100: expected 11 comma-separated "
                                        r"values, got 12$"):
        load_breast_cancer(tmp_path)


def test_missing_file_names_the_file_and_what_it_is(tmp_path):
    with pytest.raises(DataError) as info:
        load_spambase(tmp_path)
    assert str(info.value).startswith(f"spambase.data (UCI Spambase, 4601 e-mails) is missing from {tmp_path}")
    with pytest.raises(DataError, match=re.escape("car.data (UCI Car Evaluation, 1728 cars) is missing from")):
        load_car(tmp_path / "nowhere")
    (tmp_path / "car.data").write_text("\n".join(_car_lines()) + "\n")
    with pytest.raises(DataError) as info:
        check_data_dir(tmp_path)
    message = str(info.value)
    assert "spambase.data (UCI Spambase, 4601 e-mails)" in message and "car.data" not in message
    assert "mammographic_masses.data" in message and "breast-cancer-wisconsin.data" in message
    assert check_data_dir(tmp_path, ("cars",)) == tmp_path


def test_unknown_dataset_and_event():
    with pytest.raises(DataError, match="Unknown data set 'iris'"):
        load_dataset("iris", ".")
    with pytest.raises(DataError, match="Unknown car event"):
        load_car(".", event="fast")
