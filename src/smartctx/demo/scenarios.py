"""The seed scenarios as steps over the wire (A2A messages plus memory-API calls).

1. **eviction** (seed smart-context-memory): system prompt; ask about the VPN (a knowledge-base
   document is retrieved, the agent answers); chit-chat; ask about expense reimbursement, whose
   long document overflows the budget: agent replies (and tool logs) are evicted first, the VPN
   document and the system prompt stay; ask about the VPN again: the document is refused as a
   duplicate. The budget is calibrated by a probe run of the same questions in a throw-away
   context with room to spare, so that step 3 overflows by more than the tool logs but less than
   tool logs plus agent replies, whatever knowledge base and model the server has.
2. **compression** (seed smart-context-compression), 100-token budget: "Hello Server!" twice
   appears once in the prompt; a burst of verbose tool logs is stored but never reaches the
   prompt; a long message makes old conversation collapse into a ``summary`` slot whose
   provenance names what it replaced.

Every step records the server's answer: the turn's events and snapshot (from the A2A artifact
or the memory API) and the prompt view. Verdicts are computed from these records only.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smartctx.service.client import SmartctxClient, smartctx_options

DEMO_OWNER = "smartctx-demo"
"""Owner prefix: each scenario (and the calibration probe) runs as its own owner, so that
cross-context personal memory of one never leaks into another's token budget."""
EVICTION_SYSTEM_PROMPT = (
    "You are the IT helpdesk assistant. Answer from the knowledge in your context and cite its "
    "source."
)
COMPRESSION_SYSTEM_PROMPT = "Be brief."
VPN_QUESTION = "How do I connect to the VPN?"
CHIT_CHAT = "Great, thanks a lot!"
EXPENSE_QUESTION = "How do I get my travel expenses reimbursed?"
HELLO = "Hello Server!"
SMALL_TALK = [
    "By the way, my name is Dana and I am new in the finance team.",
    "Our team meets every Monday morning in room 4B on the third floor.",
    "On Fridays I usually work from home in Lisbon.",
]
LONG_MESSAGE = (
    "One more thing before I go: I have been collecting a long list of questions about my first "
    "weeks here, from the coffee machine on the third floor to the parking rules, the canteen "
    "hours and the team's favourite lunch places, so please keep them in mind."
)
COMPRESSION_KEEP_RECENT = 2
TOOL_BURST = [
    f"[debug] GET http://inventory.internal/api/v2/items?page={i} -> 200 OK in {11 + i} ms; "
    f"cache=miss retries=0 payload=4.{i} kB trace_id=9f{i}a7c3e1d2b4f6a8c0e2d4f6a8c0e2d4 "
    f"span=reader worker=pool-{i} region=eu-west-1 build=2026.11.{i + 1}"
    for i in range(5)
]


@dataclass
class StepRecord:
    """One step as the server answered it."""

    title: str
    action: str
    reply: str | None
    events: list[dict[str, Any]]
    snapshot: dict[str, Any]
    prompt: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def kinds(self) -> dict[str, str]:
        """slot id -> kind for every slot the snapshot shows."""
        return {s["id"]: s["kind"] for s in self.snapshot.get("slots", [])}


