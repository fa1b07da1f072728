"""Agents: chat models, context providers and the agent loop (DESIGN.md section 5).

Layer: uses everything below (core, window, store, memory, retrieval); the service and the apps
use it. The loopback OpenAI-compatible test server lives in :mod:`smartctx.agents.testing`
(imported on demand: it pulls in uvicorn).
"""

from smartctx.agents.agent import Agent, RunResult, Thread
from smartctx.agents.builtin_providers import (
    KnowledgeProvider,
    KnowledgeSearch,
    PersonalMemoryProfileSource,
    ProfileProvider,
    ProfileSource,
    StaticProfileSource,
)
from smartctx.agents.grounded import NO_INFORMATION, REFUSALS, GroundedResponder
from smartctx.agents.maf import as_agent_framework_provider
from smartctx.agents.memory_provider import LongTermMemoryProvider
from smartctx.agents.memory_store import (
    InMemoryMemoryStore,
    MemoryItem,
    MemoryStore,
    SqlMemoryStore,
)
from smartctx.agents.models import (
    ChatMessages,
    ChatModel,
    FunctionModel,
    ScriptedModel,
    model_from_settings,
)
from smartctx.agents.openai_model import OpenAIChatModel
from smartctx.agents.providers import ContextProvider, Message, ProvidedContext

__all__ = [
    "NO_INFORMATION",
    "REFUSALS",
    "Agent",
    "ChatMessages",
    "ChatModel",
    "ContextProvider",
    "FunctionModel",
    "GroundedResponder",
    "InMemoryMemoryStore",
    "KnowledgeProvider",
    "KnowledgeSearch",
    "LongTermMemoryProvider",
    "MemoryItem",
    "MemoryStore",
    "Message",
    "OpenAIChatModel",
    "PersonalMemoryProfileSource",
    "ProfileProvider",
    "ProfileSource",
    "ProvidedContext",
    "RunResult",
    "ScriptedModel",
    "SqlMemoryStore",
    "StaticProfileSource",
    "Thread",
    "as_agent_framework_provider",
    "model_from_settings",
]
