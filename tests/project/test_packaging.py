"""Packaging: declared dependencies match the imports, and the wheel installs on its own."""

import ast
import re
import subprocess
import sys
import textwrap
import venv
import zipfile

import pytest

tomllib = pytest.importorskip("tomllib")
from packaging.requirements import Requirement  # noqa: E402  (after the skip above)

from experiments._checkout import REPO_ROOT  # noqa: E402

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
CORE = {Requirement(r).name.lower(): Requirement(r) for r in PYPROJECT["project"]["dependencies"]}
EXTRAS = {Requirement(r).name.lower()
          for reqs in PYPROJECT["project"]["optional-dependencies"].values() for r in reqs}
# Import name -> distribution name, where they differ.
DISTRIBUTION = {"sklearn": "scikit-learn", "PIL": "pillow", "faiss": "faiss-cpu",
                "hydra": "hydra-core"}
FIRST_PARTY = {"kssc", "experiments"}


def _imports(path):
    """(module, guarded) for every absolute import in `path`; guarded: inside a function or
    a try that catches ImportError, i.e. optional or lazy."""
    found = []

    def visit(node, guarded):
        if isinstance(node, ast.Import):
            found.extend((alias.name, guarded) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.extend((f"{node.module}.{alias.name}", guarded) for alias in node.names)
        inner = guarded or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (
            isinstance(node, ast.Try) and any(
                "ImportError" in ast.unparse(h.type) for h in node.handlers if h.type))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def _library_imports(folders=("kssc",)):
    for folder in folders:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            for module, guarded in _imports(path):
                yield path.relative_to(REPO_ROOT), module, guarded


def _third_party(module):
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top in FIRST_PARTY:
        return None
    return DISTRIBUTION.get(top, top).lower()


def test_every_import_of_the_library_is_declared():
    for path, module, guarded in _library_imports():
        dist = _third_party(module)
        if dist is None:
            continue
        if guarded:
            assert dist in CORE or dist in EXTRAS, f"{path}: {module} is in no extra"
        else:
            assert dist in CORE, f"{path}: {module} is imported but not a core dependency"


def test_every_import_of_the_experiments_is_in_the_experiments_extra():
    extra = {Requirement(r).name.lower()
             for r in PYPROJECT["project"]["optional-dependencies"]["experiments"]}
    for path, module, _ in _library_imports(["experiments"]):
        dist = _third_party(module)
        assert dist is None or dist in CORE or dist in extra, f"{path}: {module}"


def test_every_package_and_data_file_is_installed():
    """setuptools' discovery, as pyproject configures it, finds every package under kssc/
    (those the module move adds included), and package-data lists every other file there."""
    setuptools = pytest.importorskip("setuptools")
    config = PYPROJECT["tool"]["setuptools"]
    found = set(setuptools.find_namespace_packages(REPO_ROOT, **config["packages"]["find"]))
    folders = {path.parent for path in (REPO_ROOT / "kssc").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    packages = {".".join(folder.relative_to(REPO_ROOT).parts) for folder in folders}
    assert packages <= found, "packages setuptools would leave out"
    for path in (REPO_ROOT / "kssc").rglob("*"):
        if path.is_file() and path.suffix != ".py" and "__pycache__" not in path.parts:
            package = ".".join(path.parent.relative_to(REPO_ROOT).parts)
            patterns = config["package-data"].get(package, [])
            assert any(path.match(pattern) for pattern in patterns), \
                f"{path.relative_to(REPO_ROOT)} is in no package-data pattern"


def test_experiment_packages_are_not_core():
    assert not {"hydra-core", "pandas", "matplotlib", "tqdm"} & set(CORE)


def test_private_scikit_learn_imports_have_an_upper_bound():
    private = [(path, module) for path, module, _ in _library_imports()
               if module.startswith("sklearn.") and any(
                   part.startswith("_") for part in module.split(".")[1:])]
    if private:
        assert any(spec.operator in ("<", "<=", "~=", "==")
                   for spec in CORE["scikit-learn"].specifier), private


def _run(args, cwd):
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


_SMOKE = textwrap.dedent("""
    import importlib.metadata
    import importlib.util

    import numpy as np

    import kssc
    from kssc import KSSC
    from kssc.baselines import SSC

    assert kssc.__version__ == importlib.metadata.version("kssc")
    absent = [m for m in ("baselines", "hydra", "pandas", "matplotlib", "tqdm")
              if importlib.util.find_spec(m) is not None]
    assert not absent, absent
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(20, 2) @ rng.randn(2, 8) for _ in range(2)])
    y = np.repeat([0, 1], 20)
    for model in (KSSC(2, n_neighbors=5, random_state=0, verbose=1), SSC(2, random_state=0)):
        assert kssc.clustering_error(y, model.fit_predict(X)) == 0, model
    np.save("points.npy", X)
""")


@pytest.mark.slow
def test_wheel_installs_alone_in_a_clean_environment(tmp_path):
    """`pip wheel .` without a packaging warning, then a fresh venv with the core
    dependencies only (from the index)."""
    built = _run([sys.executable, "-m", "pip", "wheel", REPO_ROOT, "--no-deps", "--verbose",
                  "-w", tmp_path / "dist"], cwd=tmp_path)
    warned = re.findall(r"\w+Warning: .*", built.stdout + built.stderr)
    assert not warned, "\n".join(warned)
    wheel = next((tmp_path / "dist").glob("kssc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("baselines/")]
    assert "kssc/baselines/__init__.py" in names and "kssc/cli/_main.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "kssc = kssc.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()

    venv.create(tmp_path / "env", with_pip=True)
    bin_dir = tmp_path / "env" / ("Scripts" if sys.platform == "win32" else "bin")
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", wheel], cwd=tmp_path)
    smoke = _run([bin_dir / "python", "-c", _SMOKE], cwd=tmp_path)
    assert "[KSSC] coefficients: 1/1 chunks" in smoke.stderr  # plain lines: no tqdm here
    _run([bin_dir / "kssc", "cluster", "points.npy", "-k", "2", "--method", "ssc"],
         cwd=tmp_path)
    assert (tmp_path / "points.labels.csv").is_file()
