"""The spectral step: N-Cut as the paper's code ran it (Cour, Yu and Shi's `ncutW`).

`ncut` follows docs/protocol.md 1.7: drop |W| <= 1e-6, add the offset 0.5 to the degrees and the
diagonal, take the top eigenvectors of D^-1/2 W D^-1/2 with a sparse eigensolver, and
discretise them with Yu and Shi's multiclass rotation (random first row). The k-means
option embeds and row-normalises the same eigenvectors (Ng, Jordan and Weiss). The "njw"
option is Ng, Jordan and Weiss as Elhamifar and Vidal's SSC code runs it
(`SpectralClustering.m`): D^-1/2 W D^-1/2 with neither threshold nor offset, unit rows,
k-means with 20 restarts.
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, svd
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

ASSIGN_LABELS = ("discretize", "kmeans", "njw")
_DENSE_LIMIT = 1000


def _normalized_affinity(W, offset=0.5, threshold=1e-6):
    """P = D^-1/2 (W + offset I) D^-1/2 with d = sum_j |W_ij| + 2 offset; returns (P, d)."""
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"the affinity must be square; got shape {W.shape}.")
    W = W.copy()
    W.data[np.abs(W.data) <= threshold] = 0.0
    W.eliminate_zeros()
    asymmetry = W - W.T
    if asymmetry.nnz and abs(asymmetry).max() > 1e-10:
        raise ValueError("the affinity matrix must be symmetric.")
    abs_sum = np.asarray(abs(W).sum(axis=1)).ravel()
    signed_sum = np.asarray(W.sum(axis=1)).ravel()
    degrees = abs_sum + 2.0 * offset
    W = W + sp.diags(0.5 * (abs_sum - signed_sum) + offset)
    scale = sp.diags(1.0 / np.sqrt(degrees))
    return (scale @ W @ scale).tocsr(), degrees


def top_eigenvectors(P, n_vectors, random_state=None, dense_limit=_DENSE_LIMIT):
    """The `n_vectors` largest eigenpairs of the symmetric matrix P, in descending order.

    Dense `eigh` up to `dense_limit` points, else ARPACK (Lanczos, matrix-vector products
    only) started from a vector drawn from `random_state`. ARPACK stays the large-n method
    by measurement: it was faster than LOBPCG with an AMG preconditioner on N-Cut matrices
    of 10^5 points (docs/scaling.md, "Eigen-solver").
    """
    n = P.shape[0]
    if n <= dense_limit or n_vectors >= n - 1:
        values, vectors = eigh(P.toarray(), subset_by_index=[n - n_vectors, n - 1])
    else:
        v0 = check_random_state(random_state).uniform(-1.0, 1.0, n)
        values, vectors = eigsh(P, k=n_vectors, which="LA", v0=v0)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def discretize(vectors, random_state=None, max_iter=20):
    """Yu and Shi's multiclass discretisation of continuous N-Cut eigenvectors into labels."""
    n, p = vectors.shape
    rng = check_random_state(random_state)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    V = vectors / np.where(norms == 0, 1.0, norms)
    R = np.zeros((p, p))
    R[:, 0] = V[rng.randint(n)]
    cumulative = np.zeros(n)
    for j in range(1, p):
        cumulative += np.abs(V @ R[:, j - 1])
        R[:, j] = V[np.argmin(cumulative)]
    last = 0.0
    for _ in range(max_iter):
        labels = np.argmax(V @ R, axis=1)
        Y = np.zeros((n, p))
        Y[np.arange(n), labels] = 1.0
        U, s, Vt = svd(Y.T @ V, full_matrices=False)
        ncut_value = 2.0 * (n - s.sum())
        if abs(ncut_value - last) < np.finfo(float).eps:
            break
        last = ncut_value
        R = Vt.T @ U.T
    return labels


def ncut_embedding(W, n_clusters, *, random_state=None):
    """The N-Cut eigenvectors D^-1/2 v, scaled to norm sqrt(n), first entry negative."""
    P, degrees = _normalized_affinity(W)
    _, vectors = top_eigenvectors(P, n_clusters, random_state)
    vectors = vectors / np.sqrt(degrees)[:, None]
    vectors *= np.sqrt(len(degrees)) / np.linalg.norm(vectors, axis=0)
    signs = np.where(vectors[0] > 0, -1.0, 1.0)
    return vectors * signs


