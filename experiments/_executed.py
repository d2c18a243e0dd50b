"""What a result executed: the execution record a sidecar keeps, and what changed since.

While a result is computed, `tracing()` records every code object of the project's folders
(PROJECT_FOLDERS) that runs (a global `sys.settrace`/`threading.settrace` function that sees
calls only, no line events), the data sets' checksum lists and metadata the run opened (an
audit hook), and what a project subprocess (a `-m` module run, a dask worker process)
executed: it traces itself through a `sitecustomize` put first on its PYTHONPATH and hands
its record back when it exits; a record taken while one that ran project code has not
(`record` inside the trace, as a producer's sidecar is) says so, and is stale.

`record(trace)` turns that into the sidecar's `executed`:

- `functions`: `{"module:qualname": digest}` of each top-level definition that ran (a nested
  function, comprehension or lambda belongs to its enclosing def; a method is
  `Class.method` and also covers its class's non-method body). The digest is that of the
  normalised source: `ast.dump` of the def without docstrings, positions or comments, so a
  reformat, a comment or a docstring edit changes nothing. The numba kernels an executed
  function references (the tracer cannot see compiled code) join, through their `py_func`,
  recursively;
- `constants`: `{"module:NAME": digest of repr}` of the module-level values of plain types
  (numbers, strings, tuples, small arrays, ...) the executed code and kernels read, in their
  module or through a referenced project module;
- `data`: `{path: SHA-256}` of the data sets' checksum lists and metadata opened;
- `packages`: the versions of the packages that compute (RECORD_PACKAGES).

`changes(executed)` lists what differs now. A function is looked up by its module and
qualname, and, when its module no longer defines it (a module moved into a sub-package), by
its qualname in any project module with the same digest: a pure move keeps a result current.
"""

import ast
import copy
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
import threading
import types
from contextlib import contextmanager
from pathlib import Path

from ._checkout import REPO_ROOT

PROJECT_FOLDERS = ("kssc", "experiments", "crosscheck", "benchmarks")
RECORD_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "faiss-cpu", "pandas", "pyamg")
# Files a loader reads that decide what it returns (the data sets' registries).
DATA_FOLDERS = ("kssc/datasets/checksums", "kssc/datasets/metadata")
# A numpy array above this size is not a constant of the code but data.
MAX_ARRAY = 100_000
_ENV_DIR = "KSSC_EXECUTED_DIR"
# The parsed definitions of this checkout, per file size and mtime (not committed); _RULE
# changes when the normalisation does.
INDEX_CACHE = REPO_ROOT / ".cache" / "executed-index.json"
_RULE = 2


# Standard library only (a traced subprocess imports this module first).

# --------------------------------------------------------------------------- digests

def package_versions(names):
    """{distribution: version, or None when not installed} of `names`."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def _sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write_json(obj, path):
    """Write JSON atomically (a temporary file in the same folder, then os.replace)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=Path(path).parent, suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        json.dump(obj, out)
    os.replace(tmp, path)


def _strip_docstrings(node):
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = sub.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(
                    body[0].value.value, str):
                sub.body = body[1:] or [ast.Pass()]
    return node


def _digest(*parts):
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _dump(node):
    """The normalised source of a node whose docstrings are stripped already."""
    return ast.dump(node, include_attributes=False)


def _skeleton(cls):
    """A class without its methods: decorators, bases and class-level statements."""
    bare = copy.copy(cls)
    bare.body = [item for item in cls.body
                 if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return _dump(bare)


def _first_line(node):
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def definitions(source):
    """[(first line, last line, qualname, digest)] of a module's top-level functions, its
    classes (their non-method body) and their methods, from its source."""
    return _definitions(_strip_docstrings(ast.parse(source)))


def _definitions(tree):
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((_first_line(node), node.end_lineno, node.name, _digest(_dump(node))))
        elif isinstance(node, ast.ClassDef):
            skeleton = _skeleton(node)
            found.append((_first_line(node), node.end_lineno, node.name, _digest(skeleton)))
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.append((_first_line(item), item.end_lineno, f"{node.name}.{item.name}",
                                  _digest(_dump(item), skeleton)))
    return found


@functools.lru_cache(maxsize=4096)
def module_name(path, root=REPO_ROOT):
    """`kssc.coding.fista` for <root>/kssc/fista.py (`pkg` for pkg/__init__.py); None outside the
    project's folders."""
    if not path:
        return None
    try:
        rel = Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        return None
    if not rel.parts or rel.parts[0] not in PROJECT_FOLDERS or rel.suffix != ".py":
        return None
    parts = rel.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _assignments(tree):
    """{NAME: digest of the module-level statements assigning NAME} of a parsed module."""
    found = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for name in {n.id for target in targets for n in ast.walk(target)
                     if isinstance(n, ast.Name)}:
            found.setdefault(name, []).append(_dump(node))
    return {name: "source:" + _digest(*dumps) for name, dumps in found.items()}


def _parse(path):
    """A module's definitions and its module-level assignments (`_assignments`)."""
    try:
        tree = _strip_docstrings(ast.parse(Path(path).read_text()))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {"spans": [], "assigned": {}}
    return {"spans": _definitions(tree), "assigned": _assignments(tree)}


class Index:
    """The definitions of every project module of a tree, parsed once:
    `functions[module][qualname] = digest`, `by_name[qualname] = {module: digest}` and
    `assigned[NAME] = {module: digest of its module-level assignment of NAME}`."""

    def __init__(self, root=REPO_ROOT, cache=None):
        self.root = Path(root)
        self.functions, self.by_name, self.assigned, self.spans = {}, {}, {}, {}
        cache = INDEX_CACHE if cache is None and self.root == REPO_ROOT else cache
        try:
            parsed = json.loads(Path(cache).read_text()) if cache else {}
        except (OSError, json.JSONDecodeError):
            parsed = {}
        fresh = {}
        for folder in PROJECT_FOLDERS:
            for path in sorted(self.root.joinpath(folder).rglob("*.py")):
                rel, stat = path.relative_to(self.root).as_posix(), path.stat()
                stamp = [_RULE, stat.st_size, stat.st_mtime_ns]
                entry = parsed.get(rel)
                if entry is None or entry["stamp"] != stamp:
                    entry = {"stamp": stamp, **_parse(path)}
                fresh[rel] = entry
                self.add(module_name(path, self.root), entry)
        if cache and fresh != parsed:
            _write_json(fresh, cache)

    def add(self, module, entry):
        self.spans[module] = [tuple(span) for span in entry["spans"]]
        self.functions[module] = {qualname: digest for _, _, qualname, digest in entry["spans"]}
        for qualname, digest in self.functions[module].items():
            self.by_name.setdefault(qualname, {})[module] = digest
        for name, digest in entry["assigned"].items():
            self.assigned.setdefault(name, {})[module] = digest

    def enclosing(self, module, line):
        """(qualname, digest) of the innermost definition of `module` holding `line`."""
        best = None
        for first, last, qualname, digest in self.spans.get(module, ()):
            if first <= line <= last and (best is None or first >= best[0]):
                best = (first, qualname, digest)
        return None if best is None else best[1:]


# --------------------------------------------------------------------------- constants

def _plain(value, depth=0):
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    if depth > 3:
        return False
    if isinstance(value, (tuple, list, frozenset, set)):
        return len(value) <= 10_000 and all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= 10_000 and all(_plain(k, depth + 1) and _plain(v, depth + 1)
                                            for k, v in value.items())
    return False


def value_digest(value):
    """Digest of a module-level constant (repr; an array's dtype, shape and bytes), or None
    when the value is not a constant (a function, a class, a module, large data...)."""
    kind = type(value).__module__
    if kind == "numpy" and hasattr(value, "dtype") and hasattr(value, "tobytes"):
        if getattr(value, "size", 0) > MAX_ARRAY or value.dtype == object:
            return None
        return _digest(str(value.dtype), repr(getattr(value, "shape", ())),
                       hashlib.sha256(value.tobytes()).hexdigest())
    if isinstance(value, set):  # mutable state (a cache, a registry filled at run time)
        return None
    if isinstance(value, frozenset):
        return _digest(repr(sorted(map(repr, value)))) if _plain(value) else None
    return _digest(repr(value)) if _plain(value) else None


def _dispatcher_function(value):
    """The Python function of a numba dispatcher, else None."""
    if type(value).__module__.startswith("numba") and hasattr(value, "py_func"):
        return value.py_func
    return None


# --------------------------------------------------------------------------- tracing

class Trace:
    """The code objects, data files and subprocess records of one traced run.

    `folder` is where the traced subprocesses hand back their records; a subprocess's own
    trace has a `marker` there, a file it writes when it first runs project code and removes
    once its record is in place, so that a record taken while a project subprocess still
    runs (or after one was killed) says so (`unfinished`)."""

    def __init__(self, folder=None, marker=None):
        self.codes = {}
        self.data = set()
        self.children = []
        self.sidecars = []  # the sidecars moved into place during the trace (`os.replace`)
        self.earlier = {}  # sidecar path -> the `commands` it held when first read
        self.prefixes = tuple(str(REPO_ROOT / folder) + os.sep for folder in PROJECT_FOLDERS)
        self.folder, self.marker = folder, marker
        self.gathered = set()

    def call(self, frame, event, arg):
        code = frame.f_code
        if id(code) not in self.codes:
            self.codes[id(code)] = code
            if self.marker is not None and code.co_filename.startswith(self.prefixes) \
                    and code.co_filename != __file__:
                Path(self.marker).touch()
                self.marker = None
        return None

    def gather(self):
        """Take in the records the subprocesses have handed back so far; the number of
        project subprocesses that have not (still running, or killed)."""
        if self.folder is None or not os.path.isdir(self.folder):
            return 0
        for path in sorted(Path(self.folder).glob("*.json")):
            self.children.append(json.loads(path.read_text()))
            self.gathered.add(path.stem)
            path.unlink()
        return sum(path.stem not in self.gathered
                   for path in Path(self.folder).glob(f"*{_MARKER}"))

    def project_codes(self):
        # A snapshot: the trace may still be running (a producer's sidecar is written in it).
        return [code for code in list(self.codes.values())
                if code.co_filename.startswith(self.prefixes)]


_ACTIVE = []
_HOOKED = []


def current():
    """The innermost trace running in this process, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


SIDECAR_SUFFIX = ".meta.json"
_READING = []


def _audit(event, args):
    if not _ACTIVE or len(args) < 2:
        return
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        path = os.path.abspath(os.fspath(args[0]))
        for folder in DATA_FOLDERS:
            if path.startswith(str(REPO_ROOT / folder) + os.sep):
                for trace in _ACTIVE:
                    trace.data.add(path)
        if (path.endswith(SIDECAR_SUFFIX) and args[1] in (None, "r", "rb") and not _READING
                and any(path not in trace.earlier for trace in _ACTIVE)):
            _note_earlier(path)
    elif event == "os.rename" and isinstance(args[1], (str, os.PathLike)):
        path = os.path.abspath(os.fspath(args[1]))
        if path.endswith(SIDECAR_SUFFIX):
            for trace in _ACTIVE:
                trace.sidecars.append(path)


def _note_earlier(path):
    """Keep the `commands` of a sidecar read before the traced run replaces it (a producer
    that resumes its rows reads the earlier sidecar first)."""
    _READING.append(True)  # the read below opens the file again
    try:
        commands = json.loads(Path(path).read_text()).get("commands")
    except (OSError, ValueError, AttributeError):
        commands = None
    finally:
        _READING.pop()
    for trace in _ACTIVE:
        trace.earlier.setdefault(path, commands)


def _forget_read_lists():
    """Empty the caches of the data sets' checksum lists and sizes, so that a block that reads
    them opens the files inside its trace (a list read earlier in the process, cached, would
    else be missing from the record)."""
    paths = sys.modules.get("kssc.datasets._paths")
    for name in ("read_checksums", "read_sizes"):
        clear = getattr(getattr(paths, name, None), "cache_clear", None)
        if clear is not None:
            clear()


@contextmanager
def tracing(marker=None):
    """Trace the block: yields a `Trace` (pass it to `record`). Traces nest (the inner one
    also feeds the outer). `marker`: a traced subprocess's (see `Trace`)."""
    children = tempfile.mkdtemp(prefix="executed-")
    trace = Trace(children, marker)
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    _forget_read_lists()
    outer = sys.gettrace()
    saved = {key: os.environ.get(key) for key in ("PYTHONPATH", _ENV_DIR)}
    _write_sitecustomize(children)
    os.environ[_ENV_DIR] = children
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [children, str(REPO_ROOT),
                                                             saved["PYTHONPATH"]]))

    def both(frame, event, arg):
        trace.call(frame, event, arg)
        return outer(frame, event, arg) if outer is not None else None

    function = trace.call if outer is None else both
    _ACTIVE.append(trace)
    threading.settrace(function)
    sys.settrace(function)
    try:
        yield trace
    finally:
        sys.settrace(outer)
        threading.settrace(outer)
        _ACTIVE.remove(trace)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        trace.gather()
        # A subprocess that outlives the trace finds no folder and keeps its record.
        shutil.rmtree(children, ignore_errors=True)


