#!/usr/bin/env python3
"""Every fenced code block of the repository's markdown, and how each is checked.

    scripts/doc_snippets.py check              every block is of a kind a test checks
    scripts/doc_snippets.py rust [FILE...]     runs the Rust blocks (rustdoc --test)
    scripts/doc_snippets.py extract LANG DIR   writes LANG's blocks (c, js, ts) as programs
        [--redis URL]                          ... only those that need a Redis, pointed at URL
    scripts/doc_snippets.py run-sh             runs the shell blocks marked `run`

A block's info string is its language and then attributes, e.g. ```c redis:
GitHub shows only the language, rustdoc reads the attributes it knows. The
markdown files are every `*.md` git tracks or would track. What checks what
(`KINDS` below is the one list):

* rust: rustdoc. `rust` builds `ratekeeper-redis` (and so `ratekeeper` and
  `ratekeeper-core`) and `ratekeeper-tower` with cargo, then runs
  `rustdoc --test` on every markdown file with a Rust block, against those
  crates: each block is a doctest, as in a crate's docs (`?` and a last
  `Ok::<(), E>(())` allowed).
  A block needing a Redis is `rust no_run redis`: rustdoc compiles it but
  cannot point it at the test's server, and `no_run` is refused without
  `redis`, the one reason a block may not run.
* c: each block is a program, compiled against include/ratekeeper.h with the
  C tests' flags (-std=c11 -Wall -Wextra -Werror) and run under valgrind
  (tests/c's `snippets` target; `c redis` blocks under ASan in its
  `redis-snippets`, part of `redis-check`). A block without a `main` is the
  body of `int main(void)`, with `<ratekeeper.h>` included above it and its
  own `#include` lines moved there; any other header it uses, it must
  include. A call that returns an `rk_status` other than RK_OK fails the
  program (a block may ignore statuses, as a sketch does, but none may
  fail). `#line` points errors at the markdown.
* js, javascript, mjs: each block is an ES module (top-level `await`
  allowed) run by node against the built package, imported by its name,
  and type-checked by tsc (checkJs) against the committed declarations
  (node/test/doc-snippets.test.mjs; `js redis` blocks in node's Redis stage).
* ts, typescript: type-checked by tsc, likewise.
* python: each block run in a namespace of its own, and its `main()` too if
  it defines one (python/tests/test_doc_snippets.py; `python redis` blocks
  under python/tests/with_redis).
* sh, shell, bash: commands for the reader — builds, installs, `make test`
  itself, which the stages of scripts/test.sh run in their own way — so
  `check` parses each (`bash -n`) and fails on a repository path one names
  that does not exist (a path whose first directory is tracked, next to the
  markdown file or at the root); a block marked `sh run` is also run, by
  `run-sh`, from a scratch directory inside the repository.
* json: parsed by `check`; `json template` (a layout with placeholders) is not.
* text: not code; nothing checks it.

Any other language (or none), or an attribute a language does not take,
fails `check` (an early stage of scripts/test.sh), so a new block cannot go
unchecked. `check` also fails on a relative link, in any markdown file,
to a file the repository does not have or to a heading the file it names
does not have, so that moving a document cannot leave links behind.

Two more attributes: `redis` (c, js, python: the block needs a server; it
runs only under tests/redis/with-redis, with each
`redis://127.0.0.1[:6379]/[db]` in it replaced by the server's URL) and
`continues` (c, js, ts, python: the block goes on from the one before it in
the same file and language, whose names it uses; its program is that
block's program and then it, and the block before also runs alone).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Canonical language: the info strings that name it, and the attributes it takes.
KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "rust": (frozenset({"rust"}), frozenset({"no_run", "redis"})),
    "c": (frozenset({"c"}), frozenset({"redis", "continues"})),
    "js": (frozenset({"js", "javascript", "mjs"}), frozenset({"redis", "continues"})),
    "ts": (frozenset({"ts", "typescript", "mts"}), frozenset({"continues"})),
    "python": (frozenset({"python", "py"}), frozenset({"redis", "continues"})),
    "sh": (frozenset({"sh", "shell", "bash"}), frozenset({"run"})),
    "json": (frozenset({"json"}), frozenset({"template"})),
}
# Info strings of blocks that are not code (output, diagrams): nothing checks them.
NOT_CODE = frozenset({"text"})

REDIS_URL = re.compile(r"redis://127\.0\.0\.1(?::6379)?/\d*")
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository, with /
    line: int  # of the block's first line of code, 1-based
    info: str  # the whole info string
    lang: str  # canonical (a KINDS key), or the info string's first word if unknown
    attrs: frozenset[str]
    code: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Program:
    """One runnable unit: a block, after the blocks it continues."""

    blocks: tuple[Block, ...]

    @property
    def last(self) -> Block:
        return self.blocks[-1]

    @property
    def name(self) -> str:
        """A file name for it: the markdown file and the block's line."""
        return f"{self.last.path.replace('/', '_')}-{self.last.line}"

    @property
    def redis(self) -> bool:
        return any("redis" in b.attrs for b in self.blocks)

    def padded(self, redis_url: str | None = None) -> str:
        """The code, with blank lines before each block so that its line
        numbers are the markdown file's (every block is from one file)."""
        out: list[str] = []
        for b in self.blocks:
            out.extend([""] * (b.line - 1 - len(out)))
            out.extend(b.code.splitlines())
        return _with_url("\n".join(out) + "\n", redis_url)


