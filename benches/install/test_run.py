"""Tests of benches/install/run on made-up artifacts and made-up output.

.venv/bin/pytest benches/install/test_run.py     (scripts/test.sh install-bench)
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import json
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import report  # noqa: E402


def load_run() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("install_run", str(HERE / "run"))
    spec = importlib.util.spec_from_loader("install_run", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


run = load_run()

# What `python -X importtime -c "import limits"` prints, shortened: the
# site imports first, the package's own line last.
IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       150 |        150 |   _io
import time:       310 |        900 | site
import time:        80 |         80 |     limits.typing
import time:       412 |       4321 |   limits.storage
import time:       250 |       9876 | limits
"""


def test_importtime_takes_the_top_level_module_cumulative_time() -> None:
    assert run.importtime_us(IMPORTTIME, "limits") == 9876.0
    assert run.importtime_us(IMPORTTIME, "limits.storage") == 4321.0


def test_importtime_without_the_module_line_is_an_error() -> None:
    with pytest.raises(ValueError, match="ratekeeper"):
        run.importtime_us(IMPORTTIME, "ratekeeper")


def add(t: tarfile.TarFile, name: str, size: int, link: str | None = None) -> None:
    info = tarfile.TarInfo(name)
    if link is not None:
        info.type, info.linkname = tarfile.SYMTYPE, link
        t.addfile(info)
    else:
        info.size = size
        t.addfile(info, io.BytesIO(b"\0" * size))


