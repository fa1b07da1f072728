"""Fixtures for the service tests: real servers on loopback ports with offline, fast models.

Servers use the hashing embedder (the real embedders are not the point here), a shared
knowledge base over the shipped corpus, no personal-memory hook unless a test asks for one, and
a fresh SQLite file per test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from smartctx.core import HashingEmbedder, Settings
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.server import ServerHandle, serve

StartServer = Callable[..., ServerHandle]


@pytest.fixture(scope="session")
def hashing_kb() -> KnowledgeBase:
    """The shipped corpus indexed with the hashing embedder (prepared once per session)."""
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    kb.prepare()
    return kb


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'service.db'}"


@pytest.fixture
def start_server(db_url: str, hashing_kb: KnowledgeBase) -> Iterator[StartServer]:
    """Start servers (stopped at teardown). Keyword arguments override settings/app options."""
    handles: list[ServerHandle] = []

    def start(**options: Any) -> ServerHandle:
        fields = set(Settings.model_fields)
        settings = Settings(
            database_url=db_url,
            **{k: options.pop(k) for k in list(options) if k in fields},
        )
        options.setdefault("embedder", HashingEmbedder())
        options.setdefault("kb", hashing_kb)
        options.setdefault("hooks", [])
        handle = serve(settings, host="127.0.0.1", port=0, **options)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        handle.stop()


@pytest.fixture
def server(start_server: StartServer) -> ServerHandle:
    """One running server with the offline GroundedResponder."""
    return start_server()
