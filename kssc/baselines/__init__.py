"""The methods the k-SSC paper compares against, with the same contract as `kssc.KSSC`.

Each module starts with the method's citation and how our implementation differs from the
original and from the k-SSC authors' MATLAB code. `BASELINES` lists them: the command
line's methods and the tests' estimators are read from it, so a new baseline is its module,
its line there, its config (conf/method/) and its line on the API page.
"""

from .gfs import GFS
from .gsc import GSC
from .ssc import SSC
from .sssc import SSSC
from .tsc import TSC

BASELINES = {
    "ssc": (SSC, {}),
    "gfs": (GFS, {"k_max": 3}),
    "gsc": (GSC, {"n_neighbors": 3, "max_subspace_dim": 3}),
    "sssc": (SSSC, {"n_in_sample": 10}),
    "tsc": (TSC, {"n_neighbors": 3}),
}
"""Each baseline by its method name (its config's, the command line's `--method`): its class
and small settings, valid on data down to 10 samples (what quick fits use)."""

__all__ = ["BASELINES", "GFS", "GSC", "SSC", "SSSC", "TSC"]
