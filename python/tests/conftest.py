"""Shared fixtures: a ManualClock and a limiter on it.

The tests of the limiters shared through Redis need a server:
``tests/redis/with-redis`` starts one and names it in
``RATEKEEPER_REDIS_URL`` (with ``--cluster``, a three-master cluster, also in
``RATEKEEPER_REDIS_CLUSTER``; with ``--tls``, TLS-only servers in
``RATEKEEPER_REDIS_TLS_…``), and ``scripts/test.sh`` runs
``tests/with_redis``, ``tests/with_redis_cluster`` and
``tests/with_redis_tls`` under it. Without one, those folders are not
collected (there is nothing they could test), so a plain ``pytest`` runs
everything else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import ratekeeper
from ratekeeper import ManualClock

# tests/installed/python.sh runs this suite against the wheel installed in a
# fresh venv, and names that venv's site-packages here: the run stops before
# any test if ``ratekeeper`` came from anywhere else, or if a copy of the
# package (the source tree's python/ratekeeper above all) is importable from
# any other folder on sys.path.
_installed_in = os.environ.get("RATEKEEPER_INSTALLED_IN")
if _installed_in:
    _site = Path(_installed_in).resolve()
    _imported = Path(ratekeeper.__file__ or "").resolve()
    if _site not in _imported.parents:
        raise RuntimeError(f"ratekeeper was imported from {_imported}, not from {_site}")
    for _entry in sys.path:
        _copy = (Path(_entry or os.getcwd()) / "ratekeeper" / "__init__.py").resolve()
        if _copy.is_file() and _site not in _copy.parents:
            raise RuntimeError(f"another ratekeeper is importable from {_entry!r}: {_copy}")


def pytest_report_header() -> str:
    return f"ratekeeper {ratekeeper.__version__} from {Path(ratekeeper.__file__ or '').parent}"


collect_ignore: list[str] = []
if not os.environ.get("RATEKEEPER_REDIS_URL") or os.environ.get("RATEKEEPER_REDIS_CLUSTER"):
    # No server, or the URL is a cluster node (which plain connections
    # cannot use for every key).
    collect_ignore.append("with_redis")
if not os.environ.get("RATEKEEPER_REDIS_CLUSTER"):
    collect_ignore.append("with_redis_cluster")
if not os.environ.get("RATEKEEPER_REDIS_SENTINELS"):
    # ``tests/redis/with-redis --sentinel`` names its sentinels (whose test
    # kills the master that ``RATEKEEPER_REDIS_URL`` names: ``with_redis``
    # is not collected beside it).
    collect_ignore.append("with_redis_sentinel")
elif "with_redis" not in collect_ignore:
    collect_ignore.append("with_redis")
if not os.environ.get("RATEKEEPER_REDIS_TLS_URL"):
    # tests/redis/with-redis --tls: its TLS servers, CA and certificates.
    collect_ignore.append("with_redis_tls")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()
