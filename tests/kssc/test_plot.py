"""kssc.plot with the Agg backend, and the eigenvalues behind n_clusters=None."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from kssc import KSSC, plot  # noqa: E402
from kssc.datasets import make_subspaces  # noqa: E402
from kssc.spectral import estimate_n_clusters  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    return KSSC(n_neighbors=10, random_state=0).fit(X), X, y


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_eigenvalues_behind_the_eigen_gap(fitted):
    model, _, _ = fitted
    values = model.laplacian_eigenvalues_
    assert values.shape == (model.max_clusters + 1,)
    assert np.all(np.diff(values) >= -1e-12)
    # Three exactly separate subspaces: three (near) zero eigenvalues, then the gap.
    assert np.argmax(np.diff(values)) + 1 == model.n_clusters_ == 3
    assert estimate_n_clusters(model.affinity_matrix_, model.max_clusters, 0) == 3
    dense = sp.csgraph.laplacian(model.affinity_matrix_.toarray(), normed=True)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(dense)[:values.size], atol=1e-8)


def test_given_n_clusters_keeps_no_eigenvalues_and_the_same_labels(fitted):
    model, X, _ = fitted
    assert KSSC(3, n_neighbors=10, random_state=0).fit(X).laplacian_eigenvalues_ is None


def test_residuals_are_the_code_residuals(fitted):
    model, X, _ = fitted
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    # Max-normalised rows of Z are the codes up to a scale per row: rescale by the solver's
    # own residual definition on a point.
    assert model.residuals_.shape == (len(X),)
    assert np.all(model.residuals_ >= 0) and np.all(model.residuals_ <= 1.0 + 1e-9)
    lone = KSSC(3, n_neighbors=10, affinity="symmetric", random_state=0).fit(X)
    rebuilt = lone.representation_matrix_ @ unit
    np.testing.assert_allclose(lone.residuals_, np.linalg.norm(unit - rebuilt, axis=1),
                               atol=1e-10)


@pytest.mark.parametrize("draw", [plot.affinity, plot.embedding, plot.cluster_sizes,
                                  plot.residuals, plot.eigengap])
def test_each_picture_draws_on_the_given_axes(fitted, draw):
    model, _, _ = fitted
    fig, ax = plt.subplots()
    assert draw(model, ax=ax) is ax
    assert ax.has_data()
    fig.canvas.draw()


def test_new_axes_and_arrays(fitted):
    model, _, y = fitted
    shuffled = np.random.default_rng(0).permutation(len(y))
    W = model.affinity_matrix_[shuffled][:, shuffled]
    ax = plot.affinity(W, y[shuffled])
    image = ax.get_images()[0].get_array()
    order = np.argsort(y[shuffled], kind="stable")
    np.testing.assert_allclose(image, np.sqrt(abs(W[order][:, order]).toarray()))
    # Sorted by the true classes: nearly all the weight lies in the diagonal blocks.
    blocks = np.kron(np.eye(3), np.ones((30, 30)))
    assert (image ** 2)[blocks == 1].sum() > 0.95 * (image ** 2).sum()
    assert plot.cluster_sizes(y).patches[0].get_height() == 30
    assert plot.eigengap(model.laplacian_eigenvalues_).get_legend() is not None
    assert plot.eigengap(model.affinity_matrix_).lines


def test_large_affinity_is_binned():
    W = sp.random(3000, 3000, density=0.001, random_state=0)
    W = W + W.T
    ax = plot.affinity(W, np.arange(3000) % 4, max_pixels=300)
    assert ax.get_images()[0].get_array().shape == (300, 300)


def test_bad_input_is_named(fitted):
    model, _, _ = fitted
    with pytest.raises(ValueError, match="not fitted"):
        plot.affinity(KSSC())
    with pytest.raises(ValueError, match="labels are needed"):
        plot.affinity(model.affinity_matrix_)
    with pytest.raises(ValueError, match="labels must have shape"):
        plot.affinity(model.affinity_matrix_, [0, 1])


def test_clear_message_without_matplotlib(monkeypatch, fitted):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="kssc.plot needs matplotlib"):
        plot.cluster_sizes([0, 1, 1])
