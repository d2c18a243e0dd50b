"""The layering contract (pyproject.toml's [tool.importlinter]) holds: the library imports no
experiment or cross-check code, and no package has an import cycle among its modules."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import REPO_ROOT


def test_import_contracts_are_kept():
    command = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    result = subprocess.run([command, "--no-cache"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout
