"""``smartctx bench answers``: does the served agent answer from the knowledge it retrieves?

The question set of :mod:`smartctx.bench.answers_data` is asked over A2A of a real smartctx
server (the same app ``smartctx serve`` runs, on an ephemeral loopback port, with a fresh SQLite
database per mode). The server's chat model is a *recording* OpenAI-compatible server on
loopback (:class:`~smartctx.agents.testing.OpenAICompatibleTestServer`) that answers with the
offline ``GroundedResponder`` the server uses by default (same embedder, same calibration), so
every figure is measured on exactly the prompt a real model would receive. Three modes:

- ``fresh``: a new owner and a new context per question (no memory can help or hurt);
- ``shared``: one owner, a new context per question (memory across contexts on);
- ``thread``: one owner, one long context for every question.

Per mode and split (``dev``, ``test``, ``all``): answer accuracy (answerable questions whose
reply holds every required fact), abstention accuracy (unanswerable questions the reply
declines), evidence in prompt (a source that holds the answer is in the prompt the model
received), mean prompt tokens (cl100k of the messages received), junk replies (scaffolding,
tool logs or raw JSON in the reply) and the median turn latency measured by the client.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smartctx.bench.answers_data import (
    Question,
    evidence_present,
    is_abstention,
    is_correct,
    is_junk,
    load_questions,
)

MODES = ("fresh", "shared", "thread")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One asked question."""

    question: Question
    reply: str
    correct: bool
    abstained: bool
    evidence: bool
    junk: bool
    prompt_tokens: int
    ms: float


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The figures of one mode (the JSON shape of the issue)."""
    answerable = [o for o in outcomes if o.question.answerable]
    unanswerable = [o for o in outcomes if not o.question.answerable]

    def share(items: Sequence[Outcome], test: Callable[[Outcome], bool]) -> float:
        return round(sum(test(o) for o in items) / len(items), 4) if items else 0.0

    return {
        "answer_accuracy": share(answerable, lambda o: o.correct),
        "abstain_accuracy": share(unanswerable, lambda o: o.abstained),
        "evidence_in_prompt": share(answerable, lambda o: o.evidence),
        "prompt_tokens": round(statistics.fmean(o.prompt_tokens for o in outcomes), 1)
        if outcomes
        else 0.0,
        "junk_replies": sum(o.junk for o in outcomes),
        "median_ms": round(statistics.median(o.ms for o in outcomes), 1) if outcomes else 0.0,
        "questions": len(outcomes),
    }


def _tokens(messages: list[dict[str, str]]) -> int:
    from smartctx.core import get_counter

    counter = get_counter()
    return sum(counter.count(m.get("content", "")) + 4 for m in messages)


async def _ask_all(
    url: str, questions: Sequence[Question], mode: str, recorder: Any, progress: Progress | None
) -> list[Outcome]:
    from smartctx.service.client import SmartctxClient

    outcomes: list[Outcome] = []
    shared_owner = f"bench-{uuid.uuid4().hex[:8]}"
    clients: dict[str, SmartctxClient] = {}
    context: str | None = None
    try:
        for n, question in enumerate(questions):
            owner = f"bench-{uuid.uuid4().hex[:8]}" if mode == "fresh" else shared_owner
            if owner not in clients:
                if mode == "fresh":
                    for old in clients.values():
                        await old.close()
                    clients.clear()
                clients[owner] = SmartctxClient(url, owner=owner, timeout=120.0)
            client = clients[owner]
            seen = len(recorder.chat_requests)
            started = time.perf_counter()
            reply = await client.send(question.question, context_id=context)
            ms = (time.perf_counter() - started) * 1000
            if mode == "thread":
                context = reply.context_id
            sent = [
                r
                for r in recorder.chat_requests[seen:]
                if r.json["messages"] and r.json["messages"][-1].get("content") == question.question
            ]
            messages = list(sent[-1].json["messages"]) if sent else []
            prompt = "\n".join(str(m.get("content", "")) for m in messages)
            outcomes.append(
                Outcome(
                    question=question,
                    reply=reply.text,
                    correct=is_correct(question, reply.text),
                    abstained=is_abstention(reply.text),
                    evidence=evidence_present(question, prompt),
                    junk=is_junk(reply.text),
                    prompt_tokens=_tokens(messages),
                    ms=ms,
                )
            )
            if progress is not None:
                progress(mode, n + 1, len(questions))
    finally:
        for client in clients.values():
            await client.close()
    return outcomes


def run_mode(
    mode: str,
    questions: Sequence[Question],
    *,
    progress: Progress | None = None,
    settings_overrides: dict[str, Any] | None = None,
) -> list[Outcome]:
    """Ask ``questions`` in ``mode`` against a fresh server and database; the outcomes."""
    from smartctx.agents.grounded import GroundedResponder
    from smartctx.agents.testing import OpenAICompatibleTestServer
    from smartctx.core import Settings, get_embedder
    from smartctx.service.server import serve

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    responder = GroundedResponder.calibrated(get_embedder("use"))
    with (
        tempfile.TemporaryDirectory(prefix="smartctx-bench-answers-") as tmp,
        OpenAICompatibleTestServer(reply=responder) as recorder,
    ):
        settings = Settings(
            data_dir=Path(tmp),
            llm_base_url=recorder.base_url,
            llm_model="recording-grounded",
            memory_llm=False,  # the recording model stands in for the answerer only
            **(settings_overrides or {}),
        )
        with serve(settings, port=0) as handle:
            return asyncio.run(_ask_all(handle.url, questions, mode, recorder, progress))


def run(
    modes: Sequence[str] = MODES,
    *,
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Every mode over the question set; ``{"modes": {...}, "splits": {...}, "replies": ...}``.

    ``modes`` holds the figures over all questions (the issue's JSON shape); ``splits`` the same
    per ``dev`` / ``test`` split; ``replies`` every question's reply and verdict per mode.
    """
    questions = load_questions()
    if limit is not None:
        questions = questions[:limit]
    result: dict[str, Any] = {"modes": {}, "splits": {"dev": {}, "test": {}}, "replies": {}}
    for mode in modes:
        outcomes = run_mode(mode, questions, progress=progress)
        result["modes"][mode] = summarize(outcomes)
        for split in ("dev", "test"):
            result["splits"][split][mode] = summarize(
                [o for o in outcomes if o.question.split == split]
            )
        result["replies"][mode] = [
            {
                "id": o.question.id,
                "question": o.question.question,
                "reply": o.reply,
                "correct": o.correct,
                "evidence": o.evidence,
                "junk": o.junk,
            }
            for o in outcomes
        ]
    return result