def njw_embedding(W, n_clusters, *, random_state=None):
    """Top eigenvectors of D^-1/2 W D^-1/2 (d = row sums + eps), rows scaled to unit norm."""
    W = sp.csr_matrix(W, dtype=np.float64)
    eps = np.finfo(float).eps
    scale = sp.diags(1.0 / np.sqrt(np.asarray(W.sum(axis=1)).ravel() + eps))
    _, vectors = top_eigenvectors((scale @ W @ scale).tocsr(), n_clusters, random_state)
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + eps)


def estimate_n_clusters(W, max_clusters=20, random_state=None):
    """Number of clusters by the largest gap among the top eigenvalues of the N-Cut matrix.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    max_clusters : int, default=20
        Largest number of clusters considered.
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the sparse eigensolver.

    Returns
    -------
    n_clusters : int
        The number c (1 <= c <= max_clusters) after which the descending eigenvalues of
        D^-1/2 W D^-1/2 drop the most.

    See Also
    --------
    spectral_clustering : Calls this function when `n_clusters` is None.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import estimate_n_clusters
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> estimate_n_clusters(sp.block_diag([block, block]))
    2
    """
    n = W.shape[0]
    m = min(max_clusters + 1, n)
    if m < 2:
        return 1
    P, _ = _normalized_affinity(W)
    values, _ = top_eigenvectors(P, m, random_state)
    gaps = values[:-1] - values[1:]
    return int(np.argmax(gaps[:max_clusters]) + 1)


def spectral_clustering(W, n_clusters=None, *, assign_labels="discretize", random_state=None,
                        max_clusters=20):
    """Labels of the points of the affinity W.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    n_clusters : int or None, default=None
        Number of clusters; None estimates it by the eigen-gap (at most `max_clusters`).
    assign_labels : {"discretize", "kmeans", "njw"}, default="discretize"
        "discretize": N-Cut eigenvectors and Yu and Shi's rotation (the paper's code);
        "kmeans": the same eigenvectors with unit rows, k-means with 10 restarts;
        "njw": Ng, Jordan and Weiss as Elhamifar and Vidal's SSC code runs it (module
        docstring).
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver, the rotation's first row and k-means.
    max_clusters : int, default=20
        Largest number of clusters the eigen-gap may choose.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Cluster of every point, 0 to n_clusters - 1.

    See Also
    --------
    ncut : This function with ``assign_labels="discretize"``.
    estimate_n_clusters : The eigen-gap rule used when `n_clusters` is None.
    sklearn.cluster.SpectralClustering : The spectral clustering of scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import clustering_error, spectral_clustering
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> W = sp.block_diag([block, block])
    >>> labels = spectral_clustering(W, random_state=0)
    >>> float(clustering_error([0, 0, 0, 1, 1, 1], labels))
    0.0
    """
    if assign_labels not in ASSIGN_LABELS:
        raise ValueError(f"assign_labels must be one of {ASSIGN_LABELS}; got {assign_labels!r}.")
    rng = check_random_state(random_state)
    n = W.shape[0]
    if n_clusters is None:
        n_clusters = estimate_n_clusters(W, max_clusters, rng)
    if n_clusters == 1:
        return np.zeros(n, dtype=np.int64)
    if assign_labels == "njw":
        embedding = njw_embedding(W, n_clusters, random_state=rng)
        return KMeans(n_clusters, n_init=20, random_state=rng).fit_predict(embedding).astype(np.int64)
    vectors = ncut_embedding(W, n_clusters, random_state=rng)
    if assign_labels == "discretize":
        return discretize(vectors, rng)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    embedding = vectors / np.where(norms == 0, 1.0, norms)
    return KMeans(n_clusters, n_init=10, random_state=rng).fit_predict(embedding).astype(np.int64)


def ncut(W, n_clusters, *, random_state=None):
    """N-Cut labels with Yu and Shi's discretisation (the paper's `ncutW`).

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    n_clusters : int
        Number of clusters.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver and the rotation's random first row.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Cluster of every point, 0 to n_clusters - 1.

    See Also
    --------
    spectral_clustering : The same step with other label assignments.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import clustering_error, ncut
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> labels = ncut(sp.block_diag([block, block]), 2, random_state=0)
    >>> float(clustering_error([0, 0, 0, 1, 1, 1], labels))
    0.0
    """
    return spectral_clustering(W, n_clusters, assign_labels="discretize", random_state=random_state)
