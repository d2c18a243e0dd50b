"""The one interval formatter, below both the verdicts (`claims`) and the publishing wing
(`publish`), so that neither imports the other for it."""

import pandas as pd


def interval(mean, low, high, fmt="{:.2f}", sign=False):
    """'mean [low, high]' (signed with `sign`); the bracket alone when `mean` is None, ''
    for a missing mean, the mean alone without both ends of the interval."""
    if sign:
        fmt = fmt.replace("{:", "{:+")
    if mean is not None and pd.isna(mean):
        return ""
    parts = [] if mean is None else [fmt.format(mean)]
    if not (pd.isna(low) or pd.isna(high)):
        parts.append(f"[{fmt.format(low)}, {fmt.format(high)}]")
    return " ".join(parts)
