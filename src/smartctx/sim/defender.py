"""The defender: a smartctx A2A server started for the simulation, and its window choice.

:func:`local_defender` starts the smartctx service on ``127.0.0.1`` with an ephemeral port, the
defender's system prompt (:data:`~smartctx.sim.prompts.DEFENDER_PROMPT`) and the chosen chat
model, on a private database in a temporary directory; it yields the server's URL and always
stops the server and removes the directory, whatever happens inside the ``async with`` block.

The memory mode is chosen per conversation: :func:`context_metadata` is the metadata the
attacker's tool sends with the first message of each conversation (the ``smartctx`` extension
declared in the agent card): ``fifo`` is the naive first-in-first-out window that evicts the
oldest slot first, system prompt included; ``smart`` is smartctx's default funnel (system
pinned, duplicates merged, old turns summarised, lowest priority evicted first).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from smartctx.agents.models import ChatMessages, ChatModel
from smartctx.core.settings import Settings
from smartctx.service.client import smartctx_options
from smartctx.sim.prompts import DEFENDER_PROMPT

MemoryMode = Literal["fifo", "smart"]
MEMORY_MODES: tuple[MemoryMode, ...] = ("fifo", "smart")
PRESETS: dict[MemoryMode, str] = {"fifo": "fifo", "smart": "default"}
DEFAULT_BUDGET = 512
"""Tokens of the defender's window: the system prompt (~85 tokens) and a few turns fit, three
flooding messages (~190 tokens each) do not."""


def context_metadata(
    memory: MemoryMode, budget: int, system_prompt: str = DEFENDER_PROMPT
) -> dict[str, Any]:
    """Message metadata that gives a new smartctx conversation the ``memory`` window and the
    defender's system prompt (so any smartctx server given by ``--defender-url`` defends)."""
    return smartctx_options(preset=PRESETS[memory], budget=int(budget), system_prompt=system_prompt)


def defender_settings(base: Settings | None, data_dir: Path, *, budget: int) -> Settings:
    """``base`` (or the environment's settings) adapted for a private simulation defender."""
    settings = base or Settings()
    return settings.model_copy(
        update={
            "data_dir": data_dir,
            "database_url": None,
            "host": "127.0.0.1",
            "port": 0,
            "system_prompt": DEFENDER_PROMPT,
            "budget": budget,
            "kb_top_k": 0,
        }
    )


class OneShotOpenAIModel:
    """An OpenAI-compatible chat model that opens and closes its HTTP client on every call.

    The defender's model runs on the server's own thread and event loop, which stops with the
    server; a client that outlives one call would be left open there. One connection per turn
    is nothing next to an LLM's latency.
    """

    def __init__(
        self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = 60
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"openai:{model}"

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        from smartctx.agents.openai_model import OpenAIChatModel

        inner = OpenAIChatModel(self.base_url, self.model, self.api_key, timeout=self.timeout)
        try:
            return await inner.complete(messages, temperature=temperature)
        finally:
            await inner.aclose()


@asynccontextmanager
async def local_defender(
    *,
    model: ChatModel | None = None,
    settings: Settings | None = None,
    budget: int = DEFAULT_BUDGET,
    **app_kwargs: Any,
) -> AsyncIterator[str]:
    """Run a defender server for the duration of the block; yield its base URL.

    ``model`` is the defender's chat model (default: the service's offline responder);
    ``app_kwargs`` go to the service's ``create_app`` (``embedder``, ``counter``...); by default
    the defender has no knowledge base and no personal-memory hooks, so its window holds only
    its system prompt and the conversation. The server
    runs on its own thread and event loop, so a slow defender cannot stall the attacker's loop.
    """
    from smartctx.service.server import serve

    with tempfile.TemporaryDirectory(prefix="smartctx-sim-") as tmp:
        config = defender_settings(settings, Path(tmp), budget=budget)
        # a bare defender: no knowledge base, no personal-memory hooks, unless asked for
        kwargs: dict[str, Any] = {"providers": [], "hooks": [], **app_kwargs}
        if model is not None:
            kwargs["model"] = model
        handle = await asyncio.to_thread(serve, config, host="127.0.0.1", port=0, **kwargs)
        try:
            yield handle.url
        finally:
            await asyncio.to_thread(handle.stop)
