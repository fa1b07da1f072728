"""Split Markdown and plain text into retrieval chunks by heading and paragraph.

Contract of ``chunk_document(name, text)``:
- a chunk never crosses a heading: each ATX heading (``#`` .. ``######``) opens a section, and a
  chunk carries its heading path (``("VPN", "Connecting")``); ``#`` lines inside fenced code blocks
  are not headings;
- a section whose body fits ``max_tokens`` is one chunk, whatever its length below that;
- a longer section is split on paragraph boundaries (blank lines; a fenced code block is one
  paragraph), packed greedily up to ``target_tokens``; a single paragraph longer than
  ``max_tokens`` is split on sentence boundaries;
- a packed piece smaller than ``min_tokens`` is merged into its neighbour in the same section, so
  tiny paragraphs never become chunks of their own; a heading with no body yields nothing;
- chunks are numbered from 1 in document order, giving the STABLE source id ``kb:<name>#<n>``: the
  same text always gives the same chunks and ids (pure, deterministic, no I/O).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from smartctx.core.errors import InvalidInput
from smartctx.core.tokens import TokenCounter, get_counter

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")

DEFAULT_TARGET_TOKENS = 320
DEFAULT_MAX_TOKENS = 640
DEFAULT_MIN_TOKENS = 24
DEFAULT_VIEW_TOKENS = 160


def source_id_for(name: str, index: int) -> str:
    """The stable source id of chunk ``index`` (1-based) of document ``name``."""
    return f"kb:{name}#{index}"


def content_hash(text: str) -> str:
    """SHA-256 of ``text`` (hex), the identity of a document's content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a document.

    ``text`` is the body (headings stripped); ``heading`` is the path of headings above it,
    outermost first; ``index`` is its 1-based position in the document.
    """

    doc: str
    index: int
    heading: tuple[str, ...]
    text: str
    tokens: int

    @property
    def source_id(self) -> str:
        return source_id_for(self.doc, self.index)

    @property
    def title(self) -> str:
        """The heading path joined with `` > `` (empty for text before any heading)."""
        return " > ".join(self.heading)

    def indexed_text(self) -> str:
        """What search indexes: the heading path, then the body, so titles count as evidence."""
        return f"{self.title}\n{self.text}" if self.heading else self.text


@dataclass
class _Section:
    heading: tuple[str, ...]
    paragraphs: list[str]


def _sections(text: str) -> Iterator[_Section]:
    """Sections in document order, each with its heading path and non-empty paragraphs."""
    path: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False

    def close_paragraph() -> None:
        if current:
            body = "\n".join(current).strip("\n")
            if body.strip():
                paragraphs.append(body)
            current.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            current.append(line)
            continue
        if in_fence:
            current.append(line)
            continue
        match = _HEADING.match(line)
        if match:
            close_paragraph()
            if paragraphs:
                yield _Section(tuple(title for _, title in path), paragraphs)
                paragraphs = []
            level = len(match.group(1))
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, match.group(2).strip()))
        elif line.strip():
            current.append(line.rstrip())
        else:
            close_paragraph()
    close_paragraph()
    if paragraphs:
        yield _Section(tuple(title for _, title in path), paragraphs)


def _greedy(units: list[str], sep: str, limit: int, counter: TokenCounter) -> list[str]:
    """``units`` joined with ``sep`` in order, each piece growing while it fits ``limit`` tokens
    (a single unit over ``limit`` stays a piece of its own)."""
    pieces: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current}{sep}{unit}" if current else unit
        if current and counter.count(candidate) > limit:
            pieces.append(current)
            current = unit
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def _split_long(paragraph: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    """A paragraph over ``max_tokens`` cut at sentence ends (then words) into fitting pieces."""
    units: list[str] = []
    for sentence in _SENTENCE.split(paragraph):
        tokens = counter.count(sentence)
        if tokens > max_tokens:
            words = sentence.split()
            step = max(1, len(words) * max_tokens // (tokens + 1))
            units += [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
        else:
            units.append(sentence)
    return _greedy(units, " ", max_tokens, counter)


def _pack(
    paragraphs: list[str], counter: TokenCounter, target: int, max_tokens: int, min_tokens: int
) -> list[str]:
    """Paragraphs packed in order into pieces near ``target``; tiny pieces merged."""
    whole = "\n\n".join(paragraphs)
    if counter.count(whole) <= max_tokens:
        return [whole]
    units: list[str] = []
    for paragraph in paragraphs:
        if counter.count(paragraph) > max_tokens:
            units.extend(_split_long(paragraph, max_tokens, counter))
        else:
            units.append(paragraph)
    merged: list[str] = []
    for piece in _greedy(units, "\n\n", target, counter):
        if merged and (counter.count(piece) < min_tokens or counter.count(merged[-1]) < min_tokens):
            joined = f"{merged[-1]}\n\n{piece}"
            if counter.count(joined) <= max_tokens:
                merged[-1] = joined
                continue
        merged.append(piece)
    return merged


def chunk_document(
    name: str,
    text: str,
    *,
    counter: TokenCounter | None = None,
    target_tokens: int = DEFAULT_TARGET_TOKENS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    min_tokens: int = DEFAULT_MIN_TOKENS,
) -> list[Chunk]:
    """The chunks of document ``name`` (see the module contract for the rules).

    Raises ``InvalidInput`` for an empty name or inconsistent sizes
    (``0 <= min_tokens <= target_tokens <= max_tokens`` is required).
    """
    if not name or not name.strip():
        raise InvalidInput("a document needs a non-empty name")
    if not 0 <= min_tokens <= target_tokens <= max_tokens:
        raise InvalidInput(
            f"chunk sizes must satisfy 0 <= min ({min_tokens}) <= target ({target_tokens}) "
            f"<= max ({max_tokens})"
        )
    counter = counter or get_counter("cl100k_base")
    chunks: list[Chunk] = []
    for section in _sections(text):
        for piece in _pack(section.paragraphs, counter, target_tokens, max_tokens, min_tokens):
            chunks.append(
                Chunk(
                    doc=name,
                    index=len(chunks) + 1,
                    heading=section.heading,
                    text=piece,
                    tokens=counter.count(piece),
                )
            )
    return chunks


def passage_views(
    chunk: Chunk, *, counter: TokenCounter | None = None, view_tokens: int = DEFAULT_VIEW_TOKENS
) -> list[str]:
    """The texts embedded for ``chunk``: its whole indexed text, then, when the chunk is longer
    than ``view_tokens``, windows of its paragraphs (each up to about ``view_tokens``, prefixed
    with the heading path).

    Why: one vector for a long chunk is an average that matches no specific question well (and
    small embedding models truncate long inputs); a chunk's similarity is the best of its views.
    """
    views = [chunk.indexed_text()]
    if chunk.tokens <= view_tokens:
        return views
    counter = counter or get_counter("cl100k_base")
    prefix = f"{chunk.title}\n" if chunk.heading else ""
    paragraphs = chunk.text.split("\n\n")
    for piece in _pack(paragraphs, counter, view_tokens, view_tokens, 0):
        views.append(prefix + piece)
    return views