def _with_url(code: str, redis_url: str | None) -> str:
    return REDIS_URL.sub(lambda _: redis_url, code) if redis_url else code


def markdown_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.md"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({p for p in out.split("\0") if p and (ROOT / p).is_file()})


def parse(path: str, text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start = i + 1
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if (
                close
                and close.group(2)[0] == fence[0]
                and len(close.group(2)) >= len(fence)
                and not close.group(3).strip()
            ):
                break
            i += 1
        else:
            raise SystemExit(f"{path}:{start}: a code block that never ends")
        code = "\n".join(_dedent(line, indent) for line in lines[start:i])
        words = [w for w in re.split(r"[\s,]+", info) if w]
        first = words[0] if words else ""
        lang = next((k for k, (names, _) in KINDS.items() if first in names), first)
        blocks.append(Block(path, start + 1, info, lang, frozenset(words[1:]), code + "\n"))
        i += 1
    return blocks


def _dedent(line: str, indent: int) -> str:
    n = len(line) - len(line.lstrip(" "))
    return line[min(n, indent) :]


def blocks() -> list[Block]:
    out: list[Block] = []
    for path in markdown_files():
        out.extend(parse(path, (ROOT / path).read_text(encoding="utf-8")))
    return out


def programs(lang: str, *, redis: bool) -> list[Program]:
    """The programs of LANG's blocks: those that need a Redis, or the others."""
    out: list[Program] = []
    previous: dict[str, Program] = {}  # per markdown file
    for b in blocks():
        if b.lang != lang:
            continue
        if "continues" in b.attrs:
            if b.path not in previous:
                raise SystemExit(f"{b.where}: `continues`, but no {lang} block comes before it")
            program = Program((*previous[b.path].blocks, b))
        else:
            program = Program((b,))
        previous[b.path] = program
        if program.redis == redis:
            out.append(program)
    return out


def run_python(program: Program, redis_url: str | None = None) -> dict[str, object]:
    """Runs a Python program in a namespace of its own, then its `main()` if
    it defines one (with asyncio.run when it is a coroutine function), and
    returns the namespace. Tracebacks name the markdown file and its lines."""
    import asyncio
    import inspect

    namespace: dict[str, object] = {"__name__": "__doc_snippet__"}
    code = compile(program.padded(redis_url), str(ROOT / program.last.path), "exec")
    exec(code, namespace)
    main = namespace.get("main")
    if inspect.iscoroutinefunction(main):
        asyncio.run(main())
    elif callable(main):
        main()
    return namespace


def c_source(program: Program, redis_url: str | None = None) -> str:
    """A C program of the blocks (see the module's docs). Every call of a
    function that returns an `rk_status` goes through a macro that fails the
    program, naming the call and its markdown line, unless it returns RK_OK:
    a snippet ignores statuses as a reader's sketch may, but must not fail."""
    has_main = any(re.search(r"\bint\s+main\s*\(", b.code) for b in program.blocks)
    header = (ROOT / "include" / "ratekeeper.h").read_text(encoding="utf-8")
    checked = sorted(set(re.findall(r"^rk_status (rk_[a-z0-9_]+)\(", header, re.MULTILINE)))
    head = ["#include <ratekeeper.h>"]
    body: list[str] = []
    for b in program.blocks:
        body.append(f'#line {b.line} "{b.path}"')
        for line in b.code.splitlines():
            if not has_main and line.lstrip().startswith("#include"):
                if line.strip() not in head:
                    head.append(line.strip())
                body.append("")  # keeps the #line count
            else:
                body.append(line)
    if not has_main:
        body = ["int main(void) {", *body, "  return 0;", "}"]
    harness = [
        "rk_status rk_snippet_ok(rk_status status, const char *call, int line);",
        *(f'#define {f}(...) rk_snippet_ok({f}(__VA_ARGS__), "{f}", __LINE__)' for f in checked),
    ]
    checker = [
        '#line 1 "scripts/doc_snippets.py (the status check)"',
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "rk_status rk_snippet_ok(rk_status status, const char *call, int line) {",
        "  if (status != RK_OK) {",
        '    fprintf(stderr, "line %d: %s returned %u: %s\\n", line, call, (unsigned)status,',
        "            rk_last_error_message());",
        "    exit(1);",
        "  }",
        "  return status;",
        "}",
    ]
    return _with_url("\n".join([*head, *harness, *body, *checker]) + "\n", redis_url)


# The crates a Rust block may use, as cargo names their packages.
RUST_CRATES = ("ratekeeper-core", "ratekeeper", "ratekeeper-redis", "ratekeeper-tower")


def _rust_externs() -> tuple[list[str], str]:
    """Builds the crates Rust blocks use (cargo decides whether anything
    needs doing) and returns rustdoc's `--extern` arguments for them and the
    folder of their dependencies."""
    done = subprocess.run(
        [
            "cargo",
            "build",
            "--locked",
            "--quiet",
            "--message-format=json-render-diagnostics",
            *(f"--package={c}" for c in RUST_CRATES),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"cargo build of {', '.join(RUST_CRATES)} failed")
    externs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact":
            continue
        manifest = Path(message["manifest_path"]).resolve()
        if manifest.parent.name not in RUST_CRATES or manifest.parent.parent != ROOT / "crates":
            continue
        if "lib" not in message["target"]["kind"]:
            continue
        # The rlib in deps/, beside its .rmeta: cargo reports a package it
        # was asked for by its copy one folder up, which another package
        # with the same library name (the C binding's) may overwrite.
        for rmeta in (Path(f) for f in message["filenames"] if f.endswith(".rmeta")):
            rlib = rmeta.with_suffix(".rlib")
            if rlib.is_file():
                externs[message["target"]["name"]] = str(rlib)
    missing = {c.replace("-", "_") for c in RUST_CRATES} - externs.keys()
    if missing:
        raise SystemExit(f"cargo built no rlib for {', '.join(sorted(missing))}")
    deps = str(Path(next(iter(externs.values()))).parent)
    return [f"--extern={name}={rlib}" for name, rlib in sorted(externs.items())], deps


def _edition() -> str:
    manifest = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    found = re.search(r'^edition\s*=\s*"(\d+)"', manifest, re.MULTILINE)
    if not found:
        raise SystemExit("Cargo.toml names no edition")
    return found.group(1)


def run_rust(only: list[str]) -> int:
    """rustdoc --test on each markdown file that has Rust blocks (or on the
    files named), against the workspace's own build of the crates."""
    files = sorted({b.path for b in blocks() if b.lang == "rust"})
    if only:
        wanted = {Path(p).resolve().relative_to(ROOT).as_posix() for p in only}
        unknown = wanted - set(files)
        if unknown:
            raise SystemExit(f"no Rust block in {', '.join(sorted(unknown))}")
        files = [f for f in files if f in wanted]
    if not files:
        raise SystemExit("no markdown file has a Rust block")
    externs, deps = _rust_externs()
    flags = os.environ.get("RUSTDOCFLAGS", "").split()
    status = 0
    for path in files:
        print(f"--- rustdoc --test {path}", flush=True)
        done = subprocess.run(
            [
                os.environ.get("RUSTDOC", "rustdoc"),
                "--test",
                f"--edition={_edition()}",
                "--crate-name=doc_snippets",
                f"-Ldependency={deps}",
                *externs,
                *flags,
                path,
            ],
            cwd=ROOT,
            check=False,
        )
        if done.returncode != 0:
            print(f"{path}: a Rust block failed", file=sys.stderr)
            status = 1
    return status


def _tracked_dirs() -> set[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    dirs: set[str] = set()
    for p in filter(None, out.split("\0")):
        parts = p.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:n]))
    return dirs


