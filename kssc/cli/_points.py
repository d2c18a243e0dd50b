"""The points of a .npy, delimited text or .parquet file for the command line, never misread.

`read_points` picks the feature columns and an ID column (given, or pandas' index), and
refuses, with a message naming the file and what to pass, whatever it cannot read for sure:
a header it cannot tell from data, a column of IDs or row numbers among the features, a
non-numeric or missing cell, a .npy whose header promises more bytes than the file holds.
"""

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..utils._validation import ROW_CHUNK_BYTES
from ._delimited import TableError, column_label, load_text, text_layout

TEXT_SUFFIXES = (".csv", ".tsv", ".txt")
SUFFIXES = (".npy", *TEXT_SUFFIXES, ".parquet")
# Fewer rows than this are not checked for a column of IDs: distinct integers are common.
MIN_ROWS_ID_CHECK = 10
# Column names (whole, any case) that a table's IDs and class labels go by.
ID_NAMES = re.compile(r"(?i)id|idx|index|key|.*[_ ]id|unnamed: 0")
LABEL_NAMES = re.compile(r"(?i)labels?|targets?|class(es)?|y|cluster|ground[_ ]?truth")


@dataclass
class Points:
    """What `read_points` read."""

    X: np.ndarray
    ids: list | None  # one string per row, or None (rows are numbered)
    id_name: str  # header of the IDs in the labels file
    summary: str  # how a table was read, one line ("" for a .npy array)


def _format_id(value):
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


class _Npy:
    """A .npy array; its header is checked against the file size before anything is loaded."""

    names = None
    table = False
    index_column = None
    summary = ""

    def __init__(self, path):
        size = os.path.getsize(path)
        if size == 0:
            raise TableError(f"{path}: an empty file, not a .npy array.")
        with open(path, "rb") as handle:
            try:
                version = np.lib.format.read_magic(handle)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read_header(handle)
            except ValueError as error:
                raise TableError(f"{path}: not a .npy array ({error}).") from error
            offset = handle.tell()
        numeric = any(np.issubdtype(dtype, kind) for kind in (np.integer, np.floating, np.bool_))
        if dtype.hasobject or dtype.names or not numeric:
            raise TableError(f"{path}: holds {dtype} values, not numbers.")
        needed = math.prod(shape) * dtype.itemsize
        if size - offset < needed:
            raise TableError(f"{path}: its header promises an array of shape {shape} ({dtype}, "
                             f"{needed:,} bytes) but the file holds {size - offset:,} bytes "
                             "after the header: truncated or not written by numpy.")
        if len(shape) != 2:
            raise TableError(f"{path}: holds an array of shape {shape}; expected a 2-D table "
                             "(n_samples, n_features), one point per row.")
        self.path, self.n_columns = path, shape[1]

    def load(self, features, id_index):
        """(X, ids): float32 and float64 arrays keep their type and, when every column is a
        feature, are read in place from the memory map (no copy); other numbers become
        float64."""
        array = np.load(self.path, allow_pickle=False, mmap_mode="r")
        dtype = array.dtype if array.dtype in (np.float32, np.float64) else np.float64
        if list(features) == list(range(self.n_columns)) and array.dtype == dtype:
            X = array
        else:
            X = np.asarray(array[:, features], dtype=dtype)
        ids = None if id_index is None else [_format_id(v) for v in array[:, id_index]]
        return X, ids


class _Text:
    """A delimited text file (.csv, .tsv, .txt)."""

    table = True

    def __init__(self, path, delimiter, header, thousands=None):
        self.path = path
        self.layout = text_layout(path, delimiter, header, thousands)
        self.names, self.n_columns = self.layout.names, self.layout.n_columns
        self.index_column = self.layout.index_column

    def load(self, features, id_index):
        return load_text(self.path, self.layout, features, id_index)

    @property
    def summary(self):
        layout = self.layout
        parts = [f"delimiter {layout.delimiter_name()}" + (" (guessed)" if layout.guessed else ""),
                 "a header row" if layout.names else "no header row", *layout.notes]
        return "; ".join(parts)


