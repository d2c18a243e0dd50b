"""The layering contract (pyproject.toml's [tool.importlinter]) holds: the library imports no
experiment or cross-check code, and no package has an import cycle among its modules."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from experiments._checkout import REPO_ROOT


def test_import_contracts_are_kept():
    command = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    result = subprocess.run([command, "--no-cache"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_the_distributed_code_imports_no_private_name_of_the_library():
    # It runs the library's stages with their public defaults (kssc.neighbors._ann's
    # JOIN_LISTS_PER_SQRT_N, JOIN_FIRST_PROBE, ...), not with constants the stages keep to
    # themselves.
    private = []
    for path in (REPO_ROOT / "kssc" / "distributed").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            outside = isinstance(node, ast.ImportFrom) and (
                node.level > 1 or (node.module or "").startswith("kssc."))
            if outside and not (node.module or "").startswith("kssc.distributed"):
                parts = (node.module or "").removeprefix("kssc.").split(".")
                package = REPO_ROOT.joinpath("kssc", *parts)
                private += [f"{path.name}: {alias.name}" for alias in node.names
                            if alias.name.startswith("_")
                            and not (package / f"{alias.name}.py").exists()]  # a module
    assert not private, private
