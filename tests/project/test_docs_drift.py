"""Docs that cannot drift from the code.

- Every signature docs/architecture.md quotes (`name(params) -> returns`) matches the code:
  the parameters in order, keyword-only where quoted after `*`, the quoted defaults, the
  base classes of a quoted class, and the number of values a quoted tuple return holds. A
  parameter list is complete unless it ends in `...`.
- Every `python -m module args` in a module docstring names a module whose argument parser
  accepts those arguments (placeholders replaced by a valid choice).
- Every citation of docs/protocol.md in kssc/ and experiments/ names a section
  or discrepancy that docs/protocol.md has, and no file cites the protocol any other way.
- Every repository path cited in docs/, README, pyproject, the Makefile, the docstrings and
  comments of kssc/, experiments/, crosscheck/ and benchmarks/, and conf/ exists, and every
  dotted name of the package they cite (`kssc.neighbors.nearest_neighbors`) resolves.
"""

import ast
import importlib
import importlib.util
import inspect
import io
import re
import tokenize

import numpy as np
import pytest

from experiments._checkout import REPO_ROOT

ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
PROTOCOL = REPO_ROOT / "docs" / "protocol.md"
SOURCE_DIRS = ("kssc", "experiments", "benchmarks")


# --- signatures quoted in docs/architecture.md -------------------------------------------

def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _quoted_signatures():
    """(module or None, name, params text, returns text) for every `name(...)` quoted."""
    found = []
    for line in ARCHITECTURE.read_text().splitlines():
        row = re.match(r"\| `([\w/]+?)(?:\.py)?/?` \|", line)
        module = row.group(1).replace("/", ".") if row else None
        for span in re.findall(r"`([^`]+)`", line):
            head = re.match(r"([A-Za-z_][\w.]*)\(", span)
            if not head:
                continue
            depth, end = 0, None
            for position in range(head.end() - 1, len(span)):
                depth += {"(": 1, ")": -1}.get(span[position], 0)
                if depth == 0:
                    end = position
                    break
            rest = span[end + 1:].strip()
            returns = rest[2:].strip() if rest.startswith("->") else None
            found.append((module, head.group(1), span[head.end():end], returns))
    return found


def _resolve(module, name):
    if "." in name:
        module, name = name.rsplit(".", 1)
    if module is None:
        raise LookupError(f"{name} is quoted outside a table row and is not a dotted path")
    return getattr(importlib.import_module(module), name)


SIGNATURES = _quoted_signatures()


def test_architecture_quotes_signatures():
    names = {name for _, name, _, _ in SIGNATURES}
    assert {"nearest_neighbors", "kssc_coefficients", "spectral_clustering"} <= names


@pytest.mark.parametrize("module, name, params, returns", SIGNATURES,
                         ids=[name for _, name, _, _ in SIGNATURES])
def test_quoted_signature_matches_code(module, name, params, returns):
    obj = _resolve(module, name)
    quoted = _split_top_level(params)
    if inspect.isclass(obj):
        assert quoted == [base.__name__ for base in obj.__bases__], f"bases of {name}"
        return
    actual = list(inspect.signature(obj).parameters.values())
    keyword_only = False
    position = 0
    for item in quoted:
        if item == "...":
            return
        if item == "*":
            keyword_only = True
            continue
        assert position < len(actual), f"{name}: quoted parameter {item!r} does not exist"
        parameter = actual[position]
        quoted_name, _, default = item.partition("=")
        assert parameter.name == quoted_name, \
            f"{name}: {quoted_name!r} quoted, {parameter.name!r} in the code"
        assert (parameter.kind is parameter.KEYWORD_ONLY) == keyword_only, \
            f"{name}: {quoted_name!r} keyword-only in one and not the other"
        if default and default != "...":
            default = _split_top_level(default.replace("|", ","))[0]
            assert parameter.default == ast.literal_eval(default), \
                f"{name}: {quoted_name}={default} quoted, {parameter.default!r} in the code"
        position += 1
    missing = [parameter.name for parameter in actual[position:]]
    assert not missing, f"{name}: parameters {missing} missing from the quote (end it with ...)"


def _tiny_call(name):
    """Call the quoted function on a tiny problem; its result's length is checked."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if name == "nearest_neighbors":
        from kssc.neighbors import nearest_neighbors
        return nearest_neighbors(X, 3)
    if name == "exact_search":
        from kssc.neighbors._exact import exact_search
        return exact_search(X, 3)
    if name == "normalize_rows":
        from kssc.utils._validation import normalize_rows
        return normalize_rows(X)
    if name == "kssc_coefficients":
        from kssc.coding.representation import kssc_coefficients
        neighbours = np.array([np.roll(np.arange(12), -s)[1:4] for s in range(12)])
        return kssc_coefficients(X, neighbours, 0.1)
    if name == "solve_lasso_fista":
        from kssc.coding.fista import solve_lasso_fista
        A = rng.standard_normal((2, 3, 4))
        x = rng.standard_normal((2, 4))
        gram = A @ A.transpose(0, 2, 1)
        return solve_lasso_fista(gram, np.einsum("nkd,nd->nk", A, x), np.einsum("nd,nd->n", x, x),
                                 0.1)
    raise LookupError(f"add a tiny call of {name} to _tiny_call: its quoted return is a tuple")


@pytest.mark.parametrize("name, returns", [(name, returns) for _, name, _, returns in SIGNATURES
                                           if returns and returns.startswith("(")])
def test_quoted_tuple_return_has_that_many_values(name, returns):
    n_quoted = len(_split_top_level(returns.strip("()")))
    result = _tiny_call(name)
    assert isinstance(result, tuple) and len(result) == n_quoted, \
        f"{name}: quoted {n_quoted} return values, the code returns {len(result)}"


# --- usage lines in module docstrings ----------------------------------------------------

def _usage_lines():
    found = []
    for folder in SOURCE_DIRS:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            docstring = ast.get_docstring(ast.parse(path.read_text()))
            for module, args in re.findall(r"python -m ([\w.]+)([^`\n]*)", docstring or ""):
                found.append((path.relative_to(REPO_ROOT).as_posix(), module, args.strip()))
    return found


def _example_argv(parser, usage):
    """The usage's tokens with brackets and '...' dropped, placeholders set to valid values."""
    tokens = [t for t in usage.replace("[", " ").replace("]", " ").split() if t not in ("...", "|")]
    positionals = [a for a in parser._actions if not a.option_strings]
    argv, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.startswith("-"):
            flag = token.split("=")[0]
            action = parser._option_string_actions.get(flag)
            argv.append(flag)
            if action is None or action.nargs == 0:
                continue
            if isinstance(action.nargs, int):
                count = action.nargs
            else:
                count = len(tokens) if action.nargs in ("*", "+") else 1
            while count and index < len(tokens) and not tokens[index].startswith("-"):
                value = tokens[index]
                index += 1
                count -= 1
                argv.append(str(next(iter(action.choices))) if action.choices else value)
        else:
            action = positionals.pop(0) if positionals else None
            argv.append(str(next(iter(action.choices))) if action and action.choices else token)
    return argv


USAGES = _usage_lines()


def test_usage_lines_are_found():
    assert any(module == "kssc.datasets.fetch" for _, module, _ in USAGES)


@pytest.mark.parametrize("path, module, usage", USAGES,
                         ids=[f"{path}:{module} {usage}" for path, module, usage in USAGES])
def test_usage_line_parses(path, module, usage, parser_of):
    assert importlib.util.find_spec(module) is not None, f"{path}: no module {module}"
    if not usage:
        return
    parser = parser_of(module)
    argv = _example_argv(parser, usage)
    try:
        parser.parse_args(argv)
    except SystemExit:
        pytest.fail(f"{path}: `python -m {module} {usage}` does not parse (tried {argv})")


# --- citations of docs/protocol.md -------------------------------------------------------

def _protocol_anchors():
    text = PROTOCOL.read_text()
    sections = set(re.findall(r"^### (\d+\.\d+) ", text, flags=re.MULTILINE))
    discrepancies = set(re.findall(r"^\| (D\d+) \|", text, flags=re.MULTILINE))
    return sections | discrepancies


def _source_files():
    for folder in ("kssc", "experiments"):
        yield from sorted((REPO_ROOT / folder).rglob("*.py"))


def test_protocol_citations_resolve():
    anchors = _protocol_anchors()
    assert {"1.7", "3.4", "D19"} <= anchors
    cited, unresolved = set(), []
    for path in _source_files():
        text = path.read_text()
        for match in re.finditer(r"docs/protocol\.md"
                                 r"((?:(?:,| and) ?(?:\d+\.\d+|D\d+)| (?:\d+\.\d+|D\d+))+)",
                                 text):
            for anchor in re.findall(r"\d+\.\d+|D\d+", match.group(1)):
                cited.add(anchor)
                if anchor not in anchors:
                    unresolved.append(f"{path.relative_to(REPO_ROOT)}: docs/protocol.md {anchor}")
    assert cited, "no citation of docs/protocol.md found"
    assert not unresolved, "\n".join(unresolved)


def test_no_citation_of_documents_outside_the_repository():
    offending = []
    for path in _source_files():
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"(?<!docs/protocol\.md )\b(?:protocol(?: section)? \d|discrepancy \d)",
                         line) \
                    or "shared/research" in line:
                offending.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert not offending, "cite docs/protocol.md instead:\n" + "\n".join(offending)


# --- repository paths cited in prose ----------------------------------------------------

TOP_FOLDERS = ("kssc", "experiments", "crosscheck", "benchmarks", "tests", "docs", "conf",
               "results", "examples", "figures")
# A path, not inside a longer one (an absolute path, ../shared/..., a URL), ending in a name.
CITED_PATH = re.compile(r"(?<![\w./~$:-])((?:{})/(?:[\w./-]*[\w/])?)".format("|".join(TOP_FOLDERS)))
NOT_COMMITTED = ("docs/_build",)  # written by `make docs` (.gitignore)


def _prose(path):
    """The text of `path` a reader follows: all of it, or a module's docstrings and comments."""
    text = path.read_text()
    if path.suffix != ".py" or path.parent.name == "docs":
        return text
    parts = [ast.get_docstring(node, clean=False) or "" for node in ast.walk(ast.parse(text))
             if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef))]
    parts += [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
              if token.type == tokenize.COMMENT]
    return "\n".join(parts)


def _documents():
    yield from sorted((REPO_ROOT / "docs").glob("*.md"))
    yield from sorted((REPO_ROOT / "docs").glob("*.rst"))
    yield from sorted((REPO_ROOT / "docs").glob("*.py"))
    yield from (REPO_ROOT / name for name in ("README.md", "pyproject.toml", "Makefile"))
    for folder in ("kssc", "experiments", "crosscheck", "benchmarks"):
        yield from sorted((REPO_ROOT / folder).rglob("*.py"))
    yield from sorted((REPO_ROOT / "conf").rglob("*.yaml"))


def cited_paths(text):
    """Repository paths cited in `text`, less patterns (`results/*.csv`, `figures/x.{png,pdf}`,
    `results/<name>.csv`)."""
    found = []
    for line in text.splitlines():
        for match in CITED_PATH.finditer(line):
            after = line[match.end():match.end() + 2]
            if after[:1] in ("*", "{", "<") or after == ".{":
                continue
            found.append(match.group(1))
    return found


def test_cited_paths_are_found():
    assert cited_paths("see `tests/project/test_docs_drift.py`, kssc/ and /work/kssc/x.py") == [
        "tests/project/test_docs_drift.py", "kssc/"]
    assert cited_paths("results/*.csv, results/<name>.csv, figures/scale.{png,pdf}") == []


def test_every_cited_repository_path_exists():
    missing = []
    for path in _documents():
        for cited in cited_paths(_prose(path)):
            if not cited.startswith(NOT_COMMITTED) and not (REPO_ROOT / cited).exists():
                missing.append(f"{path.relative_to(REPO_ROOT)}: {cited}")
    assert not missing, "cited paths that do not exist:\n" + "\n".join(sorted(set(missing)))


# A dotted name of the package (kssc.spectral.affinity), not inside a path or a longer name.
CITED_NAME = re.compile(r"(?<![\w./-])(kssc(?:\.[A-Za-z_]\w*)+)")


def _resolves(dotted):
    """Whether `dotted` names a module of the package or an attribute reached from one."""
    parts = dotted.split(".")
    target = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], start=1):
        if hasattr(target, part):
            target = getattr(target, part)
            continue
        name = ".".join(parts[:index + 1])
        if not inspect.ismodule(target) or importlib.util.find_spec(name) is None:
            return False
        target = importlib.import_module(name)
    return True


def test_cited_names_are_found():
    assert CITED_NAME.findall("`kssc.spectral.affinity`, conf/method/kssc.yaml, "
                              "bench_kssc.csv and kssc.KSSC.") == ["kssc.spectral.affinity",
                                                                   "kssc.KSSC"]
    assert _resolves("kssc.neighbors.nearest_neighbors") and _resolves("kssc.datasets.fetch")
    assert not _resolves("kssc.neighbours") and not _resolves("kssc.spectral.nowhere")


FILE_SUFFIXES = ("yaml", "py", "csv", "json", "md", "toml", "npy")  # conf/method/kssc.yaml


def test_every_cited_package_name_resolves():
    missing = []
    for path in _documents():
        where = path.relative_to(REPO_ROOT).as_posix()
        for cited in set(CITED_NAME.findall(_prose(path))):
            if cited.rpartition(".")[2] not in FILE_SUFFIXES and not _resolves(cited):
                missing.append(f"{where}: {cited}")
    assert not missing, "cited names that do not resolve:\n" + "\n".join(sorted(missing))


def test_user_guide_predict_table_is_generated_from_the_committed_results(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_figures",
                                                  REPO_ROOT / "docs" / "make_figures.py")
    make_figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_figures)
    make_figures.predict_table(out=tmp_path)
    committed = REPO_ROOT / "docs" / "_static" / "guide" / "predict.csv"
    assert (tmp_path / "predict.csv").read_text() == committed.read_text()
