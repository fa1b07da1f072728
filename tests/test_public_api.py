"""The names ``smartctx`` re-exports resolve, and unknown names fail clearly."""

from __future__ import annotations

import pytest

import smartctx


def test_every_public_name_resolves() -> None:
    for name in smartctx.__all__:
        assert getattr(smartctx, name) is not None, name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = smartctx.Nope  # type: ignore[attr-defined]