@dataclass
class ScenarioResult:
    """A scenario's steps, in order."""

    name: str
    context_id: str
    budget: int
    steps: list[StepRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


StepCallback = Callable[[ScenarioResult, StepRecord], None]


async def _record(
    client: SmartctxClient,
    context_id: str,
    title: str,
    action: str,
    reply: str | None,
    events: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> StepRecord:
    snapshot = await client.snapshot(context_id)
    prompt = await client.prompt(context_id)
    return StepRecord(title, action, reply, events, snapshot, prompt, extra or {})


async def _ask(
    client: SmartctxClient,
    result: ScenarioResult,
    title: str,
    text: str,
    on_step: StepCallback | None,
    metadata: dict[str, Any] | None = None,
) -> StepRecord:
    reply = await client.send(text, context_id=result.context_id, metadata=metadata)
    step = await _record(
        client,
        result.context_id,
        title,
        f"A2A message: {text!r}",
        reply.text,
        reply.events,
        {"task_state": reply.state},
    )
    result.steps.append(step)
    if on_step is not None:
        on_step(result, step)
    return step


async def calibrate_eviction_budget(client: SmartctxClient) -> tuple[int, str]:
    """A budget that makes step 3 overflow past the tool logs into the agent replies.

    Runs the first three questions in a throw-away context with a large budget, then chooses
    ``total - tool_logs - half of the oldest agent reply``: reaching it needs every tool log and
    the first agent reply evicted, and nothing of priority 7 or more.
    """
    probe = f"demo-eviction-probe-{uuid.uuid4().hex[:8]}"
    meta = smartctx_options(
        preset="eviction", budget=1_000_000, system_prompt=EVICTION_SYSTEM_PROMPT
    )
    for i, text in enumerate((VPN_QUESTION, CHIT_CHAT, EXPENSE_QUESTION)):
        await client.send(text, context_id=probe, metadata=meta if i == 0 else None)
    snap = await client.snapshot(probe)
    slots = snap["slots"]
    tools = sum(s["tokens"] for s in slots if s["kind"] == "tool_log")
    agents = [s for s in slots if s["kind"] == "agent"]
    first_agent = agents[0]["tokens"] if agents else 0
    budget = max(1, snap["tokens_used"] - tools - first_agent // 2)
    note = (
        f"budget {budget} = probe total {snap['tokens_used']} - tool logs {tools} - half of the "
        f"first agent reply ({first_agent}); probe context {probe}"
    )
    return budget, note


async def run_eviction(
    client: SmartctxClient,
    on_step: StepCallback | None = None,
    *,
    probe: SmartctxClient | None = None,
) -> ScenarioResult:
    """Scenario 1 (see the module docstring); ``probe`` runs the calibration (another owner)."""
    budget, note = await calibrate_eviction_budget(probe or client)
    result = ScenarioResult("eviction", f"demo-eviction-{uuid.uuid4().hex[:8]}", budget)
    result.notes.append(note)
    meta = smartctx_options(preset="eviction", budget=budget, system_prompt=EVICTION_SYSTEM_PROMPT)
    await _ask(client, result, "1. ask about the VPN", VPN_QUESTION, on_step, meta)
    await _ask(client, result, "2. chit-chat", CHIT_CHAT, on_step)
    await _ask(
        client, result, "3. ask about expenses (long document: overflow)", EXPENSE_QUESTION, on_step
    )
    await _ask(client, result, "4. ask about the VPN again (duplicate)", VPN_QUESTION, on_step)
    return result


async def run_compression(
    client: SmartctxClient, on_step: StepCallback | None = None, budget: int = 100
) -> ScenarioResult:
    """Scenario 2 (see the module docstring). The context is created through the memory API."""
    created = await client.create_context(
        f"demo-compression-{uuid.uuid4().hex[:8]}",
        preset="compression",
        budget=budget,
        system_prompt=COMPRESSION_SYSTEM_PROMPT,
        keep_recent=COMPRESSION_KEEP_RECENT,
    )
    result = ScenarioResult("compression", created["context_id"], budget)
    await _ask(client, result, "1. say hello", HELLO, on_step)
    await _ask(client, result, "2. say hello again (duplicate)", HELLO, on_step)
    events: list[dict[str, Any]] = []
    burst: list[dict[str, Any]] = []
    log_before = result.steps[-1].snapshot["log_size"]
    for text in TOOL_BURST:
        added = await client.add_slot(result.context_id, "tool_log", text, source_id="debug")
        events += added["events"]
        burst.append(added["slot"])
    step = await _record(
        client,
        result.context_id,
        "3. tool-log burst (memory API)",
        f"POST /memory/contexts/{{id}}/slots x{len(TOOL_BURST)} (tool_log)",
        None,
        events,
        {"burst": burst, "log_before": log_before},
    )
    result.steps.append(step)
    if on_step is not None:
        on_step(result, step)
    for i, text in enumerate(SMALL_TALK):
        await _ask(client, result, f"{4 + i}. small talk", text, on_step)
    await _ask(
        client,
        result,
        f"{4 + len(SMALL_TALK)}. a long message (compression)",
        LONG_MESSAGE,
        on_step,
    )
    return result
