"""The extractors run in time linear in the text, however it is shaped (issue 11: 68 s for a
legal 32,000-character message).

A guard, not a speed target: ten times the text must cost less than 30 times the CPU (linear
costs about 10 times, the old quadratic patterns 100 times), the best of three runs each, CPU
time of this thread. A ratio holds on a loaded machine where a fixed bound in seconds did not
(0.25 s alone, over 1 s beside other jobs). The inputs are the shapes that made the old
patterns re-scan a long run from each of its positions.
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
def test_extractors_on_100k_characters_cost_linear_time(name: str) -> None:
    text = SHAPES[name]
    assert len(text) == N

    def cost(sample: str) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()
            extract(redact(sample))
            extract(sample)
            best = min(best, time.thread_time() - start)
        return best

    small, large = cost(text[: N // 10]), cost(text)
    assert large < 30 * max(small, 0.002), (small, large)


def test_profile_evidence_survives_the_linear_patterns() -> None:
    text = "filler " * 10_000 + "나는 재즈를 정말 좋아해. I love hiking in the alps."
    values = {o.value for o in extract(text)}
    assert {"재즈", "hiking in the alps"} <= values
