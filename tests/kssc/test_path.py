"""kssc_path: every setting's labels are a separate fit's, from one neighbour search."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

import kssc.estimator
from kssc import KSSC, kssc_path, nearest_neighbors
from kssc.datasets import make_subspaces

LAMS = [0.0005, 0.002, 0.01]
COUNTS = [2, 3, 4, 5]


def separate_fits(X, lams, counts, neighbors=None, **params):
    return np.array([[KSSC(c, lam=lam, **params).fit(X, neighbors=neighbors).labels_
                      for c in counts] for lam in lams])


@pytest.mark.parametrize("params", [
    {},
    {"assign_labels": "njw", "n_random": 2},
    {"assign_labels": "kmeans", "metric": "euclidean", "lam_mode": "relative"},
])
def test_path_labels_are_separate_fits_labels(params):
    # Up to 1,000 points the eigen solve is dense: the labels are a fit's, bit for bit.
    X, _, _ = make_subspaces(4, 3, 40, 20, noise=0.05, random_state=0)
    params = {"n_neighbors": 8, "random_state": 1, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = kssc_path(X, LAMS, COUNTS, **params)
        expected = separate_fits(X, LAMS, COUNTS, **params)
    assert path.shape == (len(LAMS), len(COUNTS), X.shape[0])
    np.testing.assert_array_equal(path, expected)


def same_partition(a, b):
    pairs = np.unique(np.stack([a, b]), axis=1).shape[1]
    return pairs == np.unique(a).size == np.unique(b).size


@pytest.mark.parametrize("lams, params", [
    (LAMS, {}),
    # A repeated penalty: its solve starts from an eigenvector of its own affinity.
    ([0.002, 0.002, 0.01], {}),
    # At lam 0.01 the affinity has exactly 4 components (the eigenvalue 1 four times): one
    # ARPACK solve from a random vector could return it only three times (0.9777 fourth),
    # and the separate fit's njw labels then split a component (37 % error), while the
    # path's, started from the previous penalty's eigenvector, were the components. Each
    # component is now solved on its own (`arpack_top`).
    ([0.002, 0.002, 0.01], {"assign_labels": "njw"}),
])
def test_path_partitions_are_separate_fits_partitions_with_arpack(lams, params):
    # 1,200 points: one ARPACK solve for the largest count, from the previous penalty's last
    # eigenvector after the first ("njw": from the fit's random vector); 4 subspaces, 4
    # components, so every count is at least the components (kssc_path's docstring).
    X, _, _ = make_subspaces(4, 3, 300, 20, noise=0.05, random_state=0)
    params = {"n_neighbors": 8, "random_state": 1, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = kssc_path(X, lams, [4, 5], **params)
        expected = separate_fits(X, lams, [4, 5], **params)
    for got, fitted in zip(path.reshape(-1, X.shape[0]), expected.reshape(-1, X.shape[0]),
                           strict=True):
        assert same_partition(got, fitted)


def test_path_with_sparse_rows_and_given_neighbours():
    X, _, _ = make_subspaces(3, 3, 30, 20, noise=0.05, random_state=0)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.1, X, 0.0))
    neighbors = nearest_neighbors(X.toarray(), 10, metric="abs_cosine")[0]
    params = {"n_neighbors": 8, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = kssc_path(X, LAMS[:2], [2, 3], neighbors=neighbors, **params)
        expected = separate_fits(X, LAMS[:2], [2, 3], neighbors=neighbors, **params)
    np.testing.assert_array_equal(path, expected)


def test_path_searches_neighbours_once(monkeypatch):
    X, _, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    calls = []
    search = kssc.estimator.candidate_sets
    monkeypatch.setattr(kssc.estimator, "candidate_sets",
                        lambda *args, **kwargs: calls.append(1) or search(*args, **kwargs))
    kssc_path(X, LAMS, [2, 3], n_neighbors=8, random_state=0)
    assert len(calls) == 1


@pytest.mark.parametrize("lams, counts, params, error, message", [
    ([0.01], [3], {"lam": 0.1}, TypeError, r"got \['lam'\]"),
    ([], [3], {}, ValueError, "must be non-empty"),
    ([0.01, -1.0], [3], {}, InvalidParameterError, "'lam' parameter"),
    ([0.01], [3, 200], {}, ValueError, "n_clusters=200 must be <= n_samples=90"),
])
def test_bad_path_raises_clear_error(lams, counts, params, error, message):
    X, _, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    with pytest.raises(error, match=message):
        kssc_path(X, lams, counts, n_neighbors=8, **params)