def _missing_paths(block: Block, dirs: set[str]) -> list[str]:
    base = str(Path(block.path).parent.as_posix())
    base = "" if base == "." else base + "/"
    missing = []
    for token in re.findall(r"[^\s'\"`$()|;&<>=]+", block.code):
        token = token.rstrip(",.:;")  # a comment's punctuation
        path = token[2:] if token.startswith("./") else token
        if "/" not in path.rstrip("/") or path.startswith(("/", "..", "-")) or "://" in path:
            continue
        first = path.split("/")[0]
        for prefix in dict.fromkeys([base, ""]):  # next to the markdown file, then the root
            if prefix + first in dirs:
                candidate = prefix + path.rstrip("/")
                if not ((ROOT / candidate).exists() or candidate in dirs):
                    missing.append(token)
                break
    return missing


LINK = re.compile(r"\]\(([^()\s]+)\)")


def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it: lower case, only letters,
    digits, spaces, hyphens and underscores kept, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _prose(text: str, spans: str = "drop") -> str:
    """The markdown without its code blocks (their lines left empty) and
    its inline code spans dropped (`spans="drop"`: links inside them are
    not links) or kept as plain text (`spans="text"`: as GitHub keeps them
    in a heading's anchor)."""
    out: list[str] = []
    fence = ""
    for line in text.splitlines():
        m = FENCE.match(line)
        if m and (not fence or (m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence))):
            fence = "" if fence else m.group(2)
            out.append("")
        else:
            kept = r"\1" if spans == "text" else ""
            out.append("" if fence else re.sub(r"`([^`]*)`", kept, line))
    return "\n".join(out)


