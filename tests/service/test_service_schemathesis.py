"""Schemathesis against the OpenAPI schema of a live server: no operation answers 5xx, whatever
the generated parameters and bodies (issue 11).

Every operation of ``/openapi.json`` gets ``EXAMPLES`` generated cases (deterministic:
``derandomize``), so the suite stays fast. The cases are drawn with schemathesis' strategies and
run by plain hypothesis, since schemathesis' pytest plugin does not load under pytest 9.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from test_service_fuzz import live

from smartctx.service.server import ServerHandle

EXAMPLES = 8
__all__ = ["live"]  # the fixture: one server for the module, as the fuzz tests use


def test_no_operation_answers_5xx(live: ServerHandle) -> None:
    api = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 15  # the memory API and the personal-memory API
    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            if case.path.endswith("/events"):
                return  # an endless SSE stream; its errors are covered by the memory API tests
            case.call_and_validate(checks=[not_a_server_error], timeout=30)

        check()
