"""The methods the k-SSC paper compares against, with the same contract as `kssc.KSSC`.

Each module starts with the method's citation and how our implementation differs from the
original and from the k-SSC authors' MATLAB code.
"""

from .gfs import GFS
from .gsc import GSC
from .ssc import SSC
from .sssc import SSSC
from .tsc import TSC

__all__ = ["GFS", "GSC", "SSC", "SSSC", "TSC"]
