"""`kssc cluster` reads files as pandas and numpy users write them, or refuses them clearly.

Every layout gives the labels of the .npy holding the same numbers (same random_state), and
the labels file keeps the rows' IDs; what cannot be told for sure exits 2 with a message
that names the file, what was seen and the option to pass.
"""

import importlib.util

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from kssc.cli import main
from kssc.datasets import make_subspaces

_HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
needs_pyarrow = pytest.mark.skipif(not _HAS_PYARROW, reason="needs pyarrow (the parquet extra)")


def _run(tmp_path, path, *options):
    """(header, IDs, labels) of the labels file `kssc cluster path -k ...` writes."""
    out = tmp_path / f"{path.name}.out.csv"
    assert main(["cluster", str(path), "--n-neighbors", "8", *map(str, options),
                 "-o", str(out)]) == 0
    table = pd.read_csv(out, dtype=str)
    return list(table.columns), table.iloc[:, 0].tolist(), table["label"].astype(int).to_numpy()


def _fails(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    # One error line, last; a table's read notice may come before it.
    assert err.count("error:") == 1 and err.splitlines()[-1].startswith("kssc cluster: error:")
    assert "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """200 digits (integer-valued pixels, as pandas writes them: 0.0, 5.0), their .npy labels."""
    folder = tmp_path_factory.mktemp("digits")
    X = load_digits().data[:200]
    np.save(folder / "X.npy", X)
    _, rows, labels = _run(folder, folder / "X.npy", "-k", 10)
    assert rows == [str(i) for i in range(200)]
    return folder, X, labels


@pytest.fixture(scope="module")
def subspaces(tmp_path_factory):
    """90 points on 3 subspaces of R^12 (real-valued), their .npy labels."""
    folder = tmp_path_factory.mktemp("subspaces")
    X, _, _ = make_subspaces(3, 3, 30, 12, noise=0.01, random_state=0)
    np.save(folder / "X.npy", X)
    return folder, X, _run(folder, folder / "X.npy", "-k", 3)[2]


def test_to_csv_with_index_keeps_the_index_as_ids(digits):
    folder, X, labels = digits
    frame = pd.DataFrame(X, index=np.random.RandomState(0).permutation(1000)[:200])
    frame.to_csv(folder / "indexed.csv")  # first column: the index, header cell blank
    header, ids, read = _run(folder, folder / "indexed.csv", "-k", 10)
    np.testing.assert_array_equal(read, labels)
    assert header == ["index", "label"] and ids == [str(i) for i in frame.index]


def test_id_column_beside_the_pandas_index(subspaces, capsys):
    folder, X, labels = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame.insert(5, "key", [f"k{i}" for i in range(90)])
    frame.to_csv(folder / "keyed.csv")  # index, f0..f4, key, f5..f11
    header, ids, read = _run(folder, folder / "keyed.csv", "-k", 3, "--id-column", "key")
    np.testing.assert_array_equal(read, labels)
    assert header == ["key", "label"] and ids[:2] == ["k0", "k1"]
    assert "column 1 ('') (pandas' index) left out" in capsys.readouterr().err


def test_to_csv_numeric_header_is_a_header(digits, capsys):
    folder, X, labels = digits
    pd.DataFrame(X).to_csv(folder / "plain.csv", index=False)  # header 0,1,...,63
    header, ids, read = _run(folder, folder / "plain.csv", "-k", 10)
    np.testing.assert_array_equal(read, labels)
    assert header == ["row", "label"] and ids == [str(i) for i in range(200)]
    assert "line 1 (0,1,2,...,63) taken as a header" in capsys.readouterr().err


@pytest.mark.parametrize("sep, suffix", [(";", ".csv"), ("\t", ".csv"), ("\t", ".tsv"),
                                         ("|", ".txt")])
def test_other_delimiters_are_detected(digits, capsys, sep, suffix):
    folder, X, labels = digits
    path = folder / f"sep{suffix}"
    pd.DataFrame(X).to_csv(path, sep=sep)
    np.testing.assert_array_equal(_run(folder, path, "-k", 10)[2], labels)
    name = {";": "';'", "\t": "tab", "|": "'|'"}[sep]
    assert f"delimiter {name} (guessed)" in capsys.readouterr().err


def test_given_delimiter_and_whitespace_tables(subspaces):
    folder, X, labels = subspaces
    np.savetxt(folder / "spaces.txt", X)  # numpy's default: one space, %.18e
    np.testing.assert_array_equal(_run(folder, folder / "spaces.txt", "-k", 3)[2], labels)
    read = _run(folder, folder / "spaces.txt", "-k", 3, "--delimiter", "space")[2]
    np.testing.assert_array_equal(read, labels)
    pd.DataFrame(X).to_csv(folder / "semicolon.csv", sep=";", index=False)
    read = _run(folder, folder / "semicolon.csv", "-k", 3, "--delimiter", ";")[2]
    np.testing.assert_array_equal(read, labels)


def test_numpy_savetxt_with_commented_header(subspaces):
    folder, X, labels = subspaces
    np.savetxt(folder / "commented.csv", X, delimiter=",",
               header=",".join(f"f{j}" for j in range(12)))  # "# f0,f1,..." then data
    np.testing.assert_array_equal(_run(folder, folder / "commented.csv", "-k", 3)[2], labels)


def test_numeric_id_column_is_refused_then_kept_with_id_column(subspaces, capsys):
    folder, X, labels = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame.insert(0, "sample", np.arange(5000, 5090))
    frame.to_csv(folder / "ids.csv", index=False)
    err = _fails(["cluster", folder / "ids.csv", "-k", 3], capsys)
    assert "column 1 ('sample') looks like IDs" in err and "--id-column sample" in err
    header, ids, read = _run(folder, folder / "ids.csv", "-k", 3, "--id-column", "sample")
    np.testing.assert_array_equal(read, labels)
    assert header == ["sample", "label"] and ids == [str(i) for i in range(5000, 5090)]


def test_index_without_header_is_refused_then_read_by_number(subspaces, capsys):
    folder, X, labels = subspaces
    pd.DataFrame(X).to_csv(folder / "noheader.csv", header=False)  # 0,x,x,... per row
    err = _fails(["cluster", folder / "noheader.csv", "-k", 3], capsys)
    assert "column 1 looks like IDs or row numbers" in err and "--id-column 1" in err
    read = _run(folder, folder / "noheader.csv", "-k", 3, "--id-column", "1")[2]
    np.testing.assert_array_equal(read, labels)
    read = _run(folder, folder / "noheader.csv", "-k", 3, "--columns", "2:13")[2]
    np.testing.assert_array_equal(read, labels)


def test_label_column_is_refused_then_left_out_with_columns(subspaces, capsys):
    folder, X, labels = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame["target"] = np.repeat([0, 1, 2], 30)
    frame.to_csv(folder / "target.csv", index=False)
    err = _fails(["cluster", folder / "target.csv", "-k", 3], capsys)
    assert "column 13 ('target') looks like class labels" in err and "--columns" in err
    read = _run(folder, folder / "target.csv", "-k", 3, "--columns", "f0:f11")[2]
    np.testing.assert_array_equal(read, labels)


def test_string_ids_in_a_csv(subspaces):
    folder, X, labels = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame.insert(3, "name", [f"point, {i}" for i in range(90)])  # quoted: holds the delimiter
    frame.to_csv(folder / "names.csv", index=False)
    header, ids, read = _run(folder, folder / "names.csv", "-k", 3, "--id-column", "name")
    np.testing.assert_array_equal(read, labels)
    assert header == ["name", "label"] and ids[:2] == ["point, 0", "point, 1"]


@needs_pyarrow
def test_parquet_gives_the_labels_of_npy(subspaces):
    folder, X, labels = subspaces
    pd.DataFrame(X).to_parquet(folder / "X.parquet")
    header, ids, read = _run(folder, folder / "X.parquet", "-k", 3)
    np.testing.assert_array_equal(read, labels)
    assert header == ["row", "label"] and ids == [str(i) for i in range(90)]
    indexed = pd.DataFrame(X, index=pd.Index([f"p{i}" for i in range(90)], name="point"))
    indexed.to_parquet(folder / "indexed.parquet")
    header, ids, read = _run(folder, folder / "indexed.parquet", "-k", 3)
    np.testing.assert_array_equal(read, labels)
    assert header == ["point", "label"] and ids[:2] == ["p0", "p1"]


@needs_pyarrow
def test_parquet_string_column_is_named(subspaces, capsys):
    folder, X, labels = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame["name"] = [f"p{i}" for i in range(90)]
    frame.to_parquet(folder / "names.parquet")
    err = _fails(["cluster", folder / "names.parquet", "-k", 3], capsys)
    assert "column 13 ('name') holds text" in err and "--id-column name" in err
    header, ids, read = _run(folder, folder / "names.parquet", "-k", 3, "--id-column", "name")
    np.testing.assert_array_equal(read, labels)
    assert header == ["name", "label"] and ids[:2] == ["p0", "p1"]


@needs_pyarrow
def test_parquet_that_is_not_parquet(tmp_path, capsys):
    path = tmp_path / "points.parquet"
    path.write_text("a,b\n1,2\n")
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert f"{path}: not a readable parquet file" in err


@pytest.mark.skipif(_HAS_PYARROW, reason="pyarrow is installed")
def test_parquet_without_pyarrow_says_what_to_install(tmp_path, capsys):
    path = tmp_path / "points.parquet"
    path.write_bytes(b"PAR1")
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert "pip install pandas pyarrow" in err


@pytest.mark.parametrize("text, message", [
    # A 2-column integer table starting 0,1: pandas' column names or a data row.
    ("0,1\n3,4\n5,6\n7,8\n", "line 1 (0,1) numbers the columns: a header or data?"),
    ("2,5,7\n0.5,1.5,2.5\n", "line 1 (2,5,7) is written as integers, the rows below it as"),
    ("x,1.5,2\ny,3,4.5\n", "line 1 (x,1.5,2) has text ('x') only in columns that hold text"),
], ids=["column-numbers", "integer-row", "text-column"])
def test_unclear_header_is_refused_and_options_decide(tmp_path, capsys, text, message):
    path = tmp_path / "table.csv"
    path.write_text(text)
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert str(path) in err and message in err and "--header or --no-header" in err


def test_no_header_option_reads_the_first_line_as_data(tmp_path):
    X = np.vstack([np.arange(3.0), np.random.RandomState(0).rand(11, 3)])
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "X.csv", X, delimiter=",", fmt="%.17g")  # first row "0,1,2"
    expected = _run(tmp_path, tmp_path / "X.npy", "-k", 2, "--n-neighbors", 4)[2]
    read = _run(tmp_path, tmp_path / "X.csv", "-k", 2, "--n-neighbors", 4, "--no-header")[2]
    np.testing.assert_array_equal(read, expected)


@pytest.mark.parametrize("text, message", [
    ("a,b,c\n1,2,3\n4,x,6\n", "line 3 (row 1), column 2 ('b'): 'x' is not a number; if that "
                              "column holds IDs, pass --id-column b"),
    ("a,b,c\n1,2,3\n4,,6\n", "line 3 (row 1), column 2 ('b') is empty (a missing value)"),
    ("a;b\n1,5;2,5\n3,5;4,5\n", "line 2 (row 0), column 1 ('a'): '1,5' has a decimal comma"),
    ("a,b,c\n1,2,3\n4,5\n", "line 3 has 2 fields where line 1 has 3, split at ','"),
    ("1,2;3\n4,5;6\n", "the delimiter could be ',' and ';'; pass --delimiter"),
    ("a,b\n1,2\n3,4\n" + "5,6\n" * 60 + "7,8,9\n", "line 64 (row 62) has 3 fields where the "
                                                   "first line has 2 (delimiter ','"),
], ids=["text-cell", "empty-cell", "decimal-comma", "ragged", "two-delimiters", "late-ragged"])
def test_cells_that_are_not_numbers_are_named(tmp_path, capsys, text, message):
    path = tmp_path / "table.csv"
    path.write_text(text)
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert str(path) in err and message in err


def test_columns_and_id_column_are_checked(subspaces, capsys):
    folder, X, _ = subspaces
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    frame.to_csv(folder / "named.csv", index=False)
    err = _fails(["cluster", folder / "named.csv", "--columns", "3:5"], capsys)
    assert "--columns: no column named '3'" in err and "chosen by name" in err
    err = _fails(["cluster", folder / "named.csv", "--columns", "f5:f2"], capsys)
    assert "runs backwards" in err
    err = _fails(["cluster", folder / "named.csv", "--columns", "f0:f3",
                  "--id-column", "f1"], capsys)
    assert "both the ID column and a feature column" in err
    err = _fails(["cluster", folder / "X.npy", "--columns", "13"], capsys)
    assert "'13' is not a column number from 1 to 12" in err
    err = _fails(["cluster", folder / "X.npy", "--delimiter", ";"], capsys)
    assert "--delimiter applies to text files" in err


def test_npy_columns_by_number(subspaces):
    folder, X, labels = subspaces
    np.save(folder / "wide.npy", np.column_stack([np.arange(90) + 7, X]))
    header, ids, read = _run(folder, folder / "wide.npy", "-k", 3, "--id-column", "1")
    np.testing.assert_array_equal(read, labels)
    assert header == ["column1", "label"] and ids[:2] == ["7", "8"]
    np.testing.assert_array_equal(_run(folder, folder / "wide.npy", "-k", 3,
                                       "--columns", "2:13")[2], labels)


def test_float32_npy_keeps_its_type_and_is_read_in_place(subspaces):
    from pathlib import Path

    from kssc.cli._points import read_points

    folder, X, _ = subspaces
    np.save(folder / "X32.npy", X.astype(np.float32))
    points = read_points(Path(folder / "X32.npy"))
    assert isinstance(points.X, np.memmap) and points.X.dtype == np.float32
    # A subset of the columns is a float32 copy, not float64.
    np.save(folder / "wide32.npy", np.column_stack([np.arange(90), X]).astype(np.float32))
    subset = read_points(Path(folder / "wide32.npy"), id_column="1")
    assert subset.X.dtype == np.float32 and subset.X.shape == (90, 12)
    from kssc import KSSC
    expected = KSSC(3, n_neighbors=8, random_state=0).fit(X.astype(np.float32)).labels_
    np.testing.assert_array_equal(_run(folder, folder / "X32.npy", "-k", 3)[2], expected)


def test_lines_wider_than_the_csv_field_limit(tmp_path):
    # 60 x 20,000: every line about 200 KiB, beyond the csv module's 128 KiB field limit
    # that guessing the delimiter splits it by.
    X = np.random.RandomState(0).randn(60, 20_000).round(4)
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "wide.csv", X, delimiter=",", fmt="%.4f")
    assert (tmp_path / "wide.csv").stat().st_size > 60 * 2**17
    expected = _run(tmp_path, tmp_path / "X.npy", "-k", 2)[2]
    np.testing.assert_array_equal(_run(tmp_path, tmp_path / "wide.csv", "-k", 2)[2], expected)


def test_trailing_whitespace_only_lines_are_accepted(subspaces):
    folder, X, labels = subspaces
    path = folder / "trailing.csv"
    pd.DataFrame(X).to_csv(path, index=False)
    with open(path, "a") as handle:
        handle.write("   \n\t\n \t \n")
    np.testing.assert_array_equal(_run(folder, path, "-k", 3)[2], labels)


@pytest.mark.parametrize("ids, n_rows, reason", [
    (np.r_[5000, np.arange(5000, 5089)], 90, "its 90 values are distinct integers but 1"),
    (np.arange(90) * 0.5 + 1000.25, 90, "its 90 values increase row by row"),
    (np.array([7, 3, 5, 1, 8, 2, 6, 4]), 8, "its 8 values are distinct integers"),
], ids=["one-repeated-id", "float-ids", "under-10-rows"])
def test_id_columns_that_are_not_all_distinct_integers_are_refused(subspaces, capsys, ids,
                                                                   n_rows, reason):
    folder, X, _ = subspaces
    frame = pd.DataFrame(X[:n_rows], columns=[f"f{j}" for j in range(12)])
    frame.insert(0, "sample", ids)
    frame.to_csv(folder / "ids.csv", index=False)
    err = _fails(["cluster", folder / "ids.csv", "-k", 2], capsys)
    assert "column 1 ('sample') looks like IDs" in err and reason in err
    assert "--id-column sample" in err
    header, read_ids, _ = _run(folder, folder / "ids.csv", "-k", 2, "--n-neighbors", 4,
                               "--id-column", "sample")
    assert header == ["sample", "label"] and len(read_ids) == n_rows


def test_increasing_integer_header_above_integer_rows_is_refused(tmp_path, capsys):
    rows = np.random.RandomState(0).randint(0, 50, size=(30, 4))
    body = "\n".join(",".join(map(str, row)) for row in rows)
    path = tmp_path / "years.csv"
    path.write_text("1990,2000,2010,2020\n" + body + "\n")
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert "line 1 (1990,2000,2010,2020) holds increasing integers" in err
    assert "--header or --no-header" in err
    np.save(tmp_path / "X.npy", rows.astype(float))
    expected = _run(tmp_path, tmp_path / "X.npy", "-k", 2)[2]
    np.testing.assert_array_equal(_run(tmp_path, path, "-k", 2, "--header")[2], expected)



def test_dotted_thousands_in_a_semicolon_table_are_refused_then_read(tmp_path, capsys):
    # Counts as a German or French locale writes them: "12.345" is 12345, or a decimal?
    rng = np.random.RandomState(0)
    X = rng.choice([1234, 5678, 12_345, 23_456, 4321, 98_765], size=(40, 4)).astype(float)
    lines = [";".join(f"{int(v):,}".replace(",", ".") for v in row) for row in X]
    path = tmp_path / "dots.csv"
    path.write_text("a;b;c;d\n" + "\n".join(lines) + "\n")
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert "column 1 ('a'): " in err and "may be thousands separated by '.'" in err
    assert "pass --thousands . or --thousands none" in err
    for option, values in ((".", X), ("none", X / 1000)):
        np.save(tmp_path / "X.npy", values)
        expected = _run(tmp_path, tmp_path / "X.npy", "-k", 2)[2]
        read = _run(tmp_path, path, "-k", 2, "--thousands", option)[2]
        np.testing.assert_array_equal(read, expected)
