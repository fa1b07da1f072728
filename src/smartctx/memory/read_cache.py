"""What a process read of an owner's memory, kept for as long as the owner's state is unchanged.

Every write to an owner's personal memory bumps the owner's change counter, and a forget, which
restarts the counter, gives it a new epoch (:func:`smartctx.memory.repository.current_stamp`), so
``(version, epoch)`` names one state of the owner across replicas. A served turn reads the same
pairs, summaries and profile as the turn before unless something was written in between;
:class:`StampedReads` keeps those reads under the stamp they were read at. A reader checks the
current stamp (one indexed read) and reuses what it kept for it; a write made by this process
advances the entries it can update in place (a new pair) and drops the rest.

Only reads made between two equal stamps are kept (:meth:`PersonalMemory.everything` reads the
stamp before and after), so a write landing in the middle never leaves a mixed state behind.
Kept values are shared: callers must not change them.

One stamp a turn (:func:`turn_reads`): inside the block a served turn runs in, the stamp
:meth:`PersonalMemory.everything` read for an owner is the one
:meth:`PersonalMemory.confirmed_profile` uses (the profile provider asks for it a few
milliseconds later), so a turn reads the stamp once instead of twice, and its profile is the one
its memory snapshot holds. Outside such a block every read checks the stamp.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Stamp = tuple[int, "str | None"]
Key = tuple["str | None", int]
"""What :meth:`PersonalMemory.everything` was asked: (session filter, pair limit)."""
MAX_OWNERS = 512
"""Owners whose reads a process keeps (least recently used first out)."""


_TURN_STAMPS: ContextVar[dict[str, Stamp] | None] = ContextVar("smartctx_turn_stamps", default=None)


@contextmanager
def turn_reads() -> Iterator[None]:
    """The block of one served turn: owners' stamps read inside are reused inside (see the module
    docstring). Tasks started inside share the block's stamps; nested blocks start afresh."""
    token = _TURN_STAMPS.set({})
    try:
        yield
    finally:
        _TURN_STAMPS.reset(token)


def note_turn_stamp(owner: str, stamp: Stamp) -> None:
    """Record the stamp read for ``owner`` in the current turn block (none: nothing kept)."""
    stamps = _TURN_STAMPS.get()
    if stamps is not None:
        stamps[owner] = stamp


def turn_stamp(owner: str) -> Stamp | None:
    """The stamp read for ``owner`` earlier in the current turn block, or None."""
    stamps = _TURN_STAMPS.get()
    return stamps.get(owner) if stamps is not None else None


class StampedReads:
    """Per owner, ``{key: (stamp, value)}``; ``key`` is what the reader was asked."""

    def __init__(self, max_owners: int = MAX_OWNERS) -> None:
        self.max_owners = max_owners
        self._owners: OrderedDict[str, dict[Key, tuple[Stamp, dict[str, Any]]]] = OrderedDict()

    def get(self, owner: str, key: Key, stamp: Stamp) -> dict[str, Any] | None:
        """The value kept for ``key`` at ``stamp``, or None."""
        entries = self._owners.get(owner)
        found = entries.get(key) if entries is not None else None
        if found is None or found[0] != stamp:
            return None
        self._owners.move_to_end(owner)
        return found[1]

    def any_at(self, owner: str, stamp: Stamp) -> dict[str, Any] | None:
        """A value kept for any key at ``stamp`` (their summaries and profile are the same), or
        None."""
        for kept, value in (self._owners.get(owner) or {}).values():
            if kept == stamp:
                return value
        return None

    def put(self, owner: str, key: Key, stamp: Stamp, value: dict[str, Any]) -> None:
        self._owners.setdefault(owner, {})[key] = (stamp, value)
        self._owners.move_to_end(owner)
        while len(self._owners) > self.max_owners:
            self._owners.popitem(last=False)

    def added_pair(
        self,
        owner: str,
        before: int,
        after: int,
        pair: dict[str, Any],
        *,
        profile_changed: bool,
        epoch: str | None = None,
    ) -> None:
        """This process moved ``owner`` from version ``before`` to ``after`` by storing ``pair``
        (a pair view): entries read at ``before`` gain the pair (when their session filter takes
        it, keeping their limit) and move to ``after``; the others, and every entry when the
        profile changed, are dropped. ``epoch``: the owner's epoch when this write created their
        state (their first write): entries of the owner never written move to it."""
        entries = self._owners.get(owner)
        if not entries:
            return
        for key, (stamp, value) in list(entries.items()):
            if (
                profile_changed
                or stamp[0] != before
                or (epoch is not None and stamp[1] is not None)
            ):
                del entries[key]
                continue
            session_id, limit = key
            pairs = value["pairs"]
            if session_id is None or session_id == pair.get("session_id"):
                pairs = [*pairs, pair][-limit:] if limit > 0 else []
            entries[key] = (
                (after, stamp[1] if epoch is None else epoch),
                {**value, "pairs": pairs},
            )

    def drop(self, owner: str) -> None:
        self._owners.pop(owner, None)
