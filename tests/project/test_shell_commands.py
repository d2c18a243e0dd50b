"""Every shell command that README and docs/ give works as written from a checkout.

The commands are read from the shell code blocks and the inline code of README.md and
docs/*.md|rst. Each `pip install` installs the checkout (`.` with extras that pyproject
declares) or packages that pyproject names, never `kssc` from an index (it is not on PyPI);
each `make` target is in the Makefile; each `python -m` module exists and its argument parser
accepts the arguments; each `kssc` command parses; each `python path.py` script exists.
"""

import importlib.util
import re
import shlex

import pytest

tomllib = pytest.importorskip("tomllib")
from packaging.requirements import Requirement  # noqa: E402  (after the skip above)

from experiments._checkout import REPO_ROOT  # noqa: E402
from kssc.cli._main import _parser as kssc_parser  # noqa: E402

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PYPROJECT["optional-dependencies"]
DECLARED = {Requirement(r).name.lower()
            for r in PYPROJECT["dependencies"] + sum(EXTRAS.values(), [])}
MAKE_TARGETS = set(re.findall(r"^([A-Za-z][\w-]*):", (REPO_ROOT / "Makefile").read_text(),
                              flags=re.MULTILINE))
PROGRAMS = ("pip", "make", "python", "kssc")
SHELL_BLOCK = r"(?:bash|sh|shell|console)"
# Modules whose command line is Hydra's (key=value overrides), not argparse.
HYDRA = {"experiments.run"}


def _documents():
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")),
            *sorted((REPO_ROOT / "docs").glob("*.rst"))]


def _snippets(text, markdown):
    """Lines of the shell code blocks and every inline code span."""
    if markdown:
        blocks = re.findall(rf"^```{SHELL_BLOCK}\n(.*?)^```", text, flags=re.DOTALL | re.M)
        inline = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text)
    else:
        blocks = re.findall(rf"^\.\. code-block:: {SHELL_BLOCK}\n\n((?:   .*\n|\n)+)", text,
                            flags=re.MULTILINE)
        inline = re.findall(r"``([^`\n]+)``", text)
    lines = [line for block in blocks for line in block.splitlines()]
    return [*lines, *inline]


def _commands():
    found = []
    for path in _documents():
        for snippet in _snippets(path.read_text(), path.suffix == ".md"):
            snippet = snippet.strip().removeprefix("$ ").split(" #")[0]
            for part in re.split(r"&&|;|\|\|?", snippet):
                try:
                    words = shlex.split(part)
                except ValueError:  # an unbalanced quote: prose, not a command
                    continue
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value cmd
                    words = words[1:]
                if words and words[0] in PROGRAMS and _is_command(words):
                    found.append((path.relative_to(REPO_ROOT).as_posix(), words))
    return found


def _is_command(words):
    if words[0] == "python":
        return len(words) > 1 and (words[1] == "-m" or words[1].endswith(".py"))
    if words[0] == "pip":
        return len(words) > 1 and words[1] in ("install", "wheel")
    if words[0] == "kssc":  # not the bare name, nor its messages ("kssc cluster: error: ...")
        return len(words) > 1 and not words[1].endswith(":")
    return True


COMMANDS = _commands()


def test_commands_are_found():
    programs = {words[0] for _, words in COMMANDS}
    assert programs == set(PROGRAMS), programs
    assert any(words[:3] == ["pip", "install", "."] for _, words in COMMANDS)


# pip options that take a value (a folder, a file, an index).
PIP_VALUED = {"-w", "--wheel-dir", "-r", "--requirement", "-c", "--constraint", "-i",
              "--index-url", "--extra-index-url", "-f", "--find-links"}


def _check_pip(words):
    for before, arg in zip(words[1:], words[2:], strict=False):
        if arg.startswith("-") or before in PIP_VALUED:
            continue
        if arg.startswith("."):
            extras = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", arg)
            assert extras, f"{arg}: not the checkout"
            for extra in filter(None, (extras.group(1) or "").split(",")):
                assert extra in EXTRAS, f"{arg}: pyproject declares no extra {extra!r}"
            continue
        name = Requirement(arg).name.lower()
        assert name != "kssc", f"{arg}: kssc is not on PyPI; install the checkout ('.')"
        assert name in DECLARED, f"{arg}: {name} is in no dependency list of pyproject"


def _check_make(words):
    for target in words[1:]:
        if "=" not in target and not target.startswith("-"):
            assert target in MAKE_TARGETS, f"make {target}: no such target in the Makefile"


def _parses(parser, args):
    """`args` parse, read as a usage line: `[--opt]` is the option, and a placeholder
    (NAME) after an option with choices stands for one of them."""
    args = [arg.strip("[]") for arg in args if arg.strip("[]")]
    for index, arg in enumerate(args[1:], start=1):
        action = parser._option_string_actions.get(args[index - 1])
        if re.fullmatch(r"[A-Z][A-Z_]*", arg) and action is not None and action.choices:
            args[index] = str(next(iter(action.choices)))
    try:
        parser.parse_args(args)
    except SystemExit as exit_:
        assert exit_.code == 0, f"{args} do not parse"


def _check_python(words, parser_of):
    if words[1] != "-m":
        assert (REPO_ROOT / words[1]).is_file(), f"{words[1]}: no such script"
        return
    module, args = words[2], words[3:]
    assert importlib.util.find_spec(module) is not None, f"python -m {module}: no such module"
    if module == "kssc":
        _parses(kssc_parser(), args)
    elif args and module not in HYDRA:
        _parses(parser_of(module), args)


@pytest.mark.parametrize("where, words", COMMANDS,
                         ids=[f"{where}: {' '.join(words)}" for where, words in COMMANDS])
def test_command_works_as_written(where, words, parser_of):
    if words[0] == "pip":
        _check_pip(words)
    elif words[0] == "make":
        _check_make(words)
    elif words[0] == "python":
        _check_python(words, parser_of)
    else:
        _parses(kssc_parser(), words[1:])
