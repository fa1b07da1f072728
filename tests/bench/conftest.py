"""A tiny synthetic LoCoMo-shaped file shared by the LoCoMo benchmark tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FILLER = [
    "We spent the afternoon talking about the weather and the traffic on the way home",
    "The neighbours were loud again last night, so neither of us slept very much at all",
    "Work has been busy with meetings all week and the reports keep piling up on my desk",
]


def _sample(sample_id: str, fact: str, late: str) -> dict[str, Any]:
    def session(n: int, first: str | None) -> list[dict[str, Any]]:
        turns = []
        for i in range(1, 31):
            speaker = "Ana" if i % 2 else "Ben"
            text = first if (first and i == 1) else f"{FILLER[i % 3]} ({sample_id} {n}.{i})"
            turns.append({"speaker": speaker, "dia_id": f"D{n}:{i}", "text": text})
        return turns

    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": session(1, fact),
            "session_2_date_time": "10:00 am on 2 June, 2023",
            "session_2": session(2, late),
        },
        "qa": [
            {
                "question": "What is the name of Ana's puppy?",
                "answer": "Rex",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Where did Ana travel?",
                "answer": "Kyoto",
                "evidence": ["D2:1; D1:1"],
                "category": 1,
            },
            {
                "question": "Is Ana a pilot?",
                "adversarial_answer": "no",
                "evidence": [],
                "category": 5,
            },
            {"question": "Unknown evidence", "answer": "x", "evidence": ["D9:99"], "category": 2},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    data = [
        _sample("conv-a", "I adopted a puppy and named him Rex", "I just came back from Kyoto"),
        _sample("conv-b", "My puppy Rex chewed my shoes", "Kyoto temples were beautiful"),
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
