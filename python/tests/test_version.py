"""One version everywhere: the module's, its installed distribution's and the workspace's.

The workspace's ``[workspace.package]`` version in Cargo.toml is the one source:
the extension reports it as ``__version__`` (CARGO_PKG_VERSION) and maturin
writes it into the wheel's metadata (pyproject.toml's version is dynamic).
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import ratekeeper

WORKSPACE_MANIFEST = Path(__file__).resolve().parents[2] / "Cargo.toml"


def workspace_version() -> str:
    text = WORKSPACE_MANIFEST.read_text(encoding="utf-8")
    table = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    assert table, f"no [workspace.package] table in {WORKSPACE_MANIFEST}"
    version = re.search(r'^version = "([^"]+)"$', table.group(1), re.MULTILINE)
    assert version, f"no version in {WORKSPACE_MANIFEST}'s [workspace.package]"
    return version.group(1)


def test_the_module_reports_the_workspace_version() -> None:
    assert ratekeeper.__version__ == workspace_version()


def test_the_installed_distribution_has_the_modules_version() -> None:
    # The version pip shows and resolves against: the wheel's METADATA.
    assert metadata.version("ratekeeper") == ratekeeper.__version__
