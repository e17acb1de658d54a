"""Tests of scripts/version.py: each place alone out of step fails `check`; `set` mends all.

    .venv/bin/pytest scripts/test_version.py     (the `versions` stage runs it)

The fixture is a small tree with every place the script reads, at 0.1.0,
the way the repository lays them out (the npm platform packages and the
header's macros included, whichever of them the repository has yet).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pytest
import version

PLATFORMS = ("linux-x64-gnu", "darwin-arm64")

FILES = {
    "Cargo.toml": """\
[workspace]
members = ["crates/core", "crates/std", "bindings/c", "bindings/python"]

[workspace.package]
version = "0.1.0"
repository = "https://github.com/ratekeeper/ratekeeper"

[workspace.dependencies]
ratekeeper-core = { path = "crates/core", version = "0.1.0" }
ratekeeper = { path = "crates/std", version = "0.1.0" }
libc = "0.2"
""",
    "crates/core/Cargo.toml": """\
[package]
name = "ratekeeper-core"
version.workspace = true
""",
    "crates/std/Cargo.toml": """\
[package]
name = "ratekeeper"
version.workspace = true

[dependencies]
ratekeeper-core.workspace = true

[target.'cfg(unix)'.dev-dependencies]
ratekeeper-core = { path = "../core", version = "0.1.0", features = [] }
""",
    "bindings/c/Cargo.toml": """\
[package]
name = "ratekeeper-c"
version.workspace = true
publish = false

[dependencies]
ratekeeper.workspace = true
ratekeeper-conformance = { path = "../../tests/conformance" }
""",
    "bindings/c/src/version.rs": """\
pub const RK_VERSION_MAJOR: u32 = 0;
pub const RK_VERSION_MINOR: u32 = 1;
pub const RK_VERSION_PATCH: u32 = 0;
pub const RK_VERSION_NUMBER: u32 =
    RK_VERSION_MAJOR * 1000000 + RK_VERSION_MINOR * 1000 + RK_VERSION_PATCH;
""",
    "bindings/python/Cargo.toml": """\
[package]
name = "ratekeeper-python"
version.workspace = true
""",
    "Cargo.lock": """\
version = 4

[[package]]
name = "libc"
version = "0.2.1"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "ratekeeper"
version = "0.1.0"
dependencies = [
 "ratekeeper-core",
]

[[package]]
name = "ratekeeper-core"
version = "0.1.0"
""",
    "fuzz/Cargo.lock": """\
version = 4

[[package]]
name = "ratekeeper-core"
version = "0.1.0"

[[package]]
name = "ratekeeper-fuzz"
version = "0.0.0"
dependencies = [
 "ratekeeper-core",
]
""",
    "python/pyproject.toml": """\
[project]
name = "ratekeeper"
dynamic = ["version"]

[tool.maturin]
manifest-path = "../bindings/python/Cargo.toml"
""",
    "include/ratekeeper.h": """\
#define RK_VERSION_MAJOR 0

#define RK_VERSION_MINOR 1

#define RK_VERSION_PATCH 0

#define RK_VERSION_NUMBER (((RK_VERSION_MAJOR * 1000000) + (RK_VERSION_MINOR * 1000)) \
  + RK_VERSION_PATCH)

const char *rk_version(void);
""",
    "CHANGELOG.md": """\
# Changelog

## [0.1.0] - Unreleased

### Added

- Everything.