class _Parquet:
    """A .parquet table (pandas with pyarrow); a non-default index is kept as the IDs."""

    table = True
    index_column = None

    def __init__(self, path):
        try:
            import pandas as pd

            frame = pd.read_parquet(path)
        except ImportError as error:
            raise TableError(
                f"{path}: reading .parquet needs pandas and pyarrow "
                "(pip install pandas pyarrow); or save the table as .npy or .csv."
            ) from error
        except (ValueError, OSError) as error:  # pyarrow's ArrowInvalid is a ValueError
            reason = " ".join(str(error).split())  # one line
            raise TableError(f"{path}: not a readable parquet file ({reason}).") from error
        self.path, self.frame = path, frame
        self.names = [str(name) for name in frame.columns]
        self.n_columns = len(self.names)
        index = frame.index
        default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
        self.index_ids = None if default else index
        self.summary = "the frame's index kept as the IDs" if self.index_ids is not None else ""

    def load(self, features, id_index):
        import pandas as pd

        for j in features:
            dtype = self.frame.dtypes.iloc[j]
            if not pd.api.types.is_numeric_dtype(dtype):
                what = "text" if pd.api.types.is_string_dtype(dtype) else f"{dtype} values"
                ref = self.names[j]
                raise TableError(
                    f"{self.path}: column {column_label(self.names, j)} holds {what} "
                    f"(dtype {dtype}), not numbers; pass --id-column {ref} if it holds IDs, "
                    "or choose the features with --columns.")
        X = self.frame.iloc[:, features].to_numpy(dtype=np.float64, na_value=np.nan)
        if id_index is not None:
            ids = [str(v) for v in self.frame.iloc[:, id_index]]
        elif self.index_ids is not None:
            ids = [str(v) for v in self.index_ids]
        else:
            ids = None
        return X, ids


def _resolve(path, names, n_columns, item, option):
    """0-based position of column `item`: a header name, or a 1-based number without one."""
    if names is not None:
        matches = [j for j, name in enumerate(names) if name == item]
        if len(matches) == 1:
            return matches[0]
        shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        problem = "several columns are named" if matches else "no column named"
        raise TableError(f"{path}: {option}: {problem} {item!r} (the columns are named "
                         f"{shown}; they are chosen by name).")
    try:
        number = int(item)
    except ValueError:
        number = 0
    if not 1 <= number <= n_columns:
        raise TableError(f"{path}: {option}: {item!r} is not a column number from 1 to "
                         f"{n_columns} (the file names no columns, so they are numbered).")
    return number - 1


def _columns(path, names, n_columns, spec):
    """Positions of ``--columns`` `spec`: items and inclusive ranges ``a:b``, comma-separated."""
    positions = []
    for item in (part.strip() for part in spec.split(",")):
        if names is not None and item in names or ":" not in item:
            positions.append(_resolve(path, names, n_columns, item, "--columns"))
            continue
        start, stop = (_resolve(path, names, n_columns, end.strip(), "--columns")
                       for end in item.split(":", 1))
        if stop < start:
            raise TableError(f"{path}: --columns: the range {item!r} runs backwards.")
        positions.extend(range(start, stop + 1))
    if len(set(positions)) != len(positions):
        raise TableError(f"{path}: --columns names a column twice ({spec!r}).")
    return positions


def _select(path, source, columns, id_column):
    """(feature positions, ID position or None)."""
    names, n_columns = source.names, source.n_columns
    id_index = (source.index_column if id_column is None
                else _resolve(path, names, n_columns, id_column, "--id-column"))
    if columns is not None:
        features = _columns(path, names, n_columns, columns)
        if id_index in features:
            raise TableError(f"{path}: column {column_label(names, id_index)} is both the ID "
                             "column and a feature column.")
    else:
        features = [j for j in range(n_columns) if j not in (id_index, source.index_column)]
    if not features:
        raise TableError(f"{path}: no feature column left (the only column holds the IDs).")
    return features, id_index


