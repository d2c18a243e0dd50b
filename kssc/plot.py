"""Pictures of a fit: the affinity sorted by cluster, the spectral embedding, cluster sizes,
per-point residuals and the eigen-gap curve.

matplotlib is optional (``pip install matplotlib``); it is imported when a function here is
called. Every function takes a fitted estimator (or the arrays it would read from one) and
an optional matplotlib ``ax``, draws on it (a new figure when None) and returns it.
"""

import numpy as np
import scipy.sparse as sp

from .spectral._clustering import choose_n_clusters, n_clusters_by_relative_gap, ncut_embedding


def _axes(ax):
    """`ax`, or the axes of a new figure; a clear ImportError without matplotlib."""
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("kssc.plot needs matplotlib: pip install matplotlib "
                          "(in a checkout of kssc: pip install '.[plot]').") from exc
    return plt.subplots()[1]


def _fitted(source, attribute):
    """`source.attribute` of a fitted estimator, else None (`source` is then an array)."""
    if hasattr(source, "get_params"):
        if not hasattr(source, "labels_"):
            raise ValueError(f"{type(source).__name__} is not fitted: call fit first.")
        return getattr(source, attribute, None)
    return None


def _affinity_and_labels(source, labels):
    W = _fitted(source, "affinity_matrix_")
    if W is not None:
        labels = source.labels_ if labels is None else labels
    else:
        W = source
    W = sp.csr_matrix(W)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"the affinity must be a square matrix; got shape {W.shape}.")
    if labels is None:
        raise ValueError("labels are needed with an affinity matrix: pass labels=.")
    labels = np.asarray(labels)
    if labels.shape != (W.shape[0],):
        raise ValueError(f"labels must have shape ({W.shape[0]},); got {labels.shape}.")
    return W, labels


