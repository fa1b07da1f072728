"""The a2a-memory-context-v1 contract: the seed's examples are golden."""

from __future__ import annotations

import json
import random
from typing import Any

from smartctx.core.tokens import WhitespaceCounter, get_counter
from smartctx.memory import (
    CONTRACT_VERSION,
    build_memory_update,
    build_planner_input,
    normalize_memory_context,
    render_planner_input,
    resolve_room,
)

SEED_INPUT: dict[str, Any] = {
    "voice_context": {
        "recognized_text": "나는 거실을 자주 청정해",
        "session_id": "memory-session",
        "memory_snapshot": {
            "source": "ondevice_cache",
            "short_term": {
                "recent_pairs": [{"user": "거실 청정해줘", "assistant": "시작할게요"}],
                "session_summary": "오늘 거실 청정을 자주 요청함",
            },
            "mid_term": {
                "daily_summaries": [{"day": "2026-06-24", "summary": "저녁에 청정을 자주 요청"}],
                "weekly_digest": "저녁에 청정을 자주 요청",
            },
            "long_term": {"profile_items": [{"key": "preferred_room", "value": "거실"}]},
            "sync": {"cursor": "cur-2", "version": "v2"},
        },
    }
}

SEED_NORMALIZED = """{
  "contract_version": "a2a-memory-context-v1",
  "source": "ondevice_cache",
  "current_turn_priority": "required",
  "short_term": {
    "recent_pairs": [{"user": "거실 청정해줘", "assistant": "시작할게요"}],
    "session_summary": "오늘 거실 청정을 자주 요청함"
  },
  "mid_term": {
    "daily_summaries": [{"day": "2026-06-24", "summary": "저녁에 청정을 자주 요청"}],
    "weekly_digest": "저녁에 청정을 자주 요청"
  },
  "long_term": {"profile_items": [{"key": "preferred_room", "value": "거실"}]},
  "sync": {"cursor": "cur-2", "version": "v2"}
}"""

SEED_UPDATE = """{
  "contract_version": "a2a-memory-context-v1",
  "source": "cloud_a2a_runtime",
  "sync": {"cursor": "cur-2", "version": "v2"},
  "write_candidates": {
    "short_term_pair": {
      "user_text": "나는 거실을 자주 청정해",
      "assistant_text": "",
      "route_family": "DEF",
      "workflow_id": ""
    },
    "profile_candidates": []
  },
  "device_cache_update": {"active_workflow_id": "", "last_route": "DEF", "session_summary": ""}
}"""


