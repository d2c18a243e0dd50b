"""Property-based battery over the estimators' inputs (issues 13 and 29): duplicates, fewer
distinct points than clusters, wide data (more features than points), rank deficiency, zero
rows, extreme scales, tiny n, float32, lam around lambda_max.

Every fit either raises a ValueError that says what is wrong, or returns one label per
point; when X has fewer distinct points than the clusters asked, when the affinity leaves
points isolated or when fewer clusters come out than were asked, a DegenerateFitWarning
says so. Nothing else (no IndexError, no overflow RuntimeWarning).
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kssc import KSSC
from kssc.baselines import GFS, GSC, SSC, SSSC, TSC
from kssc.spectral import spectral_clustering
from kssc.spectral.isolation import isolated_points
from kssc.utils._validation import DegenerateFitWarning

SCALES = [1e-300, 1e-160, 1e-20, 1.0, 1e20, 1e160, 1e300]
LAMS = [0.05, 0.5, 0.99, 1.0, 1.01, 3.0]
FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@st.composite
def data(draw, max_samples=16):
    """A small X with some of: duplicated rows, low rank, more features than points, zero rows,
    an extreme scale, float32."""
    n = draw(st.integers(2, max_samples))
    wide = draw(st.booleans())
    d = draw(st.integers(n + 1, n + 30) if wide else st.integers(1, 6))
    event("wide (D > N)" if d > n else "narrow")
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n, d))
    rank = draw(st.integers(1, d))
    if rank < d:
        X = X[:, :rank] @ rng.standard_normal((rank, d))
    n_distinct = draw(st.one_of(st.integers(1, min(3, n)), st.integers(1, n)))
    if n_distinct < n:  # duplicates: every row copies one of the first n_distinct
        X = X[rng.integers(0, n_distinct, n)]
    if draw(st.booleans()):
        X[rng.integers(0, n, draw(st.integers(1, n)))] = 0.0
    X = X * draw(st.sampled_from(SCALES))
    if draw(st.booleans()):
        with np.errstate(over="ignore"):
            X = X.astype(np.float32)  # 1e160 becomes inf: a ValueError is then expected
    return X


def estimators(n):
    """A strategy of one estimator with parameters valid or not for n points."""
    n_clusters = st.one_of(st.none(), st.integers(1, n + 1))
    k = st.integers(1, n + 1)
    lam = st.sampled_from(LAMS)
    common = {"n_clusters": n_clusters, "random_state": st.just(0)}
    return st.one_of(
        st.builds(KSSC, n_neighbors=k, lam=lam, lam_mode=st.sampled_from(["absolute", "relative"]),
                  solver=st.sampled_from(["relaxed", "exact"]), positive=st.booleans(),
                  metric=st.sampled_from(["euclidean", "abs_cosine"]),
                  assign_labels=st.sampled_from(["discretize", "kmeans", "njw"]),
                  max_iter=st.just(50), **common),
        st.builds(SSC, lam=lam, solver=st.sampled_from(["relaxed", "exact"]),
                  positive=st.booleans(), max_iter=st.just(50), **common),
        st.builds(GFS, k_max=k, affinity=st.sampled_from(["binary", "coefficients"]), **common),
        st.builds(GSC, n_neighbors=k, max_subspace_dim=st.integers(1, 4),
                  variant=st.sampled_from(["paper", "orthonormal"]), **common),
        st.builds(TSC, n_neighbors=k, signed=st.booleans(), **common),
        st.builds(SSSC, n_in_sample=st.integers(2, n + 1), lam=lam, **common),
    )


def _check_fit(est, X):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            labels = est.fit_predict(X)
        except ValueError as error:
            assert len(str(error)) > 10, f"unhelpful error {error!r}"
            event("ValueError")
            return None
    categories = {w.category for w in record}
    assert not any(issubclass(c, RuntimeWarning) for c in categories), \
        [str(w.message) for w in record]
    assert labels.shape == (X.shape[0],) and labels.dtype.kind == "i"
    degenerate = DegenerateFitWarning in categories
    asked = est.n_clusters
    distinct = np.unique(X, axis=0).shape[0]
    if asked is not None and distinct < asked:
        event("fewer distinct points than clusters")
        assert any(f"{distinct} distinct point(s) for n_clusters={asked}" in str(w.message)
                   for w in record if w.category is DegenerateFitWarning), \
            f"{distinct} distinct points for {asked} clusters without a warning: {est}"
    event("labels, degenerate" if degenerate else "labels")
    W = est.affinity_matrix_
    if isolated_points(W).size:
        assert degenerate, f"isolated points without a DegenerateFitWarning: {est}"
    if asked is not None and np.unique(labels).size < asked and not isinstance(est, SSSC):
        assert degenerate, f"{np.unique(labels).size} clusters for {asked} without a warning"
    return labels


@FAST
@given(st.data())
def test_estimators_raise_clearly_or_label_every_point(draw):
    X = draw.draw(data())
    est = draw.draw(estimators(X.shape[0]))
    _check_fit(est, X)


@FAST
@given(st.data())
def test_fewer_distinct_points_than_clusters_are_reported(draw):
    # Issue 29.5: identical points were split across clusters with no warning.
    n = draw.draw(st.integers(3, 16))
    n_distinct = draw.draw(st.integers(1, min(3, n - 1)))
    d = draw.draw(st.one_of(st.integers(1, 6), st.integers(n + 1, n + 30)))
    rng = np.random.default_rng(draw.draw(st.integers(0, 2**16)))
    copies = np.r_[np.arange(n_distinct), rng.integers(0, n_distinct, n - n_distinct)]
    X = rng.standard_normal((n_distinct, d))[rng.permutation(copies)]
    X = X * draw.draw(st.sampled_from([1e-20, 1.0, 1e20]))
    n_clusters = draw.draw(st.integers(n_distinct + 1, n))
    est = draw.draw(estimators(n)).set_params(n_clusters=n_clusters)
    event("wide (D > N)" if d > n else "narrow")
    _check_fit(est, X)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.data())
def test_lam_around_lambda_max_is_reported(draw):
    # Unit-norm points: lambda_max <= 1, so lam > 1 zeroes every code and must be reported.
    X = draw.draw(data(max_samples=12).filter(
        lambda X: np.isfinite(X).all() and (np.abs(X).max(axis=1) > 0).all()))
    n = X.shape[0]
    lam = draw.draw(st.sampled_from([1.001, 1.5]))  # lam = 1 exactly ties lambda_max to rounding
    est = draw.draw(st.sampled_from([KSSC(2 if n > 2 else None, n_neighbors=1, lam=lam,
                                          lam_mode="absolute", solver="relaxed"),
                                     SSC(2 if n > 2 else None, lam=lam)]))
    with pytest.warns(DegenerateFitWarning, match=f"lam={lam:g} >= lambda_max"):
        labels = est.fit_predict(X)
    assert labels.shape == (n,)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.data())
def test_spectral_step_on_any_symmetric_affinity(draw):
    # Block, disconnected, empty or duplicated-row affinities: labels or a warning, no crash.
    n = draw.draw(st.integers(1, 12))
    rng = np.random.default_rng(draw.draw(st.integers(0, 2**16)))
    W = rng.random((n, n)) * (rng.random((n, n)) < draw.draw(st.sampled_from([0.0, 0.2, 1.0])))
    W = W + W.T
    n_clusters = draw.draw(st.one_of(st.none(), st.integers(1, n)))
    assign = draw.draw(st.sampled_from(["discretize", "kmeans", "njw"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        labels = spectral_clustering(W, n_clusters, assign_labels=assign, random_state=0)
    assert labels.shape == (n,)
