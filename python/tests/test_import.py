"""What importing ratekeeper costs: it must not import asyncio, which alone
takes several times longer than the rest of the package (BENCHMARKS.md), so
that a program that never awaits never pays for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def imported_after(statement: str, where: Path) -> set[str]:
    """The modules a fresh interpreter holds after ``statement``, run in
    ``where`` (not python/, whose source tree ``-c`` would put first on
    sys.path)."""
    out = subprocess.run(
        [sys.executable, "-c", f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"],
        cwd=where,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


def test_importing_ratekeeper_does_not_import_asyncio(tmp_path: Path) -> None:
    # The coroutines import it where they sleep; the async tests run those
    # lines (a missing import there is a NameError they would raise).
    assert "asyncio" not in imported_after("import ratekeeper", tmp_path)
