"""The baseline of ``smartctx bench serve``: an echo agent on a2a-sdk 1.3 alone.

It answers every message with its own text, through the SDK's ``DefaultRequestHandlerV2`` and
its ``DatabaseTaskStore`` on the same database URL smartctx uses, served by uvicorn on a
listening socket with ``TCP_NODELAY`` on accepted connections (the same socket setup as
``smartctx serve``) and uvicorn's own runner (uvloop and httptools, as ``smartctx serve``). So
the difference between the two is what smartctx adds to a turn.

Run as a process: ``python -m smartctx.bench.serve_echo --port 8100 --database URL``.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import (
    add_a2a_routes_to_fastapi,
    create_agent_card_routes,
    create_jsonrpc_routes,
)
from a2a.server.tasks import DatabaseTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import Part
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import create_async_engine

from smartctx.service.card import build_agent_card
from smartctx.service.server import bind_socket, public_url


class EchoExecutor(AgentExecutor):
    """Completes each task with one artifact holding the user's text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None or context.task_id is None or context.context_id is None:
            return
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await updater.add_artifact([Part(text=context.get_user_input())], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def echo_app(database_url: str, base_url: str) -> FastAPI:
    """The echo agent's ASGI app (the task table is created at start-up)."""
    engine = create_async_engine(database_url)
    store = DatabaseTaskStore(engine, table_name="echo_tasks")
    card = build_agent_card(base_url, name="echo", description="echo agent (benchmark baseline)")
    handler = DefaultRequestHandlerV2(EchoExecutor(), store, card)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await store.initialize()
        yield
        await engine.dispose()

    api = FastAPI(title="echo", lifespan=lifespan)
    add_a2a_routes_to_fastapi(
        api,
        agent_card_routes=create_agent_card_routes(card),
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/"),
    )
    return api


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--database", required=True, help="SQLAlchemy async URL")
    args = parser.parse_args(argv)
    sock = bind_socket(args.host, args.port)
    app = echo_app(args.database, public_url(args.host, sock.getsockname()[1]))
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])  # the loop and parser smartctx serve uses


if __name__ == "__main__":
    main()
