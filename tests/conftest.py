"""Suite-wide guards: no network beyond loopback, tiktoken's cache in a fresh folder."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests explore the same examples on every run: the suite is deterministic.
hypothesis_settings.register_profile("smartctx", derandomize=True, database=None)
hypothesis_settings.load_profile("smartctx")

_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # unix sockets


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise RuntimeError(f"tests must not touch the network: connect to {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken-cache")))
    yield
    mp.undo()
    socket.socket.connect = _real_connect  # type: ignore[method-assign]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh smartctx data directory."""
    path = tmp_path / "smartctx-data"
    path.mkdir()
    return path


@pytest.fixture
def postgres_admin() -> str:
    """The maintenance URL (database ``postgres``) of the server ``SMARTCTX_TEST_POSTGRES_URL``
    names, for throw-away databases; the test is skipped when it is unset or does not answer."""
    import asyncio
    import os

    from smartctx.bench.serve_procs import postgres_answers

    url = os.environ.get("SMARTCTX_TEST_POSTGRES_URL", "")
    admin = url.rsplit("/", 1)[0] + "/postgres" if url else ""
    if not admin or not asyncio.run(postgres_answers(admin)):
        pytest.skip("SMARTCTX_TEST_POSTGRES_URL is unset or PostgreSQL does not answer")
    return admin
