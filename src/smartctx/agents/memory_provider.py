"""Long-term memory across threads: remember what a user said, recall it when it matters.

See :class:`LongTermMemoryProvider` for the contract.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from smartctx.agents.facts import fact_attribute, stated_facts
from smartctx.agents.llm_memory import LLMConsolidator
from smartctx.agents.memory_store import InMemoryMemoryStore, MemoryItem, MemoryStore
from smartctx.agents.providers import ContextProvider, Message, ProvidedContext
from smartctx.agents.relevance import ABOUT_USER_QUESTION, RelevanceGate, query_for
from smartctx.agents.rules import compact
from smartctx.core import Embedder, InvalidInput, Slot, SlotKind
from smartctx.core.sentences import is_question
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.hybrid import HybridIndex

RETRACTION = "retraction"
"""Kind of the item a deletion stores: kept for the audit, never recalled."""
MAX_RELATED = 20
"""Stored facts shown to the memory model with a new message, at most."""
RECALL_PRIORITY = 6.0
"""Priority of recalled memory slots: below the turn's ``rag_doc`` evidence (7)."""
MIN_TURN_TERMS = 3
"""Content terms (after stop words) a user statement needs to be remembered as a turn."""


def item_id(owner: str, kind: str, text: str) -> str:
    """A stable id for an item: the same statement by the same owner is stored once (case,
    spacing and punctuation aside)."""
    digest = hashlib.blake2b(f"{owner}\x00{kind}\x00{compact(text)}".encode(), digest_size=6)
    return digest.hexdigest()


