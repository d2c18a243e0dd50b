"""Delimited text tables for the command line: delimiter, header row and pandas' index column.

A layout is decided from the first lines (`text_layout`), then the numbers are read by
`np.loadtxt` (fast) and only a failure, or a subset of the columns, is checked line by line
in Python, so that a bad cell is reported by line and column instead of silently misread.
"""

import csv
import re
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

CANDIDATES = (",", "\t", ";", "|")
DELIMITER_NAMES = {",": "','", "\t": "tab", ";": "';'", "|": "'|'", None: "whitespace"}
ENCODING = "utf-8-sig"  # UTF-8, with or without the byte-order mark Excel writes
# Lines the layout is decided on; later lines are only read.
SAMPLE_LINES = 50
# Headers pandas writes for an unnamed index column (to_csv; to_csv of a re-read frame).
INDEX_NAMES = ("", "Unnamed: 0")

_INTEGER = re.compile(r"[+-]?\d+")
# '1.234' or '12.345.678': thousands separated by '.' (as a ';' table in a German or French
# locale writes them), or a decimal with three digits.
_DOTTED = re.compile(r"[+-]?\d{1,3}(\.\d{3})+")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


class TableError(ValueError):
    """A table the command cannot read; the message names the file and the problem."""


@dataclass
class TextLayout:
    """How a delimited text file is laid out."""

    delimiter: str | None  # None: runs of whitespace
    guessed: bool
    skip: int  # physical lines before the first data row
    names: list | None  # column names from the header row, or None without one
    n_columns: int
    index_column: int | None = None  # pandas' index column (blank header), kept as IDs
    thousands: str | None = None  # the thousands separator dropped from numbers, if any
    notes: list = field(default_factory=list)

    def delimiter_name(self):
        return DELIMITER_NAMES.get(self.delimiter, repr(self.delimiter))

    def how(self):
        """Which delimiter was used and whether it was guessed, for error messages."""
        if self.guessed:
            return f"delimiter {self.delimiter_name()}, guessed; --delimiter sets it"
        return f"delimiter {self.delimiter_name()}"


@contextmanager
def _long_fields():
    """Fields of any length for the csv module (its default limit, 128 KiB, is one wide
    line split at a delimiter it does not hold); the limit is restored after."""
    previous = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _split(lines, delimiter):
    if delimiter is None:
        return [line.split() for line in lines]
    return list(csv.reader(lines, delimiter=delimiter, quotechar='"'))


def _head(path):
    """(number of '#' lines skipped, [(line number, line)]) of the first content lines.

    Blank lines and '#' comment lines (np.savetxt's header) before the first content line are
    skipped.
    """
    lines, comments = [], 0
    with open(path, encoding=ENCODING, newline="") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not lines and (not line.strip() or line.startswith("#")):
                comments += line.startswith("#")
                continue
            if line.strip():
                lines.append((number, line))
            if len(lines) == SAMPLE_LINES:
                break
    return comments, lines


def _sniff(path, numbers, lines):
    """The delimiter that splits every sampled line into the same number (> 1) of fields."""
    consistent = [d for d in CANDIDATES
                  if len({len(row) for row in _split(lines, d)}) == 1
                  and len(_split(lines[:1], d)[0]) > 1]
    if len(consistent) > 1:
        # e.g. "1,5;2,5": keep the delimiter under which the most cells are numbers.
        numeric = {d: sum(_is_number(c) for row in _split(lines, d) for c in row)
                   for d in consistent}
        best = max(numeric.values())
        consistent = [d for d in consistent if numeric[d] == best]
    if len(consistent) == 1:
        return consistent[0]
    if consistent:
        names = " and ".join(DELIMITER_NAMES[d] for d in consistent)
        raise TableError(f"{path}: the delimiter could be {names}; pass --delimiter.")
    counts = {len(row) for row in _split(lines, None)}
    if len(counts) == 1 and counts.pop() > 1:
        return None
    if all(len(_split([line], d)[0]) == 1 for line in lines for d in (*CANDIDATES, None)):
        return ","  # a single column
    splitting = [d for d in CANDIDATES if len(_split(lines[:1], d)[0]) > 1]
    if len(splitting) == 1:
        rows = _split(lines, splitting[0])
        ragged = next(i for i, row in enumerate(rows) if len(row) != len(rows[0]))
        raise TableError(
            f"{path}: line {numbers[ragged]} has {len(rows[ragged])} fields where line "
            f"{numbers[0]} has {len(rows[0])}, split at {DELIMITER_NAMES[splitting[0]]} (guessed: "
            "the only delimiter that splits the first line; --delimiter sets it).")
    raise TableError(
        f"{path}: cannot tell the delimiter: none of ',', tab, ';', '|' or whitespace splits "
        f"the first {len(lines)} lines into the same number of fields (line 1: "
        f"{_preview(lines[0])}); pass --delimiter.")


def _preview(line, width=60):
    return repr(line if len(line) <= width else line[:width] + "...")