def affinity(source, labels=None, *, ax=None, max_pixels=600, cmap="Greys"):
    """The affinity with its rows and columns sorted by cluster (blocks on the diagonal).

    Parameters
    ----------
    source : fitted estimator, or array-like or sparse matrix of shape (n_samples, n_samples)
        An estimator with ``affinity_matrix_`` and ``labels_``, or an affinity.
    labels : array-like of shape (n_samples,), default=None
        Labels to sort by (an estimator's ``labels_`` when None; ground truth shows how
        the affinity follows the true classes).
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).
    max_pixels : int, default=600
        Above this many points, the sorted matrix is summed into max_pixels x max_pixels
        cells so that a large affinity draws in O(nnz).
    cmap : str, default="Greys"
        Colour map of the (square-rooted) weights.

    Returns
    -------
    ax : matplotlib Axes
    """
    W, labels = _affinity_and_labels(source, labels)
    n = W.shape[0]
    order = np.argsort(labels, kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    cell = max(1, -(-n // max_pixels))
    size = -(-n // cell)
    W = W.tocoo()
    image = sp.coo_matrix((np.abs(W.data), (position[W.row] // cell, position[W.col] // cell)),
                          shape=(size, size)).toarray()
    ax = _axes(ax)
    ax.imshow(np.sqrt(image), cmap=cmap, interpolation="nearest", extent=(0, n, n, 0))
    for edge in np.flatnonzero(np.diff(labels[order])) + 1:
        ax.axhline(edge, color="tab:red", lw=0.5)
        ax.axvline(edge, color="tab:red", lw=0.5)
    ax.set(title="Affinity sorted by cluster", xlabel="point", ylabel="point")
    return ax


def embedding(source, labels=None, *, n_clusters=None, components=None, ax=None,
              random_state=0):
    """The points in two coordinates of the N-Cut spectral embedding, coloured by label.

    Parameters
    ----------
    source : fitted estimator, or array-like or sparse matrix of shape (n_samples, n_samples)
        An estimator with ``affinity_matrix_`` and ``labels_``, or an affinity.
    labels : array-like of shape (n_samples,), default=None
        Colours (an estimator's ``labels_`` when None).
    n_clusters : int, default=None
        Eigenvectors computed (the number of distinct labels when None).
    components : pair of int, default=None
        The two eigenvectors drawn; None: the 2nd and 3rd (the 1st is nearly constant), or
        the 1st and 2nd with two clusters.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).
    random_state : int, RandomState instance or None, default=0
        Seeds the eigensolver.

    Returns
    -------
    ax : matplotlib Axes
    """
    W, labels = _affinity_and_labels(source, labels)
    k = n_clusters or max(2, np.unique(labels).size)
    if components is None:
        components = (1, 2) if k >= 3 else (0, 1)
    if max(components) >= k:
        raise ValueError(f"components {tuple(components)} need n_clusters > {max(components)}; "
                         f"got {k}.")
    vectors = ncut_embedding(W, k, random_state=random_state)
    ax = _axes(ax)
    ax.scatter(vectors[:, components[0]], vectors[:, components[1]], c=labels, s=6,
               cmap="tab20")
    ax.set(title="Spectral embedding", xlabel=f"eigenvector {components[0] + 1}",
           ylabel=f"eigenvector {components[1] + 1}")
    return ax


def cluster_sizes(source, *, ax=None):
    """Points per cluster, as bars.

    Parameters
    ----------
    source : fitted estimator or array-like of shape (n_samples,)
        An estimator with ``labels_``, or labels.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).

    Returns
    -------
    ax : matplotlib Axes
    """
    labels = _fitted(source, "labels_")
    labels = np.asarray(source if labels is None else labels)
    clusters, counts = np.unique(labels, return_counts=True)
    ax = _axes(ax)
    ax.bar(np.arange(clusters.size), counts, color="tab:blue")
    ax.set_xticks(np.arange(clusters.size), [str(c) for c in clusters])
    ax.set(title="Cluster sizes", xlabel="cluster", ylabel="points")
    return ax


def residuals(source, labels=None, *, ax=None):
    """Every point's code residual, points grouped by cluster (high: poorly explained).

    Parameters
    ----------
    source : fitted KSSC or array-like of shape (n_samples,)
        An estimator with ``residuals_`` and ``labels_``, or residuals.
    labels : array-like of shape (n_samples,), default=None
        Grouping (an estimator's ``labels_`` when None; needed with an array).
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).

    Returns
    -------
    ax : matplotlib Axes
    """
    if hasattr(source, "get_params"):
        values = _fitted(source, "residuals_")
        if values is None:
            raise ValueError(f"{type(source).__name__} has no residuals_ (KSSC has).")
        labels = source.labels_ if labels is None else labels
    else:
        values = source
    values = np.asarray(values, dtype=float)
    if labels is None:
        raise ValueError("labels are needed with an array of residuals: pass labels=.")
    labels = np.asarray(labels)
    order = np.lexsort((values, labels))
    ax = _axes(ax)
    ax.scatter(np.arange(values.size), values[order], c=labels[order], s=4, cmap="tab20")
    ax.set(title="Code residual per point", xlabel="point (grouped by cluster)",
           ylabel="residual")
    return ax


def eigengap(source, *, max_clusters=20, ax=None, random_state=0):
    """The smallest Laplacian eigenvalues and the relative gap that n_clusters=None picks.

    Parameters
    ----------
    source : fitted estimator, 1-D eigenvalues, or a square affinity
        An estimator (its ``laplacian_eigenvalues_``, else computed from its
        ``affinity_matrix_``), the ascending eigenvalues, or an affinity.
    max_clusters : int, default=20
        Largest number of clusters considered when the eigenvalues are computed here.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).
    random_state : int, RandomState instance or None, default=0
        Seeds the eigensolver when the eigenvalues are computed here.

    Returns
    -------
    ax : matplotlib Axes
    """
    values = _fitted(source, "laplacian_eigenvalues_")
    if values is None:
        W = _fitted(source, "affinity_matrix_")
        W = source if W is None else W
        if sp.issparse(W) or np.ndim(W) == 2:
            values = choose_n_clusters(sp.csr_matrix(W), max_clusters, random_state,
                                       warn=False)[1]
        else:
            values = W
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"need at least 2 eigenvalues; got shape {values.shape}.")
    chosen = n_clusters_by_relative_gap(values, values.size - 1)[0]
    index = np.arange(1, values.size + 1)
    ax = _axes(ax)
    ax.plot(index, values, "o-", ms=4)
    ax.axvspan(chosen + 0.05, chosen + 0.95, color="tab:orange", alpha=0.3,
               label=f"largest relative gap: {chosen} cluster(s)")
    ax.set(title="Eigen-gap", xlabel="index c", ylabel="Laplacian eigenvalue l_c")
    ax.legend(loc="lower right")
    return ax
