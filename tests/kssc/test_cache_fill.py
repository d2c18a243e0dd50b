"""Kernels run from numba's on-disk cache: a process that finds it cold fills it first
(`kssc.coding._kernels.fill_cache`), so its numbers are those of a warm process."""

import os
import subprocess
import sys

import numpy as np
import pytest

from experiments._checkout import REPO_ROOT
from kssc.coding import _kernels, _point_kernels


@pytest.fixture
def calls(monkeypatch):
    """The commands `fill_cache` runs (none is run)."""
    ran = []

    def run(command, env, **kwargs):
        ran.append((command, env))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(_kernels.subprocess, "run", run)
    monkeypatch.delenv(_kernels.NO_FILL, raising=False)
    return ran


def test_a_cold_cache_is_filled_by_the_compile_command(monkeypatch, calls, capsys):
    monkeypatch.setattr(_kernels, "is_cached",
                        lambda kernel: kernel is not _point_kernels.solve_range)
    _kernels.fill_cache(_point_kernels.__name__)
    [(command, env)] = calls
    assert command == [sys.executable, "-m", "kssc", "compile"]
    assert env[_kernels.NO_FILL] == "1"  # the command does not fill again on its imports
    assert str(REPO_ROOT) in env["PYTHONPATH"].split(os.pathsep)  # this kssc, not another
    assert "compiling the numba kernels into their on-disk cache" in capsys.readouterr().err


def test_a_warm_cache_or_the_compile_command_itself_runs_nothing(monkeypatch, calls):
    _kernels.fill_cache(_point_kernels.__name__)  # the test session's cache is warm
    monkeypatch.setattr(_kernels, "is_cached", lambda kernel: False)
    monkeypatch.setenv(_kernels.NO_FILL, "1")
    _kernels.fill_cache(_point_kernels.__name__)
    assert calls == []


def test_the_compile_command_does_not_fill_the_cache_on_its_own_imports(monkeypatch, calls):
    monkeypatch.setattr(_kernels, "is_cached", lambda kernel: False)
    python = sys.executable
    for orig_argv, argv, itself in [
            ([python, "-m", "kssc", "compile"], ["-m", "compile"], True),
            ([python, "/venv/bin/kssc", "compile"], ["/venv/bin/kssc", "compile"], True),
            ([python, "-m", "kssc", "cluster", "X.npy"], ["-m", "cluster", "X.npy"], False),
            ([python, "-m", "benchmarks.bench_kssc", "compile"], ["-m", "compile"], False),
            ([python, "script.py", "compile"], ["script.py", "compile"], False)]:
        assert _kernels.running_compile(orig_argv, argv) is itself
    monkeypatch.setattr(sys, "orig_argv", [python, "-m", "kssc", "compile"])
    _kernels.fill_cache(_point_kernels.__name__)
    assert calls == []
    monkeypatch.setattr(sys, "orig_argv", [python, "-m", "pytest"])
    _kernels.fill_cache(_point_kernels.__name__)
    assert len(calls) == 1


def test_a_failed_fill_is_said_and_the_kernels_compile_in_process(monkeypatch, capsys):
    monkeypatch.delenv(_kernels.NO_FILL, raising=False)
    monkeypatch.setattr(_kernels, "is_cached", lambda kernel: False)
    monkeypatch.setattr(_kernels.subprocess, "run",
                        lambda command, **kwargs: subprocess.CompletedProcess(command, 3))
    _kernels.fill_cache(_point_kernels.__name__)
    assert "`kssc compile` failed (exit 3); the kernels compile in this process" in \
        capsys.readouterr().err


# FISTA coefficients of a 600-point union (the synthetic_dvsn trial whose clustering moved),
# written to the file argv[1] in the bytes numpy gives them.
_COEFFICIENTS = """
import sys
import numpy as np
from kssc.coding.representation import kssc_coefficients
from kssc.datasets import make_subspaces
from kssc.neighbors import nearest_neighbors
X = make_subspaces(5, 3, 120, 100, noise=0.01, random_state=0)[0]
X = X / np.linalg.norm(X, axis=1, keepdims=True)
indices = nearest_neighbors(X, 12)[0]
coef = kssc_coefficients(X, indices, 0.1, max_iter=200)[0]
np.save(sys.argv[1], coef)
"""


@pytest.mark.slow
def test_a_cold_cache_process_computes_the_warm_ones_coefficients_to_the_bit(tmp_path):
    # numba optimises in-process compiled code otherwise than code loaded from its cache:
    # before the fill, a cold process's coefficients differed from a warm one's in the last
    # bits (5.7e-14 on the trial above).
    def coefficients(name, **env):
        subprocess.run([sys.executable, "-c", _COEFFICIENTS, str(tmp_path / name)],
                       cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **env},
                       check=True, capture_output=True)
        return np.load(tmp_path / f"{name}.npy")

    warm = coefficients("warm")
    cold = coefficients("cold", NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert (tmp_path / "cache").is_dir()  # it filled a cache of its own
    np.testing.assert_array_equal(cold, warm)


def _kernel_modules():
    """(module, its source) of every kssc module that defines a numba kernel."""
    import importlib
    import inspect
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import kssc

    found = []
    for info in pkgutil.walk_packages(kssc.__path__, "kssc."):
        if info.name.startswith("kssc.distributed") or info.name == "kssc.__main__":
            continue  # an optional extra; its tasks run the kernels of the modules below
        module = importlib.import_module(info.name)
        if any(isinstance(value, CPUDispatcher) and value.__module__ == info.name
               for value in vars(module).values()):
            found.append((info.name, inspect.getsource(module)))
    return found


def test_every_kernel_module_fills_the_cache_before_its_kernels_run():
    import ast

    modules = _kernel_modules()
    assert "kssc.coding._point_kernels" in dict(modules)  # the search finds kernel modules
    for name, source in modules:
        if name == "kssc.coding._kernels":
            continue  # fill_cache's own module: its building blocks run inside the others'
        calls = [node.value for node in ast.parse(source).body if isinstance(node, ast.Expr)
                 and isinstance(node.value, ast.Call)]
        assert any(getattr(call.func, "id", None) == "fill_cache"
                   and [ast.unparse(arg) for arg in call.args] == ["__name__"]
                   for call in calls), f"{name} does not call fill_cache(__name__)"
