"""Warnings attributed to the caller's line, however deep in the fit they are raised."""

import sys
import warnings

# Frames of these packages are skipped: a warning names the first line outside them, the
# user's call of `fit` (scikit-learn's frames sit between: `_fit_context`, `fit_predict`).
_INTERNAL = ("kssc", "baselines", "sklearn")


def _is_internal(frame):
    module = frame.f_globals.get("__name__", "")
    return module.partition(".")[0] in _INTERNAL


def warn_caller(message, category=UserWarning):
    """`warnings.warn` with the stacklevel of the first frame outside kssc and baselines."""
    frame = sys._getframe()
    level = 1
    while frame.f_back is not None and _is_internal(frame):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
