"""Tests lean on fixtures, never on each other: no test module imports another test module
(shared support lives in conftest.py fixtures, or, where a name must be importable by a worker
process or a script, in a helper module that is not a test module)."""

import ast
import re

from experiments._checkout import REPO_ROOT

TESTS = REPO_ROOT / "tests"
TEST_MODULES = sorted(TESTS.rglob("test_*.py"))
_IMPORTED_IN_TEXT = re.compile(r"^\s*(?:from|import)\s+([\w.]*test_\w+)", re.M)


def _imports_of_test_modules(path):
    """The test modules `path` imports: by an import statement, or in the text of a script it
    runs (a string holding `from test_x import ...`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [f"{node.module}.{alias.name}" if node.module else
                                           alias.name for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = _IMPORTED_IN_TEXT.findall(node.value)
        else:
            continue
        found += [name for name in names if _is_test_module(name)]
    return found


def _is_test_module(dotted):
    parts = dotted.split(".")
    return parts[0] == "tests" or parts[0] == "conftest" or any(
        part.startswith("test_") for part in parts)


def test_the_check_sees_an_import_of_a_test_module(tmp_path):
    module = tmp_path / "test_a.py"
    b, c, d = "test_b", "tests.kssc.test_c", "test_d"  # apart: this module imports none
    module.write_text(f"import os\nfrom {b} import helper\nimport {c}\n"
                      "from toy_experiment import TOY\n"
                      f"SCRIPT = 'import sys\\nfrom {d} import run\\n'\n")
    assert _imports_of_test_modules(module) == ["test_b", "test_b.helper", "tests.kssc.test_c",
                                                "test_d"]


def test_no_test_module_imports_another():
    assert TEST_MODULES
    offenders = {path.relative_to(REPO_ROOT).as_posix(): names for path in TEST_MODULES
                 if (names := _imports_of_test_modules(path))}
    assert not offenders, f"test modules importing test modules (use a fixture): {offenders}"