class LongTermMemoryProvider(ContextProvider):
    """Stores what one owner says and recalls it in any of the owner's threads.

    Storing (``on_new_messages``): each user message is redacted (e-mails, phone and card
    numbers, secrets... become ``[REDACTED:<kind>]``, see :mod:`smartctx.memory.privacy`); its
    fact sentences (:func:`smartctx.agents.facts.stated_facts`) become ``fact`` items and the
    whole message, unless it is a question, a ``turn`` item. Items are idempotent by
    (owner, kind, normalised text). Assistant messages are not stored (the model's words are not
    the user's facts).

    Recalling (``get_relevant_context``): the last user message is searched in the owner's items
    with a :class:`~smartctx.retrieval.hybrid.HybridIndex` (BM25, plus vectors when the index
    has an embedder); a hit is *relevant* when it shares at least ``min_overlap`` of the query's
    analysed words, or, with an embedder, its cosine similarity reaches ``min_similarity``. A fact
    about one attribute of the user ("My desk moved from 4B to 5C") supersedes the earlier facts
    about it ("My desk is 4B"): they stay stored, with validity times in :meth:`history` (the
    audit), and are no longer recalled. With a ``consolidator`` (a chat model is configured,
    :mod:`smartctx.agents.llm_memory`) the model extracts the facts and says how they change the
    stored ones (add, update, delete, keep); a malformed answer falls back to the offline path.
    With
    a ``gate`` (:class:`~smartctx.agents.relevance.RelevanceGate`, what the service uses) the
    gate's calibrated hybrid score decides instead, junk rows are skipped and the slots enter at
    :data:`RECALL_PRIORITY`, below the turn's knowledge documents. Chit-chat, scaffolding and
    errors are never stored. Items
    said in the asking thread are skipped (they are in that thread's window already). At most
    ``k`` ``memory`` slots are returned, facts before turns when both carry the same words, each
    with source id ``mem:<item id>`` and the provenance of the slots it came from; ``None`` when
    nothing is relevant.

    ``store`` defaults to a process-local :class:`InMemoryMemoryStore`; a
    :class:`~smartctx.agents.memory_store.SqlMemoryStore` keeps memory across restarts. Several
    provider instances may share one store: each follows the store's new items incrementally
    before every search, and starts over when the store holds fewer items than it knows (they
    were forgotten elsewhere), so a forgotten item is never recalled. The constructor does no
    I/O.
    """

    def __init__(
        self,
        owner: str,
        *,
        store: MemoryStore | None = None,
        index: HybridIndex | None = None,
        embedder: Embedder | None = None,
        k: int = 3,
        min_overlap: float = 0.5,
        min_similarity: float = 0.8,
        gate: RelevanceGate | None = None,
        consolidator: LLMConsolidator | None = None,
    ) -> None:
        if not owner:
            raise InvalidInput("LongTermMemoryProvider needs a non-empty owner")
        if index is not None and embedder is not None:
            raise InvalidInput("pass either index or embedder, not both")
        self.owner = owner
        self.store: MemoryStore = store if store is not None else InMemoryMemoryStore()
        self.index = index if index is not None else HybridIndex(embedder=embedder)
        self.k = k
        self.min_overlap = min_overlap
        self.min_similarity = min_similarity
        self.gate = gate
        self._seen = 0
        self._items: dict[str, MemoryItem] = {}
        self._current: dict[str, str] = {}  # attribute -> id of its latest fact
        self._replaced: set[str] = set()  # ids an update or deletion named
        self.consolidator = consolidator
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return "memory"

    async def items(self) -> list[MemoryItem]:
        """Every item of the owner known to this provider (after syncing with the store)."""
        await self._sync()
        return sorted(self._items.values(), key=lambda i: i.seq)

    async def _sync(self) -> None:
        async with self._lock:
            # One read tells whether anything changed (the usual case is nothing).
            count, top = await self.store.state(self.owner)
            if count < len(self._items):
                # items were deleted elsewhere (forget, another provider's clear): start over
                self.index.remove(list(self._items))
                self._items.clear()
                self._current.clear()
                self._replaced.clear()
                self._seen = 0
            elif top <= self._seen and count == len(self._items):
                return
            new = await self.store.since(self.owner, self._seen)
            if not new:
                return
            self._index(new)  # a known id under a new seq was updated: index it again
            self._seen = max(self._seen, *(i.seq for i in new))

    def _index(self, items: Sequence[MemoryItem]) -> None:
        if not items:
            return
        self.index.add(
            [i.id for i in items],
            [i.text for i in items],
            [{"owner": i.owner, "thread": i.thread, "kind": i.kind} for i in items],
        )
        self._items.update((i.id, i) for i in items)
        for item in sorted(items, key=lambda i: i.seq):
            replaced = item.metadata.get("supersedes")
            if isinstance(replaced, str):
                self._replaced.add(replaced)
            attribute = item.metadata.get("attribute")
            if isinstance(attribute, str):
                current = self._items.get(self._current.get(attribute, ""))
                if current is None or current.seq < item.seq:
                    self._current[attribute] = item.id

    def superseded(self, item: MemoryItem) -> bool:
        """True when ``item`` is not recalled any more: a later fact about the same attribute
        (or an update or deletion naming it) replaced it, or it is itself a retraction."""
        if item.kind == RETRACTION or item.id in self._replaced:
            return True
        attribute = item.metadata.get("attribute")
        return isinstance(attribute, str) and self._current.get(attribute, item.id) != item.id

    async def history(self, attribute: str) -> list[dict[str, Any]]:
        """Every fact stored about ``attribute`` ("desk"), oldest first, with its validity:
        ``valid_from`` (when it was said), ``valid_to`` (when a later fact replaced it, ``None``
        while current) and ``current``. Superseded facts are kept for this audit; they are only
        no longer recalled."""
        await self._sync()
        facts = sorted(
            (i for i in self._items.values() if i.metadata.get("attribute") == attribute),
            key=lambda i: i.seq,
        )
        return [
            {
                "id": item.id,
                "text": item.text,
                "value": item.metadata.get("value"),
                "valid_from": item.created_at,
                "valid_to": facts[n + 1].created_at if n + 1 < len(facts) else None,
                "current": not self.superseded(item),
                "kind": item.kind,
            }
            for n, item in enumerate(facts)
        ]

    async def remember(
        self, text: str, *, thread: str = "", provenance: Sequence[str] = ()
    ) -> list[MemoryItem]:
        """Stores the facts and the statement of one user ``text``; returns the new items."""
        from smartctx.memory.privacy import redact  # imported on use: the memory tier is heavy
        from smartctx.memory.quality import is_chit_chat, is_junk_text

        clean = redact(text).strip()
        if not clean or is_chit_chat(clean) or is_junk_text(clean):
            return []
        said_at = datetime.now(UTC).isoformat(timespec="microseconds")
        llm_items = await self._consolidated(clean, thread, provenance, said_at)
        # "Hi, I'm Dana" is remembered as "My name is Dana." too
        offline = [] if llm_items is not None else stated_facts(clean)
        candidates: list[tuple[str, str]] = [("fact", f) for f in offline]
        facts = {compact(f) for _, f in candidates} | {compact(i.text) for i in llm_items or []}
        # A statement becomes a ``turn`` item only when it carries some content: chit-chat such
        # as "Thanks!" would otherwise be recalled into unrelated threads.
        if (
            not is_question(clean)
            and compact(clean) not in facts
            and len(analyze(clean)) >= MIN_TURN_TERMS
        ):
            candidates.append(("turn", clean))
        items = list(llm_items or []) + [
            MemoryItem(
                id=item_id(self.owner, kind, body),
                owner=self.owner,
                kind=kind,
                text=body,
                thread=thread,
                provenance=tuple(provenance),
                created_at=said_at,
                metadata=_attribute_metadata(body) if kind == "fact" else {},
            )
            for kind, body in candidates
        ]
        if not items:  # nothing to store (a question, say): the next recall syncs anyway
            return []
        stored = await self.store.add(items)
        await self._sync()
        return stored

    async def _consolidated(
        self, clean: str, thread: str, provenance: Sequence[str], said_at: str
    ) -> list[MemoryItem] | None:
        """The items the chat model's consolidation asks for, or ``None`` (no model, or it did
        not answer with valid operations: the offline extractor then decides)."""
        if self.consolidator is None or is_question(clean):
            return None  # a question states no fact: no model call
        await self._sync()
        hits = self.index.search(clean, k=5, where=lambda m: m.get("kind") == "fact")
        # related facts: the lexical hits, then the current fact of each known attribute (the
        # model decides whether "I am at 5C now" updates "My desk is 4B")
        ids = [h.id for h in hits] + list(reversed(self._current.values()))
        current = [
            (i, self._items[i].text)
            for i in dict.fromkeys(ids)
            if i in self._items and not self.superseded(self._items[i])
        ][:MAX_RELATED]
        operations = await self.consolidator.operations(clean, current)
        if operations is None:
            return None
        out: list[MemoryItem] = []
        for op in operations:
            old = self._items.get(op.id or "")
            if op.op == "keep":
                continue
            attribute = op.attribute
            if attribute is None and old is not None:
                attribute = old.metadata.get("attribute")
            if attribute is None and op.text:
                found = fact_attribute(op.text)
                attribute = found[0] if found else None
            kind = RETRACTION if op.op == "delete" else "fact"
            text = f"(retracted) {old.text}" if op.op == "delete" and old else op.text
            meta: dict[str, Any] = {"source": "llm", "op": op.op}
            if attribute:
                meta["attribute"] = attribute
            if old is not None:
                meta["supersedes"] = old.id
            out.append(
                MemoryItem(
                    id=item_id(self.owner, kind, text),
                    owner=self.owner,
                    kind=kind,
                    text=text,
                    thread=thread,
                    provenance=tuple(provenance),
                    created_at=said_at,
                    metadata=meta,
                )
            )
        return out

    async def on_new_messages(self, messages: list[Message]) -> None:
        for message in messages:
            if message.role != "user":
                continue
            meta = message.metadata
            slot_id = meta.get("slot_id")
            await self.remember(
                message.text,
                thread=str(meta.get("thread", "")),
                provenance=(str(slot_id),) if slot_id else (),
            )

    async def recall(
        self, query: str, *, thread: str | None = None
    ) -> list[tuple[MemoryItem, float]]:
        """The relevant items for ``query`` (skipping ``thread``'s), best first, with a score.

        The score is the share of the query's words the item has (or its cosine similarity when
        that is higher and an embedder is set).
        """
        await self._sync()
        terms = set(analyze(query))
        if not terms or not len(self.index):
            return []

        def visible(meta: dict[str, Any]) -> bool:
            return meta.get("owner") == self.owner and (
                thread is None or meta.get("thread") != thread
            )

        hits = self.index.search(query, k=self.k * 4, where=visible)
        if self.gate is not None:
            return await self._gated(query, [h.id for h in hits])
        cosines: dict[str, float] = {}
        if hits and self.index.embedder is not None:
            scores = self.index.vector_scores(query)
            if scores is not None:
                position = {doc_id: p for p, doc_id in enumerate(self.index.ids)}
                cosines = {h.id: float(scores[position[h.id]]) for h in hits}
        out: list[tuple[MemoryItem, float]] = []
        for hit in hits:
            if self.superseded(self._items[hit.id]):
                continue
            overlap = len(terms & set(analyze(hit.text))) / len(terms)
            cosine = cosines.get(hit.id, 0.0)
            if overlap >= self.min_overlap or cosine >= self.min_similarity:
                out.append((self._items[hit.id], max(overlap, cosine)))
        out.sort(key=lambda pair: (-pair[1], pair[0].kind != "fact", pair[0].seq))
        return out[: self.k]

    async def stated(self, *, thread: str | None = None) -> list[tuple[MemoryItem, float]]:
        """The owner's current facts (what they stated of themselves), newest first, at most
        ``k`` (skipping ``thread``'s): the answer to "What do you know about me?"."""
        await self._sync()
        facts = [
            item
            for item in self._items.values()
            if item.kind == "fact"
            and item.owner == self.owner
            and (thread is None or item.thread != thread)
            and not self.superseded(item)
        ]
        facts.sort(key=lambda item: -item.seq)
        return [(item, 1.0) for item in facts[: self.k]]

    async def _gated(self, query: str, ids: list[str]) -> list[tuple[MemoryItem, float]]:
        """The hits the relevance gate keeps (junk rows of older versions never come back)."""
        from smartctx.memory.quality import is_junk_text

        gate = self.gate
        items = [
            self._items[i]
            for i in ids
            if not is_junk_text(self._items[i].text) and not self.superseded(self._items[i])
        ]
        if gate is None or not items:
            return []
        chosen = await asyncio.to_thread(gate.select, query, items, lambda i: i.text)
        return chosen[: self.k]

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        query = next((m for m in reversed(messages) if m.role == "user"), None)
        if query is None:
            return None
        thread = query.metadata.get("thread")
        current = str(thread) if thread else None
        searched = query_for(query.text)  # "Who am I?" is "What is my name?"
        if searched == ABOUT_USER_QUESTION:
            found = await self.stated(thread=current)
        else:
            found = await self.recall(searched, thread=current)
        if not found:
            return None
        slots = [
            Slot(
                SlotKind.MEMORY,
                item.text,
                source_id=f"mem:{item.id}",
                priority=RECALL_PRIORITY if self.gate is not None else None,
                provenance=item.provenance,
                metadata={
                    "memory_id": item.id,
                    "memory_kind": item.kind,
                    "thread": item.thread,
                    "score": round(score, 4),
                },
            )
            for item, score in found
        ]
        return ProvidedContext(slots=slots)

    async def clear(self) -> None:
        """Deletes every item of the owner from the store and the index."""
        async with self._lock:
            await self.store.clear(self.owner)
            self.index.remove(list(self._items))
            self._items.clear()
            self._current.clear()
            self._replaced.clear()


def _attribute_metadata(fact: str) -> dict[str, Any]:
    found = fact_attribute(fact)
    return {} if found is None else {"attribute": found[0], "value": found[1]}
