"""TLS and ACL users from Python, against the servers of
``tests/redis/with-redis --tls``: ``RedisStore.connect``'s ``username``,
``password`` and ``tls_`` options, and their errors (``RedisTlsError``,
``RedisAuthError``, and the argument errors before connecting)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from ratekeeper import (
    ArgumentTypeError,
    Gcra,
    InvalidArgumentError,
    RedisAuthError,
    RedisError,
    RedisLimiter,
    RedisStore,
    RedisTlsError,
    RedisUnavailableError,
)

# A timeout far above a round trip: a loaded machine must not fail a check.
SLOW: dict[str, Any] = {"timeout": 2.0, "connect_timeout": 2.0}


def env(name: str) -> str:
    value = os.environ.get(f"RATEKEEPER_REDIS_TLS_{name}")
    if not value:
        pytest.fail(
            f"RATEKEEPER_REDIS_TLS_{name} is not set: run under tests/redis/with-redis --tls"
        )
    return value


def decides(store: RedisStore) -> None:
    """Exact mode decides as it must: a burst of 5, then refusals."""
    limiter = RedisLimiter(
        store, f"py-tls-{uuid.uuid4().hex}", Gcra(max_burst=4, count_per_period=1, period=3600.0)
    )
    assert [limiter.check("k").allowed for _ in range(7)] == [True] * 5 + [False] * 2
    assert store.is_down is False


def test_a_ca_to_trust_as_a_path_a_pathlike_or_pem_bytes() -> None:
    ca = env("CA")
    for given in (ca, Path(ca), Path(ca).read_bytes(), bytearray(Path(ca).read_bytes())):
        with RedisStore.connect(env("URL"), tls_ca=given, **SLOW) as store:
            decides(store)


def test_a_redis_url_with_tls_options_speaks_tls() -> None:
    plain = env("URL").replace("rediss://", "redis://")
    with RedisStore.connect(plain, tls_ca=env("CA"), **SLOW) as store:
        decides(store)


def test_mutual_tls() -> None:
    with RedisStore.connect(
        env("MTLS_URL"), tls_ca=env("CA"), tls_cert=env("CERT"), tls_key=env("KEY"), **SLOW
    ) as store:
        decides(store)


def test_a_server_name_other_than_the_url_host() -> None:
    """127.0.0.1, whose certificate is for elsewhere.invalid only, checked
    against that name; another name is a TLS error."""
    with RedisStore.connect(
        env("OTHER_NAME_URL"), tls_ca=env("CA"), tls_server_name="elsewhere.invalid", **SLOW
    ) as store:
        decides(store)
    with pytest.raises(RedisTlsError, match="another name"):
        RedisStore.connect(
            env("OTHER_NAME_URL"), tls_ca=env("CA"), tls_server_name="localhost", **SLOW
        )


@pytest.mark.parametrize(
    ("url", "ca"),
    [("URL", "WRONG_CA"), ("OTHER_NAME_URL", "CA"), ("EXPIRED_URL", "CA")],
    ids=["wrong-ca", "other-name", "expired"],
)
def test_a_certificate_refused_raises_the_tls_error(url: str, ca: str) -> None:
    with pytest.raises(RedisTlsError, match="TLS") as caught:
        RedisStore.connect(env(url), tls_ca=env(ca), **SLOW)
    # A RedisError, and no unavailability: no policy decides instead.
    assert isinstance(caught.value, RedisError)
    assert not isinstance(caught.value, RedisUnavailableError)


def test_skipping_verification_accepts_another_name_and_another_ca() -> None:
    url = env("OTHER_NAME_URL")
    with RedisStore.connect(
        url, tls_ca=env("WRONG_CA"), tls_insecure_skip_verify=True, **SLOW
    ) as store:
        decides(store)


def test_an_acl_user_granted_the_least_privilege_decides() -> None:
    user, password = env("ACL_USER"), env("ACL_PASSWORD")
    with RedisStore.connect(
        env("URL"), username=user, password=password, tls_ca=env("CA"), **SLOW
    ) as store:
        decides(store)
    in_url = env("URL").replace("rediss://", f"rediss://{user}:{password}@")
    with RedisStore.connect(in_url, tls_ca=env("CA"), **SLOW) as store:
        decides(store)


def test_a_user_without_evalsha_raises_the_auth_error_naming_noperm() -> None:
    with RedisStore.connect(
        env("URL"),
        username=env("NOSCRIPT_USER"),
        password=env("NOSCRIPT_PASSWORD"),
        tls_ca=env("CA"),
        **SLOW,
    ) as store:
        limiter = RedisLimiter(
            store,
            f"py-noperm-{uuid.uuid4().hex}",
            Gcra(max_burst=4, count_per_period=1, period=1.0),
        )
        for _ in range(3):
            with pytest.raises(RedisAuthError, match="NOPERM"):
                limiter.check("k")
            with pytest.raises(RedisAuthError, match="NOPERM"):
                asyncio.run(limiter.check_async("k"))
        assert store.is_down is False


def test_a_wrong_password_raises_the_auth_error() -> None:
    with pytest.raises(RedisAuthError, match=r"WRONGPASS|password"):
        RedisStore.connect(
            env("URL"),
            username=env("ACL_USER"),
            password="not-the-password",
            tls_ca=env("CA"),
            **SLOW,
        )


@pytest.mark.parametrize(
    ("options", "error", "argument"),
    [
        ({"tls_ca": 42}, ArgumentTypeError, "tls_ca"),
        ({"tls_ca": b""}, InvalidArgumentError, "tls_ca"),
        ({"tls_ca": ""}, InvalidArgumentError, "tls_ca"),
        ({"tls_cert": b"-----BEGIN CERTIFICATE-----"}, InvalidArgumentError, "tls_cert"),
        ({"tls_key": b"-----BEGIN PRIVATE KEY-----"}, InvalidArgumentError, "tls_key"),
        ({"tls_server_name": ""}, InvalidArgumentError, "tls_server_name"),
        ({"tls_server_name": b"localhost"}, ArgumentTypeError, "tls_server_name"),
        ({"tls_insecure_skip_verify": 1}, ArgumentTypeError, "tls_insecure_skip_verify"),
        ({"username": 1}, ArgumentTypeError, "username"),
        ({"username": ""}, InvalidArgumentError, "username"),
        ({"password": b"secret"}, ArgumentTypeError, "password"),
    ],
)
def test_bad_options_are_refused_before_connecting(
    options: dict[str, Any], error: type[Exception], argument: str
) -> None:
    start = time.monotonic()
    with pytest.raises(error) as caught:
        RedisStore.connect("rediss://127.0.0.1:1/", **options)
    assert getattr(caught.value, "argument", None) == argument
    assert time.monotonic() - start < 0.2


def test_a_ca_file_that_cannot_be_read_raises_the_tls_error(tmp_path: Path) -> None:
    with pytest.raises(RedisTlsError, match=r"missing\.pem"):
        RedisStore.connect(env("URL"), tls_ca=tmp_path / "missing.pem", **SLOW)


def test_async_connect_takes_the_options() -> None:
    async def main() -> None:
        store = await RedisStore.connect_async(env("URL"), tls_ca=env("CA"), **SLOW)
        try:
            decides(store)
        finally:
            store.close()

    asyncio.run(main())


def test_redis_cli_agrees_the_server_speaks_tls_only() -> None:
    # What the tests above rely on: no plain TCP on the TLS port.
    port = env("URL").rsplit(":", 1)[1].rstrip("/")
    plain = subprocess.run(
        ["redis-cli", "-p", port, "PING"], capture_output=True, text=True, timeout=10, check=False
    )
    assert "PONG" not in plain.stdout
