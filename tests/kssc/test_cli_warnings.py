"""What `kssc cluster` prints on stderr: its progress, and each warning as one line, once."""

import re
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from kssc.cli import main
from kssc.utils._warnings import one_line_warnings

# The lines `kssc cluster` promises: what it read, the first run's compile notice, the result.
PROGRESS = (r"kssc cluster: read .*", r"kssc: compiling .*",
            r"kssc( \(auto: \w+\))?: \d+ points -> \d+ clusters in .*")


def _subspaces(n_per=40, dim=3, ambient=12, n_subspaces=3, seed=0):
    rng = np.random.RandomState(seed)
    return np.vstack([rng.randn(n_per, dim) @ np.linalg.qr(rng.randn(ambient, dim))[0].T
                      for _ in range(n_subspaces)])


def test_a_warning_is_one_line_once_under_the_auto_preset(tmp_path, capsys):
    # Standardised points: each of AutoKSSC's three candidates warns that X looks standardised.
    path = tmp_path / "points.npy"
    np.save(path, StandardScaler().fit_transform(_subspaces()))
    assert main(["cluster", str(path), "-k", "3", "--preset", "auto"]) == 0
    lines = capsys.readouterr().err.splitlines()
    warned = [line for line in lines if line.startswith("kssc: warning: ")]
    assert len(warned) == 1 and "X looks standardised" in warned[0], lines
    assert not [line for line in lines if line not in warned
                and not any(re.fullmatch(p, line) for p in PROGRESS)], lines


def test_digits_csv_prints_only_the_progress(tmp_path, capsys):
    X, _ = load_digits(return_X_y=True)
    path = tmp_path / "digits.csv"
    pd.DataFrame(X).to_csv(path)
    assert main(["cluster", str(path), "-k", "10"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(any(re.fullmatch(p, line) for p in PROGRESS) for line in lines), lines


def test_one_line_warnings_follow_the_filters_and_restore_the_display(capsys):
    before = warnings.showwarning
    with warnings.catch_warnings(), one_line_warnings("prog"):
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        for _ in range(2):
            warnings.warn("two\n  lines", UserWarning, stacklevel=1)
        warnings.warn("another", RuntimeWarning, stacklevel=1)
        warnings.warn("filtered out", DeprecationWarning, stacklevel=1)
    assert capsys.readouterr().err == "prog: warning: two lines\nprog: warning: another\n"
    assert warnings.showwarning is before