def _keys(value: Any) -> Any:
    """The nested key order of a JSON value (dict equality ignores order; the seed's does not)."""
    if isinstance(value, dict):
        return [(k, _keys(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_keys(v) for v in value]
    return None


def test_normalize_matches_the_seed_exactly() -> None:
    out = normalize_memory_context(SEED_INPUT)
    golden = json.loads(SEED_NORMALIZED)
    assert out == golden
    assert _keys(out) == _keys(golden)


def test_normalize_accepts_the_inner_voice_context_and_does_not_mutate_it() -> None:
    inner = SEED_INPUT["voice_context"]
    before = json.dumps(inner, sort_keys=True)
    assert normalize_memory_context(inner) == json.loads(SEED_NORMALIZED)
    assert json.dumps(inner, sort_keys=True) == before


def test_build_memory_update_matches_the_seed_exactly() -> None:
    out = build_memory_update(
        user_text="나는 거실을 자주 청정해", sync={"cursor": "cur-2", "version": "v2"}
    )
    golden = json.loads(SEED_UPDATE)
    assert out == golden
    assert _keys(out) == _keys(golden)


def test_update_carries_assistant_text_candidates_and_redacts() -> None:
    candidate = {"key": "preferred_room", "value": "거실", "status": "candidate"}
    out = build_memory_update(
        user_text="my email is kim@example.com",
        assistant_text="거실 청정을 시작할게요.",
        route_family="ODL",
        profile_candidates=[candidate] * 9,
        pair_id="p1",
    )
    pair = out["write_candidates"]["short_term_pair"]
    assert pair["assistant_text"] == "거실 청정을 시작할게요."
    assert pair["pair_id"] == "p1"
    assert "kim@example.com" not in json.dumps(out)
    assert len(out["write_candidates"]["profile_candidates"]) == 5
    assert out["device_cache_update"]["last_route"] == "ODL"


def test_normalize_is_compact_by_construction() -> None:
    pairs = [{"user": f"turn {i} " + "word " * 30, "assistant": "ok"} for i in range(20)]
    dailies = [{"date": f"2026-06-{d:02d}", "summary": "x " * 50} for d in range(1, 29)]
    items = [{"key": f"k{i}", "value": f"v{i}", "confidence": i / 40} for i in range(30)]
    snapshot = {
        "short_term": {"recent_pairs": pairs},
        "mid_term": {"daily_summaries": dailies},
        "long_term": {
            "profile_items": [*items, {"key": "gone", "value": "x", "status": "rejected"}]
        },
    }
    counter = WhitespaceCounter()
    roomy = normalize_memory_context({"memory_snapshot": snapshot}, max_tokens=100_000)
    assert len(roomy["short_term"]["recent_pairs"]) == 5
    assert roomy["short_term"]["recent_pairs"][-1]["user"].startswith("turn 19")
    assert next(d["day"] for d in roomy["mid_term"]["daily_summaries"]) == "2026-06-22"
    assert len(roomy["long_term"]["profile_items"]) == 10
    assert all(i["key"] != "gone" for i in roomy["long_term"]["profile_items"])
    tight = normalize_memory_context({"memory_snapshot": snapshot}, max_tokens=150, counter=counter)
    assert counter.count(json.dumps(tight, ensure_ascii=False)) <= 150
    assert tight["short_term"]["recent_pairs"] == []  # oldest evidence goes first
    assert tight["contract_version"] == CONTRACT_VERSION
    assert tight["current_turn_priority"] == "required"


def test_normalize_survives_garbage() -> None:
    out = normalize_memory_context({"memory_snapshot": {"short_term": "nope", "sync": 3}})
    assert out["short_term"] == {"recent_pairs": [], "session_summary": ""}
    assert out["sync"] == {"cursor": None, "version": None}
    assert out["source"] == "ondevice_cache"


def test_the_current_request_wins_over_memory() -> None:
    memory = normalize_memory_context(
        {
            "memory_snapshot": {
                "long_term": {
                    "profile_items": [
                        {"key": "preferred_room", "value": "거실", "status": "confirmed"}
                    ]
                }
            }
        }
    )
    asked = build_planner_input("안방으로 가서 청정해줘", memory)
    assert next(iter(asked)) == "recognized_text"
    assert resolve_room(asked) == "안방"
    assert resolve_room(build_planner_input("Purify the bedroom please", memory)) == "bedroom"
    assert resolve_room(build_planner_input("안방 말고 거실 청정해줘", memory)) == "거실"
    # memory only fills a gap the request leaves open
    assert resolve_room(build_planner_input("청정해줘", memory)) == "거실"
    text = render_planner_input(asked)
    assert text.index("안방으로 가서 청정해줘") < text.index("거실")


def _reference_fit(context: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """The plain rule: count the whole context after every drop."""
    count = get_counter().count
    pairs = context["short_term"]["recent_pairs"]
    dailies = context["mid_term"]["daily_summaries"]
    items = context["long_term"]["profile_items"]
    while count(json.dumps(context, ensure_ascii=False)) > max_tokens:
        if pairs:
            pairs.pop(0)
        elif dailies:
            dailies.pop(0)
        elif items:
            items.sort(key=lambda i: -float(i.get("confidence", 1.0)))
            items.pop()
        elif context["mid_term"]["weekly_digest"] or context["short_term"]["session_summary"]:
            context["mid_term"]["weekly_digest"] = ""
            context["short_term"]["session_summary"] = ""
        else:
            break
    return context


def test_fitting_drops_the_same_entries_as_counting_after_every_drop() -> None:
    rng = random.Random(7)
    words = ["VPN", "laptop", "거실", "청정", "Berlin", "expense", "ticket", "42", "é", "—"]
    words += [
        '"quoted"',
        "a\nb",
        "don't",
        "...",
        "}{",
        "\\",
        "🙂",
        "नमस्ते",
        "USD 60.",
        "https://a.b/c",
    ]
    for trial in range(120):
        snapshot = {
            "short_term": {
                "recent_pairs": [
                    {
                        "user": " ".join(rng.choices(words, k=rng.randint(1, 30))),
                        "assistant": " ".join(rng.choices(words, k=rng.randint(1, 30))),
                    }
                    for _ in range(rng.randint(0, 20))
                ],
                "session_summary": " ".join(rng.choices(words, k=rng.randint(0, 40))),
            },
            "mid_term": {
                "daily_summaries": [
                    {"day": f"2026-06-{d:02d}", "summary": " ".join(rng.choices(words, k=20))}
                    for d in range(1, rng.randint(1, 8))
                ],
                "weekly_digest": " ".join(rng.choices(words, k=rng.randint(0, 30))),
            },
            "long_term": {
                "profile_items": [
                    {"key": f"k{i}", "value": rng.choice(words), "confidence": rng.random()}
                    for i in range(rng.randint(0, 8))
                ]
            },
        }
        budget = rng.randint(40, 900)
        fitted = normalize_memory_context(
            {"memory_snapshot": snapshot}, max_pairs=20, max_tokens=budget
        )
        unfitted = normalize_memory_context(
            {"memory_snapshot": snapshot}, max_pairs=20, max_tokens=10**9
        )
        assert fitted == _reference_fit(unfitted, budget), trial


class _Recording:
    """A counter that records what it counts."""

    name = "recording"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def count(self, text: str) -> int:
        self.texts.append(text)
        return get_counter().count(text)


def test_the_whole_context_is_counted_only_near_its_limit() -> None:
    pairs = [{"user": f"question {i} about the VPN", "assistant": f"answer {i}"} for i in range(20)]
    snapshot = {"short_term": {"recent_pairs": pairs}}
    for budget, most in ((10**6, 0), (300, 2), (60, 2)):  # fits by far; drops some; drops all
        counter = _Recording()
        normalize_memory_context(
            {"memory_snapshot": snapshot}, max_pairs=20, max_tokens=budget, counter=counter
        )
        whole = [t for t in counter.texts if '"recent_pairs": [{' in t]
        assert len(whole) <= most, budget
