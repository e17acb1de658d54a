#!/usr/bin/env python3
"""One version for every package of ratekeeper: check it, or set it everywhere.

    scripts/version.py                   prints the version
    scripts/version.py check [--tag vX.Y.Z]
                                         every place agrees with the workspace
    scripts/version.py set X.Y.Z [--date YYYY-MM-DD]
                                         rewrites every place (the one-command bump)

The workspace version (`[workspace.package] version` in Cargo.toml) is the
one source. `check` fails, naming the file, unless every other place agrees:

* Cargo.toml's `[workspace.dependencies]`: every path dependency has a
  `version`, and it is the version (crates.io needs one; a stale one would
  publish a crate depending on the previous release).
* every workspace member's Cargo.toml: `version.workspace = true`, and any
  path dependency that carries a version carries this one.
* Cargo.lock and fuzz/Cargo.lock: the workspace's crates at the version
  (`--locked` builds fail on a stale lock).
* python/pyproject.toml: no version of its own, `dynamic = ["version"]`,
  and maturin's manifest a workspace member (maturin takes the version
  from it).
* node/package.json and node/package-lock.json (the root package): the
  version; the main package's optionalDependencies are exactly the
  platform packages under node/npm/, each at the version, and each
  node/npm/*/package.json has it.
* include/ratekeeper.h: RK_VERSION_MAJOR, _MINOR and _PATCH are the
  version's numbers and RK_VERSION_NUMBER is MAJOR * 1000000 + MINOR * 1000
  + PATCH; bindings/c/src/*.rs's constants that cbindgen writes them from
  agree (a compile-time assertion there ties them to the crate too).
* CHANGELOG.md: the newest release entry (Keep a Changelog's
  `## [X.Y.Z] - YYYY-MM-DD`, or `- Unreleased` until the release is tagged)
  is this version's, with its link reference (`[X.Y.Z]: URL`).

`check --tag vX.Y.Z` (the release workflow's) also wants the tag to be `v`
and the version, and the CHANGELOG entry dated. `set` writes the version
into every place above (the C header as cbindgen would write it) and into
CHANGELOG.md: it renames an `## [Unreleased]` section, or a not yet dated
entry, to the new version, or opens a new entry above a dated one;
`--date` dates the entry (the release commit: `set 0.1.0 --date
2026-11-27`). `--root DIR` works on another tree (the tests' fixtures).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("scripts/version.py needs Python 3.11 or newer (tomllib)")
import tomllib

ROOT = Path(__file__).resolve().parent.parent

# Semantic Versioning's X.Y.Z, with an optional pre-release (0.2.0-rc.1).
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
NOT_DATED = "Unreleased"
HEADING = re.compile(r"^## \[([^\]]+)\](?: - (.+?))?[ \t]*$", re.MULTILINE)
HEADER_PARTS = ("MAJOR", "MINOR", "PATCH")
LOCKFILES = ("Cargo.lock", "fuzz/Cargo.lock")


def numbers(version: str) -> tuple[int, int, int]:
    m = SEMVER.fullmatch(version)
    if not m:
        raise ValueError(f"{version!r} is not a version X.Y.Z (Semantic Versioning)")
    return int(m[1]), int(m[2]), int(m[3])


def header_number(major: int, minor: int, patch: int) -> int:
    """RK_VERSION_NUMBER as the header documents it: one number for `#if`."""
    return major * 1_000_000 + minor * 1_000 + patch


@dataclass
class Tree:
    """The files of one checkout that carry the version."""

    root: Path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")

    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def toml(self, rel: str) -> dict[str, object]:
        return tomllib.loads(self.read(rel))

    def version(self) -> str:
        return str(_get(self.toml("Cargo.toml"), "workspace", "package", "version"))

    def members(self) -> list[str]:
        """Each member's directory, relative to the root."""
        members = _get(self.toml("Cargo.toml"), "workspace", "members")
        return [str(m) for m in members] if isinstance(members, list) else []

    def member_names(self) -> set[str]:
        names = set()
        for member in self.members():
            name = _get(self.toml(f"{member}/Cargo.toml"), "package", "name")
            if isinstance(name, str):
                names.add(name)
        return names

    def npm_platforms(self) -> list[str]:
        """node/npm/*/package.json, relative to the root."""
        return sorted(
            p.relative_to(self.root).as_posix() for p in self.root.glob("node/npm/*/package.json")
        )

    def c_sources(self) -> list[str]:
        """The Rust sources of the C library that define RK_VERSION_* constants."""
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.glob("bindings/c/src/**/*.rs")
            if "RK_VERSION_" in p.read_text(encoding="utf-8")
        )


