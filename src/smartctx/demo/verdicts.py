"""One verdict per scenario, computed from what the server returned (events and snapshots).

A verdict passes only when every check holds; its ``reason`` says which check failed or
summarises the evidence. Nothing here is printed unconditionally: the text comes from the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smartctx.demo.scenarios import HELLO, ScenarioResult, StepRecord


@dataclass(frozen=True)
class Verdict:
    """The outcome of one scenario."""

    scenario: str
    passed: bool
    reason: str
    checks: list[tuple[str, bool]] = field(default_factory=list)

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        return f"{mark} {self.scenario}: {self.reason}"


def _events(step: StepRecord, kind: str) -> list[dict[str, Any]]:
    return [e for e in step.events if e["kind"] == kind]


def _verdict(name: str, checks: list[tuple[str, bool]], evidence: str) -> Verdict:
    failed = [label for label, ok in checks if not ok]
    reason = evidence if not failed else "failed: " + "; ".join(failed)
    return Verdict(name, not failed, reason, checks)


def judge_eviction(result: ScenarioResult) -> Verdict:
    """Agent replies evicted before knowledge; VPN document and system prompt kept; the repeated
    VPN document refused as a duplicate."""
    if len(result.steps) < 4:
        return Verdict(result.name, False, f"only {len(result.steps)} of 4 steps ran")
    ask, chat, overflow, again = result.steps[:4]
    vpn_docs = {
        s["id"]
        for s in ask.snapshot["slots"]
        if s["kind"] == "rag_doc" and str(s["source_id"] or "").startswith("kb:vpn")
    }
    known = chat.kinds() | overflow.kinds()
    evicted = [
        e.get("slot_kind") or known.get(e["slot_id"], "?") for e in _events(overflow, "evicted")
    ]
    active_after = overflow.kinds()
    refused = [e for e in _events(again, "refused") if e["detail"].get("duplicate_of") in vpn_docs]
    checks = [
        ("step 1 retrieved a VPN document", bool(vpn_docs)),
        ("step 3 overflowed and evicted slots", bool(evicted)),
        ("an agent reply was evicted at step 3", "agent" in evicted),
        (
            "no document, user message or system slot was evicted at step 3",
            not {"rag_doc", "user", "system", "?"} & set(evicted),
        ),
        (
            "the VPN documents are still in the window after step 3",
            bool(vpn_docs) and vpn_docs <= set(active_after),
        ),
        (
            "the system prompt is still in the window",
            "system" in overflow.kinds().values() and "system" in again.kinds().values(),
        ),
        ("the repeated VPN document was refused as a duplicate", bool(refused)),
    ]
    evidence = (
        f"step 3 evicted {', '.join(evicted)}; {len(vpn_docs)} VPN document(s) and the system "
        f"prompt stayed; step 4 refused {len(refused)} duplicate document(s)"
    )
    return _verdict(result.name, checks, evidence)


def _prompt_user_count(step: StepRecord, text: str) -> int:
    return sum(
        1
        for m in step.prompt.get("messages", [])
        if m["role"] == "user" and m["content"].strip() == text
    )


def judge_compression(result: ScenarioResult) -> Verdict:
    """Duplicate hello merged (once in the prompt); tool-log burst stored but never in a prompt;
    old conversation summarised into a summary slot whose provenance names what it replaced."""
    if len(result.steps) < 4:
        return Verdict(result.name, False, f"only {len(result.steps)} steps ran")
    hello, again, burst = result.steps[1 - 1], result.steps[1], result.steps[2]
    burst_ids = {s["id"] for s in burst.extra.get("burst", [])}
    dropped = {e["slot_id"] for e in _events(burst, "dropped")}
    later_prompts = " ".join(s.prompt.get("text", "") for s in result.steps[2:])
    burst_texts = [s["text"] for s in burst.extra.get("burst", [])]
    stored = burst.snapshot["log_size"] - burst.extra.get("log_before", 0)
    summaries = [
        e
        for step in result.steps[3:]
        for e in _events(step, "admitted")
        if e["detail"].get("provenance")
    ]
    summarized = {e["slot_id"] for step in result.steps[3:] for e in _events(step, "summarized")}
    final = result.steps[-1]
    summary_slots = [s for s in final.snapshot["slots"] if s["kind"] == "summary"]
    checks = [
        ("the second hello was merged", bool(_events(again, "merged"))),
        (f"{HELLO!r} appears once in the prompt", _prompt_user_count(again, HELLO) == 1),
        ("every burst tool log was dropped", bool(burst_ids) and burst_ids <= dropped),
        ("every burst tool log was stored in the log", stored >= len(burst_ids) > 0),
        (
            "no burst tool log reached a prompt",
            not any(text in later_prompts for text in burst_texts),
        ),
        ("old conversation was summarised", bool(summaries)),
        (
            "the summary's provenance names exactly the summarised slots",
            bool(summaries)
            and all(set(e["detail"]["provenance"]) <= summarized for e in summaries),
        ),
        (
            "a summary slot with provenance is in the final window",
            any(s["provenance"] for s in summary_slots),
        ),
        (
            "the window fits its budget",
            all(s.snapshot["tokens_used"] <= s.snapshot["budget"] for s in result.steps),
        ),
    ]
    replaced = len(summaries[0]["detail"]["provenance"]) if summaries else 0
    evidence = (
        f"hello merged (x{_prompt_user_count(hello, HELLO)} in the prompt); "
        f"{len(burst_ids)} tool logs stored and dropped; a summary replaced {replaced} slot(s)"
    )
    return _verdict(result.name, checks, evidence)


JUDGES = {"eviction": judge_eviction, "compression": judge_compression}


def judge(result: ScenarioResult) -> Verdict:
    """The verdict for a scenario result (by its name)."""
    return JUDGES[result.name](result)