def made_up_dist(
    tmp: Path, version: str = "0.1.0", platform_package: bool = True
) -> dict[str, Path]:
    files = {
        "wheel": tmp / f"ratekeeper-{version}-cp39-abi3-manylinux_2_17_x86_64.whl",
        "sdist": tmp / f"ratekeeper-{version}.tar.gz",
        "npm": tmp / f"ratekeeper-{version}.tgz",
        "c": tmp / f"ratekeeper-{version}-x86_64-unknown-linux-gnu.tar.gz",
    }
    with zipfile.ZipFile(files["wheel"], "w") as z:
        z.writestr("ratekeeper/__init__.py", "")
        z.writestr("ratekeeper/_ratekeeper.abi3.so", b"\0" * 3000)
    with tarfile.open(files["sdist"], "w:gz") as t:
        add(t, f"ratekeeper-{version}/PKG-INFO", 10)
    main = {"name": "ratekeeper", "version": version}
    with tarfile.open(files["npm"], "w:gz") as t:
        add(t, "package/index.js", 100)
        if not platform_package:
            add(t, "package/lib/ratekeeper.node", 5000)
        data = json.dumps(main).encode()
        info = tarfile.TarInfo("package/package.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    if platform_package:
        files["npm-platform"] = tmp / f"ratekeeper-linux-x64-gnu-{version}.tgz"
        with tarfile.open(files["npm-platform"], "w:gz") as t:
            add(t, "package/ratekeeper.linux-x64-gnu.node", 4000)
    with tarfile.open(files["c"], "w:gz") as t:
        add(t, "lib/libratekeeper.so.0.1.0", 7000)
        add(t, "lib/libratekeeper.so.0.1", 0, link="libratekeeper.so.0.1.0")
        add(t, "lib/libratekeeper.so", 0, link="libratekeeper.so.0.1")
        add(t, "lib/libratekeeper.a", 20000)
        add(t, "include/ratekeeper.h", 900)
    return files


def test_sizes_name_every_download_and_each_native_library(tmp_path: Path) -> None:
    files = made_up_dist(tmp_path)
    rows = run.sizes(run.artifacts(tmp_path, "0.1.0"))
    by_what = {r["what"]: r for r in rows}
    for key, what in [
        ("wheel", "Python wheel (abi3)"),
        ("sdist", "Python sdist"),
        ("npm", "npm main package"),
        ("npm-platform", "npm platform package"),
        ("c", "C tarball"),
    ]:
        assert by_what[what]["bytes"] == files[key].stat().st_size
    assert by_what["Python extension module, unpacked"]["bytes"] == 3000
    # The platform package's .node; the C library's real file, not its
    # soname links.
    node = by_what["Node.js addon (.node), unpacked"]
    assert (node["bytes"], "linux-x64-gnu" in node["file"]) == (4000, True)
    so = by_what["C shared library, unpacked"]
    assert (so["bytes"], so["file"], so["in"]) == (
        7000,
        "lib/libratekeeper.so.0.1.0",
        files["c"].name,
    )
    assert by_what["C static library, unpacked"]["bytes"] == 20000


def test_without_a_platform_package_the_node_file_comes_from_the_main_one(
    tmp_path: Path,
) -> None:
    made_up_dist(tmp_path, platform_package=False)
    rows = {r["what"]: r for r in run.sizes(run.artifacts(tmp_path, "0.1.0"))}
    assert "npm platform package" not in rows
    assert rows["Node.js addon (.node), unpacked"]["bytes"] == 5000


def test_an_artifact_of_another_version_beside_is_ambiguous_or_missing(tmp_path: Path) -> None:
    made_up_dist(tmp_path)
    made_up_dist(tmp_path, version="0.0.9")
    assert len(run.sizes(run.artifacts(tmp_path, "0.1.0"))) == 9
    (tmp_path / "ratekeeper-0.1.0.tgz").unlink()
    with pytest.raises(SystemExit, match="npm main package"):
        run.artifacts(tmp_path, "0.1.0")
    extra = tmp_path / "ratekeeper-0.1.0-cp39-abi3-musllinux_1_2_x86_64.whl"
    extra.write_bytes(b"")
    with pytest.raises(SystemExit, match="several"):
        run.artifacts(tmp_path, "0.1.0")


def test_interleaved_discards_the_warm_up_round_and_keeps_every_other() -> None:
    calls: list[str] = []

    def contender(name: str) -> object:
        def measure() -> dict[str, float]:
            calls.append(name)
            return {"wall_ms": float(calls.count(name))}

        return measure

    results = run.interleaved({"a": contender("a"), "b": contender("b")}, rounds=3)
    assert len(calls) == 8
    assert results["a"]["wall_ms"] == [2.0, 3.0, 4.0]
    assert results["b"]["wall_ms"] == [2.0, 3.0, 4.0]


def test_the_section_goes_into_the_benchmark_report(tmp_path: Path) -> None:
    py = {
        "ratekeeper": {"import_ms": [2.0, 4.0, 3.0], "wall_ms": [20.0, 21.0, 22.0]},
        "limits": {"import_ms": [30.0, 36.0, 33.0], "wall_ms": [50.0, 51.0, 52.0]},
        "(python -c pass)": {"wall_ms": [15.0, 16.0, 17.0]},
    }
    node = {
        "ratekeeper": {"import_ms": [1.0, 1.0, 1.0], "wall_ms": [40.0, 40.0, 40.0]},
        "rate-limiter-flexible": {"import_ms": [5.0, 5.0, 5.0], "wall_ms": [45.0, 45.0, 45.0]},
        "(node -e 0)": {"wall_ms": [35.0, 35.0, 35.0]},
    }
    sizes = [
        {"what": "Python wheel (abi3)", "file": "w.whl", "bytes": 1536},
        {
            "what": "C library",
            "file": "lib/libratekeeper.so.0.1.0",
            "in": "c.tar.gz",
            "bytes": 2048,
        },
    ]
    peers = {"limits": "5.8.0", "rate-limiter-flexible": "11.4.0"}
    text = run.markdown(sizes, py, node, peers, rounds=3)
    assert "| Python wheel (abi3) | `w.whl` | 1.5 KiB | 1,536 |" in text
    assert "| C library | `lib/libratekeeper.so.0.1.0` in `c.tar.gz` | 2.0 KiB | 2,048 |" in text
    # Medians, and each peer's ratio to ratekeeper's.
    assert "| **ratekeeper** | 3.0 | 1.00 | 21.0 |" in text
    assert "| limits | 33.0 | 11.00 | 51.0 |" in text
    assert "| rate-limiter-flexible | 5.0 | 5.00 | 45.0 |" in text
    assert "| (python -c pass) |  |  | 16.0 |" in text

    results = tmp_path / "results"
    (results / "logs").mkdir(parents=True)
    suite = {
        "format": report.FORMAT,
        "suite": "install",
        "title": "Install: sizes",
        "command": "benches/install/run",
        "notes": "Notes.",
        "tables": [],
        "markdown": text,
    }
    (results / "install.json").write_text(json.dumps(suite), encoding="utf-8")
    out = tmp_path / "BENCHMARKS.md"
    report.write(results, out, earlier=tmp_path / "no-earlier")
    written = out.read_text(encoding="utf-8")
    assert "## Install: sizes" in written
    assert "| limits | 33.0 | 11.00 | 51.0 |" in written
