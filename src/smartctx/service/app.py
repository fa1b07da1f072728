"""The service app: A2A (agent card, JSON-RPC at ``/``, HTTP+JSON at ``/rest``, SSE streaming)
and the memory API on one FastAPI app, over one database.

``create_app(settings, base_url=...)`` builds everything without I/O; the ASGI lifespan
migrates the database (every Alembic head, the A2A task tables included), loads the knowledge
base, loads the models a turn uses (:func:`warm_up`), starts the idle-context sweeper (which also
prunes the event log of finished A2A tasks), and on shutdown closes live event streams, drains
running A2A tasks and disposes of the database engine.

Cross-thread memory (``memory``, on by default unless ``providers`` is given explicitly, so a
caller that configures its own agent — the simulation's bare defender — keeps exactly that):
every ``default``-preset context gets, per owner, a long-term memory provider over the
``agent_memory`` table and a profile provider over personal memory's confirmed items
(:mod:`smartctx.service.owner_memory`), and its window a
:class:`~smartctx.retrieval.tiered.TieredRecaller` that recalls archived slots of the thread
(by their turns and by the facts, session summaries and entities keyed on them) into the
prompt (indexed off the event loop after each turn, :mod:`smartctx.service.recall_index`).
The memory store is registered with personal memory's ``forget_owner``, and
:class:`~smartctx.service.forget_copies.CopiesForgetter` with its ``forget_item``, so forgetting
deletes window slots, memory items and A2A tasks too.

A2A tasks (:mod:`smartctx.service.task_cluster`): on PostgreSQL, where several replicas may
share the database, the handler runs on the SDK's cluster components (a versioned task store and
the database event stream), so a task started on one replica can be read, resubscribed to and
cancelled through any other; on SQLite (one process) on the SDK's plain ``DatabaseTaskStore``.
``cluster_tasks`` forces either.

Dependencies are injectable for tests and embedding: ``model`` (default: from settings —
OpenAI-compatible when ``llm_base_url`` is set, else the offline ``GroundedResponder``),
``providers`` (default: the knowledge-base provider over the organisation-wide base ``kb`` and
each turn owner's own documents, :mod:`smartctx.service.kb_api`), ``kb``, ``hooks`` (default: the
personal-memory hook of :mod:`smartctx.service.personal_hook`), ``embedder``,
``counter``, ``clock``, ``history_formatter``, ``database``, ``memory``. The recaller
embeds with ``embedder`` when one is given, else with ``settings.retrieval_embedder``. The
personal-memory API (``smartctx.service.personal_api``, mounted unless ``hooks`` is given) and
the dashboard at ``/ui`` (``smartctx.service.dashboard``; browsers at ``/`` are redirected
there) are mounted on the app, with the OpenAI-compatible proxy at ``/v1``
(``smartctx.service.openai_proxy``) and the operations endpoints ``/healthz``, ``/readyz`` and
``/metrics`` (``smartctx.service.ops``). Turns run through ``ObservedExecutor``, which records
metrics and a trace span per turn (``tracer_provider``, default: OpenTelemetry's global one).
All of it sits behind the access middleware (:mod:`smartctx.service.auth`: credentials, Host and
Origin checks, limits).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.server.agent_execution import SimpleRequestContextBuilder
from a2a.server.routes import (
    add_a2a_routes_to_fastapi,
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import DatabaseTaskStore
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from threadpoolctl import threadpool_limits

from smartctx import __version__
from smartctx.agents import ChatModel, ContextProvider, model_from_settings
from smartctx.agents.grounded import GroundedResponder
from smartctx.agents.llm_memory import LLMConsolidator
from smartctx.agents.memory_store import STATE_PROBE
from smartctx.agents.relevance import GatedRecaller, RelevanceGate
from smartctx.core.clock import Clock, SystemClock
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embed_process import MODELS as EMBED_PROCESS_MODELS
from smartctx.core.embed_process import process_embedder
from smartctx.core.embeddings import Embedder, embed_queries, get_embedder
from smartctx.core.errors import InvalidInput, SmartCtxError
from smartctx.core.recall import Recaller
from smartctx.core.settings import Settings
from smartctx.core.tokens import TokenCounter, get_counter
from smartctx.memory.personal import PersonalMemory
from smartctx.memory.repository import STAMP_PROBE
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_scopes import ORG_SCOPE, ScopedKnowledge
from smartctx.service.auth import auth_required, install_access
from smartctx.service.card import REST_PREFIX, CardCacheHeaders, build_agent_card
from smartctx.service.contexts import ContextRegistry
from smartctx.service.dashboard import dashboard_router
from smartctx.service.delivery import DeliveryLog, fail_interrupted_tasks
from smartctx.service.executor import HistoryFormatter, SmartctxExecutor, carry_history
from smartctx.service.forget_copies import CopiesForgetter
from smartctx.service.handler import GuardedRequestHandler
from smartctx.service.hooks import TurnHook
from smartctx.service.kb_api import ScopedKnowledgeProvider, kb_router
from smartctx.service.limits import RequestLimits
from smartctx.service.memories import MemoryService
from smartctx.service.memories.routes import memories_router
from smartctx.service.memory_api import error_response, memory_router
from smartctx.service.openai_proxy import OpenAIProxy, openai_router
from smartctx.service.ops import (
    MetricsMiddleware,
    ObservedExecutor,
    ServiceMetrics,
    health_router,
    make_tracer,
    metrics_router,
)
from smartctx.service.owner import OwnerContextBuilder
from smartctx.service.owner_memory import OwnerMemory
from smartctx.service.personal_api import build_personal_memory, personal_router
from smartctx.service.personal_hook import create_hook
from smartctx.service.precompute import TurnPrecompute
from smartctx.service.recall_index import RecallIndexer, adopt_index, service_recaller
from smartctx.service.slot_vectors import EmbedderVectors
from smartctx.service.task_cluster import (
    TASK_TABLE,
    ClusterTaskStore,
    OrphanEventsForgetter,
    TaskStores,
    build_task_stores,
    fail_interrupted,
    forget_owner_tasks,
    prune_events,
)
from smartctx.service.windows import WindowFactory, options_from_metadata
from smartctx.store.context_log import ContextStore
from smartctx.store.db import Database
from smartctx.store.turn_probes import Probe

logger = logging.getLogger(__name__)


@dataclass
class ServiceApp:
    """The built service: ``asgi`` is the app to serve; the rest is there to inspect or stop."""

    asgi: FastAPI
    settings: Settings
    db: Database
    registry: ContextRegistry
    executor: SmartctxExecutor
    handler: GuardedRequestHandler
    task_store: DatabaseTaskStore
    kb: KnowledgeBase | None
    tasks: TaskStores | None = None
    """The handler's task store and event stream (``task_store`` is its plain table view)."""
    personal: PersonalMemory | None = None
    owner_memory: OwnerMemory | None = None
    memories: MemoryService | None = None
    knowledge: ScopedKnowledge | None = None
    metrics: ServiceMetrics | None = None
    recall_embedder: Embedder | None = None
    startup_error: BaseException | None = None
    ready: bool = False
    _started: list[Callable[[], None]] = field(default_factory=list)
    _own_db: bool = True

    def on_started(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once start-up (migrations, KB load) is done."""
        self._started.append(callback)

    def begin_shutdown(self) -> None:
        """Close live event streams so a graceful shutdown does not wait on them."""
        self.ready = False
        self.registry.close_streams()

    async def forget_owner(self, owner: str) -> int:
        """Delete the owner's context windows and A2A tasks; returns the rows deleted."""
        count = await self.registry.forget_owner(owner)
        return count + await forget_owner_tasks(self.db, owner)


class _ContextForgetter:
    """Lets personal memory's ``forget_owner`` also delete windows and tasks."""

    name = "context_windows_and_tasks"

    def __init__(self, app: ServiceApp) -> None:
        self._app = app

    async def forget_owner(self, owner: str) -> int:
        return await self._app.forget_owner(owner)


def _personal_parts(
    db: Database, settings: Settings, clock: Clock, gate: RelevanceGate
) -> tuple[PersonalMemory, list[TurnHook], APIRouter]:
    """The personal memory (forget wired to the other stores), its turn hook and its router."""
    memory = build_personal_memory(db, settings=settings, clock=clock)
    hook = create_hook(
        memory,
        gate=gate,
        counter=get_counter(settings.token_encoding),
        allowance=int(settings.budget * MEMORY_SHARE),
    )
    return memory, [hook], personal_router(memory)


MEMORY_SHARE = 0.1
"""Share of a context's budget that the personal-memory hook may fill with recalled memory."""


def _turn_probes(
    personal: PersonalMemory | None,
    scoped: ScopedKnowledge | None,
    owner_memory: OwnerMemory | None,
) -> list[Probe]:
    """The version checks a turn makes of the owner's stores, for the context's version read
    to answer (:mod:`smartctx.store.turn_probes`): the personal memory's stamp (its hook's
    snapshot), the knowledge bases' tokens, the long-term memory's state."""
    probes = [STAMP_PROBE] if personal is not None else []
    kb = scoped.probe() if scoped is not None else None
    if kb is not None:
        probes.append(kb)
    if owner_memory is not None:
        probes.append(STATE_PROBE)
    return probes


def _model(settings: Settings, name: str) -> Embedder:
    """The served embedder ``name``: a model in its helper process (``embed_process``, one per
    model and process, see :mod:`smartctx.core.embed_process`), else the in-process one."""
    if settings.embed_process and name in EMBED_PROCESS_MODELS:
        return process_embedder(name, settings.embed_threads)
    return get_embedder(name)


def _relevance_gate(settings: Settings, cached: Embedder | None) -> RelevanceGate:
    """The gate recalled memory must pass: the similarity embedder (loaded on first use), through
    the service's cache when there is one. Remembered items come back turn after turn, so the
    cache embeds each once (uncached, one turn's gate cost about 55 ms)."""
    return RelevanceGate(cached if cached is not None else get_embedder(settings.embedder))


def create_app(
    settings: Settings | None = None,
    *,
    base_url: str | None = None,
    model: ChatModel | None = None,
    providers: Sequence[ContextProvider] | None = None,
    kb: KnowledgeBase | None = None,
    hooks: Sequence[TurnHook] | None = None,
    embedder: Embedder | None = None,
    counter: TokenCounter | None = None,
    clock: Clock | None = None,
    history_formatter: HistoryFormatter | None = None,
    database: Database | None = None,
    memory: bool | None = None,
    tracer_provider: Any | None = None,
    cluster_tasks: bool | None = None,
) -> ServiceApp:
    """Build the service (no I/O here; see the module docstring)."""
    settings = settings or Settings()
    base = (settings.public_url or base_url or f"http://{settings.host}:{settings.port}").rstrip(
        "/"
    )
    clock = clock or SystemClock()
    db = database or Database(settings.resolved_database_url(), pool_size=settings.db_pool_size)
    with_memory = providers is None if memory is None else memory
    recaller: Callable[[], Recaller] | None = None
    recall_embedder: Embedder | None = None
    # Default models are wrapped in caches that a worker pool fills ahead of each turn.
    similarity = CachedEmbedder(_model(settings, settings.embedder)) if embedder is None else None
    retrieval = (
        None
        if embedder is not None
        else similarity  # one cache when both are the same model
        if settings.retrieval_embedder == settings.embedder
        else CachedEmbedder(_model(settings, settings.retrieval_embedder))
    )
    if with_memory and settings.recall_ratio > 0:
        if embedder is not None:
            recall_embedder = embedder
        elif settings.recall_embedder in (None, settings.embedder):
            recall_embedder = similarity  # the window embedded most archived texts already
        elif settings.recall_embedder == settings.retrieval_embedder:
            recall_embedder = retrieval  # knowledge chunks come with their vectors
        else:
            recall_embedder = CachedEmbedder(_model(settings, settings.recall_embedder))
        chosen = recall_embedder

        gate = RelevanceGate(embedder if embedder is not None else similarity)

        def recaller() -> Recaller:
            return GatedRecaller(service_recaller(chosen), gate)

    factory = WindowFactory(
        settings,
        counter=counter or get_counter(settings.token_encoding),
        embedder=embedder if embedder is not None else similarity,
        recaller=recaller,
    )
    # A user message's recall vector is stored with its slot, so another replica indexing the
    # message takes it instead of embedding the text again.
    vectors = (
        EmbedderVectors(recall_embedder) if isinstance(recall_embedder, CachedEmbedder) else None
    )
    store = ContextStore(db, clock=clock, vectors=vectors)
    registry = ContextRegistry(store, factory, settings, clock=clock)
    registry.continued += [adopt_index, carry_history]
    memory_gate = _relevance_gate(settings, similarity)
    personal, personal_hooks, personal_routes = (
        _personal_parts(db, settings, clock, memory_gate) if hooks is None else (None, [], None)
    )
    chat_model = model or model_from_settings(settings, embedder=similarity)
    consolidator = LLMConsolidator(chat_model) if settings.memory_model_on else None
    owner_memory = (
        OwnerMemory(db, personal=personal, gate=memory_gate, consolidator=consolidator)
        if with_memory
        else None
    )
    turn_hooks = list(hooks) if hooks is not None else personal_hooks
    retrieval_name = settings.retrieval_embedder

    def retrieval_embedder() -> Embedder:
        if embedder is not None:
            return embedder
        return retrieval if retrieval is not None else get_embedder(retrieval_name)

    memories = MemoryService(
        db,
        embedder=retrieval_embedder,
        clock=clock,
        on_change=owner_memory.drop if owner_memory is not None else None,
    )
    scoped: ScopedKnowledge | None = None
    if providers is None:
        kb = kb or KnowledgeBase.builtin(
            db=db, owner=ORG_SCOPE, embedder=retrieval, bridge_embedder=similarity
        )
        scoped = ScopedKnowledge(kb, db=db)  # organisation-wide base + each owner's documents
        k = settings.kb_top_k
        providers = [ScopedKnowledgeProvider(scoped, k=k)] if k else []
    metrics = ServiceMetrics(
        live_contexts=lambda: registry.live_count,
        embeddings=None if similarity is None else lambda: (similarity.hits, similarity.misses),
    )
    executor = ObservedExecutor(
        registry,
        settings,
        model=chat_model,
        providers=providers,
        hooks=turn_hooks,
        history_formatter=history_formatter,
        owner_providers=owner_memory.providers if owner_memory is not None else None,
        metrics=metrics,
        tracer=make_tracer(settings.trace_exporter, tracer_provider),
        precompute=(
            TurnPrecompute(similarity, retrieval, workers=settings.embed_workers)
            if embedder is None and settings.embed_workers > 0
            else None
        ),
        indexer=RecallIndexer() if recaller is not None else None,
        probes=_turn_probes(personal, scoped, owner_memory),
    )
    card = build_agent_card(base, hooks=turn_hooks, auth_required=auth_required(settings))
    cluster = not db.is_sqlite if cluster_tasks is None else cluster_tasks
    tasks = build_task_stores(db, cluster=cluster)
    handler = GuardedRequestHandler(
        executor,
        tasks.store,
        card,
        max_chars=settings.max_message_chars,
        max_running=settings.max_running_turns or _running_turns(chat_model),
        max_waiting=settings.max_waiting_turns,
        extra_check=lambda _text, meta: _check_options(settings, meta),
        deliveries=DeliveryLog(db, clock=clock),
        hold=db.hold,  # a turn's short statements share one connection (PostgreSQL)
        task_ids=tasks.fresh,  # a new message's claim is its one delivery statement
        validate_input_modes=True,
        event_stream=tasks.events,
        # new task ids that the stores know are unsaved: no query reads them (.fresh_tasks)
        request_context_builder=SimpleRequestContextBuilder(
            should_populate_referred_tasks=False, task_store=None, task_id_generator=tasks.fresh
        ),
    )
    holder: list[ServiceApp] = []
    api = FastAPI(
        title="smartctx",
        version=__version__,
        description="A2A agent with smartctx-managed context memory, plus the memory API.",
        lifespan=lambda _app: _lifespan(holder[0]),
    )
    service = ServiceApp(
        asgi=api,
        settings=settings,
        db=db,
        registry=registry,
        executor=executor,
        handler=handler,
        task_store=tasks.table,
        tasks=tasks,
        kb=kb,
        personal=personal,
        owner_memory=owner_memory,
        memories=memories,
        knowledge=scoped,
        metrics=metrics,
        recall_embedder=recall_embedder,
        _own_db=database is None,
    )
    holder.append(service)
    if personal is not None:
        personal.add_forgetter(_ContextForgetter(service))
        if owner_memory is not None:
            personal.add_forgetter(owner_memory, first=True)
        if scoped is not None:
            personal.add_forgetter(scoped)
        personal.add_item_forgetter(
            CopiesForgetter(
                registry, db, task_table=TASK_TABLE, memory=owner_memory, personal=personal
            )
        )
        personal.add_item_forgetter(OrphanEventsForgetter(db))
    _install_error_handlers(api)
    # Outermost last: metrics time everything; access refuses before a body is read; the
    # limits bound what reaches the routes.
    api.add_middleware(CardCacheHeaders)
    api.add_middleware(
        RequestLimits,
        max_body_bytes=settings.max_body_bytes,
        max_json_depth=settings.max_json_depth,
    )
    install_access(api, settings, db, base_url=base)
    api.add_middleware(MetricsMiddleware, metrics=metrics)
    # Our routes first: the SDK's REST routes end with a catch-all ``/{tenant}`` mount.
    api.include_router(memory_router(registry))
    api.include_router(memories_router(memories))
    if personal_routes is not None:
        api.include_router(personal_routes)
    api.include_router(dashboard_router())
    if scoped is not None:
        api.include_router(kb_router(scoped))
    api.include_router(health_router(db, started=lambda: service.ready, model=executor.model.name))
    api.include_router(metrics_router(metrics))
    api.include_router(openai_router(OpenAIProxy(executor, registry, settings, factory.counter)))
    builder = OwnerContextBuilder()
    add_a2a_routes_to_fastapi(
        api,
        agent_card_routes=create_agent_card_routes(card),
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/", context_builder=builder),
        rest_routes=create_rest_routes(handler, context_builder=builder, path_prefix=REST_PREFIX),
    )
    return service


def _check_options(settings: Settings, metadata: dict[str, Any]) -> None:
    options_from_metadata(settings, metadata)


def _install_error_handlers(api: FastAPI) -> None:
    @api.exception_handler(SmartCtxError)
    async def _smartctx_error(_request: Request, exc: SmartCtxError) -> JSONResponse:
        return error_response(exc)

    @api.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        shown = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        return error_response(InvalidInput(f"invalid request: {shown}", errors=errors))

    @api.exception_handler(Exception)
    async def _internal_error(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        message = "internal error: the server logged the details; try again later"
        return JSONResponse(
            {"error": "internal_error", "message": message, "detail": {}}, status_code=500
        )


OFFLINE_RUNNING_TURNS = 3
"""Turns run at once with the offline responder (``SMARTCTX_MAX_RUNNING_TURNS`` unset). Its
turns are CPU work on one event loop, awaiting only short database statements: more of them
at once only interleave, so every turn takes as long as the slowest. Three keep the loop busy
while one waits for the database; the others queue in arrival order. Measured at 8 clients on
PostgreSQL: p99 310-337 ms with 16 running, 237-246 with 2, 238 with 3, 287 with 1 (the loop
then idles during statements), the same throughput (``docs/benchmarks.md``)."""
MODEL_RUNNING_TURNS = 16
"""Turns run at once with a chat model (over HTTP, or given to :func:`create_app`): a turn
mostly waits for the model, so many run at once."""


def _running_turns(model: ChatModel) -> int:
    return OFFLINE_RUNNING_TURNS if isinstance(model, GroundedResponder) else MODEL_RUNNING_TURNS


def warm_up(service: ServiceApp) -> None:
    """Load the models a turn uses (token counter, similarity and recall embedders) before the
    first request, on a worker thread: the first turn then costs what every turn costs."""
    factory = service.registry.factory
    factory.counter.count("warm up")
    if factory.embedder is not None:
        factory.embedder.embed(["warm up"])
    if service.recall_embedder is not None:
        embed_queries(service.recall_embedder, ["warm up"])


def freeze_start_up() -> None:
    """Move every object start-up made (modules, models, the knowledge base: about 200,000) out
    of the cyclic garbage collector's reach (``gc.freeze``), once the server is ready.

    A full collection otherwise scans them all whenever the objects turns keep have grown by a
    quarter: a 70-100 ms pause of every running turn, which is what sets p99 under load. After
    the freeze it scans only what turns created. Frozen objects are never collected, so this is
    for a process that is one server until it exits (``smartctx serve`` calls it), not for one
    that starts and stops many (the tests).
    """
    gc.collect()
    gc.freeze()


async def _sweeper(service: ServiceApp) -> None:
    while True:
        await asyncio.sleep(service.settings.cleanup_interval)
        gone = service.registry.sweep()
        if gone:
            logger.info("released %d idle contexts from memory", len(gone))
        if service.tasks is not None and service.tasks.cluster:
            try:
                await prune_events(service.db)
            except Exception:  # another replica pruning the same rows, a lost connection
                logger.warning("pruning the A2A task event log failed; next sweep retries")


@contextlib.asynccontextmanager
async def _lifespan(service: ServiceApp) -> AsyncIterator[None]:
    try:
        await service.db.migrate()
        await service.task_store.initialize()
        cluster = service.tasks.store if service.tasks is not None else None
        if isinstance(cluster, ClusterTaskStore):
            failed = await fail_interrupted(service.db, cluster)
        else:
            failed = await fail_interrupted_tasks(service.db, service.task_store.task_model)
        if failed:
            logger.warning("marked %d tasks interrupted by a restart as failed", failed)
        if service.personal is not None:
            resumed = await service.personal.resume_forgets()
            if resumed:
                logger.warning("finished %d forgets interrupted by a restart", len(resumed))
        knowledge = service.knowledge
        if knowledge is not None and await knowledge.org_watcher.refresh():
            pass  # the watcher loaded and indexed the base
        elif service.kb is not None:
            if service.kb.db is not None:
                await service.kb.load()
            await asyncio.to_thread(service.kb.prepare)
        # numpy's own BLAS (vector search) gets the embedders' thread budget too.
        threadpool_limits(limits=service.settings.embed_threads, user_api="blas")
        await asyncio.to_thread(warm_up, service)
    except BaseException as err:
        service.startup_error = err
        raise
    sweeper = asyncio.create_task(_sweeper(service), name="smartctx-sweeper")
    service.ready = True
    for callback in service._started:
        callback()
    try:
        yield
    finally:
        service.ready = False
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        service.registry.close_streams()
        await service.handler.aclose()
        if service.executor.precompute is not None:
            service.executor.precompute.close()
        if service.executor.indexer is not None:
            service.executor.indexer.close()
        if service._own_db:
            await service.db.close()
