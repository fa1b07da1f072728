"""Forget one item everywhere the service keeps a copy of it.

Personal memory's ``forget_item`` cleans its own tiers (pairs, summaries, profile items and their
evidence); it cannot import the stores above it, so the service registers a
:class:`CopiesForgetter` as its ``ItemForgetter``. Given the forgotten item's texts and source
ids (a :class:`~smartctx.memory.ForgottenItem`, captured before the item was deleted) it deletes,
for that owner only:

1. window slots (with their events) whose text or metadata holds one of the texts, or whose
   source id names the item (``pair:<id>``, ``profile:<id>``...), through
   :meth:`ContextStore.forget_slots <smartctx.store.context_log.ContextStore.forget_slots>`;
2. long-term memory items holding one of the texts or derived from a deleted slot (their
   provenance), and then the window slots that recalled them (``mem:<item id>``); the cached
   memory providers, with their vectors, are dropped;
3. A2A task rows whose stored history, artifacts, status or metadata hold one of the texts;
4. the owner's live windows, so no process-local copy survives (they reload from the store);
5. with ``personal`` set, the owner's other pairs that restate the item (a reply in another
   thread that said it back), each forgotten in turn as a pair, without going further. Only a
   long text restates: another pair that is merely a short text of the item ("Noted.", "OK")
   said nothing of it and is kept.

The texts looked for are the item's own and their restatements (:func:`restatements`): each
sentence said back in the second person ("I keep my key under the mat" -> "You keep your key
under the mat"), as the offline responder and an LLM restate them, and their redacted forms.

*Holding a text* means containing it when it is at least :data:`MIN_NEEDLE` characters long, and
being exactly it (spaces aside) when shorter, so forgetting a pair "yes" / "ok" does not delete
every slot that contains those words.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import sqlalchemy as sa

from smartctx.agents.facts import stated_facts
from smartctx.agents.memory_store import MemoryItem
from smartctx.agents.text import to_second_person
from smartctx.core.sentences import split_sentences
from smartctx.core.slots import Slot
from smartctx.memory.forget import ForgottenItem
from smartctx.memory.personal import PersonalMemory
from smartctx.memory.privacy import redact
from smartctx.memory.tables import PairRow
from smartctx.service.contexts import ContextRegistry
from smartctx.service.owner_memory import OwnerMemory
from smartctx.store.db import Database

MIN_NEEDLE = 12
"""Texts shorter than this many characters match only whole texts, never substrings."""
_NESTED: ContextVar[bool] = ContextVar("smartctx_forget_nested", default=False)


def restatements(texts: Sequence[str]) -> list[str]:
    """``texts`` and the forms a reply or a summary restates them in (see the module docs):
    every sentence and every fact it states (:func:`~smartctx.agents.facts.stated_facts`) as
    said, said back in the second person, without its final punctuation,
    and redacted. Distinct, in a stable order."""
    out: list[str] = []
    for text in texts:
        forms = [text, redact(text)]
        # each sentence, and each fact as stated ("Remember that I keep my key under the
        # mat" is answered with "You keep your key under the mat")
        for sentence in dict.fromkeys([*split_sentences(text), *stated_facts(text)]):
            second = to_second_person(sentence)
            forms += [sentence, second, second[:1].lower() + second[1:]]
        for form in list(forms):
            forms += [form.rstrip(".!?。 "), redact(form)]
        out += [f.strip() for f in forms if f.strip() and f.strip() not in out]
    return list(dict.fromkeys(out))


class TextMatcher:
    """Does a string hold one of ``texts``? (see the module docs)."""

    def __init__(self, texts: Sequence[str], *, min_needle: int = MIN_NEEDLE) -> None:
        clean = [t.strip() for t in texts if t.strip()]
        self.long = [t for t in clean if len(t) >= min_needle]
        self.short = {t for t in clean if len(t) < min_needle}
        self.min_needle = min_needle

    def __bool__(self) -> bool:
        return bool(self.long or self.short)

    def holds(self, value: str) -> bool:
        """True when ``value`` contains a long text or is a short one."""
        return value.strip() in self.short or any(t in value for t in self.long)

    def restates(self, value: str) -> bool:
        """True when ``value`` contains a long text; short texts never count, since a reply such
        as "Noted." that equals one carries none of the item."""
        return any(t in value for t in self.long)

    def part_of(self, value: str) -> bool:
        """True when ``value`` (long enough) is a passage of one of the texts."""
        value = value.strip()
        return len(value) >= self.min_needle and any(value in t for t in self.long)

    def holds_json(self, raw: str) -> bool:
        """True when stored JSON ``raw`` holds a long text (escaped or not) or has a short one
        as a whole string value."""
        for text in self.long:
            if text in raw or json.dumps(text)[1:-1] in raw:
                return True
        return any(
            json.dumps(text) in raw or json.dumps(text, ensure_ascii=False) in raw
            for text in self.short
        )


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


class CopiesForgetter:
    """Deletes the service's copies of one forgotten item (a ``smartctx.memory`` item
    forgetter; see the module docs)."""

    name = "service_copies"

    def __init__(
        self,
        registry: ContextRegistry,
        db: Database,
        *,
        task_table: str,
        memory: OwnerMemory | None = None,
        personal: PersonalMemory | None = None,
    ) -> None:
        self.registry = registry
        self.db = db
        self.task_table = task_table
        self.memory = memory
        self.personal = personal

    async def forget_item(self, item: ForgottenItem) -> dict[str, Any]:
        owner = item.owner
        texts = TextMatcher(restatements(item.texts))
        sources = set(item.source_ids)

        def slot_holds(slot: Slot) -> bool:
            if slot.source_id in sources:
                return True
            return bool(texts) and (
                texts.holds(slot.text) or any(texts.holds(v) for v in _strings(slot.metadata))
            )

        slots = await self.registry.store.forget_slots(owner, slot_holds)
        slot_ids = {slot.id for _, slot in slots}
        items: list[MemoryItem] = []
        if self.memory is not None:

            def item_holds(mem: MemoryItem) -> bool:
                return bool(slot_ids & set(mem.provenance)) or (
                    bool(texts) and (texts.holds(mem.text) or texts.part_of(mem.text))
                )

            items = await self.memory.forget_items(owner, item_holds)
        recalled = {f"mem:{mem.id}" for mem in items}
        if recalled:
            slots += await self.registry.store.forget_slots(
                owner, lambda slot: slot.source_id in recalled
            )
        self.registry.drop_owner(owner)
        tasks = await self._forget_tasks(owner, texts) if texts else 0
        restating = await self._forget_restating_pairs(item, texts) if texts else []
        return {
            "window_slots": len(slots),
            "contexts": len({context_id for context_id, _ in slots}),
            "memory_items": len(items),
            "a2a_tasks": tasks,
            "restating_pairs": restating,
        }

    async def _forget_restating_pairs(self, item: ForgottenItem, texts: TextMatcher) -> list[str]:
        """Forget the owner's other pairs whose texts restate the item (one level deep)."""
        if self.personal is None or _NESTED.get():
            return []
        async with self.db.sessions() as session:
            rows = await session.execute(
                sa.select(PairRow.id, PairRow.user_text, PairRow.assistant_text).where(
                    PairRow.owner == item.owner
                )
            )
            doomed = [
                str(pid)
                for pid, user, assistant in rows
                if not (item.kind == "pair" and pid == item.id)
                and (texts.restates(user) or texts.restates(assistant))
            ]
        token = _NESTED.set(True)
        try:
            for pair_id in doomed:
                await self.personal.forget_item(item.owner, "pair", pair_id)
        finally:
            _NESTED.reset(token)
        return doomed

    async def _forget_tasks(self, owner: str, texts: TextMatcher) -> int:
        """Delete the owner's A2A task rows whose stored JSON holds one of the texts."""
        table = sa.table(
            self.task_table,
            sa.column("id"),
            sa.column("owner"),
            sa.column("history"),
            sa.column("artifacts"),
            sa.column("status"),
            sa.column("metadata"),
        )
        fields = (table.c.history, table.c.artifacts, table.c.status, table.c.metadata)
        async with self.db.session() as session:
            rows = await session.execute(
                sa.select(table.c.id, *(sa.cast(f, sa.Text) for f in fields)).where(
                    table.c.owner == owner
                )
            )
            doomed = [
                row[0] for row in rows if any(texts.holds_json(str(v or "")) for v in row[1:])
            ]
            if doomed:
                await session.execute(
                    sa.delete(table).where(table.c.owner == owner, table.c.id.in_(doomed))
                )
        return len(doomed)


__all__ = ["MIN_NEEDLE", "CopiesForgetter", "TextMatcher", "restatements"]
