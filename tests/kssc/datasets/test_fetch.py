"""Fetching against a real HTTP server on 127.0.0.1 (and file:// URLs).

The server serves small files the tests make.
"""

import ast
import hashlib
import http.server
import importlib.util
import io
import tarfile
import threading
import zipfile
from functools import partial
from pathlib import Path

import pytest

from kssc.datasets import DATASETS
from kssc.datasets import fetch as fetch_module
from kssc.datasets._paths import parse_checksums, read_checksums, read_sizes
from kssc.datasets._registry import declarations
from kssc.datasets.fetch import (
    ChecksumError,
    DatasetSpec,
    DownloadError,
    check_folder,
    fetch_dataset,
    fetch_datasets,
    main,
    verify_datasets,
)

FILES = {
    "a.txt": b"alpha\n" * 100,
    "sub/b.bin": bytes(range(256)) * 40,
    "sub/deeper/c.dat": b"gamma",
}


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_zip(path, files, prefix="toy-v1/", extra=True):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, data in files.items():
            zf.writestr(prefix + rel, data)
        if extra:
            zf.writestr(prefix + "notes/unlisted.txt", b"not in the checksum list")
            zf.writestr("__MACOSX/" + prefix + "._a.txt", b"resource fork")
            zf.writestr("other/a.txt", b"a decoy at another prefix")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, plus /truncated/<file>: announces the full length, sends half."""

    requests = []

    def do_GET(self):
        type(self).requests.append(self.path)
        if self.path.startswith("/truncated/"):
            data = Path(self.directory, self.path.removeprefix("/truncated/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """(base URL, folder it serves) of an HTTP server on 127.0.0.1."""
    served = tmp_path / "served"
    served.mkdir()
    _Handler.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            partial(_Handler, directory=str(served)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def spec():
    checksums = {rel: sha(data) for rel, data in FILES.items()}
    return DatasetSpec("toy", checksums, {rel: len(data) for rel, data in FILES.items()}, ())


def with_sources(spec, *urls):
    return DatasetSpec(spec.name, spec.checksums, spec.sizes, tuple(urls), spec.layout,
                       spec.n_bytes)


def leftovers(folder):
    """Temporary files and staging folders left anywhere under `folder`."""
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*")
                  if p.name.endswith(".part") or "-fetch-" in p.name or p.name.startswith("tmp"))


def installed(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file())


def test_fetch_zip_lays_out_and_verifies(server, spec, tmp_path):
    base, served = server
    make_zip(served / "toy.zip", FILES)
    target = tmp_path / "data" / "toy"
    assert fetch_dataset(with_sources(spec, f"{base}/toy.zip"), target, progress=False) == target
    assert installed(target) == sorted(FILES)
    for rel, data in FILES.items():
        assert (target / rel).read_bytes() == data
    assert check_folder(spec, target).ok


def test_rerun_skips_present_files(server, spec, tmp_path):
    base, served = server
    make_zip(served / "toy.zip", FILES)
    target = tmp_path / "toy"
    fetch_dataset(with_sources(spec, f"{base}/toy.zip"), target, progress=False)
    assert len(_Handler.requests) == 1
    fetch_dataset(with_sources(spec, f"{base}/toy.zip"), target, progress=False)
    assert len(_Handler.requests) == 1
    fetch_dataset(with_sources(spec, "http://127.0.0.1:9/unreachable.zip"), target, progress=False)


def test_wrong_existing_file_is_replaced(server, spec, tmp_path):
    base, served = server
    make_zip(served / "toy.zip", FILES)
    target = tmp_path / "toy"
    (target / "sub").mkdir(parents=True)
    (target / "sub" / "b.bin").write_bytes(b"stale")
    report = check_folder(spec, target)
    assert report.mismatched[0][0] == "sub/b.bin" and len(report.missing) == 2
    fetch_dataset(with_sources(spec, f"{base}/toy.zip"), target, progress=False)
    assert (target / "sub" / "b.bin").read_bytes() == FILES["sub/b.bin"]


def test_corrupt_member_raises_and_leaves_nothing(server, spec, tmp_path):
    base, served = server
    corrupt = dict(FILES, **{"sub/b.bin": FILES["sub/b.bin"][:-1] + b"X"})
    make_zip(served / "corrupt.zip", corrupt)
    target = tmp_path / "toy"
    with pytest.raises(ChecksumError) as info:
        fetch_dataset(with_sources(spec, f"{base}/corrupt.zip"), target, progress=False)
    message = str(info.value)
    assert str(target / "sub" / "b.bin") in message
    assert sha(FILES["sub/b.bin"]) in message and sha(corrupt["sub/b.bin"]) in message
    assert info.value.expected == sha(FILES["sub/b.bin"])
    assert not target.exists() and leftovers(tmp_path) == []


def test_single_file_dataset_raw_download(server, tmp_path):
    base, served = server
    data = b"MATLAB 5.0 MAT-file, pretend" * 50
    (served / "lib.mat").write_bytes(data)
    (served / "bad.mat").write_bytes(data[:-3] + b"xyz")
    one = DatasetSpec("one", {"lib.mat": sha(data)}, {"lib.mat": len(data)}, (f"{base}/lib.mat",),
                      "file")
    fetch_dataset(one, tmp_path / "one", progress=False)
    assert (tmp_path / "one" / "lib.mat").read_bytes() == data
    with pytest.raises(ChecksumError,
                       match=r"lib\.mat.*expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}"):
        fetch_dataset(with_sources(one, f"{base}/bad.mat"), tmp_path / "other", progress=False)
    assert not (tmp_path / "other").exists() and leftovers(tmp_path) == []


def test_truncated_transfer_raises_and_leaves_nothing(server, spec, tmp_path):
    base, served = server
    make_zip(served / "toy.zip", FILES)
    target = tmp_path / "toy"
    with pytest.raises(DownloadError, match=r"IncompleteRead|Connection broken"):
        fetch_dataset(with_sources(spec, f"{base}/truncated/toy.zip"), target, progress=False)
    assert not target.exists() and leftovers(tmp_path) == []


def test_truncated_archive_raises_and_leaves_nothing(server, spec, tmp_path):
    base, served = server
    buffer = io.BytesIO()
    make_zip(buffer, FILES)
    (served / "half.zip").write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    target = tmp_path / "toy"
    with pytest.raises(DownloadError, match="not a zip or tar archive"):
        fetch_dataset(with_sources(spec, f"{base}/half.zip"), target, progress=False)
    assert not target.exists() and leftovers(tmp_path) == []


def test_falls_back_to_next_source(server, spec, tmp_path):
    base, served = server
    make_zip(served / "part1.zip", {"a.txt": FILES["a.txt"]}, extra=False)
    make_zip(served / "all.zip", FILES, prefix="repo-abc/data/toy/")
    sources = with_sources(spec, f"{base}/missing.zip", f"{base}/part1.zip", f"{base}/all.zip")
    fetch_dataset(sources, tmp_path / "toy", progress=False)
    assert check_folder(spec, tmp_path / "toy").ok


def test_all_sources_failing_lists_them(server, spec, tmp_path):
    base, _ = server
    with pytest.raises(DownloadError) as info:
        fetch_dataset(with_sources(spec, f"{base}/nope.zip"), tmp_path / "toy", progress=False)
    assert "404" in str(info.value) and f"{base}/nope.zip" in str(info.value)
    assert not (tmp_path / "toy").exists()


def test_progress_on_stderr(server, spec, tmp_path, capsys):
    base, served = server
    make_zip(served / "toy.zip", FILES)
    fetch_dataset(with_sources(spec, f"{base}/toy.zip"), tmp_path / "toy", progress=True)
    err = capsys.readouterr().err
    assert "3 of 3 file(s) to fetch" in err and "done, 3 file(s) verified" in err
    if importlib.util.find_spec("tqdm") is not None:
        assert "100%" in err  # pooch's progress bar


def test_recorded_checksum_lists():
    assert len(read_checksums("tir")) == 1
    assert len(read_checksums("hopkins155")) == 157
    assert len(read_checksums("yaleb")) == 2508
    for name in DATASETS:
        assert list(read_sizes(name)) == list(read_checksums(name))
    assert read_sizes("tir") == {"TIRlib.mat": 177734}  # data/README.md and the manifest
    assert sum(read_sizes("yaleb").values()) == 87_460_159
    assert parse_checksums(f"{'0' * 64} *x/y.bin\n\n") == {"x/y.bin": "0" * 64}
    with pytest.raises(ValueError, match="line 1"):
        parse_checksums("abc  file\n")


def test_cli_fetches_tir_and_verifies(server, tmp_path, monkeypatch, capsys, real_data):
    """End to end with the real TIR checksum, served from a copy of the real file."""
    source = real_data("tir") / "tir" / "TIRlib.mat"
    base, served = server
    (served / "TIRlib.mat").write_bytes(source.read_bytes())
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--quiet", "--url", f"tir={base}/TIRlib.mat", "tir"]) == 0
    assert (data / "tir" / "TIRlib.mat").read_bytes() == source.read_bytes()
    assert "tir: ok, 1 file(s) verified" in capsys.readouterr().out
    assert main(["--data-dir", str(data), "--verify", "tir"]) == 0
    assert "tir: OK" in capsys.readouterr().out

    monkeypatch.setenv("KSSC_TIR_URL", f"{base}/does-not-matter")
    # present: no download
    assert fetch_datasets(["tir"], data, progress=False) == {"tir": data / "tir"}

    (data / "tir" / "TIRlib.mat").write_bytes(b"broken")
    assert main(["--data-dir", str(data), "--verify", "tir"]) == 1
    out = capsys.readouterr().out
    assert "corrupt: TIRlib.mat" in out and sha(b"broken") in out
    monkeypatch.setenv("KSSC_TIR_URL", f"{base}/does-not-exist {base}/TIRlib.mat")
    assert main(["--data-dir", str(data), "--quiet", "tir"]) == 0  # repaired from the second source
    assert (data / "tir" / "TIRlib.mat").read_bytes() == source.read_bytes()


def test_cli_tries_every_dataset_and_reports_each(tmp_path, capsys, real_data):
    """One unreachable source neither stops the others nor leaves an empty folder."""
    source = real_data("tir") / "tir" / "TIRlib.mat"
    data = tmp_path / "data"
    argv = ["--data-dir", str(data), "--quiet", "--url", "hopkins155=http://127.0.0.1:9/gone.zip",
            "--url", "yaleb=http://127.0.0.1:9/gone.zip", "--url", f"tir={source.as_uri()}"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "hopkins155: failed: " in out and "127.0.0.1:9/gone.zip" in out
    assert "yaleb: failed: " in out and f"tir: ok, 1 file(s) verified in {data / 'tir'}" in out
    assert sorted(p.name for p in data.iterdir()) == ["tir"]
    assert (data / "tir" / "TIRlib.mat").read_bytes() == source.read_bytes()

    (data / "tir" / "TIRlib.mat").unlink()
    urls = {"hopkins155": ["http://127.0.0.1:9/gone.zip"], "tir": [source.as_uri()]}
    with pytest.raises(DownloadError, match=r"(?s)^hopkins155: .*127\.0\.0\.1:9/gone\.zip"):
        fetch_datasets(["hopkins155", "tir"], data, urls=urls, progress=False)
    assert (data / "tir" / "TIRlib.mat").read_bytes() == source.read_bytes()  # fetched all the same


def test_cli_verify_reports_missing(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path), "--verify", "hopkins155"]) == 1
    assert "157 missing" in capsys.readouterr().out
    report = verify_datasets(["yaleb"], tmp_path)["yaleb"]
    assert len(report.missing) == 2508 and not report.ok


def test_cli_rejects_unknown_dataset(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path), "mnist"]) == 1
    assert "unknown data set" in capsys.readouterr().err


def test_tar_archive_and_file_url(spec, tmp_path):
    archive = tmp_path / "toy.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for rel, data in FILES.items():
            info = tarfile.TarInfo(f"toy-1.0/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    target = tmp_path / "data" / "toy"
    fetch_dataset(with_sources(spec, archive.as_uri()), target, progress=False)
    assert installed(target) == sorted(FILES) and check_folder(spec, target).ok


def test_oversized_member_stops_at_the_recorded_size(server, spec, tmp_path, monkeypatch):
    """A small archive whose member inflates far beyond its recorded size is cut off.

    It is not written out.
    """
    base, served = server
    bomb = dict(FILES, **{"sub/b.bin": bytes(64 << 20)})
    make_zip(served / "bomb.zip", bomb, extra=False)
    assert (served / "bomb.zip").stat().st_size < 1 << 20
    written = {}

    class CountingFile(io.FileIO):
        def write(self, data):
            written[self.name] = written.get(self.name, 0) + len(data)
            return super().write(data)

    monkeypatch.setattr(fetch_module, "open", CountingFile, raising=False)
    target = tmp_path / "toy"
    with pytest.raises(DownloadError, match=r"sub/b\.bin is larger than the 10240 bytes recorded"):
        fetch_dataset(with_sources(spec, f"{base}/bomb.zip"), target, progress=False)
    assert written and max(written.values()) <= len(FILES["sub/b.bin"])
    assert not target.exists() and leftovers(tmp_path) == []


def test_unsupported_scheme(spec, tmp_path):
    with pytest.raises(DownloadError, match="unsupported URL scheme 'gopher'"):
        fetch_dataset(with_sources(spec, "gopher://example.org/toy.zip"), tmp_path / "toy",
                      progress=False)


def test_interrupted_fetch_leaves_nothing(spec, tmp_path, monkeypatch):
    """Ctrl-C in the middle of a download leaves nothing behind.

    No data set folder, no staging folder, no partial file.
    """
    def interrupted(url, output_file, pooch_instance):
        output_file.write(b"PK\x03\x04 half an archive")  # a capped writer (fetch._capped)
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_module, "_downloader", lambda url, progress: interrupted)
    data = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        fetch_dataset(with_sources(spec, "http://127.0.0.1:9/toy.zip"), data / "toy",
                      progress=False)
    assert list(data.iterdir()) == []


@pytest.mark.parametrize("archive", [False, True], ids=["one file", "archive"])
def test_an_endless_source_stops_at_the_download_cap(tmp_path, spec, monkeypatch, archive):
    # Issue 29.7: a file:///dev/zero source filled the disk.
    monkeypatch.setattr(fetch_module, "_ARCHIVE_SLACK", 1 << 20)
    data = b"x" * 1400
    one = DatasetSpec("one", {"lib.mat": sha(data)}, {"lib.mat": len(data)}, (), "file")
    chosen = spec if archive else one
    cap = fetch_module.download_cap(chosen)
    assert cap == (4 * sum(spec.sizes.values()) + (1 << 20) if archive else 1400)
    with pytest.raises(DownloadError, match=rf"file:///dev/zero.*sent more than {cap} bytes"):
        fetch_dataset(with_sources(chosen, "file:///dev/zero"), tmp_path / "data" / "x",
                      progress=False)
    assert leftovers(tmp_path) == [] and not (tmp_path / "data" / "x").exists()


def test_an_oversized_http_download_stops_at_the_cap(server, tmp_path):
    base, served = server
    data = b"MATLAB 5.0 MAT-file, pretend" * 50
    (served / "huge.mat").write_bytes(data * 200)
    one = DatasetSpec("one", {"lib.mat": sha(data)}, {"lib.mat": len(data)}, (), "file")
    with pytest.raises(DownloadError, match=rf"sent more than {len(data)} bytes"):
        fetch_dataset(with_sources(one, f"{base}/huge.mat"), tmp_path / "one", progress=False)
    assert leftovers(tmp_path) == []


def test_default_sources_try_https_before_plain_http():
    for name, declared in declarations().items():
        schemes = [source.split("://")[0] for source in declared.sources]
        assert schemes[0] == "https", name
        assert schemes == sorted(schemes, key=lambda scheme: scheme != "https"), name


def test_a_member_named_outside_the_folder_is_never_written(spec, tmp_path):
    """Members are written to paths taken from the checksum list, never from their names."""
    archive = tmp_path / "slip.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for rel, data in FILES.items():
            zf.writestr(f"../../{rel}", data)
        zf.writestr("../../escaped.txt", b"outside")
        zf.writestr("/tmp/absolute.txt", b"outside")
    target = tmp_path / "deep" / "data" / "toy"
    fetch_dataset(with_sources(spec, archive.as_uri()), target, progress=False)
    assert installed(target) == sorted(FILES) and check_folder(spec, target).ok
    assert not list(tmp_path.rglob("escaped.txt")) and not list(tmp_path.rglob("absolute.txt"))


def test_pooch_only_downloads():
    """No private pooch name is used and no pooch class subclassed (extraction is ours)."""
    tree = ast.parse(Path(fetch_module.__file__).read_text())
    private = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
               and isinstance(node.value, ast.Name) and node.value.id == "pooch"
               and node.attr.startswith("_")]
    subclassed = [ast.unparse(base) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                  for base in node.bases if ast.unparse(base).startswith("pooch.")]
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("pooch") for alias in node.names]
    assert not private and not subclassed and not imported


def test_a_data_set_without_recorded_sizes_is_capped_at_its_declared_total(server, spec,
                                                                            tmp_path):
    """A new data set records no per-file sizes (metadata/sizes.csv is frozen): its files are
    capped at its declared total, and still verified by their sums."""
    base, served = server
    make_zip(served / "toy.zip", FILES)
    unsized = DatasetSpec("toy", spec.checksums, {}, (f"{base}/toy.zip",), "archive",
                          sum(len(data) for data in FILES.values()))
    assert unsized.size_cap("sub/b.bin") == unsized.total
    fetch_dataset(unsized, tmp_path / "toy", progress=False)
    assert installed(tmp_path / "toy") == sorted(FILES)
