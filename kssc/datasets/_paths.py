"""Where the data sets live, what files each holds, and the error raised when they are missing.

The data folder has the layout of `shared/data`::

    <data_dir>/tir/TIRlib.mat
    <data_dir>/hopkins155/README.txt
    <data_dir>/hopkins155/<SEQ>/<SEQ>_truth.mat
    <data_dir>/yaleb/CroppedYale/yaleBNN/...

The files of each data set, with their SHA-256 sums, are listed in
`kssc/datasets/checksums/<name>.sha256` (paths relative to the data set's folder, in the
format of `sha256sum`). Those lists are the single source of truth for fetching,
verifying and loading.
"""

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path

DATASETS = ("tir", "hopkins155", "yaleb")

FETCH_COMMAND = "make data"
"""The command that downloads the data sets (it runs `python -m kssc.datasets.fetch`)."""

_N_SHOWN = 5


class DataNotFoundError(FileNotFoundError):
    """Files of a data set are missing from the data folder.

    The message names the missing files, the folder searched and how to download them.

    See Also
    --------
    get_data_dir : Where the loaders look.

    Examples
    --------
    >>> from kssc.datasets import DataNotFoundError, load_tir_library
    >>> try:
    ...     load_tir_library(data_dir="/nonexistent")
    ... except DataNotFoundError as error:
    ...     print(type(error).__name__, isinstance(error, FileNotFoundError))
    DataNotFoundError True
    """


def get_data_dir(data_dir=None):
    """Return the data folder: `data_dir`, else $KSSC_DATA_DIR, else `data/` at the repository root.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        An explicit data folder, returned as a Path.

    Returns
    -------
    path : pathlib.Path
        The data folder (it need not exist).

    See Also
    --------
    DataNotFoundError : Raised by the loaders when files are missing there.

    Examples
    --------
    >>> from kssc.datasets import get_data_dir
    >>> get_data_dir("/tmp/kssc-data").as_posix()
    '/tmp/kssc-data'
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get("KSSC_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "data"


def dataset_dir(name, data_dir=None):
    """Folder of data set `name` ("tir", "hopkins155" or "yaleb") inside the data folder."""
    _check_name(name)
    return get_data_dir(data_dir) / name


@lru_cache(maxsize=None)
def read_checksums(name):
    """Recorded SHA-256 sums of data set `name`: {relative path: hex digest}, in file order."""
    _check_name(name)
    text = resources.files("kssc.datasets").joinpath("checksums", f"{name}.sha256").read_text()
    return parse_checksums(text)


def parse_checksums(text):
    """Parse `sha256sum` output ("<hex>  <path>" per line; a '*' before the path is allowed)."""
    sums = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, path = line.partition(" ")
        path = path.lstrip(" ").removeprefix("*")
        if not sep or len(digest) != 64 or not path:
            raise ValueError(f"line {lineno} is not '<sha256>  <path>': {line!r}")
        sums[path] = digest.lower()
    return sums


def require_files(name, relpaths, data_dir=None):
    """Return the absolute paths of `relpaths` in data set `name`; raise DataNotFoundError if any is missing."""
    root = dataset_dir(name, data_dir)
    paths = [root / rel for rel in relpaths]
    missing = [rel for rel, path in zip(relpaths, paths) if not path.is_file()]
    if missing:
        raise DataNotFoundError(missing_message(name, missing, root, data_dir))
    return paths


def missing_message(name, missing, root, data_dir=None):
    """Error text: which files are missing, where they were looked for, how to fetch them."""
    shown = ", ".join(missing[:_N_SHOWN])
    more = f" and {len(missing) - _N_SHOWN} more" if len(missing) > _N_SHOWN else ""
    where = _describe_data_dir(data_dir)
    fetch = f"python -m kssc.datasets.fetch --data-dir {root.parent} {name}"
    return (
        f"{len(missing)} file(s) of data set '{name}' missing from {root}: {shown}{more}. "
        f"The data folder is {where}. Download and verify the data with `{FETCH_COMMAND}` "
        f"or `{fetch}`."
    )


def _describe_data_dir(data_dir):
    if data_dir is not None:
        return f"{get_data_dir(data_dir)} (data_dir argument)"
    if os.environ.get("KSSC_DATA_DIR"):
        return f"{get_data_dir()} (from $KSSC_DATA_DIR)"
    return f"{get_data_dir()} (default; set $KSSC_DATA_DIR to use another folder)"


def _check_name(name):
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}.")
