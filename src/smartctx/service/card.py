"""The agent card served at ``/.well-known/agent-card.json`` (A2A protocol 1.0).

The card names both interfaces (JSON-RPC at ``<base>/`` and HTTP+JSON at ``<base>/rest``),
declares streaming, lists the agent's skills and declares the smartctx context extension plus
the extension of every turn hook that has one.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import (
    AGENT_CARD_WELL_KNOWN_PATH,
    PROTOCOL_VERSION_1_0,
    TransportProtocol,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smartctx import __version__
from smartctx.service.hooks import TurnHook

CONTEXT_EXTENSION_URI = "https://smartctx.dev/extensions/context-window/v1"
"""Declares the ``smartctx`` message metadata (preset/budget on a context's first message) and
the ``smartctx`` artifact metadata (the turn's memory events and a compact snapshot)."""

REST_PREFIX = "/rest"
SECURITY_SCHEMES = {
    "bearer": SecurityScheme(
        http_auth_security_scheme=HTTPAuthSecurityScheme(
            scheme="Bearer",
            bearer_format="smartctx API key (sctx_...) or JWT",
            description="an API key from `smartctx keys create`, or the identity provider's JWT",
        )
    ),
    "apiKey": SecurityScheme(
        api_key_security_scheme=APIKeySecurityScheme(
            location="header", name="X-API-Key", description="an API key (sctx_...)"
        )
    ),
}


def build_agent_card(
    base_url: str,
    *,
    name: str = "smartctx",
    description: str | None = None,
    hooks: Sequence[TurnHook] = (),
    auth_required: bool = False,
) -> AgentCard:
    """The agent card for a server reachable at ``base_url`` (no trailing slash needed).

    The card always declares the two ways to authenticate (``bearer``: an API key or a JWT in
    ``Authorization``; ``apiKey``: the ``X-API-Key`` header); with ``auth_required`` it also
    requires one of them in ``securityRequirements``.
    """
    base = base_url.rstrip("/")
    extensions = [
        AgentExtension(
            uri=CONTEXT_EXTENSION_URI,
            description=(
                "Message metadata {'smartctx': {'preset': 'default|eviction|compression|fifo', "
                "'budget': int}} chooses the window of a new context; the reply artifact's "
                "metadata 'smartctx' carries the turn's memory events and a compact snapshot."
            ),
            required=False,
        )
    ]
    for hook in hooks:
        if hook.extension_uri:
            extensions.append(
                AgentExtension(
                    uri=hook.extension_uri,
                    description=f"turn hook {type(hook).__name__}",
                    required=False,
                )
            )
    return AgentCard(
        security_schemes=SECURITY_SCHEMES,
        security_requirements=(
            [SecurityRequirement(schemes={n: StringList()}) for n in SECURITY_SCHEMES]
            if auth_required
            else []
        ),
        name=name,
        description=description
        or (
            "A helpdesk agent whose context window is managed by smartctx: prioritised slots, "
            "deduplication, compression and eviction within a token budget, with multi-turn "
            "memory per contextId that survives restarts."
        ),
        version=__version__,
        supported_interfaces=[
            AgentInterface(
                url=f"{base}/",
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
            AgentInterface(
                url=f"{base}{REST_PREFIX}",
                protocol_binding=TransportProtocol.HTTP_JSON.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False, extensions=extensions
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="helpdesk-answer",
                name="Grounded helpdesk answers",
                description=(
                    "Answers IT-helpdesk questions from a knowledge base, citing the source of "
                    "each fact, and says plainly when it does not know."
                ),
                tags=["rag", "helpdesk", "citations"],
                examples=["How do I connect to the VPN?", "How do I claim an expense?"],
            ),
            AgentSkill(
                id="context-memory",
                name="Managed multi-turn memory",
                description=(
                    "Remembers a conversation per contextId within a token budget: the system "
                    "prompt and current request are never lost, duplicates are refused or "
                    "merged, old turns are summarised or evicted by priority."
                ),
                tags=["memory", "context-window"],
                examples=["What did I ask you earlier?"],
            ),
        ],
    )


CARD_CACHE_CONTROL = "public, max-age=300"
"""Clients and proxies may reuse the card for five minutes (it changes only on a restart)."""


class CardCacheHeaders:
    """Pure ASGI middleware: the agent card is answered with ``Cache-Control``."""

    def __init__(self, app: ASGIApp, *, value: str = CARD_CACHE_CONTROL) -> None:
        self.app = app
        self.value = value.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != AGENT_CARD_WELL_KNOWN_PATH:
            await self.app(scope, receive, send)
            return

        async def with_header(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 200:
                headers = [h for h in message.get("headers", []) if h[0] != b"cache-control"]
                message = {**message, "headers": [*headers, (b"cache-control", self.value)]}
            await send(message)

        await self.app(scope, receive, with_header)
