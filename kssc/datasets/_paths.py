"""Where the data sets live, what files each holds, and the error raised when they are missing.

The data folder has the layout of `shared/data`::

    <data_dir>/tir/TIRlib.mat
    <data_dir>/hopkins155/README.txt
    <data_dir>/hopkins155/<SEQ>/<SEQ>_truth.mat
    <data_dir>/yaleb/CroppedYale/yaleBNN/...

The files of each data set, with their SHA-256 sums, are listed in
`kssc/datasets/checksums/<name>.sha256` (paths relative to the data set's folder, in the
format of `sha256sum`), and the sizes of the first three data sets' files in
`kssc/datasets/metadata/sizes.csv`. Those lists are the single source of truth for fetching,
verifying and loading; the data sets (`DATASETS`) are the checksum lists, each declared once
in its loader module (`_registry`).
"""

import csv
import os
from functools import cache
from importlib import resources
from pathlib import Path

import pooch

from ._integrity import verify_file
from ._registry import DATASETS

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
    """Return the data folder.

    In order: `data_dir`, else $KSSC_DATA_DIR, else `data/` at the repository root when the
    package runs from a checkout (the folder holding `pyproject.toml`), else the user cache
    folder `pooch.os_cache("kssc")` (e.g. ~/.cache/kssc) for an installed package.

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
    checkout = _checkout_root()
    if checkout is not None:
        return checkout / "data"
    return Path(pooch.os_cache("kssc"))


def _checkout_root():
    """The repository root if this package is imported from a checkout, else None.

    The checkout-only code takes the root from `experiments/_checkout.py`; an installed
    package has no repository and cannot import it, so this asks only where it runs from.
    """
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def dataset_dir(name, data_dir=None):
    """Folder of data set `name` (one of `DATASETS`) inside the data folder."""
    _check_name(name)
    return get_data_dir(data_dir) / name


@cache
def read_checksums(name):
    """Recorded SHA-256 sums of data set `name`: {relative path: hex digest}, in file order."""
    _check_name(name)
    text = resources.files("kssc.datasets").joinpath("checksums", f"{name}.sha256").read_text()
    return parse_checksums(text)


@cache
def read_sizes(name):
    """Recorded sizes in bytes of the files of data set `name`: {relative path: size}."""
    _check_name(name)
    text = resources.files("kssc.datasets").joinpath("metadata", "sizes.csv").read_text()
    return {row["path"]: int(row["bytes"]) for row in csv.DictReader(text.splitlines())
            if row["dataset"] == name}


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


def missing_files(name, relpaths=None, data_dir=None):
    """The files of `relpaths` (default: all of data set `name`) absent from the data folder."""
    root = dataset_dir(name, data_dir)
    relpaths = read_checksums(name) if relpaths is None else relpaths
    return [rel for rel in relpaths if not (root / rel).is_file()]


def require_files(name, relpaths, data_dir=None):
    """Return the absolute paths of `relpaths` in data set `name`, each present and verified.

    Raises DataNotFoundError if any is missing and DataCorruptError if one's size (checked
    first, without reading it) or SHA-256 differs from the recorded one (sums are cached per
    process, so repeated calls cost nothing).
    """
    root = dataset_dir(name, data_dir)
    missing = missing_files(name, relpaths, data_dir)
    if missing:
        raise DataNotFoundError(missing_message(name, missing, root, data_dir))
    checksums, sizes = read_checksums(name), read_sizes(name)
    paths = [root / rel for rel in relpaths]
    for rel, path in zip(relpaths, paths, strict=True):
        verify_file(path, checksums[rel], fetch_command(name, root.parent), sizes.get(rel))
    return paths


def fetch_command(name, data_root):
    """The command that downloads and verifies data set `name` into the data folder `data_root`."""
    return f"python -m kssc.datasets.fetch --data-dir {data_root} {name}"


def missing_message(name, missing, root, data_dir=None):
    """Error text: which files are missing, where they were looked for, how to fetch them."""
    shown = ", ".join(missing[:_N_SHOWN])
    more = f" and {len(missing) - _N_SHOWN} more" if len(missing) > _N_SHOWN else ""
    where = _describe_data_dir(data_dir)
    fetch = fetch_command(name, root.parent)
    return (
        f"{len(missing)} file(s) of data set '{name}' missing from {root}: {shown}{more}. "
        f"The data folder is {where}. Either download and verify the data with `{fetch}` "
        f"(or `{FETCH_COMMAND}` in a checkout: into $KSSC_DATA_DIR, else data/), or point "
        f"KSSC_DATA_DIR at a folder that holds it: `export KSSC_DATA_DIR=/path/to/data`."
    )


def _describe_data_dir(data_dir):
    env = os.environ.get("KSSC_DATA_DIR")
    # The experiments pass the folder they resolved from $KSSC_DATA_DIR as data_dir.
    if data_dir is not None and not (env and get_data_dir(data_dir) == get_data_dir()):
        return f"{get_data_dir(data_dir)} (data_dir argument)"
    if env:
        return f"{get_data_dir()} (from $KSSC_DATA_DIR)"
    where = ("the checkout's data/ folder" if _checkout_root() is not None
             else "the user cache folder")
    return f"{get_data_dir()} (default: {where})"


def _check_name(name):
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}.")
