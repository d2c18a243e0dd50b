"""The API reference lists every public object, the index holds an install line, a quick start
that runs and every Markdown note, and `make docs` builds without warnings."""

import importlib
import inspect
import re
import subprocess
import sys
import textwrap

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
    html = tmp_path / "html"
    for name in ("KSSC", "AutoKSSC"):
        page = (html / "generated" / f"kssc.{name}.html").read_text()
        for method in ("fit", "fit_predict", "predict", "get_params"):
            assert f'id="kssc.{name}.{method}"' in page, f"{method} is not on the {name} page"
    for note in NOTES:
        assert (html / f"{note}.html").is_file(), f"docs/{note}.md has no page"


INDEX = (REPO_ROOT / "docs" / "index.rst").read_text()
NOTES = sorted(path.stem for path in (REPO_ROOT / "docs").glob("*.md"))


def test_every_markdown_note_is_in_the_index():
    toctree = set(re.findall(r"^   (\w+)$", INDEX, flags=re.MULTILINE))
    assert NOTES and set(NOTES) <= toctree


def test_index_install_line_and_quick_start(capsys):
    assert "pip install ." in INDEX
    code = re.search(r"\.\. code-block:: python\n\n(.*?)\n\S", INDEX, flags=re.DOTALL).group(1)
    exec(compile(textwrap.dedent(code), "docs/index.rst", "exec"), {"__name__": "index"})
    assert re.fullmatch(r"error \d+\.\d %\n", capsys.readouterr().out)
