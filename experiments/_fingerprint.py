"""The fingerprint of a results CSV: a hash of the config that decides the results and one of
the code that computes them.

The runner writes it into the CSV's sidecar. The code digest covers kssc/ (but the parts no
experiment runs: NOT_RESULT_CODE) with the data sets' checksum lists and metadata, the
runner machinery (MACHINERY), the experiment's module with the experiments modules it
imports, and the versions of the packages that compute (COMPUTING_PACKAGES). The code digest decides
whether an interrupted run's checkpoint resumes; whether a result is stale is decided by
what it executed (`_executed`, `_staleness`), and `_adopt` compares a sidecar's code digest
with the one its revision gives, to verify that the run's code was that revision's.
"""

import hashlib
import re

from omegaconf import OmegaConf

from . import _io
from ._checkout import REPO_ROOT

# Keys that change where or how fast a run goes but not what it computes: left out of the
# fingerprint and the checkpoint hash (a resumed run may use another n_jobs). `feeds` holds
# the figures and claims drawn from the results, not the results.
_NON_RESULT_KEYS = ("n_jobs", "restart", "results_dir", "data_dir", "hydra", "profile", "feeds")
MACHINERY = ("__init__.py", "_runner.py", "_config.py", "_trial.py", "_io.py", "_fingerprint.py",
             "conventions.py", "_bootstrap.py")
# Parts of kssc/ that compute no experiment's results (no experiment imports them; a test
# checks): the command line, the pictures and the dask pipeline.
NOT_RESULT_CODE = ("kssc/cli/", "kssc/__main__.py", "kssc/plot.py",
                   "kssc/distributed/")
# The data sets' checksum lists and metadata decide what the loaders return.
DATA_FILES = ("kssc/datasets/checksums", "kssc/datasets/metadata")
COMPUTING_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "faiss-cpu", "pandas")
_IMPORT = re.compile(r"^from (?:experiments\.|\.)(\w+) import"
                     r"|^from (?:experiments|\.) import (\w+)",
                     re.MULTILINE)


def result_config(conf):
    """The part of a config that decides the results (what the fingerprint hashes)."""
    kept = {key: value for key, value in conf.items() if key not in _NON_RESULT_KEYS}
    kept["experiment"] = {k: v for k, v in conf["experiment"].items() if k not in _NON_RESULT_KEYS}
    return kept


def result_sources(name):
    """The files whose code computes experiment `name`'s results: kssc/ (less
    NOT_RESULT_CODE), the data sets' checksum lists and metadata, the runner machinery, the
    experiment's module and the experiments modules it imports."""
    root = REPO_ROOT
    kssc = {path for path in root.joinpath("kssc").rglob("*.py")
            if not path.relative_to(root).as_posix().startswith(NOT_RESULT_CODE)}
    data = {path for folder in DATA_FILES for path in root.joinpath(folder).rglob("*")
            if path.is_file()}
    files = {*kssc, *data, *(root / "experiments" / f for f in MACHINERY)}
    todo = [root / "experiments" / f"{name}.py"]
    while todo:
        path = todo.pop()
        if path in files or not path.exists():
            continue
        files.add(path)
        for groups in _IMPORT.findall(path.read_text()):
            todo += [root / "experiments" / f"{module}.py" for module in groups if module]
    return sorted(files)


def code_digest(name):
    """Hash of the source files and package versions that compute experiment `name`'s
    results."""
    digest = hashlib.sha256()
    for path in result_sources(name):
        digest.update(str(path.relative_to(REPO_ROOT)).encode())
        digest.update(path.read_bytes())
    digest.update(repr(sorted(_io.package_versions(COMPUTING_PACKAGES).items())).encode())
    return digest.hexdigest()[:16]


def fingerprint(cfg):
    """`<config hash>-<code hash>` of the results this config computes with this code."""
    conf = cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)
    return f"{_io.config_hash(result_config(conf))}-{code_digest(conf['experiment']['name'])}"
