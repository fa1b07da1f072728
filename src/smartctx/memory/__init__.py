"""Personal memory (DESIGN.md section 4): tiers, promotion with provenance, privacy, the
``a2a-memory-context-v1`` contract and device sync.

Tiers: pair -> session summary -> daily summary -> weekly digest -> profile item. Uses core and
store only; the service wires it to A2A (``smartctx.service.personal_hook``) and HTTP
(``smartctx.service.personal_api``).
"""

from smartctx.memory.compaction import CompactionReport, Compactor
from smartctx.memory.contract import (
    CONTRACT_VERSION,
    EXTENSION_URI,
    build_memory_update,
    normalize_memory_context,
)
from smartctx.memory.extractor import Observation, extract
from smartctx.memory.forget import Forgetter, ForgottenItem, ItemForgetter
from smartctx.memory.pairs import PairIn
from smartctx.memory.personal import PersonalMemory
from smartctx.memory.planner import build_planner_input, render_planner_input, resolve_room
from smartctx.memory.privacy import detect, redact
from smartctx.memory.retention import Retention
from smartctx.memory.snapshot import server_snapshot
from smartctx.memory.summarizer import ExtractiveSummarizer, ModelSummarizer
from smartctx.memory.worker import CompactionWorker

__all__ = [
    "CONTRACT_VERSION",
    "EXTENSION_URI",
    "CompactionReport",
    "CompactionWorker",
    "Compactor",
    "ExtractiveSummarizer",
    "Forgetter",
    "ForgottenItem",
    "ItemForgetter",
    "ModelSummarizer",
    "Observation",
    "PairIn",
    "PersonalMemory",
    "Retention",
    "build_memory_update",
    "build_planner_input",
    "detect",
    "extract",
    "normalize_memory_context",
    "redact",
    "render_planner_input",
    "resolve_room",
    "server_snapshot",
]
