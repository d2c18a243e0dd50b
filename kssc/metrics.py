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

    unit="code": the paper code's formula 10 * ln(1 / MSE), 99 when MSE = 0 (what the
    paper's axes show). unit="db": the true value 10 * log10(1 / MSE) in dB, inf when MSE = 0.
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
