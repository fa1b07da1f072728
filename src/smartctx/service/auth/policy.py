"""What the access middleware enforces, computed once from the settings and the bound address.

- ``auth_required(settings)``: ``settings.auth`` when set, else on whenever the server binds to
  anything but loopback (``0.0.0.0``, a LAN address, a public name).
- Host allow-list: loopback names (``localhost``, ``127.0.0.1``, ``::1``), the bound host, the
  host of the server's public URL and ``allowed_hosts`` (``*`` turns the check off). A request
  whose ``Host`` is not listed is refused, which defeats DNS rebinding.
- Origins: a browser request may come from the server's own origin or from ``allowed_origins``;
  any other ``Origin`` (``null`` included) is refused.
- Public paths answer without credentials: the agent card, ``/healthz``, ``/readyz`` and the
  ``/ui`` page itself (which holds no data: it asks for a key and sends it with every call).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from smartctx.core.settings import Settings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
PUBLIC_PATHS = frozenset({"/.well-known/agent-card.json", "/healthz", "/readyz", "/ui"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, brackets allowed) is this machine only."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def auth_required(settings: Settings) -> bool:
    """Whether credentials are required (see the module docstring)."""
    return settings.auth if settings.auth is not None else not is_loopback(settings.host)


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or netloc, lower case, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


@dataclass(frozen=True)
class AccessPolicy:
    """The access rules of one server (see the module docstring)."""

    auth: bool
    hosts: frozenset[str]
    origins: frozenset[str]
    any_host: bool = False
    public_paths: frozenset[str] = PUBLIC_PATHS

    @classmethod
    def from_settings(cls, settings: Settings, base_url: str) -> AccessPolicy:
        hosts = set(LOOPBACK_NAMES)
        hosts.add(host_name(urlsplit(base_url).netloc))
        if settings.host not in ("0.0.0.0", "::", ""):
            hosts.add(host_name(settings.host))
        hosts.update(host_name(h) for h in settings.allowed_hosts if h != "*")
        return cls(
            auth=auth_required(settings),
            hosts=frozenset(hosts),
            origins=frozenset(o.rstrip("/").lower() for o in settings.allowed_origins),
            any_host="*" in settings.allowed_hosts,
        )

    def host_allowed(self, host: str | None) -> bool:
        if self.any_host:
            return True
        return host is not None and host_name(host) in self.hosts

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        """Same origin as the ``Host`` the browser used, or a configured origin."""
        origin = origin.strip().rstrip("/").lower()
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        if host is None or parts.scheme not in ("http", "https"):
            return False
        return parts.netloc == host.strip().lower()
