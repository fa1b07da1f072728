"""Property-based fuzzing of JSON-RPC, HTTP+JSON (``/rest``) and the memory API over real HTTP:
whatever the body, bytes or parameters, no answer is a 5xx or a JSON-RPC internal error
(issue 11). Examples are bounded and derandomized, so the suite stays fast and repeatable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smartctx.core import HashingEmbedder, Settings
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.server import ServerHandle, serve

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
V1 = {"A2A-Version": "1.0", "content-type": "application/json"}
METHODS = ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "x"]

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
parts = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "text": st.text(max_size=60),
            "mediaType": st.sampled_from(["text/plain", "image/png", "", "x/y"]),
            "data": json_values,
            "raw": st.text(max_size=12),
        },
    ),
    max_size=3,
)
messages = st.fixed_dictionaries(
    {"parts": parts},
    optional={
        "messageId": st.text(max_size=40),
        "contextId": st.text(max_size=40),
        "taskId": st.text(max_size=40),
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "user", 3]),
        "metadata": json_values,
    },
)
send_params = st.fixed_dictionaries(
    {"message": messages | json_values},
    optional={"configuration": json_values, "metadata": json_values},
)


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory, hashing_kb: KnowledgeBase
) -> Iterator[ServerHandle]:
    db = tmp_path_factory.mktemp("fuzz") / "service.db"
    config = Settings(database_url=f"sqlite+aiosqlite:///{db}", kb_top_k=0)
    handle = serve(config, host="127.0.0.1", port=0, embedder=HashingEmbedder(), kb=hashing_kb)
    yield handle
    handle.stop()


def _no_server_error(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text[:300]
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            assert body["error"].get("code") != -32603, body


def test_json_rpc_never_fails_inside(live: ServerHandle) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as http:

        @FUZZ
        @given(
            method=st.sampled_from(METHODS),
            params=send_params | json_values,
            request_id=st.none() | st.integers() | st.text(max_size=8),
        )
        def check(method: str, params: Any, request_id: Any) -> None:
            body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            _no_server_error(http.post("/", content=json.dumps(body), headers=V1))

        check()


def test_raw_bytes_never_fail_inside(live: ServerHandle) -> None:
    paths = ["/", "/rest/message:send", "/rest/message:stream", "/memory/contexts"]
    with httpx.Client(base_url=live.url, timeout=30) as http:

        @FUZZ
        @given(path=st.sampled_from(paths), body=st.binary(max_size=200))
        def check(path: str, body: bytes) -> None:
            _no_server_error(http.post(path, content=body, headers=V1))

        check()


def test_rest_never_fails_inside(live: ServerHandle) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as http:

        @FUZZ
        @given(
            action=st.sampled_from(["message:send", "message:stream"]),
            params=send_params | json_values,
        )
        def check(action: str, params: Any) -> None:
            _no_server_error(http.post(f"/rest/{action}", content=json.dumps(params), headers=V1))

        check()


def test_memory_api_never_fails_inside(live: ServerHandle) -> None:
    segment = st.text(min_size=1, max_size=30).map(lambda s: quote(s, safe=""))
    with httpx.Client(base_url=live.url, timeout=30) as http:

        @settings(FUZZ, max_examples=20)
        @given(
            owner=segment,
            context=segment,
            body=json_values,
            limit=st.text(max_size=25),
            kind=st.sampled_from(["pair", "profile", "summary", "other"]),
        )
        def check(owner: str, context: str, body: Any, limit: str, kind: str) -> None:
            data = json.dumps(body)
            answers = [
                http.post("/memory/contexts", content=data, headers=V1),
                http.post(f"/memory/contexts/{context}/slots", content=data, headers=V1),
                http.get(f"/memory/contexts/{context}/prompt", params={"query": limit}),
                http.get(f"/memory/owners/{owner}/pairs", params={"limit": limit}),
                http.post(f"/memory/owners/{owner}/pairs", content=data, headers=V1),
                http.post(f"/memory/owners/{owner}/sync", content=data, headers=V1),
                http.delete(f"/memory/owners/{owner}/items/{kind}/{context}"),
                http.delete(f"/memory/owners/{owner}"),
            ]
            for response in answers:
                _no_server_error(response)

        check()
