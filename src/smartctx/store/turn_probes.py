"""A served turn's version probes, answered by the statement that reads the context's version.

A replica keeps, per owner, what it read of stores that other replicas write: the personal
memory (under its stamp), the knowledge bases (under their tokens), the long-term memory (under
its item count and highest seq). Each turn checks each of them with a one-row indexed read, and
on PostgreSQL every statement costs a round trip and a backend's protocol work, more than the
read itself. A :class:`Probe` names the scalar subqueries of one check; inside
:func:`probing`, the first read of a context's version for the block's owner
(:meth:`smartctx.store.context_log.ContextStore.version`) carries the block's probes as extra
columns of its one statement, and each answer waits in the block for its reader, which
:func:`take` s it (once) instead of reading.

An answer is as fresh as a read made at the version read, which is where the turn starts
(right after the context's lock). The readers meet it a few milliseconds later, before the
turn writes anything, and what another replica writes in between is simply seen on the next
turn, as a read of its own would have missed it a moment later. Outside a block, after an answer
is taken, and when no version read happened (a context loaded afresh), readers read as before.
Answers are keyed by the database they were read from, so a reader on another database never
takes one.

Cost: the probes' subqueries added to one statement; nothing without a block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

OWNER_PARAM = "owner"
"""The bind parameter a probe's subqueries filter on (``sa.bindparam(OWNER_PARAM)``)."""


@dataclass(frozen=True)
class Probe:
    """One check of a turn: ``columns`` (scalar subqueries on the bind parameter
    :data:`OWNER_PARAM`, built once), their extra bind values, and ``parse``, which turns the
    columns' values into what the reader would have read."""

    kind: str
    columns: tuple[Any, ...]
    parse: Callable[[Sequence[Any]], Any]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Block:
    owner: str
    probes: tuple[Probe, ...]
    answered: bool = False
    answers: dict[tuple[int, str], Any] = field(default_factory=dict)


_BLOCK: ContextVar[_Block | None] = ContextVar("smartctx_turn_probes", default=None)
_MISSING = object()


@contextmanager
def probing(owner: str, probes: Sequence[Probe]) -> Iterator[None]:
    """The block of one turn of ``owner``: its first version read answers ``probes``. Tasks
    started inside share the block; a nested block replaces it until it ends."""
    token = _BLOCK.set(_Block(owner, tuple(probes)) if probes else None)
    try:
        yield
    finally:
        _BLOCK.reset(token)


def pending(owner: str) -> tuple[Probe, ...]:
    """The probes a version read of ``owner`` should answer now (none: not in a block of that
    owner, or the block's probes were answered already)."""
    block = _BLOCK.get()
    if block is None or block.answered or block.owner != owner:
        return ()
    return block.probes


def answer(db: object, owner: str, probes: Sequence[Probe], values: Sequence[Any]) -> None:
    """Keep the answers of ``probes`` (``values``: their columns in order) read from ``db``."""
    block = _BLOCK.get()
    if block is None or block.owner != owner:
        return
    block.answered = True
    at = 0
    for probe in probes:
        width = len(probe.columns)
        block.answers[(id(db), probe.kind)] = probe.parse(values[at : at + width])
        at += width


def take(db: object, kind: str, owner: str) -> Any:
    """The answer to ``kind`` for ``owner`` read from ``db`` in this block, removed so that a
    second read reads afresh; :data:`MISSING` when there is none."""
    block = _BLOCK.get()
    if block is None or block.owner != owner:
        return _MISSING
    return block.answers.pop((id(db), kind), _MISSING)


MISSING: Any = _MISSING
"""What :func:`take` returns without an answer."""

__all__ = ["MISSING", "OWNER_PARAM", "Probe", "answer", "pending", "probing", "take"]
