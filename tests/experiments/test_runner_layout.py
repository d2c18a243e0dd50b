"""The runner's layout: experiment modules import only the helpers they call (`_trial`),
the loop (`_runner`) imports the experiments, no import runs both ways, and one run checks
its config, takes its fingerprint and finds its data folder once."""

import ast

from experiments import _config, _runner
from experiments._checkout import REPO_ROOT

EXPERIMENTS_DIR = REPO_ROOT / "experiments"


def local_imports(module):
    """The experiments modules `module` imports (relative or absolute, at any depth)."""
    tree = ast.parse((EXPERIMENTS_DIR / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None or node.module == "experiments":
                found |= {alias.name for alias in node.names}
            elif node.level == 1:
                found.add(node.module.split(".")[0])
            elif node.module and node.module.startswith("experiments."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names
                      if alias.name.startswith("experiments.")}
    return {name for name in found if (EXPERIMENTS_DIR / f"{name}.py").exists()}


def import_graph():
    """Module -> the modules it imports; `_runner` also loads every experiment by name."""
    graph = {path.stem: local_imports(path.stem) for path in EXPERIMENTS_DIR.glob("*.py")}
    graph["_runner"] |= set(_config.experiment_names())
    return graph


def test_experiments_never_import_the_loop_or_the_config_checks():
    graph = import_graph()
    for name in _config.experiment_names():
        assert not graph[name] & {"_runner", "_config", "run", "suite"}, (name, graph[name])


def test_no_import_runs_both_ways():
    graph = import_graph()
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            assert state.get(nxt) != "open", f"import cycle: {' -> '.join([*path, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])


def test_one_run_checks_fingerprints_and_finds_data_once(tmp_path, monkeypatch, toy_config, toy):
    calls = {"check_config": 0, "fingerprint": 0, "data_dir": 0}

    def counted(name):
        original = getattr(_runner, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(_runner, name, wrapper)

    for name in calls:
        counted(name)
    monkeypatch.setattr(_runner, "load", lambda name: toy.TOY)
    frame = _runner.run(toy_config(tmp_path))
    assert len(frame) == 6
    assert calls == {"check_config": 1, "fingerprint": 1, "data_dir": 1}