def _header_row(path, numbers, rows):
    """Whether the first row is a header (True) or data (False), and a note; refuse when unclear.

    A header has text above a column of numbers, or numbers its columns 0, 1, ... (or 1, 2,
    ...) as ``pd.DataFrame(X).to_csv()`` writes them.
    """
    first, rest = rows[0], rows[1:]
    text = [j for j, cell in enumerate(first) if not _is_number(cell)]
    if not rest or len(text) == len(first):
        return bool(text), None
    if any(all(_is_number(row[j]) for row in rest) for j in text):
        return True, None
    numeric = [j for j in range(len(first)) if j not in text]
    integers = all(_INTEGER.fullmatch(first[j].strip()) for j in numeric)
    counts = integers and [int(first[j]) for j in numeric] in (
        list(range(len(numeric))), list(range(1, len(numeric) + 1)))
    # Every row below written with a decimal point or an exponent where the first row has none.
    decimals = integers and all(any(not _INTEGER.fullmatch(row[j].strip()) for j in numeric)
                                for row in rest)
    shown = ",".join(first) if len(first) <= 6 else ",".join(first[:3] + ["...", first[-1]])
    if counts and (len(numeric) >= 3 or decimals):
        return True, (f"line {numbers[0]} ({shown}) taken as a header: it numbers the columns "
                      "as pandas writes them (--no-header reads it as data)")
    # Increasing integers (years, wavelengths, gene numbers) name columns more often than a
    # data row happens to increase; when the rows below do not, it cannot be told.
    increasing = integers and len(numeric) >= 3 and all(
        int(first[a]) < int(first[b]) for a, b in zip(numeric, numeric[1:], strict=False))
    below_increasing = increasing and all(
        all(_is_number(row[j]) for j in numeric)
        and all(float(row[a]) < float(row[b]) for a, b in zip(numeric, numeric[1:], strict=False))
        for row in rest)
    if text:
        what = f"has text ({first[text[0]]!r}) only in columns that hold text below it too"
    elif counts:
        what = "numbers the columns"
    elif decimals:
        what = "is written as integers, the rows below it as decimals"
    elif increasing and not below_increasing:
        what = "holds increasing integers, as column names do, and the rows below it do not"
    else:
        return False, None
    raise TableError(f"{path}: line {numbers[0]} ({shown}) {what}: a header or data? "
                     "Pass --header or --no-header.")


def text_layout(path, delimiter=None, header=None, thousands=None):
    """The `TextLayout` of `path`: `delimiter` (" ": whitespace) and `header` where given, else
    guessed; `thousands` where given ("": none), else refused where unclear
    (`_check_thousands`)."""
    with _long_fields():
        layout = _text_layout(path, delimiter, header)
    if thousands is None:
        _check_thousands(path, layout, _split([line for _, line in _head(path)[1]],
                                              layout.delimiter))
    layout.thousands = thousands or None
    return layout


def _check_thousands(path, layout, rows):
    """Refuse a ';' table where a column's numbers may hold '.' as a thousands separator:
    every number in the first lines an integer or dotted in threes ('1.234'), one at least
    dotted."""
    if layout.delimiter != ";":
        return
    data = rows[1:] if layout.names else rows
    for j in range(layout.n_columns):
        cells = [row[j].strip() for row in data if j < len(row)]
        dotted = [cell for cell in cells if _DOTTED.fullmatch(cell)]
        if dotted and all(_DOTTED.fullmatch(c) or _INTEGER.fullmatch(c) for c in cells):
            cell = dotted[0]
            raise TableError(
                f"{path}: column {column_label(layout.names, j)}: {cell!r} in a ';' table may "
                f"be thousands separated by '.' ({cell.replace('.', '')}) or a decimal "
                f"({float(cell.replace('.', '', cell.count('.') - 1))}); pass --thousands . "
                "or --thousands none.")


def _text_layout(path, delimiter, header):
    comments, head = _head(path)
    if not head:
        raise TableError(f"{path}: holds no data (an empty file or only comment lines).")
    numbers, lines = [n for n, _ in head], [line for _, line in head]
    guessed = delimiter is None
    if guessed:
        delimiter = _sniff(path, numbers, lines)
    elif delimiter == " ":
        delimiter = None  # runs of whitespace, as np.savetxt's default writes
    rows = _split(lines, delimiter)
    notes = [f"{comments} '#' line(s) before the table skipped"] if comments else []
    if header is None:
        header, note = _header_row(path, numbers, rows)
        if note:
            notes.append(note)
    names = [cell.strip() for cell in rows[0]] if header else None
    layout = TextLayout(delimiter, guessed, numbers[0] if header else numbers[0] - 1, names,
                        len(rows[0]), notes=notes)
    if names and names[0] in INDEX_NAMES:
        layout.index_column = 0
    return layout


def column_label(names, j):
    """How a message names column `j` (0-based): its 1-based number and its name."""
    return f"{j + 1} ({names[j]!r})" if names else f"{j + 1}"


