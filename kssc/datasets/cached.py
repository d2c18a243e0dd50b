"""Per-process caches of the real data the experiments read many times.

A trial of the TIR or Yale B experiments draws from the same library or the same subjects
as the trials before it; these keep what was read, keyed by every argument that changes it.
"""

from functools import lru_cache

from .hopkins import list_hopkins_sequences
from .tir import load_tir_library
from .yaleb import load_yaleb


@lru_cache(maxsize=2)
def tir_spectra(data_dir=None):
    """The TIR library's spectra (the first value of `load_tir_library`), cached."""
    return load_tir_library(data_dir=data_dir)[0]


@lru_cache(maxsize=128)
def yaleb_subject_images(subject, *, size, include_bad, n_per_subject, data_dir=None):
    """The images of one Extended Yale B subject as rows (`load_yaleb`), cached.

    The returned array is shared between calls: do not modify it in place.
    """
    X, _ = load_yaleb(subjects=[subject], size=size, include_bad=include_bad,
                      n_per_subject=n_per_subject, data_dir=data_dir)
    return X


def select_hopkins_sequences(sequences=None, subset="paper41", data_dir=None):
    """The sequences named, or else every sequence of `subset` in ASCII order.

    Parameters
    ----------
    sequences : sequence of str or None, default=None
        Names to use as given; None selects by `subset`.
    subset : str, default="paper41"
        Passed to `list_hopkins_sequences` when `sequences` is None.
    data_dir : str, path or None, default=None
        Data folder (`get_data_dir`).

    Returns
    -------
    names : list of str
        Sequence names.

    See Also
    --------
    list_hopkins_sequences : The sequences of a subset.

    Examples
    --------
    >>> from kssc.datasets import select_hopkins_sequences
    >>> select_hopkins_sequences(["cars1", "1R2RC"])
    ['cars1', '1R2RC']
    """
    if sequences is not None:
        return list(sequences)
    return sorted(list_hopkins_sequences(subset=subset, data_dir=data_dir))