def _get(table: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(table, dict):
            return None
        table = table.get(key)
    return table


def _dependency_tables(manifest: dict[str, object]) -> list[dict[str, object]]:
    """Every dependency table of a manifest, the target-specific ones too."""
    kinds = ("dependencies", "dev-dependencies", "build-dependencies")
    tables = [manifest.get(kind) for kind in kinds]
    targets = manifest.get("target")
    if isinstance(targets, dict):
        for target in targets.values():
            if isinstance(target, dict):
                tables.extend(target.get(kind) for kind in kinds)
    return [t for t in tables if isinstance(t, dict)]


# ---------------------------------------------------------------- check


def check(tree: Tree, tag: str | None = None) -> list[str]:
    """Every disagreement with the workspace version, one line each."""
    try:
        version = tree.version()
        numbers(version)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        return [f"Cargo.toml: no workspace version: {e}"]
    errors: list[str] = []
    for place in (_cargo, _lockfiles, _python, _node, _c_header, _changelog):
        try:
            errors.extend(place(tree, version))
        except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
            errors.append(f"{place.__name__.strip('_')}: {e}")
    if tag is not None:
        if tag != f"v{version}":
            errors.append(f"the tag is {tag}, the workspace version {version} (tag v{version})")
        entry = _changelog_entry(tree.read("CHANGELOG.md"), version)
        if entry is not None and not DATE.fullmatch(entry):
            errors.append(
                f"CHANGELOG.md: the entry of {version} is not dated ({entry!r}): "
                f"scripts/version.py set {version} --date YYYY-MM-DD"
            )
    return errors


def _cargo(tree: Tree, version: str) -> list[str]:
    errors = []
    workspace_deps = _get(tree.toml("Cargo.toml"), "workspace", "dependencies")
    for name, spec in (workspace_deps or {}).items() if isinstance(workspace_deps, dict) else []:
        if isinstance(spec, dict) and "path" in spec and spec.get("version") != version:
            errors.append(
                f"Cargo.toml: [workspace.dependencies] {name} has version "
                f"{spec.get('version')!r}, want {version!r}"
            )
    for member in tree.members():
        rel = f"{member}/Cargo.toml"
        manifest = tree.toml(rel)
        if _get(manifest, "package", "version") != {"workspace": True}:
            errors.append(
                f"{rel}: version is {_get(manifest, 'package', 'version')!r}, "
                "want version.workspace = true"
            )
        for table in _dependency_tables(manifest):
            for name, spec in table.items():
                if (
                    isinstance(spec, dict)
                    and "path" in spec
                    and spec.get("version", version) != version
                ):
                    errors.append(
                        f"{rel}: the path dependency {name} has version "
                        f"{spec['version']!r}, want {version!r}"
                    )
    return errors


def _lockfiles(tree: Tree, version: str) -> list[str]:
    errors = []
    members = tree.member_names()
    for rel in LOCKFILES:
        if not tree.exists(rel):
            continue
        packages = tree.toml(rel).get("package")
        for package in packages if isinstance(packages, list) else []:
            # A path package has no source; a registry's namesake would have one.
            path_member = package.get("name") in members and "source" not in package
            if path_member and package.get("version") != version:
                errors.append(
                    f"{rel}: {package['name']} is at {package.get('version')!r}, "
                    f"want {version!r} (cargo update --workspace)"
                )
    return errors


def _python(tree: Tree, version: str) -> list[str]:
    rel = "python/pyproject.toml"
    pyproject = tree.toml(rel)
    errors = []
    project = pyproject.get("project")
    if not isinstance(project, dict):
        return [f"{rel}: no [project]"]
    if "version" in project:
        errors.append(
            f"{rel}: [project] version = {project['version']!r}: "
            'want none, dynamic = ["version"] (maturin\'s, from Cargo)'
        )
    if "version" not in (project.get("dynamic") or []):
        errors.append(f'{rel}: "version" is not in [project] dynamic (maturin takes it from Cargo)')
    manifest = _get(pyproject, "tool", "maturin", "manifest-path")
    crate = (
        (tree.root / "python" / str(manifest)).resolve().parent
        if manifest
        else tree.root / "python"
    )
    member_dirs = {(tree.root / m).resolve() for m in tree.members()}
    if crate.resolve() not in member_dirs:
        errors.append(
            f"{rel}: maturin builds {manifest!r}, not a workspace member: "
            "its version would not be the workspace's"
        )
    return errors


def _node(tree: Tree, version: str) -> list[str]:
    errors = []
    main = json.loads(tree.read("node/package.json"))
    if main.get("version") != version:
        errors.append(f"node/package.json: version {main.get('version')!r}, want {version!r}")
    platforms: dict[str, str] = {}
    for rel in tree.npm_platforms():
        package = json.loads(tree.read(rel))
        platforms[str(package.get("name"))] = rel
        if package.get("version") != version:
            errors.append(f"{rel}: version {package.get('version')!r}, want {version!r}")
    optional = main.get("optionalDependencies") or {}
    for name, wanted in sorted(optional.items()):
        if name not in platforms:
            errors.append(
                f"node/package.json: optionalDependencies names {name}, which no "
                "node/npm/*/package.json is"
            )
        if wanted != version:
            errors.append(
                f"node/package.json: optionalDependencies {name} is {wanted!r}, "
                f"want {version!r} (exactly: the binary of this very release)"
            )
    for name, rel in sorted(platforms.items()):
        if name not in optional:
            errors.append(f"node/package.json: optionalDependencies lacks {name} ({rel})")
    if tree.exists("node/package-lock.json"):
        lock = json.loads(tree.read("node/package-lock.json"))
        root = (lock.get("packages") or {}).get("", {})
        if lock.get("version") != version:
            errors.append(
                f"node/package-lock.json: version {lock.get('version')!r}, want {version!r}"
            )
        if root.get("version") != version:
            errors.append(
                f'node/package-lock.json: packages[""] version {root.get("version")!r}, '
                f"want {version!r}"
            )
        lock_optional = root.get("optionalDependencies") or {}
        if lock_optional and lock_optional != optional:
            errors.append(
                'node/package-lock.json: packages[""] optionalDependencies '
                f"{lock_optional}, package.json's are {optional}"
            )
    return errors


def _define(header: str, name: str) -> str | None:
    header = header.replace("\\\n", " ")  # a #define continued on the next line
    m = re.search(rf"^#define {name}\s+(.+?)\s*$", header, re.MULTILINE)
    return m[1] if m else None


def _evaluate(expression: str, values: dict[str, int]) -> int | None:
    """A #define's integer expression of the other macros, or None."""
    for name, value in values.items():
        expression = re.sub(rf"\b{name}\b", str(value), expression)
    expression = re.sub(r"\b(\d+)[uUlL]*\b", r"\1", expression)
    if not re.fullmatch(r"[\d\s()+*]+", expression):
        return None
    result = eval(expression, {"__builtins__": {}})  # digits, + * and parentheses only
    return result if isinstance(result, int) else None


def _c_header(tree: Tree, version: str) -> list[str]:
    rel = "include/ratekeeper.h"
    header = tree.read(rel)
    want = dict(zip(HEADER_PARTS, numbers(version)))
    errors = []
    values: dict[str, int] = {}
    for part, number in want.items():
        name = f"RK_VERSION_{part}"
        found = _define(header, name)
        if found is None:
            errors.append(f"{rel}: no #define {name} (want {number})")
            continue
        value = _evaluate(found, {})
        if value is not None:
            values[name] = value
        if value != number:
            errors.append(f"{rel}: {name} is {found}, want {number}")
    found = _define(header, "RK_VERSION_NUMBER")
    number = header_number(*numbers(version))
    if found is None:
        errors.append(f"{rel}: no #define RK_VERSION_NUMBER (want {number})")
    elif _evaluate(found, values) != number:
        errors.append(
            f"{rel}: RK_VERSION_NUMBER is {found}, want {number} "
            "(MAJOR * 1000000 + MINOR * 1000 + PATCH)"
        )
    for source in tree.c_sources():
        text = tree.read(source)
        for part, wanted in want.items():
            m = re.search(rf"const RK_VERSION_{part}: \w+ = (\d+)\w*;", text)
            if m and int(m[1]) != wanted:
                errors.append(f"{source}: RK_VERSION_{part} is {m[1]}, want {wanted}")
    return errors


def _changelog_entry(text: str, version: str) -> str | None:
    """The date (or NOT_DATED) of the newest release entry, if it is `version`'s."""
    for name, date in HEADING.findall(text):
        if name.lower() == "unreleased":
            continue
        return (date or "") if name == version else None
    return None


def _changelog(tree: Tree, version: str) -> list[str]:
    rel = "CHANGELOG.md"
    text = tree.read(rel)
    releases = [(n, d) for n, d in HEADING.findall(text) if n.lower() != "unreleased"]
    if not releases:
        return [f"{rel}: no release entry; want `## [{version}] - {NOT_DATED}` or a date"]
    name, date = releases[0]
    errors = []
    if name != version:
        errors.append(f"{rel}: the newest entry is {name}'s, want {version}'s")
    elif not (date == NOT_DATED or DATE.fullmatch(date)):
        errors.append(
            f"{rel}: `## [{name}] - {date}`: "
            f"want a date YYYY-MM-DD or {NOT_DATED} after the version"
        )
    if name == version and not re.search(rf"^\[{re.escape(version)}\]: \S+", text, re.MULTILINE):
        errors.append(f"{rel}: no link reference `[{version}]: URL` for the entry's heading")
    return errors


# ------------------------------------------------------------------ set


def set_version(tree: Tree, version: str, date: str | None = None) -> None:
    """Writes `version` into every place `check` reads."""
    new = numbers(version)
    if date is not None and not DATE.fullmatch(date):
        raise ValueError(f"--date {date!r}: want YYYY-MM-DD")
    old = tree.version()
    members = tree.member_names()

    def version_in_line(line: str) -> str:
        return re.sub(r'(\bversion\s*=\s*")[^"]*(")', rf"\g<1>{version}\g<2>", line, count=1)

    # Cargo.toml: the workspace version and the path dependencies' versions.
    lines = tree.read("Cargo.toml").splitlines(keepends=True)
    section = ""
    for i, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip()
        elif (section == "[workspace.package]" and re.match(r"version\s*=", line)) or (
            re.search(r"\bpath\s*=", line) and re.search(r"\bversion\s*=", line)
        ):
            lines[i] = version_in_line(line)
    tree.write("Cargo.toml", "".join(lines))
    for member in tree.members():
        rel = f"{member}/Cargo.toml"
        tree.write(
            rel,
            "".join(
                version_in_line(line)
                if re.search(r"\bpath\s*=", line) and re.search(r"\bversion\s*=", line)
                else line
                for line in tree.read(rel).splitlines(keepends=True)
            ),
        )
    for rel in LOCKFILES:
        if tree.exists(rel):
            tree.write(rel, _set_lock(tree.read(rel), members, version))

    # Node.js: the main package, its lock's root, the platform packages.
    def set_json(rel: str, edit: dict[str, object]) -> None:
        data = json.loads(tree.read(rel))
        edit_into(data, edit)
        tree.write(rel, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def edit_into(data: dict[str, object], edit: dict[str, object]) -> None:
        for key, value in edit.items():
            if isinstance(value, dict):
                inner = data.get(key)
                if isinstance(inner, dict):
                    edit_into(inner, value)
            elif key in data:
                data[key] = value

    main = json.loads(tree.read("node/package.json"))
    optional = {name: version for name in main.get("optionalDependencies") or {}}
    set_json("node/package.json", {"version": version, "optionalDependencies": optional})
    if tree.exists("node/package-lock.json"):
        set_json(
            "node/package-lock.json",
            {
                "version": version,
                "packages": {"": {"version": version, "optionalDependencies": optional}},
            },
        )
    for rel in tree.npm_platforms():
        set_json(rel, {"version": version})

    # C: the constants cbindgen reads, and the header as it would write it.
    values = dict(zip(HEADER_PARTS, new))
    for rel in tree.c_sources():
        text = tree.read(rel)
        for part, number in values.items():
            text = re.sub(
                rf"(const RK_VERSION_{part}: \w+ = )\d+(\w*;)", rf"\g<1>{number}\g<2>", text
            )
        tree.write(rel, text)
    header = tree.read("include/ratekeeper.h")
    for part, number in values.items():
        header = re.sub(
            rf"^(#define RK_VERSION_{part}\s+)\d+\w*$",
            rf"\g<1>{number}",
            header,
            flags=re.MULTILINE,
        )
    header = re.sub(
        r"^(#define RK_VERSION_NUMBER\s+)\d+\w*$",
        rf"\g<1>{header_number(*new)}",
        header,
        flags=re.MULTILINE,
    )
    tree.write("include/ratekeeper.h", header)

    repository = _get(tree.toml("Cargo.toml"), "workspace", "package", "repository")
    tree.write(
        "CHANGELOG.md", _set_changelog(tree.read("CHANGELOG.md"), old, version, date, repository)
    )


def _set_lock(text: str, members: set[str], version: str) -> str:
    def package(m: re.Match[str]) -> str:
        block = m[0]
        name = re.search(r'^name = "([^"]+)"', block, re.MULTILINE)
        if name and name[1] in members and not re.search(r"^source = ", block, re.MULTILINE):
            block = re.sub(
                r'^version = "[^"]*"', f'version = "{version}"', block, flags=re.MULTILINE
            )
        return block

    return re.sub(r"^\[\[package\]\]\n(?:[^\[\n].*\n|\n(?!\[))*", package, text, flags=re.MULTILINE)


def _set_changelog(text: str, old: str, version: str, date: str | None, repository: object) -> str:
    url = f"{str(repository).rstrip('/')}/releases/tag/v{version}" if repository else None
    headings = list(HEADING.finditer(text))
    releases = [h for h in headings if h[1].lower() != "unreleased"]
    unreleased = next((h for h in headings if h[1].lower() == "unreleased"), None)
    heading = f"## [{version}] - {date or NOT_DATED}"
    mine = next((h for h in releases if h[1] == version), None)
    if mine is not None:
        if date is not None:
            text = text[: mine.start()] + heading + text[mine.end() :]
    elif unreleased is not None:
        text = text[: unreleased.start()] + heading + text[unreleased.end() :]
    elif releases and not DATE.fullmatch(releases[0][2] or ""):
        # The newest entry is not released yet: its changes are this version's.
        top = releases[0]
        text = text[: top.start()] + heading + text[top.end() :]
        if url:  # its link reference, in place
            text = re.sub(
                rf"^\[{re.escape(top[1])}\]: .*$",
                f"[{version}]: {url}",
                text,
                count=1,
                flags=re.MULTILINE,
            )
    elif releases:
        top = releases[0]
        text = text[: top.start()] + heading + "\n\n" + text[top.start() :]
    else:
        text = text.rstrip("\n") + "\n\n" + heading + "\n"
    if url and not re.search(rf"^\[{re.escape(version)}\]: ", text, re.MULTILINE):
        # Beside the other link references (wherever they are), newest first.
        refs = re.search(r"^\[[^\]]+\]: \S+$", text, re.MULTILINE)
        if refs:
            text = text[: refs.start()] + f"[{version}]: {url}\n" + text[refs.start() :]
        else:
            text = text.rstrip("\n") + f"\n\n[{version}]: {url}\n"
    return text


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/version.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    commands = parser.add_subparsers(dest="command")
    check_cmd = commands.add_parser("check", help="every place agrees with the workspace version")
    check_cmd.add_argument("--tag", help="a release tag, vX.Y.Z: it must name this version")
    set_cmd = commands.add_parser("set", help="write a version into every place")
    set_cmd.add_argument("version")
    set_cmd.add_argument("--date", help="date the CHANGELOG entry (YYYY-MM-DD)")
    args = parser.parse_args(argv)
    tree = Tree(args.root)
    if args.command == "check":
        errors = check(tree, args.tag)
        for error in errors:
            print(f"version: {error}", file=sys.stderr)
        if errors:
            return 1
        print(f"version: {tree.version()} everywhere")
        return 0
    if args.command == "set":
        try:
            set_version(tree, args.version, args.date)
        except ValueError as e:
            parser.error(str(e))
        errors = check(tree)
        for error in errors:
            print(f"version: still {error}", file=sys.stderr)
        return 1 if errors else 0
    print(tree.version())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