def _data_rows(path, layout):
    """(line number, row number, fields) of each data row, as np.loadtxt counts them."""
    with open(path, encoding=ENCODING, newline="") as handle:
        for _ in range(layout.skip):
            handle.readline()
        if layout.delimiter is None:
            rows = ((layout.skip + n, line.split()) for n, line in enumerate(handle, start=1))
        else:
            reader = csv.reader(handle, delimiter=layout.delimiter, quotechar='"')
            rows = ((layout.skip + reader.line_num, row) for row in reader)
        index = 0
        for line_number, row in rows:
            if row and any(cell.strip() for cell in row):  # blank or whitespace-only: none
                yield line_number, index, row
                index += 1


def _drop_thousands(cell, separator):
    """`cell` without its thousands separators where it groups digits in threes
    ('12.345.678', '1,234.5'); any other cell as it is."""
    if not separator:
        return cell
    grouped = re.fullmatch(rf"\s*([+-]?\d{{1,3}}(?:{re.escape(separator)}\d{{3}})+)(\.\d*)?\s*",
                           cell)
    if grouped is None or separator == "." and grouped.group(2):
        return cell
    return grouped.group(1).replace(separator, "") + (grouped.group(2) or "")


def _bad_cell(path, where, layout, j, cell):
    """The message for a cell of a feature column that is not a number."""
    column = f"column {column_label(layout.names, j)}"
    if not cell.strip():
        return f"{path}: {where}, {column} is empty (a missing value); fill or drop it."
    if _DOTTED.fullmatch(cell.strip()) and layout.thousands is None:
        return (f"{path}: {where}, {column}: {cell!r} holds thousands separated by '.'; pass "
                f"--thousands . ({layout.how()}).")
    if _DECIMAL_COMMA.fullmatch(cell.strip()):
        return (f"{path}: {where}, {column}: {cell!r} has a decimal comma; write the file "
                f"with '.' as the decimal mark ({layout.how()}).")
    ref = layout.names[j] if layout.names else j + 1
    return (f"{path}: {where}, {column}: {cell!r} is not a number; if that column holds IDs, "
            f"pass --id-column {ref}, or choose the features with --columns ({layout.how()}).")


def check_rows(path, layout, features, id_index=None, numbers=False):
    """The IDs in column `id_index` (or None), after checking every row's field count.

    With `numbers`, also check that every cell of `features` is a number; the first failure
    raises `TableError` naming its line, row and column. Then returns (ids, values): the
    rows' `features` as floats.
    """
    ids = [] if id_index is not None else None
    values = []
    with _long_fields():
        for line_number, index, row in _data_rows(path, layout):
            where = f"line {line_number} (row {index})"
            if len(row) != layout.n_columns:
                raise TableError(f"{path}: {where} has {len(row)} fields where the first line "
                                 f"has {layout.n_columns} ({layout.how()}).")
            if numbers:
                cells = [_drop_thousands(row[j], layout.thousands) for j in features]
                for j, cell in zip(features, cells, strict=True):
                    if not _is_number(cell):
                        raise TableError(_bad_cell(path, where, layout, j, row[j]))
                values.append([float(cell) for cell in cells])
            if ids is not None:
                ids.append(row[id_index].strip())
    if numbers:
        return ids, np.array(values, dtype=np.float64).reshape(len(values), len(features))
    return ids


def load_text(path, layout, features, id_index=None):
    """(X, ids) of a delimited text file: columns `features` as floats, `id_index` as text."""
    every_column = list(features) == list(range(layout.n_columns))
    ids = None
    if not every_column:
        # np.loadtxt ignores extra fields when given usecols; check the counts first.
        ids = check_rows(path, layout, features, id_index)
    options = {"quotechar": '"'} if layout.delimiter is not None else {}
    if layout.thousands:
        # Numbers with separators: read row by row, the separators dropped.
        ids, X = check_rows(path, layout, features, id_index, numbers=True)
        return X, ids
    try:
        with warnings.catch_warnings():
            # Blank lines and a header-only file: np.loadtxt warns, the counts below check.
            warnings.simplefilter("ignore", UserWarning)
            X = np.loadtxt(path, dtype=np.float64, delimiter=layout.delimiter, comments=None,
                           skiprows=layout.skip, usecols=None if every_column else features,
                           ndmin=2, encoding=ENCODING, **options)
    except ValueError:
        # np.loadtxt refuses what it cannot read, whitespace-only lines included: the rows
        # read one by one name the bad cell, or give the numbers.
        ids, X = check_rows(path, layout, features, id_index, numbers=True)
    if X.shape[0] and X.shape[1] != len(features):
        raise TableError(f"{path}: read {X.shape[1]} columns where the first line has "
                         f"{len(features)} ({layout.how()}).")
    if ids is not None and len(ids) != X.shape[0]:
        raise TableError(f"{path}: read {len(ids)} IDs for {X.shape[0]} rows; a quoted field "
                         "spans lines? Save the table without line breaks inside fields.")
    return X, ids
