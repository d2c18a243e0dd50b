import numpy as np
import pytest

from kssc.metrics import clustering_error, psnr


def test_clustering_error_hand_computed():
    y_true = [0, 0, 0, 1, 1, 1]
    assert clustering_error(y_true, [1, 1, 1, 0, 0, 0]) == 0.0
    # One of six points in the wrong cluster under the best matching.
    assert clustering_error(y_true, [5, 5, 7, 7, 7, 7]) == pytest.approx(100 / 6)
    # Three true clusters, two predicted: the unmatched cluster counts as wrong.
    assert clustering_error([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1]) == pytest.approx(100 / 3)


def test_clustering_error_invariant_to_relabelling():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 4, 200)
    y_pred = np.where(rng.random(200) < 0.8, y_true, rng.integers(0, 4, 200))
    perm = np.array([2, 3, 0, 1])
    assert clustering_error(y_true, y_pred) == pytest.approx(clustering_error(y_true, perm[y_pred]))
    assert clustering_error(y_true, y_pred) == pytest.approx(clustering_error(perm[y_true], y_pred))


def test_clustering_error_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        clustering_error([0, 1], [0, 1, 1])


def test_psnr_code_and_db():
    clean = np.zeros(4)
    noisy = np.array([0.1, -0.1, 0.1, -0.1])  # MSE = 0.01
    assert psnr(clean, noisy, unit="code") == pytest.approx(10 * np.log(100))
    assert psnr(clean, noisy, unit="db") == pytest.approx(20.0)
    assert psnr(clean, clean, unit="code") == 99.0
    assert psnr(clean, clean, unit="db") == np.inf
    with pytest.raises(ValueError, match="unit"):
        psnr(clean, noisy, unit="bel")