def _broken_links(path: str) -> list[str]:
    """The relative links of a markdown file that name no file of the
    repository, or no heading of the markdown file they name."""
    broken = []
    for n, line in enumerate(_prose((ROOT / path).read_text(encoding="utf-8")).splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            resolved = (ROOT / path).parent / file if file else ROOT / path
            if not resolved.exists():
                broken.append(f"{path}:{n}: a link to {target}, which is not in the repository")
            elif anchor and resolved.suffix == ".md":
                headings = re.findall(
                    r"^#+\s+(.*)$", _prose(resolved.read_text("utf-8"), "text"), re.M
                )
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{path}:{n}: a link to {target}, a heading {file or path} lacks")
    return broken


def check() -> int:
    errors: list[str] = []
    dirs = _tracked_dirs()
    counts: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()  # (markdown file, language)
    everything = blocks()
    for b in everything:
        counts[b.lang] = counts.get(b.lang, 0) + 1
        if "continues" in b.attrs and (b.path, b.lang) not in seen:
            errors.append(f"{b.where}: `continues`, but no {b.lang} block comes before it")
        seen.add((b.path, b.lang))
        if b.lang in NOT_CODE:
            if b.attrs:
                errors.append(
                    f"{b.where}: ```{b.info}: a block that is not code takes no attributes"
                )
            continue
        if not b.lang:
            errors.append(f"{b.where}: a block with no language (```text if it is not code)")
            continue
        if b.lang not in KINDS:
            errors.append(
                f"{b.where}: a ```{b.info} block, a language no test checks"
                f" (checked: {', '.join(sorted(n for ns, _ in KINDS.values() for n in ns))};"
                f" not code: {', '.join(sorted(NOT_CODE))}; see scripts/doc_snippets.py)"
            )
            continue
        unknown = b.attrs - KINDS[b.lang][1]
        if unknown:
            errors.append(
                f"{b.where}: ```{b.info}: {b.lang} blocks take no {', '.join(sorted(unknown))}"
                f" (they take: {', '.join(sorted(KINDS[b.lang][1])) or 'nothing'})"
            )
        if b.lang == "rust":
            if ("no_run" in b.attrs) != ("redis" in b.attrs):
                errors.append(f"{b.where}: a rust block is `no_run` exactly when it is `redis`")
        elif b.lang == "sh":
            parsed = subprocess.run(
                ["bash", "-n"], input=b.code, text=True, capture_output=True, check=False
            )
            if parsed.returncode != 0:
                errors.append(f"{b.where}: not valid shell: {parsed.stderr.strip()}")
            for token in _missing_paths(b, dirs):
                errors.append(f"{b.where}: names {token}, which is not in the repository")
        elif b.lang == "json" and "template" not in b.attrs:
            try:
                json.loads(b.code)
            except json.JSONDecodeError as e:
                errors.append(
                    f"{b.where}: not JSON ({e}); a layout with placeholders is `json template`"
                )
    for path in markdown_files():
        errors.extend(_broken_links(path))
    for error in errors:
        print(error, file=sys.stderr)
    summary = ", ".join(f"{n} {lang or '(none)'}" for lang, n in sorted(counts.items()))
    print(f"doc_snippets: {len(everything)} blocks in {len(markdown_files())} files ({summary})")
    return 1 if errors else 0


def extract(lang: str, out_dir: Path, redis_url: str | None) -> int:
    extension = {"c": ".c", "js": ".mjs", "ts": ".mts"}[lang]
    out_dir.mkdir(parents=True, exist_ok=True)
    for p in programs(lang, redis=redis_url is not None):
        text = c_source(p, redis_url) if lang == "c" else p.padded(redis_url)
        (out_dir / (p.name + extension)).write_text(text, encoding="utf-8")
    return 0


def run_sh() -> int:
    scratch = ROOT / "target" / "doc-snippets" / "sh"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    status = 0
    for b in blocks():
        if b.lang != "sh" or "run" not in b.attrs:
            continue
        print(f"--- {b.where}", flush=True)
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", b.code], cwd=scratch, check=False
        )
        if done.returncode != 0:
            print(f"{b.where}: exited with {done.returncode}", file=sys.stderr)
            status = 1
    return status


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check")
    rust = sub.add_parser("rust")
    rust.add_argument("files", nargs="*", metavar="FILE")
    ex = sub.add_parser("extract")
    ex.add_argument("lang", choices=["c", "js", "ts"])
    ex.add_argument("dir", type=Path)
    ex.add_argument("--redis", metavar="URL")
    sub.add_parser("run-sh")
    args = parser.parse_args(argv)
    if args.command == "check":
        return check()
    if args.command == "rust":
        return run_rust(args.files)
    if args.command == "extract":
        return extract(args.lang, args.dir, args.redis)
    return run_sh()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
