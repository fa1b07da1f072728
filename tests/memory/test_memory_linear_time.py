"""The extractors run in time linear in the text: a 100,000-character message takes well
under a second however it is shaped (issue 11: 68 s for a legal 32,000-character message).

CPU time of this thread is measured, so other processes on a shared machine do not count; the
inputs are the shapes that made the old patterns re-scan a long run from each of its positions.
"""

from __future__ import annotations

import random
import time

import pytest

from smartctx.memory.extractor import extract
from smartctx.memory.privacy import redact

N = 100_000
_rng = random.Random(11)
PATTERNS = {
    "letters": "a",
    "digits": "1",
    "hangul": "가",
    "digit groups": "12 ",
    "random numbers": " ".join(str(_rng.randint(10, 99_999)) for _ in range(1000)) + " ",
    "at signs": "a@",
    "dots": "a.",
    "colons": "a:",
    "key prefixes": "sk-",
    "jwt prefixes": "eyJ.",
    "likes": "I really like ",
    "secrets": "password ",
    "prose": "I like jazz; clean the living room at bedtime. 안방 청정해줘. ",
}
SHAPES = {name: (unit * (N // len(unit) + 1))[:N] for name, unit in PATTERNS.items()}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_extractors_on_100k_characters_take_under_a_second(name: str) -> None:
    text = SHAPES[name]
    assert len(text) == N
    start = time.thread_time()
    extract(redact(text))
    extract(text)
    assert time.thread_time() - start < 1.0


def test_profile_evidence_survives_the_linear_patterns() -> None:
    text = "filler " * 10_000 + "나는 재즈를 정말 좋아해. I love hiking in the alps."
    values = {o.value for o in extract(text)}
    assert {"재즈", "hiking in the alps"} <= values
