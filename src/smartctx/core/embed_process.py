"""An embedder whose model runs in a helper process, beside the server's interpreter.

A served turn embeds its user message with USE (about 4 ms: a pure-Python tokenizer and numpy
over 15 MB of weights, most of it holding the interpreter lock). In one server process that
time is taken from every other turn: with the hashing embedder in its place the same server
answered 82 requests per second at 8 clients against 52 (issue 10). :class:`ProcessEmbedder`
runs the model in one child process (``python -m smartctx.core.embed_process``: a fresh
interpreter, so neither the server's threads nor its ``__main__`` are copied), so the server's
own interpreter only writes the texts to a pipe and reads the rows back, and a turn's embedding
runs on another core while the server answers other turns.

Contract: the results are the named model's (same rows, same dtype; ``name``, ``dim`` and
``symmetric`` are the model's). Calls from many threads queue for the one child (a lock; each
caller waits for its own result without holding the interpreter lock). The wire is a frame per
call: a pickled ``(texts, queries)`` request, the rows back as raw float32 bytes. The child
loads the model when it starts (:meth:`ProcessEmbedder.start`, the server's warm-up). If the
child dies, the next call starts a new one (logged); if that cannot start, calls embed in this
process with the process-wide model (:func:`~smartctx.core.embeddings.get_embedder`): nothing
is lost.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from smartctx.core.embeddings import (
    E5Embedder,
    Embedder,
    USEEmbedder,
    Vector,
    embed_queries,
    get_embedder,
)

logger = logging.getLogger(__name__)

MODELS: dict[str, type[Any]] = {"use": USEEmbedder, "e5": E5Embedder}
"""Embedders worth a process of their own (``hashing`` costs less than the hand-off)."""

_HEADER = struct.Struct("<q")
"""A frame's length (a request), or a reply's row count (-1: the child failed on that call)."""
_READY = b"R"


class ChildDied(RuntimeError):
    """The embedding process is gone (or sent something unreadable)."""


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise ChildDied("the embedding process closed its pipe")
    return data


class ProcessEmbedder:
    """The model ``name`` (``use`` or ``e5``) in a child process; see the module docstring."""

    def __init__(self, name: str, *, threads: int = 1) -> None:
        if name not in MODELS:
            raise ValueError(f"no process embedder for {name!r}: choose one of {sorted(MODELS)}")
        model = MODELS[name]
        self.key = name
        self.name: str = model.name
        self.dim: int = model.dim
        self.symmetric = bool(getattr(model, "symmetric", False))
        self.threads = threads
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._fallback: Embedder | None = None
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        """The child's process id (None before the first call, after ``close`` or a fallback)."""
        child = self._child
        return child.pid if child is not None else None

    def start(self) -> None:
        """Start the child and wait until its model is loaded (idempotent)."""
        with self._lock:
            self._running()

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._embed(list(texts), False)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._embed(list(texts), True)

    def close(self) -> None:
        """Stop the child (a later call starts a new one)."""
        with self._lock:
            self._stop()

    def _embed(self, texts: list[str], queries: bool) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        request = pickle.dumps((texts, queries), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            for attempt in range(2):
                child = self._running()
                if child is None:
                    break
                try:
                    return self._exchange(child, request, len(texts))
                except (ChildDied, OSError):
                    self._lost()
                    if attempt == 1:
                        self._fall_back()
        model = self._fallback or get_embedder(self.key)
        return embed_queries(model, texts) if queries else model.embed(texts)

    def _exchange(self, child: subprocess.Popen[bytes], request: bytes, count: int) -> Vector:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(_HEADER.pack(len(request)) + request)
        child.stdin.flush()
        (rows,) = _HEADER.unpack(_read_exact(child.stdout, _HEADER.size))
        if rows < 0:
            raise ValueError(f"the {self.key} embedding process could not embed these texts")
        if rows != count:
            raise ChildDied(f"the embedding process answered {rows} rows for {count} texts")
        data = _read_exact(child.stdout, rows * self.dim * 4)
        return np.frombuffer(data, dtype=np.float32).reshape(rows, self.dim).copy()

    def _running(self) -> subprocess.Popen[bytes] | None:
        """The live child, started if need be (under the lock); None once fallen back."""
        if self._fallback is not None:
            return None
        if self._child is not None:
            if self._child.poll() is None:
                return self._child
            self._lost()  # died between calls
        command = [sys.executable, "-m", __name__, self.key, str(self.threads)]
        try:
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert child.stdout is not None
            if child.stdout.read(1) != _READY:
                child.kill()
                child.wait()
                raise ChildDied("the embedding process exited while loading its model")
        except (OSError, ChildDied):
            logger.exception("no %s embedding process; embedding in this one", self.key)
            self._fall_back()
            return None
        self._child = child
        return child

    def _lost(self) -> None:
        """The child died (between calls, or during one): stopped, counted and logged; the
        next call starts a new one."""
        self._stop()
        self.restarts += 1
        logger.warning("the %s embedding process died; starting a new one", self.key)

    def _fall_back(self) -> None:
        self._fallback = get_embedder(self.key)

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


_SHARED: dict[tuple[str, int], ProcessEmbedder] = {}
_shared_lock = threading.Lock()


def process_embedder(name: str, threads: int = 1) -> ProcessEmbedder:
    """The process-wide :class:`ProcessEmbedder` of model ``name`` (one child per model, shared
    by every service of the process; stopped at exit)."""
    with _shared_lock:
        key = (name, threads)
        if key not in _SHARED:
            if not _SHARED:
                atexit.register(_close_all)
            _SHARED[key] = ProcessEmbedder(name, threads=threads)
        return _SHARED[key]


def _close_all() -> None:
    for embedder in list(_SHARED.values()):
        embedder.close()


def _serve(name: str, threads: int) -> None:
    """The child: load the model, say ready, then answer frames until the parent closes stdin."""
    # Ctrl-C reaches the whole process group: the parent stops the child itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the reply pipe gets a descriptor of its own; anything else printing (Python or a native
    # library writing to descriptor 1) goes to stderr instead of corrupting a reply
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    model = MODELS[name](threads=threads)
    model.embed(["warm up"])  # the weights load now, not on the first turn
    replies.write(_READY)
    replies.flush()
    while True:
        header = requests.read(_HEADER.size)
        if len(header) != _HEADER.size:
            return  # the parent is gone
        (size,) = _HEADER.unpack(header)
        texts, queries = pickle.loads(_read_exact(requests, size))
        try:
            rows = model.embed_queries(texts) if queries else model.embed(texts)
            body = np.ascontiguousarray(rows, dtype=np.float32).tobytes()
            replies.write(_HEADER.pack(len(texts)) + body)
        except Exception:
            logger.exception("embedding %d texts failed", len(texts))
            replies.write(_HEADER.pack(-1))
        replies.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
