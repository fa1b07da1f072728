"""The embedding model in a helper process: same rows as in-process, survives its child dying."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import numpy as np
import pytest

from smartctx.core.embed_process import ProcessEmbedder, process_embedder
from smartctx.core.embeddings import get_embedder

TEXTS = ["I lost my laptop on the train", "Wie viele Urlaubstage habe ich?", "ok"]


@pytest.fixture(scope="module")
def use_child() -> ProcessEmbedder:
    return process_embedder("use")


def test_rows_are_the_in_process_models(use_child: ProcessEmbedder) -> None:
    local = get_embedder("use")
    assert (use_child.name, use_child.dim, use_child.symmetric) == (local.name, local.dim, True)
    rows = use_child.embed(TEXTS)
    assert rows.dtype == np.float32 and rows.shape == (3, local.dim)
    np.testing.assert_allclose(rows, local.embed(TEXTS), atol=1e-6)
    np.testing.assert_allclose(use_child.embed_queries(TEXTS[:1]), rows[:1], atol=1e-6)
    assert use_child.embed([]).shape == (0, local.dim)
    # the model runs in another process: this one never built it for these calls
    assert use_child.pid not in (None, os.getpid()) and use_child._fallback is None


def test_many_threads_share_the_child(use_child: ProcessEmbedder) -> None:
    results: dict[int, np.ndarray] = {}

    def call(i: int) -> None:
        results[i] = use_child.embed([f"message number {i}"])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    local = get_embedder("use")
    for i, row in results.items():
        np.testing.assert_allclose(row, local.embed([f"message number {i}"]), atol=1e-6)


def test_a_dead_child_is_replaced() -> None:
    embedder = ProcessEmbedder("use")
    try:
        first = embedder.embed(["before"])
        pid = embedder.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        again = embedder.embed(
            ["before"]
        )  # finds it dead, or dying mid-call: either way one restart
        np.testing.assert_allclose(again, first, atol=1e-6)
        assert embedder.restarts == 1 and embedder._fallback is None and embedder.pid != pid
    finally:
        embedder.close()


def test_a_child_found_dead_between_calls_is_replaced() -> None:
    embedder = ProcessEmbedder("use")
    try:
        embedder.start()
        pid = embedder.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)  # dead before the next call
        assert embedder.embed(["after"]).shape == (1, embedder.dim)
        assert embedder.restarts == 1 and embedder.pid not in (None, pid)
    finally:
        embedder.close()


def test_no_child_embeds_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> subprocess.Popen[bytes]:
        raise OSError("no processes left")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    embedder = ProcessEmbedder("use")
    np.testing.assert_allclose(
        embedder.embed(TEXTS[:1]), get_embedder("use").embed(TEXTS[:1]), atol=1e-6
    )
    assert embedder._fallback is not None


def test_close_stops_the_child_and_a_call_starts_another() -> None:
    embedder = ProcessEmbedder("use")
    embedder.start()
    pid = embedder.pid
    embedder.close()
    assert embedder.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # type: ignore[arg-type]
    try:
        assert embedder.embed(["again"]).shape == (1, embedder.dim)
        assert embedder.pid not in (None, pid)
    finally:
        embedder.close()


def test_only_models_get_a_process() -> None:
    with pytest.raises(ValueError, match="hashing"):
        ProcessEmbedder("hashing")