def _check_finite(path, X, names, features):
    """Refuse NaN and infinite values, reading X (maybe a memory map) a chunk of rows at a
    time."""
    step = max(1, ROW_CHUNK_BYTES // (X.dtype.itemsize * X.shape[1]))
    rows = np.concatenate([
        start + np.flatnonzero(~np.isfinite(np.asarray(X[start:start + step])).all(axis=1))
        for start in range(0, X.shape[0], step)])
    if rows.size:
        first = np.asarray(X[rows[0]])
        column = features[int(np.flatnonzero(~np.isfinite(first))[0])]
        raise TableError(f"{path}: {rows.size} row(s) hold NaN or infinite values (rows "
                         f"{rows[:5].tolist()}; row {rows[0]}, column "
                         f"{column_label(names, column)}: {first[features.index(column)]}).")


def _id_like(values, others_integer):
    """Why a column's values look like IDs or row numbers ("" if they do not): integers
    distinct in every row but at most one in a hundred (a repeated ID), values that increase
    (or decrease) row by row, or, in under `MIN_ROWS_ID_CHECK` rows, distinct integers
    beside non-integer features."""
    n = values.size
    integers = bool(np.array_equal(values, np.round(values)))
    distinct = np.unique(values).size
    steps = np.diff(values)
    shown = ", ".join(_format_id(v) for v in values[:3]) + (", ..." if n > 3 else "")
    if n >= MIN_ROWS_ID_CHECK and integers and distinct >= n - max(1, n // 100):
        repeated = "" if distinct == n else f" but {n - distinct}"
        return f"its {n} values are distinct integers{repeated} ({shown})"
    if n >= 5 and ((steps > 0).all() or (steps < 0).all()):
        return f"its {n} values {'increase' if steps[0] > 0 else 'decrease'} row by row ({shown})"
    if n < MIN_ROWS_ID_CHECK and integers and distinct == n and n > 1 and not others_integer:
        return (f"its {n} values are distinct integers ({shown}) beside non-integer columns, "
                f"and {n} rows are too few to tell")
    return ""


def _check_features(path, X, names, features):
    """Refuse a feature column that looks like IDs, row numbers or class labels.

    IDs: a name such as "id" or "sample_id", or values as `_id_like` describes them. Labels:
    a name such as "label", "target" or "class" (their values look like any integer
    feature).
    """
    integer_columns = [bool(np.array_equal(X[:, p], np.round(X[:, p])))
                       for p in range(X.shape[1])]
    for position, j in enumerate(features):
        values = X[:, position]
        name = names[j] if names else None
        ref = name if names else j + 1
        column = f"column {column_label(names, j)}"
        if name is not None and LABEL_NAMES.fullmatch(name.strip()):
            raise TableError(
                f"{path}: {column} looks like class labels, not a feature; choose the "
                "features with --columns (ranges a:b and lists a,b).")
        others_integer = all(integer_columns[:position] + integer_columns[position + 1:])
        distinct = _id_like(values, others_integer)
        if distinct or name is not None and ID_NAMES.fullmatch(name.strip()):
            what = distinct or "its name"
            raise TableError(
                f"{path}: {column} looks like IDs or row numbers, not a feature ({what}). "
                f"Pass --id-column {ref} to keep it beside the labels, or --columns to choose "
                "the features yourself.")


def _undecodable(path):
    """Where the first byte that is not UTF-8 is: its line and value."""
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                return f"line {number} holds the byte 0x{line[error.start]:02x}"
    return "an undecodable byte"


def read_points(path, *, columns=None, id_column=None, delimiter=None, header=None,
                thousands=None):
    """The points of `path` as a `Points`, or `TableError` naming the file and the problem.

    Parameters
    ----------
    path : pathlib.Path
        A .npy, .csv, .tsv, .txt or .parquet file with one point per row.
    columns : str or None
        The feature columns (``--columns``); None: every column but the IDs.
    id_column : str or None
        The column of IDs (``--id-column``), written beside the labels; None: pandas'
        index if the file has one, else none.
    delimiter : str or None
        The delimiter of a text file; None: guessed.
    header : bool or None
        Whether a text file has a header row; None: decided from its first lines.
    thousands : str or None
        A text file's thousands separator, dropped from its numbers ("" : it has none);
        None: refused where a ';' table's numbers may hold one ('1.234').
    """
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise TableError(f"{path}: unsupported extension {suffix!r}; use one of {SUFFIXES}.")
    if suffix not in TEXT_SUFFIXES:
        given = [option for option, value in (("--delimiter", delimiter), ("--header", header),
                                              ("--thousands", thousands))
                 if value is not None]
        if given:
            raise TableError(f"{path}: {given[0]} applies to text files ({TEXT_SUFFIXES}) only.")
    try:
        if suffix == ".npy":
            source = _Npy(path)
        elif suffix == ".parquet":
            source = _Parquet(path)
        else:
            source = _Text(path, delimiter, header, thousands)
        features, id_index = _select(path, source, columns, id_column)
        X, ids = source.load(features, id_index)
    except UnicodeDecodeError as error:
        raise TableError(f"{path}: not UTF-8 text ({_undecodable(path)}); save it as UTF-8 "
                         "(e.g. iconv -f latin1 -t utf-8).") from error
    if X.shape[0] == 0:
        raise TableError(f"{path}: holds no data rows.")
    _check_finite(path, X, source.names, features)
    if source.table and columns is None:
        _check_features(path, X, source.names, features)
    id_name = "row"
    if id_index is not None:
        id_name = (source.names[id_index] if source.names else f"column{id_index + 1}") or "index"
    elif ids is not None:
        id_name = str(source.frame.index.name or "index")
    parts = [f"{X.shape[0]} rows x {X.shape[1]} features", source.summary]
    if id_index is not None:
        parts.append(f"IDs from column {column_label(source.names, id_index)}"
                     + (" (pandas' index)" if id_index == source.index_column else ""))
    if source.index_column not in (None, id_index) and columns is None:
        parts.append(f"column {column_label(source.names, source.index_column)} "
                     "(pandas' index) left out")
    summary = "; ".join(part for part in parts if part) if source.table else ""
    return Points(X, ids, id_name, summary)
