"""The data sets' registry: each real data set is declared once, in its loader module.

A loader module declares its data set as a module constant::

    DATASET = Dataset(
        name="tir",                       # its folder in the data folder, its checksum list
        title="TIR mineral spectral library",
        sources=("https://.../TIRlib.mat",),  # tried in order by `make data`
        layout="file",                    # the source is the file; "archive": a zip or tar
        n_bytes=177_734,                  # the recorded total size of its files
        loaders=("load_tir_library",),    # the public functions that read it
    )

and lists its files with their SHA-256 sums in `checksums/<name>.sha256` (the format of
`sha256sum`, paths relative to the data set's folder). Everything else is derived: the names
(`DATASETS`, one per checksum list), the loaders' file checks (`_paths.require_files`), the
sources, caps and layout of `make data` (`fetch`), its `--verify` and the tests' real-data
fixtures (`<name>_dir`, from `tests/conftest.py`).

Recorded sizes: the files of the first three data sets (TIR, Hopkins 155, Extended Yale B)
have per-file sizes in `metadata/sizes.csv`, which the loaders check before hashing a file.
That list is frozen: committed results recorded its bytes, so a new data set does not add
rows to it. A new data set's files are capped at its declared `n_bytes` while they are
extracted, and verified by their sums.

The data sets are ordered by the size of their checksum lists in bytes, smallest first (ties
by name): the data set with the fewest files is fetched first.
"""

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LAYOUTS = ("file", "archive")
"""How a source serves a data set: the one file itself, or a zip or tar archive holding the
listed files under any folder prefix."""

CHECKSUM_LISTS = Path(__file__).with_name("checksums")


@dataclass(frozen=True)
class Dataset:
    """The declaration of a real data set (see the module docstring).

    Parameters
    ----------
    name : str
        The data set's folder in the data folder and the stem of its checksum list
        `checksums/<name>.sha256`.
    title : str
        What it is, for messages and docs.
    sources : tuple of str
        URLs (http, https, ftp or file) tried in order; each serves `layout`.
    layout : {"file", "archive"}
        "file": a source is the data set's one file; "archive": a zip or tar archive holding
        the listed files under any folder prefix.
    n_bytes : int
        The recorded total size of the data set's files in bytes (caps a download).
    loaders : tuple of str
        The public functions of `kssc.datasets` that read it.
    """

    name: str
    title: str
    sources: tuple
    layout: str
    n_bytes: int
    loaders: tuple

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"data set {self.name!r}: layout must be one of {LAYOUTS}; "
                             f"got {self.layout!r}.")
        if not isinstance(self.sources, tuple) or not self.sources:
            raise ValueError(f"data set {self.name!r}: sources must be a non-empty tuple.")

    @property
    def checksum_list(self):
        """The path of its checksum list, relative to the `kssc/datasets` folder."""
        return f"checksums/{self.name}.sha256"


def registered_names(folder=CHECKSUM_LISTS):
    """The names of the data sets: one per checksum list in `folder`, the smallest list in bytes
    first (ties by name). Read from the folder's listing and the lists' sizes, without opening
    them (a trace records the lists a result opens)."""
    lists = {path.name.removesuffix(".sha256"): path.stat().st_size
             for path in Path(folder).glob("*.sha256")}
    return tuple(sorted(lists, key=lambda name: (lists[name], name)))


DATASETS = registered_names()
"""The registered data sets (one per checksum list), in the order `make data` fetches them."""


@cache
def _declared():
    """{name: (module name, Dataset)} of the `DATASET` constants of the public modules of
    `kssc.datasets`, checked against `DATASETS`, in that order."""
    package = __name__.rpartition(".")[0]
    found = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        declared = getattr(module, "DATASET", None)
        if not isinstance(declared, Dataset):
            continue
        if declared.name in found:
            raise LookupError(f"data set {declared.name!r} is declared in both "
                              f"{found[declared.name][0]} and {module.__name__}.")
        found[declared.name] = (module.__name__, declared)
    missing = [name for name in DATASETS if name not in found]
    unlisted = [name for name in found if name not in DATASETS]
    if missing or unlisted:
        raise LookupError(f"data sets without a declaration: {missing}; declarations without a "
                          f"checksum list in {CHECKSUM_LISTS}: {unlisted}.")
    return {name: found[name] for name in DATASETS}


def declarations():
    """{name: Dataset} of every registered data set, in `DATASETS` order: the `DATASET`
    constant of the public module of `kssc.datasets` that declares it (found as
    scikit-learn's `all_estimators` walks its package).

    Raises LookupError if a data set has no declaration, two modules declare one name, or a
    declaration has no checksum list."""
    return {name: declared for name, (_, declared) in _declared().items()}


def declaring_module(name):
    """The module that declares data set `name` (e.g. "kssc.datasets.tir")."""
    return _declared()[name][0]
