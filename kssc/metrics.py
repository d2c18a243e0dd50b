"""Clustering error and PSNR as the paper reports them."""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics.cluster import contingency_matrix


def clustering_error(y_true, y_pred):
    """Subspace clustering error (SCE) in percent.

    The share of points misclassified under the best one-to-one matching of predicted to
    true labels (Hungarian matching of the contingency table), times 100. Equal to the
    paper's `missclassGroups`, which tries all permutations. Labels may be any integers;
    extra predicted or true clusters simply stay unmatched.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ground-truth labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels; their numbering need not match `y_true`'s.

    Returns
    -------
    error : float
        Percentage of misclassified points, from 0 to 100.

    See Also
    --------
    sklearn.metrics.adjusted_rand_score : A chance-corrected agreement of two labellings.

    Examples
    --------
    >>> from kssc import clustering_error
    >>> float(clustering_error([0, 0, 1, 1], [1, 1, 0, 0]))
    0.0
    >>> float(clustering_error([0, 0, 1, 1], [0, 1, 1, 1]))
    25.0
    """
    y_true = np.asarray(y_true).ravel()
    y_pred = np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in length: {y_true.size} != {y_pred.size}.")
    if y_true.size == 0:
        raise ValueError("clustering_error needs at least one label.")
    table = contingency_matrix(y_true, y_pred)
    rows, cols = linear_sum_assignment(table, maximize=True)
    matched = table[rows, cols].sum()
    return 100.0 * (1.0 - matched / y_true.size)


def psnr(clean, noisy, unit="code"):
    """Peak signal-to-noise ratio of `noisy` against `clean`, with peak 1.

    Parameters
    ----------
    clean : array-like
        The reference signal.
    noisy : array-like
        The noisy signal, of the same shape as `clean`.
    unit : {"code", "db"}, default="code"
        "code": the paper code's formula 10 * ln(1 / MSE), 99 when MSE = 0 (what the
        paper's axes show; docs/protocol.md 1.9). "db": the true value 10 * log10(1 / MSE)
        in decibels, inf when MSE = 0.

    Returns
    -------
    psnr : float
        The peak signal-to-noise ratio in the chosen unit.

    See Also
    --------
    kssc.datasets.make_mv_data : Noisy synthetic data whose PSNR the experiments report.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc import psnr
    >>> clean, noisy = np.zeros(4), np.full(4, 0.1)
    >>> round(psnr(clean, noisy), 2)
    46.05
    >>> round(psnr(clean, noisy, unit="db"), 2)
    20.0
    """
    clean = np.asarray(clean, dtype=float)
    noisy = np.asarray(noisy, dtype=float)
    if clean.shape != noisy.shape:
        raise ValueError(f"clean and noisy differ in shape: {clean.shape} != {noisy.shape}.")
    mse = np.mean((clean - noisy) ** 2)
    if unit == "code":
        return 99.0 if mse == 0 else float(10.0 * np.log(1.0 / mse))
    if unit == "db":
        return np.inf if mse == 0 else float(10.0 * np.log10(1.0 / mse))
    raise ValueError(f"unit must be 'code' or 'db'; got {unit!r}.")
