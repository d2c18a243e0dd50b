"""The API reference lists every public object, and `make docs` builds without warnings."""

import importlib
import inspect
import re
import subprocess
import sys

import pytest

from experiments._checkout import REPO_ROOT

PACKAGES = ("kssc", "kssc.datasets", "kssc.baselines")


def _listed_in_api():
    """{module: names} of the autosummary entries of docs/api.rst."""
    listed, module = {}, None
    for line in (REPO_ROOT / "docs" / "api.rst").read_text().splitlines():
        current = re.match(r"\.\. currentmodule:: ([\w.]+)", line)
        if current:
            module = current.group(1)
        elif re.match(r"   [A-Za-z_]\w*$", line):
            listed.setdefault(module, set()).add(line.strip())
    return listed


def test_api_reference_lists_every_public_object():
    listed = _listed_in_api()
    for package in PACKAGES:
        module = importlib.import_module(package)
        public = {name for name in module.__all__
                  if inspect.isclass(getattr(module, name))
                  or inspect.isfunction(getattr(module, name))}
        assert listed.get(package, set()) == public, f"docs/api.rst and {package}.__all__ differ"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W", "--keep-going", "-q",
         str(REPO_ROOT / "docs"), str(tmp_path / "html")],
        check=False, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "html" / "generated" / "kssc.KSSC.html").is_file()
