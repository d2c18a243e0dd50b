"""Sphinx configuration of the kSSC documentation: the user guide, the API reference, the
command line, the examples and the Markdown notes of docs/ (myst-parser).

`make docs` builds it offline, with warnings as errors.
"""

import importlib
from pathlib import Path

# The API is read from the installed package (`make docs` installs the checkout, editable).
ROOT = Path(__file__).resolve().parents[1]

project = "kssc"
author = "kSSC contributors"
release = version = importlib.import_module("kssc").__version__
copyright = "the kSSC contributors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
# The notes link to each other's sections by their GitHub anchors (`protocol.md#13-...`).
myst_heading_anchors = 4
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False}
html_static_path = []


def _write_gallery(source=ROOT / "examples",
                   target=Path(__file__).parent / "generated" / "examples"):
    """One page per examples/*.py: its docstring, then its code (the scripts are not run here;
    tests/project/test_docs_examples.py runs them)."""
    import ast

    target.mkdir(parents=True, exist_ok=True)
    for script in sorted(source.glob("*.py")):
        title, _, body = ast.get_docstring(ast.parse(script.read_text())).partition("\n")
        page = (f"{title}\n{'=' * len(title)}\n{body}\n\n"
                f"``examples/{script.name}``:\n\n"
                f".. literalinclude:: ../../../examples/{script.name}\n"
                f"   :language: python\n   :lines: {_first_code_line(script)}-\n")
        (target / f"{script.stem}.rst").write_text(page)


def _first_code_line(script):
    """The line after the module docstring (the page shows the docstring as prose)."""
    import ast

    return ast.parse(script.read_text()).body[0].end_lineno + 2


_write_gallery()
