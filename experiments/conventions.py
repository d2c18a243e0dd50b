"""Method names, colours and markers, and the paper's timing convention, in one place.

The runner's summary tables, the figures and the report all read these, so a method is
spelled, coloured and timed the same everywhere.
"""

import pandas as pd

# method -> (label, colour, marker); the paper's colours.
METHOD_STYLE = {
    "ssc": ("SSC", "m", "*"), "gfs": ("GFS", "b", "*"), "gsc": ("GSC", "r", "*"),
    "tsc": ("TSC", (1.0, 0.5, 0.0), "*"), "sssc": ("SSSC", "g", "*"), "kssc": ("kSSC", "k", "*"),
    "ssc_exact": ("SSC Exact", "b", "*"),
    "ssc_exact_par": ("SSC Exact (Column Parallel)", "b", "o"),
    "ssc_relaxed": ("SSC Relaxed", "g", "*"),
    "ssc_relaxed_par": ("SSC Relaxed (Column Parallel)", "g", "o"),
    "kssc_exact": ("kSSC Exact (Column Parallel)", "r", "*"),
    "kssc_relaxed": ("kSSC Relaxed (Column Parallel)", "k", "o"),
    "ssc_tuned": ("SSC (tuned)", "m", "o"), "kssc_tuned": ("kSSC (tuned)", "k", "o"),
    "spectral_knn": ("Spectral (kNN graph)", "c", "s"), "kmeans": ("k-means", "y", "d"),
}
ORDER = list(METHOD_STYLE)
# Whose run time covers the whole pipeline: the paper timed SSSC end to end, every other
# method only while it built Z (its representation step).
FULL_PIPELINE_TIME = frozenset({"sssc"})


def label(method):
    """The method's name as the paper writes it."""
    return METHOD_STYLE.get(method, (method,))[0]


def style(method):
    """(label, colour, marker) of a method; unknown methods get matplotlib's next colour."""
    return METHOD_STYLE.get(method, (method, None, "*"))


def ordered_methods(methods):
    """The methods present, in the paper's legend order, unknown ones last in given order."""
    present = list(dict.fromkeys(methods))
    return [m for m in ORDER if m in present] + [m for m in present if m not in ORDER]


def paper_time(frame):
    """Run time as the paper measured it: building Z (the whole fit when a method has no
    representation step, and always for SSSC), in seconds."""
    rep = frame["time_representation_s"]
    rep = rep.where(rep.notna(), frame["time_fit_s"])
    return pd.Series(rep.where(~frame["method"].isin(FULL_PIPELINE_TIME), frame["time_fit_s"]),
                     name="time_paper_s")
