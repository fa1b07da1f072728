"""Chunking by heading and paragraph: heading paths, packing, merging, stable ids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.core.errors import InvalidInput
from smartctx.core.tokens import WhitespaceCounter
from smartctx.retrieval.chunking import (
    chunk_document,
    content_hash,
    passage_views,
    source_id_for,
)

WS = WhitespaceCounter()


def words(n: int, word: str = "alpha") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def test_chunks_carry_their_heading_path_and_never_cross_a_heading() -> None:
    text = (
        "# VPN\n\nIntro text about the VPN service.\n\n"
        "## Connecting\n\nOpen the app and connect.\n\n"
        "### On macOS\n\nUse the menu bar icon.\n\n"
        "## Troubleshooting\n\nFlush DNS and retry.\n"
    )
    chunks = chunk_document("vpn.md", text, counter=WS, min_tokens=0, target_tokens=5)
    assert [c.heading for c in chunks] == [
        ("VPN",),
        ("VPN", "Connecting"),
        ("VPN", "Connecting", "On macOS"),
        ("VPN", "Troubleshooting"),
    ]
    assert [c.source_id for c in chunks] == [f"kb:vpn.md#{i}" for i in range(1, 5)]
    assert chunks[2].title == "VPN > Connecting > On macOS"
    assert chunks[3].text == "Flush DNS and retry."
    assert chunks[3].indexed_text() == "VPN > Troubleshooting\nFlush DNS and retry."


def test_heading_without_body_yields_nothing_and_text_before_headings_has_no_path() -> None:
    text = "Preamble line.\n\n# Title\n\n## Empty\n\n## Full\n\nBody.\n"
    chunks = chunk_document("a.md", text, counter=WS, min_tokens=0)
    assert [(c.heading, c.text) for c in chunks] == [
        ((), "Preamble line."),
        (("Title", "Full"), "Body."),
    ]
    assert chunks[0].indexed_text() == "Preamble line."


def test_hash_lines_inside_code_fences_are_not_headings() -> None:
    text = "# Shell\n\n```bash\n# not a heading\nls -la\n```\n\nAfter the code.\n"
    chunks = chunk_document("shell.md", text, counter=WS)
    assert len(chunks) == 1
    assert "# not a heading" in chunks[0].text
    assert chunks[0].heading == ("Shell",)


def test_a_section_that_fits_max_tokens_is_one_chunk_even_above_target() -> None:
    paragraphs = "\n\n".join(words(30, f"p{i}x") for i in range(10))  # 300 words
    chunks = chunk_document(
        "long.md", f"# Policy\n\n{paragraphs}", counter=WS, target_tokens=100, max_tokens=400
    )
    assert len(chunks) == 1
    assert chunks[0].tokens == 300


def test_a_long_section_splits_on_paragraphs_near_the_target() -> None:
    paragraphs = [words(30, f"p{i}x") for i in range(10)]
    chunks = chunk_document(
        "long.md",
        "# Policy\n\n" + "\n\n".join(paragraphs),
        counter=WS,
        target_tokens=100,
        max_tokens=200,
        min_tokens=10,
    )
    assert [c.tokens for c in chunks] == [90, 90, 90, 30]
    assert all(c.heading == ("Policy",) for c in chunks)
    # paragraph boundaries are kept: no paragraph is cut
    assert chunks[0].text == "\n\n".join(paragraphs[:3])


def test_tiny_paragraphs_merge_instead_of_becoming_chunks() -> None:
    tail = "A tiny tail of eight words, no more."
    body = "\n\n".join([words(45, "a"), words(45, "b"), tail])
    chunks = chunk_document(
        "t.md", body, counter=WS, target_tokens=50, max_tokens=80, min_tokens=10
    )
    assert [c.tokens for c in chunks] == [45, 53]
    assert chunks[1].text.endswith(tail)


def test_a_paragraph_longer_than_max_is_split_on_sentences() -> None:
    sentences = [f"Sentence {i} has exactly six words." for i in range(20)]  # 120 words
    chunks = chunk_document(
        "s.md", " ".join(sentences), counter=WS, target_tokens=30, max_tokens=40, min_tokens=0
    )
    assert all(c.tokens <= 40 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    assert " ".join(c.text for c in chunks) == " ".join(sentences)


def test_same_text_gives_same_chunks_and_ids() -> None:
    text = "# A\n\nOne.\n\n# B\n\nTwo.\n"
    first = chunk_document("x.md", text)
    assert first == chunk_document("x.md", text)
    assert source_id_for("x.md", 2) == first[1].source_id == "kb:x.md#2"
    assert content_hash(text) == content_hash(str(text))
    assert content_hash(text) != content_hash(text + " ")


@pytest.mark.parametrize(
    ("name", "sizes"),
    [("", (0, 10, 20)), ("  ", (0, 10, 20)), ("a.md", (20, 10, 30)), ("a.md", (0, 40, 30))],
)
def test_bad_arguments_are_rejected(name: str, sizes: tuple[int, int, int]) -> None:
    low, target, high = sizes
    with pytest.raises(InvalidInput):
        chunk_document(name, "text", min_tokens=low, target_tokens=target, max_tokens=high)


_word = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
_para = st.lists(_word, min_size=1, max_size=40).map(" ".join)
_block = st.one_of(_para, _word.map(lambda w: f"## {w}"))


@settings(max_examples=60, deadline=None)
@given(st.lists(_block, min_size=1, max_size=25))
def test_chunking_loses_no_word_and_respects_max_tokens(blocks: list[str]) -> None:
    text = "\n\n".join(blocks)
    chunks = chunk_document("p.md", text, counter=WS, target_tokens=20, max_tokens=30, min_tokens=5)
    body_words = [w for b in blocks if not b.startswith("## ") for w in b.split()]
    assert [w for c in chunks for w in c.text.split()] == body_words
    assert all(0 < c.tokens <= 30 for c in chunks)
    assert [c.index for c in chunks] == list(range(1, len(chunks) + 1))


def test_long_chunks_get_paragraph_views_short_ones_only_themselves() -> None:
    paragraphs = [words(30, f"p{i}x") for i in range(6)]
    text = "# Policy\n\n" + "\n\n".join(paragraphs)
    (chunk,) = chunk_document("p.md", text, counter=WS, target_tokens=100, max_tokens=400)
    views = passage_views(chunk, counter=WS, view_tokens=70)
    assert views[0] == chunk.indexed_text()
    assert views[1:] == [
        "Policy\n" + "\n\n".join(paragraphs[0:2]),
        "Policy\n" + "\n\n".join(paragraphs[2:4]),
        "Policy\n" + "\n\n".join(paragraphs[4:6]),
    ]
    assert passage_views(chunk, counter=WS, view_tokens=180) == [chunk.indexed_text()]