[0.1.0]: https://github.com/ratekeeper/ratekeeper/releases/tag/v0.1.0
""",
}


def _json(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


FILES["node/package.json"] = _json(
    {
        "name": "ratekeeper",
        "version": "0.1.0",
        "optionalDependencies": {f"ratekeeper-{p}": "0.1.0" for p in PLATFORMS},
        "devDependencies": {"typescript": "5.0.0"},
    }
)
FILES["node/package-lock.json"] = _json(
    {
        "name": "ratekeeper",
        "version": "0.1.0",
        "lockfileVersion": 3,
        "packages": {
            "": {
                "name": "ratekeeper",
                "version": "0.1.0",
                "optionalDependencies": {f"ratekeeper-{p}": "0.1.0" for p in PLATFORMS},
            },
            "node_modules/typescript": {"version": "5.0.0"},
        },
    }
)
for _platform in PLATFORMS:
    FILES[f"node/npm/{_platform}/package.json"] = _json(
        {"name": f"ratekeeper-{_platform}", "version": "0.1.0", "os": ["linux"]}
    )


def sub(rel: str, old: str, new: str) -> Callable[[Path], None]:
    """A mutation: the first `old` in `rel` becomes `new` (which must be there)."""

    def apply(root: Path) -> None:
        path = root / rel
        text = path.read_text()
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, 1))

    return apply


def edit_json(rel: str, edit: Callable[[dict[str, object]], object]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / rel
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(_json(data))

    return apply


def _optional(data: dict[str, object]) -> dict[str, str]:
    optional = data["optionalDependencies"]
    assert isinstance(optional, dict)
    return optional


def _lock_root(data: dict[str, object]) -> dict[str, object]:
    packages = data["packages"]
    assert isinstance(packages, dict)
    root = packages[""]
    assert isinstance(root, dict)
    return root


# Each place the version lives, changed alone, and the file check must name.
MUTATIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "workspace version": (
        sub("Cargo.toml", 'version = "0.1.0"\nrep', 'version = "0.1.1"\nrep'),
        "",
    ),
    "workspace.dependencies version": (
        sub("Cargo.toml", 'crates/std", version = "0.1.0"', 'crates/std", version = "0.0.9"'),
        "Cargo.toml",
    ),
    "workspace.dependencies path without version": (
        sub("Cargo.toml", 'crates/std", version = "0.1.0"', 'crates/std"'),
        "Cargo.toml",
    ),
    "a member's own version": (
        sub("crates/core/Cargo.toml", "version.workspace = true", 'version = "0.1.0"'),
        "crates/core/Cargo.toml",
    ),
    "a member's path dependency": (
        sub("crates/std/Cargo.toml", 'version = "0.1.0"', 'version = "0.1"'),
        "crates/std/Cargo.toml",
    ),
    "Cargo.lock": (
        sub(
            "Cargo.lock",
            'name = "ratekeeper-core"\nversion = "0.1.0"',
            'name = "ratekeeper-core"\nversion = "0.0.1"',
        ),
        "Cargo.lock",
    ),
    "fuzz/Cargo.lock": (
        sub("fuzz/Cargo.lock", 'version = "0.1.0"', 'version = "0.0.1"'),
        "fuzz/Cargo.lock",
    ),
    "pyproject static version": (
        sub("python/pyproject.toml", 'dynamic = ["version"]', 'version = "0.1.0"'),
        "python/pyproject.toml",
    ),
    "pyproject builds a crate outside the workspace": (
        sub("python/pyproject.toml", "../bindings/python/", "../elsewhere/"),
        "python/pyproject.toml",
    ),
    "node/package.json version": (
        edit_json("node/package.json", lambda d: d.update(version="0.1.1")),
        "node/package.json",
    ),
    "optionalDependencies version": (
        edit_json(
            "node/package.json",
            lambda d: _optional(d).update({"ratekeeper-darwin-arm64": "^0.1.0"}),
        ),
        "node/package.json",
    ),
    "optionalDependencies lacks a platform": (
        edit_json("node/package.json", lambda d: _optional(d).pop("ratekeeper-darwin-arm64")),
        "node/package.json",
    ),
    "optionalDependencies names no platform package": (
        edit_json(
            "node/package.json", lambda d: _optional(d).update({"ratekeeper-sunos-x64": "0.1.0"})
        ),
        "node/package.json",
    ),
    "a platform package's version": (
        edit_json("node/npm/linux-x64-gnu/package.json", lambda d: d.update(version="0.1.1")),
        "node/npm/linux-x64-gnu/package.json",
    ),
    "package-lock version": (
        edit_json("node/package-lock.json", lambda d: d.update(version="0.0.1")),
        "node/package-lock.json",
    ),
    "package-lock root package version": (
        edit_json("node/package-lock.json", lambda d: _lock_root(d).update(version="0.0.1")),
        "node/package-lock.json",
    ),
    "RK_VERSION_MAJOR": (sub("include/ratekeeper.h", "MAJOR 0", "MAJOR 1"), "include/ratekeeper.h"),
    "RK_VERSION_MINOR": (sub("include/ratekeeper.h", "MINOR 1", "MINOR 2"), "include/ratekeeper.h"),
    "RK_VERSION_PATCH": (sub("include/ratekeeper.h", "PATCH 0", "PATCH 3"), "include/ratekeeper.h"),
    "RK_VERSION_NUMBER": (
        sub("include/ratekeeper.h", "MINOR * 1000))", "MINOR * 100))"),
        "include/ratekeeper.h",
    ),
    "RK_VERSION_NUMBER missing": (
        sub("include/ratekeeper.h", "#define RK_VERSION_NUMBER", "#define RK_VERSION_NUM"),
        "include/ratekeeper.h",
    ),
    "the Rust constant of the header": (
        sub("bindings/c/src/version.rs", "PATCH: u32 = 0", "PATCH: u32 = 1"),
        "bindings/c/src/version.rs",
    ),
    "CHANGELOG entry's version": (sub("CHANGELOG.md", "## [0.1.0]", "## [0.1.1]"), "CHANGELOG.md"),
    "CHANGELOG entry's date": (sub("CHANGELOG.md", "- Unreleased", "- soon"), "CHANGELOG.md"),
    "CHANGELOG newest entry another version's": (
        sub("CHANGELOG.md", "## [0.1.0]", "## [0.2.0] - 2026-01-01\n\n## [0.1.0]"),
        "CHANGELOG.md",
    ),
    "CHANGELOG link reference": (sub("CHANGELOG.md", "[0.1.0]: ", "[0.1.1]: "), "CHANGELOG.md"),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def snapshot(root: Path) -> dict[str, str]:
    return {rel: (root / rel).read_text() for rel in FILES}


def test_the_fixture_agrees(root: Path) -> None:
    assert version.check(version.Tree(root)) == []
    assert version.main(["--root", str(root), "check"]) == 0


@pytest.mark.parametrize("place", MUTATIONS)
def test_each_place_changed_alone_fails(root: Path, place: str) -> None:
    mutate, rel = MUTATIONS[place]
    mutate(root)
    errors = version.check(version.Tree(root))
    assert errors != [], f"{place}: check passed"
    assert any(e.startswith(rel) for e in errors), errors
    assert version.main(["--root", str(root), "check"]) == 1


def test_set_writes_every_place_and_back(root: Path) -> None:
    tree = version.Tree(root)
    before = snapshot(root)
    assert version.main(["--root", str(root), "set", "1.2.3"]) == 0
    after = snapshot(root)
    assert version.check(tree) == []
    assert tree.version() == "1.2.3"
    for rel, text in after.items():
        if "0.1.0" in before[rel] or "RK_VERSION_MINOR" in before[rel]:
            assert text != before[rel], f"set left {rel} alone"
        assert "0.1.0" not in text, rel
    header = after["include/ratekeeper.h"]
    assert "#define RK_VERSION_MAJOR 1\n" in header
    assert "#define RK_VERSION_MINOR 2\n" in header
    assert "#define RK_VERSION_PATCH 3\n" in header
    assert 'version = "0.0.0"' in after["fuzz/Cargo.lock"]  # the fuzz crate's own
    assert '"typescript": "5.0.0"' in after["node/package.json"]
    assert "## [1.2.3] - Unreleased" in after["CHANGELOG.md"]
    assert version.main(["--root", str(root), "set", "0.1.0"]) == 0
    assert snapshot(root) == before


def test_a_release_then_a_bump(root: Path) -> None:
    tree = version.Tree(root)
    tag = ["--root", str(root), "check", "--tag"]
    assert version.main([*tag, "v0.1.0"]) == 1, "an undated entry is not releasable"
    version.set_version(tree, "0.1.0", "2026-11-27")
    assert version.main([*tag, "v0.1.0"]) == 0
    assert version.main([*tag, "v0.1.1"]) == 1, "a tag of another version"
    version.set_version(tree, "0.2.0")
    assert version.check(tree) == []
    changelog = (root / "CHANGELOG.md").read_text()
    assert changelog.index("## [0.2.0] - Unreleased") < changelog.index("## [0.1.0] - 2026-11-27")
    assert "[0.1.0]: " in changelog
    assert "[0.2.0]: https://github.com/ratekeeper/ratekeeper/releases/tag/v0.2.0" in changelog


def test_an_unreleased_section_becomes_the_entry(root: Path) -> None:
    tree = version.Tree(root)
    sub("CHANGELOG.md", "## [0.1.0] - Unreleased", "## [Unreleased]\n\n## [0.1.0] - 2026-01-01")(
        root
    )
    assert version.check(tree) == []  # development after 0.1.0's release
    version.set_version(tree, "0.1.1")
    changelog = (root / "CHANGELOG.md").read_text()
    assert "## [0.1.1] - Unreleased\n\n## [0.1.0] - 2026-01-01" in changelog
    assert version.check(tree) == []


@pytest.mark.parametrize("bad", ["1.2", "v1.2.3", "01.2.3", "1.2.3.4"])
def test_not_a_version(root: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="not a version"):
        version.set_version(version.Tree(root), bad)
    assert version.check(version.Tree(root)) == []


def test_set_on_the_repository_is_exact(tmp_path: Path) -> None:
    here = version.Tree(version.ROOT)
    rels = [
        "Cargo.toml",
        *version.LOCKFILES,
        *(f"{m}/Cargo.toml" for m in here.members()),
        "python/pyproject.toml",
        "node/package.json",
        "node/package-lock.json",
        *here.npm_platforms(),
        *here.c_sources(),
        "include/ratekeeper.h",
        "CHANGELOG.md",
    ]
    for rel in rels:
        if here.exists(rel):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(version.ROOT / rel, tmp_path / rel)
    before = {rel: (tmp_path / rel).read_text() for rel in rels if (tmp_path / rel).exists()}
    version.set_version(version.Tree(tmp_path), here.version())
    assert {rel: (tmp_path / rel).read_text() for rel in before} == before
    # And there and back: the CHANGELOG's entry and link renamed in place.
    version.set_version(version.Tree(tmp_path), "9.8.7")
    assert version.Tree(tmp_path).version() == "9.8.7"
    assert "## [9.8.7] - " in (tmp_path / "CHANGELOG.md").read_text()
    version.set_version(version.Tree(tmp_path), here.version())
    assert {rel: (tmp_path / rel).read_text() for rel in before} == before
