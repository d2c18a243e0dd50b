"""The one Markdown table renderer, and the filler of a document's marked blocks.

A generated table stands between a pair of comments,

    <!-- table: NAME -->
    ...generated Markdown table...
    <!-- /table -->

and `fill` replaces what is between them by the named table; nothing else in the document
changes. A block that cannot be built keeps its old content and is reported. Documents are
written atomically and only when their text changes, so filling twice changes nothing.
"""

import re
from pathlib import Path

from .. import _io
from . import feeds, tables

BLOCK = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.DOTALL)


def table(frame):
    """A DataFrame of formatted cells as a Markdown table (no final newline)."""
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def fill(text, results_dir, specs=None):
    """(new text, {block: error}) with every block of `text` built from `results_dir`."""
    specs = feeds.tables() if specs is None else specs
    errors = {}

    def build(match):
        name = match["name"]
        try:
            if name not in specs:
                raise tables.TableError(f"no table {name!r} declared (feeds.tables)")
            body = table(tables.named(specs[name], results_dir)) + "\n"
        except tables.TableError as error:
            errors[name] = str(error)
            return match.group(0)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(build, text), errors


def stale_blocks(old, new):
    """Names of the blocks whose content differs between two texts."""
    before = {m["name"]: m["body"] for m in BLOCK.finditer(old)}
    return [m["name"] for m in BLOCK.finditer(new) if before.get(m["name"]) != m["body"]]


def update(path, results_dir, check=False, specs=None):
    """(stale block names, {block: error}); writes `path` only if not `check` and changed."""
    old = Path(path).read_text(encoding="utf-8")
    new, errors = fill(old, results_dir, specs)
    if not check and new != old:
        _io.write_text(new, path)
    return stale_blocks(old, new), errors
