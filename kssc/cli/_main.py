"""Command line: ``kssc cluster FILE -k 5`` (or ``python -m kssc cluster FILE -k 5``).

Reads a table of points (rows are samples) from a .npy, .csv/.tsv/.txt or .parquet file,
clusters it with k-SSC (optionally a preset of `kssc.presets`) or a baseline, and writes the
labels as CSV beside the row IDs, optionally Z (.npz) and the timings (JSON). A file it
cannot read for sure is refused with the options that say how to read it, as in
``python -m kssc cluster FILE --columns 2:65 --id-column id --delimiter tab --no-header``.
Every user error (file, column, option, output path) exits with status 2 and one line naming
the file and the problem; the outputs are written together and atomically, never over an
input.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import scipy.sparse as sp

from .. import __version__
from ..auto import AutoKSSC
from ..baselines import BASELINES
from ..estimator import KSSC
from ..presets import PRESETS, preset_params
from ..utils._warnings import one_line_warnings
from ._delimited import TableError
from ._output import OutputError, check_outputs, write_all
from ._points import SUFFIXES, read_points

METHODS = ("kssc", *BASELINES)
# --preset auto: kssc.AutoKSSC with its defaults (the setting chosen on the real-data panel).
AUTO = "auto"
# Names of delimiters; " " stands for runs of whitespace.
DELIMITERS = {"tab": "\t", "\\t": "\t", "space": " ", "whitespace": " "}

# Command-line option -> estimator parameter; an option is passed on only when given, and
# only to a method that has the parameter.
ESTIMATOR_OPTIONS = {
    "n_neighbors": "--n-neighbors",
    "lam": "--lam",
    "solver": "--solver",
    "positive": "--positive",
    "metric": "--metric",
    "neighbor_algorithm": "--neighbor-algorithm",
    "n_in_sample": "--n-in-sample",
    "assign_labels": "--assign-labels",
    "n_jobs": "--n-jobs",
}


class CommandError(ValueError):
    """A file or option the command cannot use; the message names it and the problem."""


def _choices(parameter):
    """The string values KSSC accepts for `parameter`, from its parameter constraints."""
    for constraint in KSSC._parameter_constraints[parameter]:
        if hasattr(constraint, "options"):
            return sorted(constraint.options)
    raise LookupError(parameter)


def _estimator_class(method):
    if method == "kssc":
        return KSSC
    return BASELINES[method][0]


def _delimiter(text):
    if text in DELIMITERS:
        return DELIMITERS[text]
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(
            f"{text!r} is not one character (or tab, space)")
    return text


def _thousands(text):
    if text == "none":
        return ""
    if len(text) != 1 or text.isdigit() or text in "+-eE\r\n":
        raise argparse.ArgumentTypeError(f"{text!r} is not one separator character (or none)")
    return text


def _parser():
    parser = argparse.ArgumentParser(
        prog="kssc", description="Sparse subspace clustering by nearest neighbour filtering.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    cluster = commands.add_parser(
        "cluster", help="cluster the rows of a .npy, .csv or .parquet file",
        description="Cluster the rows of FILE and write one label per row, beside the row's "
                    "ID (or its number from 0). A text file's delimiter, header row and "
                    "pandas index column are detected; what cannot be told for sure is "
                    "refused with the option to pass. Errors exit with status 2.")
    cluster.add_argument("file", type=Path, metavar="FILE",
                         help=f"one point per row: {', '.join(SUFFIXES)}")
    cluster.add_argument("-k", "--n-clusters", type=int, default=None, metavar="N",
                         help="number of clusters (default: estimated from the eigen-gap)")
    cluster.add_argument("--method", choices=METHODS, default="kssc",
                         help="k-SSC or a baseline (default: kssc)")

    reading = cluster.add_argument_group(
        "reading FILE", "Columns are named by the header row when the file has one, else "
                        "numbered from 1; ranges a:b include both ends.")
    reading.add_argument("--columns", metavar="COLS",
                         help="feature columns, e.g. 'f0:f63' or '2:65,70' (default: every "
                              "column but the IDs; a column of distinct integers is refused "
                              "unless chosen here)")
    reading.add_argument("--id-column", metavar="COL",
                         help="a column of IDs: kept out of the features, written beside the "
                              "labels (default: the index column pandas' to_csv writes)")
    reading.add_argument("--delimiter", type=_delimiter, metavar="CHAR",
                         help="text files: ',', ';', tab, '|', space... (default: guessed)")
    reading.add_argument("--thousands", type=_thousands, metavar="CHAR",
                         help="text files: the thousands separator in the numbers, dropped "
                              "('.', ',', \"'\", or none: '1.234' is a decimal) (default: "
                              "none, and a ';' table whose numbers may hold '.' ones is "
                              "refused)")
    reading.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                         help="text files: the first line names the columns (default: "
                              "detected, including pandas' 0,1,2,... header)")

    model = cluster.add_argument_group(
        "the model", "Options given override the preset; an option that --method lacks is "
                     "refused.")
    model.add_argument("--preset", choices=(*PRESETS, AUTO),
                       help="a validated setting of kssc.presets, or auto: the one of "
                            "generic, faces and motion that a label-free criterion prefers "
                            "(kssc.AutoKSSC; the best on real data, at the three fits' cost) "
                            "(default: the estimator's defaults)")
    model.add_argument("--n-neighbors", type=int, metavar="K",
                       help="neighbours per point (kssc, gsc, tsc)")
    model.add_argument("--lam", type=float, help="l1 weight lambda (kssc, ssc, sssc)")
    model.add_argument("--solver", choices=("relaxed", "exact", "admm"),
                       help="coefficient solver: FISTA (kssc's default), LADMPSAP or ADMM")
    model.add_argument("--positive", action=argparse.BooleanOptionalAction, default=None,
                       help="non-negative coefficients (kssc, ssc; default: the method's)")
    model.add_argument("--metric", choices=_choices("metric"), help="neighbour metric")
    model.add_argument("--neighbor-algorithm", choices=_choices("neighbor_algorithm"),
                       help="exact or approximate neighbour search (default: auto, "
                            "approximate from 50,000 points)")
    model.add_argument("--assign-labels", choices=_choices("assign_labels"),
                       help="labels from the spectral embedding")
    model.add_argument("--n-in-sample", type=int, metavar="M", help="in-sample points (sssc)")
    model.add_argument("--n-jobs", type=int, metavar="J", help="parallel chunks (kssc)")
    model.add_argument("--random-state", type=int, default=0, metavar="SEED",
                       help="seed (default: 0)")
    model.add_argument("-v", "--verbose", action="count", default=0,
                       help="report each stage of the fit on stderr")

    output = cluster.add_argument_group(
        "output", "Written atomically once the fit succeeded; never over an input file.")
    output.add_argument("-o", "--output", type=str, metavar="PATH.csv",
                        help="labels CSV: ID (or row) and label (default: FILE with suffix "
                             ".labels.csv)")
    output.add_argument("--save-z", type=str, metavar="PATH.npz",
                        help="also save the representation matrix Z (scipy sparse .npz)")
    output.add_argument("--timings", type=str, metavar="PATH.json",
                        help="also save the seconds per stage as JSON")
    commands.add_parser(
        "compile", help="compile every kernel into numba's on-disk cache (once, after "
                        "installing)",
        description="Run one small fit per numba kernel family, so that numba's on-disk "
                    "cache holds them all and no later fit waits to compile (about a minute "
                    "or two the first time).")
    return parser


def _estimator(args):
    if args.preset is not None and args.method != "kssc":
        raise CommandError(f"--preset applies to --method kssc, not {args.method}.")
    auto = args.preset == AUTO
    estimator_class = AutoKSSC if auto else _estimator_class(args.method)
    target = ("--preset auto (it fits the presets as validated); choose a preset to change a "
              "value" if auto else f"--method {args.method}")
    accepted = estimator_class().get_params()
    params = {"n_clusters": args.n_clusters, "random_state": args.random_state,
              "verbose": args.verbose}
    if args.preset is not None and not auto:
        params.update(preset_params(args.preset))
    for name, option in ESTIMATOR_OPTIONS.items():
        value = getattr(args, name)
        if value is None:
            continue
        if name not in accepted:
            raise CommandError(f"{option} does not apply to {target}.")
        params[name] = value
    return estimator_class(**{k: v for k, v in params.items() if k in accepted})


def _labels_writer(points, labels):
    def write(handle):
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([points.id_name, "label"])
        ids = points.ids if points.ids is not None else range(len(labels))
        writer.writerows(zip(ids, labels.tolist(), strict=True))
    return write


def _cluster(args):
    if args.save_z is not None and args.method == "sssc":
        raise CommandError("--save-z: sssc builds no representation matrix over all points.")
    model = _estimator(args)
    if not args.file.is_file():
        problem = "is a folder" if args.file.is_dir() else "no such file"
        raise CommandError(f"{args.file}: {problem}.")
    # Output paths stay strings: Path() would drop the trailing "/" of a folder name.
    output = args.output or str(args.file.with_suffix(".labels.csv"))
    outputs = {"--output": output, "--save-z": args.save_z, "--timings": args.timings}
    check_outputs({k: v for k, v in outputs.items() if v is not None}, [args.file])

    try:
        points = read_points(args.file, columns=args.columns, id_column=args.id_column,
                             delimiter=args.delimiter, header=args.header,
                             thousands=args.thousands)
    except (OSError, EOFError, MemoryError, UnicodeDecodeError) as error:
        raise CommandError(f"{args.file}: cannot read it ({_reason(error)}).") from error
    X = points.X
    if points.summary:
        print(f"kssc cluster: read {args.file}: {points.summary}", file=sys.stderr)
    try:
        model.fit(X)
    except ValueError as error:
        raise CommandError(f"{args.file}: {error}") from error
    except MemoryError as error:
        # The fit's own check says what each stage needs and which limit binds.
        reason = str(error) or (f"not enough memory to cluster {X.shape[0]} points of "
                                f"{X.shape[1]} features with --method {args.method}.")
        raise CommandError(f"{args.file}: {reason}") from error

    # --preset auto: Z and the stages are the chosen candidate's; the time is the sum of the
    # candidates' fits (the criteria, about a second, are left out).
    chosen = getattr(model, "best_estimator_", model)
    seconds = (sum(c["time_s"] for c in model.selection_.values()) if chosen is not model
               else chosen.timings_["total"])
    writers = {output: ("w", _labels_writer(points, model.labels_))}
    if args.save_z is not None:
        Z = chosen.representation_matrix_.tocsr()
        writers[args.save_z] = ("wb", lambda handle: sp.save_npz(handle, Z))
    if args.timings is not None:
        record = {"method": args.method, "n_samples": X.shape[0], "n_features": X.shape[1],
                  "n_clusters": int(model.n_clusters_), "seconds": chosen.timings_}
        if chosen is not model:
            record["auto"] = {"chosen": model.best_candidate_,
                              "candidate_seconds": {key: c["time_s"] for key, c
                                                    in model.selection_.items()}}
        text = json.dumps(record, indent=2) + "\n"
        writers[args.timings] = ("w", lambda handle: handle.write(text))
    write_all(writers)
    name = f"{args.method} (auto: {model.best_candidate_})" if chosen is not model else args.method
    print(f"{name}: {X.shape[0]} points -> {model.n_clusters_} clusters in {seconds:.2f} s; "
          f"labels in {output}", file=sys.stderr)


def _reason(error):
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text ({error.reason}); save it as UTF-8"
    if isinstance(error, MemoryError):
        return "not enough memory"
    if isinstance(error, EOFError):
        return f"it ends early: {error}"
    return error.strerror or str(error) or type(error).__name__


def main(argv=None):
    """Entry point of the ``kssc`` command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "compile":
        from ._compile import compile_kernels

        compile_kernels()
        return 0
    try:
        with one_line_warnings(parser.prog):
            _cluster(args)
    except (CommandError, TableError, OutputError) as error:
        message = str(error)
    except (OSError, EOFError, MemoryError, UnicodeDecodeError) as error:
        message = f"{getattr(error, 'filename', None) or args.file}: {_reason(error)}"
    else:
        return 0
    parser.exit(2, f"kssc {args.command}: error: {' '.join(message.split())}\n")
