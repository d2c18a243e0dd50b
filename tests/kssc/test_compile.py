"""`kssc compile`: every numba kernel of the package in the on-disk cache before a fit."""

import os
import subprocess
import sys

import pytest

from experiments._checkout import REPO_ROOT
from kssc.cli import _compile, main
from kssc.coding._kernels import NO_FILL

# Every numba dispatcher the package defines, and whether numba's on-disk cache holds it.
_LIST_UNCACHED = """
import importlib, pkgutil
import kssc
from numba.core.registry import CPUDispatcher
from kssc.coding._kernels import is_cached
uncached = []
for info in pkgutil.walk_packages(kssc.__path__, "kssc."):
    if info.name.startswith("kssc.distributed") or info.name == "kssc.__main__":
        continue  # an optional extra whose tasks call the kernels below; the command
    module = importlib.import_module(info.name)
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value.__module__ == info.name:
            if not is_cached(value):
                uncached.append(f"{info.name}.{name}")
print(" ".join(sorted(uncached)))
"""


# The calls of real fits after the command: every numba dispatcher they reached must have
# loaded its code from the cache (a miss is a signature the command did not compile, which
# the fit then compiled in-process: numbers that depend on the cache's state).
_LIST_MISSES = """
import importlib, pkgutil
import numpy as np
import kssc
from _graphs import loose_clusters_ncut
from numba.core.registry import CPUDispatcher
from kssc import KSSC
from kssc.datasets import make_union_of_subspaces
from kssc.estimator import PAPER_SETTING
from kssc.spectral._clustering import top_eigenvectors
X, _ = make_union_of_subspaces(600, ambient_dim=30, n_subspaces=3, subspace_dims=[4],
                               noise=0.01, random_state=0)
KSSC(3, random_state=0).fit(X)
KSSC(3, random_state=0, **PAPER_SETTING).fit(X)
P = loose_clusters_ncut()
top_eigenvectors(P, 3, 0, solver="multilevel")
try:  # the distributed fit's share of the coarse matrix, from a row block's numbers
    from kssc.distributed._coarse import coarse_rows
except ImportError:  # without the distributed extra
    pass
else:
    own = np.column_stack([np.arange(3000) // 10, np.ones(3000)])
    coarse_rows(P.astype(np.float32), own, 300, own)
missed = []
for info in pkgutil.walk_packages(kssc.__path__, "kssc."):
    if info.name.startswith("kssc.distributed") or info.name == "kssc.__main__":
        continue
    for name, value in vars(importlib.import_module(info.name)).items():
        if isinstance(value, CPUDispatcher) and sum(value._cache_misses.values()):
            missed.append(f"{info.name}.{name}")
print(" ".join(sorted(missed)))
"""


def _run(args, cache):
    # No cache fill on import: the listing reads the cache as the command left it.
    # The tests folder on the path for the scripts' shared graphs (tests/_graphs.py).
    path = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])
    env = {"NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": path,
           "PATH": os.environ.get("PATH", ""), NO_FILL: "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, check=True)


@pytest.mark.slow
def test_compile_leaves_every_kernel_of_the_package_cached_for_the_signatures_fits_use(tmp_path):
    before = _run(["-c", _LIST_UNCACHED], tmp_path).stdout.split()
    assert "kssc.coding._point_kernels.solve_blocks" in before  # an empty cache reads empty
    compiled = _run(["-m", "kssc", "compile"], tmp_path)
    assert "every kernel family cached" in compiled.stderr
    assert _run(["-c", _LIST_UNCACHED], tmp_path).stdout.split() == []
    assert _run(["-c", _LIST_MISSES], tmp_path).stdout.split() == []


def test_compile_command_runs_every_step_and_reports_each(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(_compile, "steps",
                        lambda: [("first family", lambda: ran.append(1)),
                                 ("second family", lambda: ran.append(2))])
    assert main(["compile"]) == 0
    err = capsys.readouterr().err
    assert ran == [1, 2]
    assert "kssc compile: first family:" in err and "kssc compile: second family:" in err
    assert "2 kernel families" in err