_MARKER = ".running"
_SITECUSTOMIZE = """\
import atexit, json, os, time
from experiments import _executed
_name = os.path.join(os.environ["{env}"], f"{{os.getpid()}}-{{time.time_ns()}}")
_context = _executed.tracing(_name + "{marker}")
_trace = _context.__enter__()
def _dump():
    _context.__exit__(None, None, None)
    try:
        with open(_name + ".part", "w") as out:
            json.dump(_executed.record(_trace), out)
        os.replace(_name + ".part", _name + ".json")
        if os.path.exists(_name + "{marker}"):
            os.unlink(_name + "{marker}")
    except OSError:  # the tracing run has ended: nobody reads this record
        pass
atexit.register(_dump)
"""


def _write_sitecustomize(folder):
    Path(folder, "sitecustomize.py").write_text(_SITECUSTOMIZE.format(env=_ENV_DIR,
                                                                      marker=_MARKER))


# --------------------------------------------------------------------------- the record

def _nested(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def _modules_by_file():
    return {module.__file__: module for module in list(sys.modules.values())
            if isinstance(getattr(module, "__file__", None), str)}


@functools.lru_cache(maxsize=1)
def _installed_versions():
    return package_versions(RECORD_PACKAGES)


def _is_project_module(value):
    return isinstance(value, types.ModuleType) and isinstance(
        getattr(value, "__file__", None), str) and module_name(value.__file__) is not None


_RECORDS = {}


def record(trace):
    """The sidecar's `executed` of a finished trace (see the module docstring).

    The records the subprocesses have handed back so far join (a producer writes its
    sidecar inside its trace, after its worker processes have ended); `unfinished` counts
    the project subprocesses that had not (present only when there are any: `changes` then
    calls the result stale).

    Within a process, traces that ran the same code objects and read the same data files
    give one record, computed once (a run of 15,000 small trials records each trial)."""
    unfinished = trace.gather()
    key = (frozenset(trace.project_codes()), frozenset(trace.data),
           json.dumps(trace.children, sort_keys=True))
    if key not in _RECORDS:
        _RECORDS[key] = _record(trace)
    found = copy.deepcopy(_RECORDS[key])
    if unfinished:
        found["unfinished"] = found.get("unfinished", 0) + unfinished
    return found


def _record(trace):
    """`record` computed: the names each executed code object uses, followed to the project's
    functions, kernels and constants they reach.

    A name an executed code object uses is looked up in its module's globals, and, as an
    attribute, in every project module the executed code references (globally or by an
    import inside a function: `kernels = _compiled(); kernels.solve_blocks(...)` reaches the
    kernel through a local variable, so the lookup is over all referenced modules: it may
    record more than ran, never less)."""
    functions, constants = {}, {}
    live = _modules_by_file()
    todo = [(code, getattr(live.get(code.co_filename), "__dict__", {}))
            for code in trace.project_codes()]
    done, modules, names, checked = set(), {}, set(), set()

    def consider(owner, attr, item):
        kernel = _dispatcher_function(item)
        if kernel is not None:
            todo.extend((sub, kernel.__globals__) for sub in _nested(kernel.__code__))
        elif _is_project_module(sys.modules.get(owner)) and not _LIVE.rebound(owner, attr):
            # A list or dict may be filled at run time (a cache): digested by the source of
            # its module-level assignment, not by its value.
            digest = _LIVE.source(owner, attr) if isinstance(item, (list, dict)) else \
                value_digest(item)
            if digest is not None:
                constants[f"{owner}:{attr}"] = digest

    while todo:
        while todo:
            code, namespace = todo.pop()
            module = module_name(code.co_filename)
            if id(code) in done or module is None or module == __name__:
                continue
            done.add(id(code))
            found = _LIVE.enclosing(code.co_filename, code.co_firstlineno)
            if found is not None:
                functions[f"{module}:{found[0]}"] = found[1]
            package = module if code.co_filename.endswith("__init__.py") else \
                module.rpartition(".")[0]
            for name in code.co_names:
                if name.startswith("__"):
                    continue
                names.add(name)
                # A global, or a module imported inside the function (`from . import x`).
                value = namespace.get(name, sys.modules.get(f"{package}.{name}",
                                                            sys.modules.get(name)))
                if _is_project_module(value):
                    modules[value.__name__] = value
                elif value is not None and (module, name) not in checked:
                    checked.add((module, name))
                    consider(module, name, value)
        for owner, value in list(modules.items()):
            for attr in names:
                if (owner, attr) not in checked and hasattr(value, attr):
                    checked.add((owner, attr))
                    item = getattr(value, attr)
                    if _is_project_module(item):
                        modules[item.__name__] = item
                    else:
                        consider(owner, attr, item)
    data = {Path(path).relative_to(REPO_ROOT).as_posix(): _sha256_file(path)
            for path in sorted(trace.data) if Path(path).is_file()}
    executed = {"functions": dict(sorted(functions.items())),
                "constants": dict(sorted(constants.items())), "data": data,
                "packages": _installed_versions()}
    return merge(executed, *trace.children)


class _LiveIndex:
    """Definitions of the files a trace ran, and the names their functions rebind (`global
    x`: state, not constants), parsed on first use."""

    def __init__(self):
        self.spans, self.state, self.assigned = {}, {}, {}

    def _load(self, path):
        if path not in self.spans:
            try:
                tree = _strip_docstrings(ast.parse(Path(path).read_text()))
            except (OSError, SyntaxError, UnicodeDecodeError):
                tree = ast.Module(body=[], type_ignores=[])
            self.spans[path] = _definitions(tree)
            self.assigned[path] = _assignments(tree)
            self.state[path] = {name for node in ast.walk(tree) if isinstance(node, ast.Global)
                                for name in node.names}

    def rebound(self, module, name):
        path = getattr(sys.modules.get(module), "__file__", None)
        if path is None:
            return False
        self._load(path)
        return name in self.state[path]

    def source(self, module, name):
        """The digest of `module`'s module-level assignment of `name`, or None."""
        path = getattr(sys.modules.get(module), "__file__", None)
        if path is None:
            return None
        self._load(path)
        return self.assigned[path].get(name)

    def enclosing(self, path, line):
        self._load(path)
        best = None
        for first, last, qualname, digest in self.spans[path]:
            if first <= line <= last and (best is None or first >= best[0]):
                best = (first, qualname, digest)
        return None if best is None else best[1:]


_LIVE = _LiveIndex()


def merge(*records):
    """The union of execution records (the tasks of one run, or a resumed run's and the
    earlier run's whose rows it kept). A name with different digests keeps the first
    record's: rows computed by code that has changed since stay stale, whatever a later run
    executed."""
    merged = {"functions": {}, "constants": {}, "data": {}, "packages": {}}
    for one in records:
        for part in merged:
            for name, digest in ((one or {}).get(part) or {}).items():
                merged[part].setdefault(name, digest)
    merged = {part: dict(sorted(values.items())) for part, values in merged.items()}
    unfinished = sum((one or {}).get("unfinished", 0) for one in records)
    return {**merged, "unfinished": unfinished} if unfinished else merged


# --------------------------------------------------------------------------- changes

def function_changes(functions, index):
    """The functions of a record whose normalised source differs in `index`'s tree."""
    changed = []
    for key, digest in functions.items():
        module, qualname = key.split(":", 1)
        now = index.functions.get(module, {}).get(qualname)
        if now == digest:
            continue
        if now is None and digest in index.by_name.get(qualname, {}).values():
            continue  # moved to another module unchanged
        gone = now is None and qualname not in index.by_name
        changed.append(f"function {key} {'removed' if gone else 'changed'}")
    return changed


def constant_digests(constants, index):
    """{"module:NAME": digest now or None} of a record's constants in the tree of `index`:
    a list or dict by the source of its assignment (also in another module, after a move),
    any other value imported (in a subprocess for another tree)."""
    found, imported = {}, []
    for key, digest in constants.items():
        module, name = key.split(":", 1)
        if str(digest).startswith("source:"):
            where = index.assigned.get(name, {})
            found[key] = where.get(module) if module in where or digest not in where.values() \
                else digest
        else:
            imported.append(key)
    if Path(index.root).resolve() != REPO_ROOT.resolve():
        return {**found, **_constant_digests_elsewhere(imported, index)}
    for key in imported:
        module, name = key.split(":", 1)
        candidates = [module] + sorted(set(index.assigned.get(name, {})) - {module})
        found[key] = None
        for candidate in candidates:
            try:
                value = getattr(importlib.import_module(candidate), name)
            except (ImportError, AttributeError):
                continue
            found[key] = value_digest(value)
            if candidate == module:
                break
    return found


def _constant_digests_elsewhere(keys, index):
    """`constant_digests` in another tree (a past revision): its modules imported in a
    subprocess, digested by this checkout's `value_digest`."""
    if not keys:
        return {}
    import inspect
    import subprocess

    with tempfile.TemporaryDirectory(prefix="digest-") as helper:
        Path(helper, "_digest_rule.py").write_text(
            f"import hashlib\nMAX_ARRAY = {MAX_ARRAY}\n\n"
            + "\n\n".join(inspect.getsource(f) for f in (_digest, _plain, value_digest)))
        script = ("import importlib, json, sys\n"
                  "from _digest_rule import value_digest\n"
                  "sys.path.insert(0, sys.argv[1])\n"
                  "out = {}\n"
                  "for key in json.loads(sys.argv[2]):\n"
                  "    module, name = key.split(':', 1)\n"
                  "    try:\n"
                  "        value = getattr(importlib.import_module(module), name)\n"
                  "        out[key] = value_digest(value)\n"
                  "    except Exception:\n"
                  "        out[key] = None\n"
                  "print(json.dumps(out))\n")
        done = subprocess.run([sys.executable, "-c", script, str(index.root), json.dumps(keys)],
                              capture_output=True, text=True, cwd=helper, check=False,
                              env={**os.environ, "PYTHONPATH": helper})
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if done.returncode == 0 and lines else dict.fromkeys(keys)


def changes(executed, index=None, *, packages=True):
    """What differs between an execution record and this checkout: a list of reasons
    ("function kssc.coding.fista:solve changed", "constant ...", "package numpy 2.0 -> 2.1",
    "data ..."); empty when the result is current."""
    index = index or Index()
    found = function_changes(executed.get("functions") or {}, index)
    if executed.get("unfinished"):
        found.append(f"the record misses {executed['unfinished']} project subprocess(es) "
                     "that had not handed back their record when it was taken (rerun it)")
    constants = executed.get("constants") or {}
    now = constant_digests(constants, index)
    found += [f"constant {key} changed" for key, digest in constants.items()
              if now.get(key) != digest]
    for path, digest in (executed.get("data") or {}).items():
        here = Path(index.root) / path
        if not here.is_file() or _sha256_file(here) != digest:
            found.append(f"data {path} changed")
    if packages:
        installed = package_versions(list(executed.get("packages") or {}))
        found += [f"package {name} {version} -> {installed[name]}"
                  for name, version in (executed.get("packages") or {}).items()
                  if installed[name] != version]
    return found
