"""Bearer JWTs over real HTTP: HS256 with a shared secret, and RS256 against a JWKS served on
loopback; the owner comes from the configured claim, never from a header."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
SECRET = "a-shared-secret-of-at-least-32-bytes!"


def token(claims: dict[str, Any], key: Any = SECRET, **headers: Any) -> str:
    algorithm = "HS256" if isinstance(key, str) else "RS256"
    body = {"exp": int(time.time()) + 300, **claims}
    return jwt.encode(body, key, algorithm=algorithm, headers=headers or None)


async def status(url: str, credential: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url) as http:
        return await http.get(
            "/memory/contexts", headers={"Authorization": f"Bearer {credential}", **headers}
        )


async def test_hs256_tokens_name_their_owner_by_the_configured_claim(
    start_server: StartServer,
) -> None:
    server = start_server(
        auth=True, jwt_secret=SECRET, jwt_owner_claim="email", jwt_audience="smartctx"
    )
    good = token({"sub": "u1", "email": "erin@example.com", "aud": "smartctx"})
    accepted = await status(server.url, good)
    async with SmartctxClient(server.url, api_key=good) as erin:
        reply = await erin.send("Hello")
    refusals = {
        "wrong secret": token(
            {"email": "erin@example.com", "aud": "smartctx"},
            "another-shared-secret-of-32-bytes-or-more",
        ),
        "expired": token({"email": "erin@example.com", "aud": "smartctx", "exp": 1}),
        "wrong audience": token({"email": "erin@example.com", "aud": "other"}),
        "no owner claim": token({"sub": "u1", "aud": "smartctx"}),
        "bad owner name": token({"email": "not an owner", "aud": "smartctx"}),
        "alg none": jwt.encode(
            {"email": "erin@example.com", "aud": "smartctx", "exp": int(time.time()) + 60},
            None,
            algorithm="none",
        ),
    }
    refused = {name: (await status(server.url, t)).status_code for name, t in refusals.items()}
    other_owner = await status(server.url, good, **{"X-Smartctx-Owner": "frank"})
    assert accepted.status_code == 200 and accepted.json()["owner"] == "erin@example.com"
    assert reply.state == "completed"
    assert set(refused.values()) == {401}, refused
    assert other_owner.status_code == 403


async def test_an_admin_claim_makes_an_admin(start_server: StartServer) -> None:
    server = start_server(auth=True, jwt_secret=SECRET, jwt_admin_claim="roles")
    admin = token({"sub": "ops", "roles": ["reader", "admin"]})
    user = token({"sub": "gus", "roles": ["reader"]})
    assert (await status(server.url, admin, **{"X-Smartctx-Owner": "gus"})).json()["owner"] == "gus"
    assert (await status(server.url, user, **{"X-Smartctx-Owner": "ops"})).status_code == 403


@pytest.fixture
def jwks() -> Iterator[tuple[str, Any]]:
    """A JWKS document on a loopback port; yields its URL and the matching private key."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
    document = json.dumps({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = document.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/.well-known/jwks.json", private
    httpd.shutdown()
    httpd.server_close()
    thread.join()


async def test_rs256_tokens_are_checked_against_the_providers_jwks(
    start_server: StartServer, jwks: tuple[str, Any]
) -> None:
    url, private = jwks
    server = start_server(auth=True, jwks_url=url, jwt_issuer="https://idp.example")
    good = token({"sub": "hana", "iss": "https://idp.example"}, private, kid="k1")
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = token({"sub": "hana", "iss": "https://idp.example"}, stranger, kid="k1")
    unknown_kid = token({"sub": "hana", "iss": "https://idp.example"}, private, kid="k9")
    wrong_issuer = token({"sub": "hana", "iss": "https://evil.example"}, private, kid="k1")
    hs_with_public = token({"sub": "hana", "iss": "https://idp.example"})
    accepted = await status(server.url, good)
    refused = {
        name: (await status(server.url, t)).status_code
        for name, t in {
            "forged": forged,
            "unknown kid": unknown_kid,
            "wrong issuer": wrong_issuer,
            "HS256 not accepted": hs_with_public,
        }.items()
    }
    assert accepted.status_code == 200 and accepted.json()["owner"] == "hana"
    assert set(refused.values()) == {401}, refused
