"""`verbose` progress on stderr, and estimator warnings attributed to the caller's line."""

import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.exceptions import ConvergenceWarning

import kssc.utils._progress
from kssc import KSSC, DegenerateFitWarning
from kssc.baselines import BASELINES, SSC


def _data(n=60, d=6, seed=0):
    return np.random.RandomState(seed).randn(n, d)


def test_quiet_by_default(capsys):
    KSSC(n_clusters=2, n_neighbors=5, random_state=0).fit(_data())
    assert capsys.readouterr().err == ""


def test_plain_lines_without_tqdm(capsys, monkeypatch):
    monkeypatch.setattr(kssc.utils._progress, "tqdm", None)
    KSSC(n_clusters=2, n_neighbors=5, chunk_size=10, verbose=1, random_state=0).fit(_data())
    lines = capsys.readouterr().err.splitlines()
    # 60 points in chunks of 10: six chunks, the last report says all six are solved.
    assert "[KSSC] coefficients: 6/6 chunks" in lines
    for stage in ("representation", "neighbours", "coefficients", "spectral"):
        assert f"[KSSC] {stage} ..." in lines
        assert any(line.startswith(f"[KSSC] {stage}: done in ") for line in lines)
    started = [line for line in lines if line.endswith(" ...")]
    assert started == ["[KSSC] representation ...", "[KSSC] neighbours ...",
                       "[KSSC] coefficients ...", "[KSSC] spectral ..."]


def test_tqdm_bar_counts_chunks_in_parallel(capsys):
    pytest.importorskip("tqdm")
    with parallel_config(backend="threading"):
        KSSC(n_clusters=2, n_neighbors=5, chunk_size=7, n_jobs=2, verbose=1,
             random_state=0).fit(_data())
    assert "9/9" in capsys.readouterr().err  # ceil(60 / 7) chunks


def test_verbose_does_not_change_the_fit(capsys):
    X = _data()
    quiet = KSSC(n_clusters=2, n_neighbors=5, chunk_size=10, random_state=0).fit(X)
    with parallel_config(backend="threading"):
        loud = KSSC(n_clusters=2, n_neighbors=5, chunk_size=10, n_jobs=2, verbose=1,
                    random_state=0).fit(X)
    np.testing.assert_array_equal(quiet.labels_, loud.labels_)
    np.testing.assert_allclose(quiet.representation_matrix_.toarray(),
                               loud.representation_matrix_.toarray())


@pytest.mark.parametrize("estimator", [cls for cls, _ in BASELINES.values()],
                         ids=lambda c: c.__name__)
def test_baselines_report_their_stages(estimator, capsys):
    estimator(n_clusters=2, verbose=1, random_state=0).fit(_data(n=30))
    err = capsys.readouterr().err
    assert f"[{estimator.__name__}] spectral: done in " in err
    estimator(n_clusters=2, random_state=0).fit(_data(n=30))
    assert capsys.readouterr().err == ""


def _caught(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return caught


# SSC's per-point rule: its shared rule runs to max_iter by design, without a warning.
@pytest.mark.parametrize("estimator", [KSSC(n_clusters=2, n_neighbors=5),
                                       SSC(n_clusters=2, column_wise=True)], ids=["KSSC", "SSC"])
@pytest.mark.parametrize("call", ["fit", "fit_predict"])
def test_warnings_name_the_callers_line(estimator, call):
    X = _data()
    X[3] = 0.0
    estimator.set_params(max_iter=1)
    caught = _caught(lambda: getattr(estimator, call)(X))
    categories = {w.category for w in caught}
    # The zero row: a DegenerateFitWarning (a UserWarning) of its own.
    assert {DegenerateFitWarning, ConvergenceWarning} <= categories
    for w in caught:
        if w.category in (DegenerateFitWarning, ConvergenceWarning):
            assert w.filename == __file__, (w.category, w.filename)
