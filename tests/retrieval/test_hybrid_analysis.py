"""Tokenisation for BM25: every script survives, English is stemmed lightly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from smartctx.retrieval import HybridIndex, analyze, stem


def test_english_stems_and_stop_words() -> None:
    assert analyze("The dogs were hiking") == ["dog", "hike"]
    assert {stem(w) for w in ("hikes", "hiked", "hiking")} == {"hike"}
    assert stem("stories") == "story"
    assert stem("painted") == stem("painting") == "paint"
    assert stem("went") == "go"


def test_devanagari_words_stay_whole() -> None:
    assert analyze("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_korean_gets_bigrams_so_particles_do_not_hide_nouns() -> None:
    tokens = analyze("서울에서 만나요")
    assert "서울에서" in tokens
    assert "서울" in tokens
    ix = HybridIndex()
    ix.add(["ko", "en"], ["서울에서 만나요", "see you in Seoul"])
    assert ix.search("서울", k=1)[0].id == "ko"


def test_case_and_width_are_normalised() -> None:
    assert analyze("CAFÉ") == analyze("café")
    assert analyze("ＶＰＮ") == analyze("vpn")


@given(st.text(max_size=80))
def test_analyze_never_returns_empty_tokens(text: str) -> None:
    assert all(token for token in analyze(text))
    assert analyze(text) == analyze(text)


def test_cached_analysis_hands_out_a_fresh_list_each_time() -> None:
    first = analyze("Connecting the laptops to the VPN")
    first.append("mutated")
    assert analyze("Connecting the laptops to the VPN") == ["connect", "laptop", "vpn"]
    long_text = "laptops " * 400  # past the cache: analysed each time, same result
    assert analyze(long_text) == ["laptop"] * 400
