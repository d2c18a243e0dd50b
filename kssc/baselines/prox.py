"""Proximal operators of the l1 norm."""

import numpy as np


def soft_threshold(v, threshold):
    """prox of threshold * ||.||_1: sign(v) * max(|v| - threshold, 0)."""
    return np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)


def nonneg_soft_threshold(v, threshold):
    """prox of threshold * ||.||_1 + indicator(v >= 0): max(v - threshold, 0)."""
    return np.maximum(v - threshold, 0.0)
