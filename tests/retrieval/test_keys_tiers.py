"""Tier keys: facts in the third person with dates, session summaries, entities."""

from __future__ import annotations

from typing import Any

from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.keys_tiers import (
    OfflineExtractor,
    entity_keys,
    group_sessions,
    names,
    session_keys,
    third_person,
)


def turn(n: int, speaker: str, text: str, session: int = 1, when: str = "2023-05-08T13:56") -> Slot:
    meta: dict[str, Any] = {"speaker": speaker, "time": when, "session": session}
    return Slot(
        SlotKind.USER, text, id=f"t{session}.{n}", source_id=f"D{session}:{n}", metadata=meta
    )


def test_third_person_names_speaker_and_addressee() -> None:
    text = "I'm proud of my kids. Did you see your painting? I love it."
    out = third_person(text, "Mel", "Caro")
    assert out == "Mel is proud of Mel's kids. Did Caro see Caro's painting? Mel love it."
    assert third_person("I went", "", "") == "I went"


def test_fact_keys_resolve_dates_and_point_to_their_turn() -> None:
    session = [
        turn(1, "Caroline", "I went to a LGBTQ support group yesterday."),
        turn(2, "Melanie", "Wow, did you like it?"),
    ]
    facts = OfflineExtractor().facts(session)
    assert [f.provenance for f in facts] == [("t1.1",), ("t1.2",)]
    first = facts[0]
    assert first.text.startswith("Caroline went to a LGBTQ support group yesterday (7 May 2023)")
    assert "(said on 8 May 2023)" in first.text
    assert first.span is not None and first.span[0].day == 7
    assert "did Caroline like it" in facts[1].text
    assert facts[1].span is not None and facts[1].span[0].day == 8  # the day said


def test_names_skip_sentence_starts_speakers_and_months() -> None:
    text = "Yesterday I flew to Paris with Jean. In May we saw the Eiffel Tower and Caroline."
    assert names(text, frozenset({"Caroline"})) == ["Paris", "Jean", "Eiffel Tower"]


def test_session_and_entity_keys_carry_provenance() -> None:
    turns = [
        turn(1, "Ana", "I adopted a puppy from the shelter in Lisbon last week."),
        turn(2, "Ben", "A puppy! What did you name him?"),
        turn(1, "Ana", "We are flying to Lisbon again soon.", session=2, when="2023-06-02T10:00"),
    ]
    sessions = group_sessions(turns)
    assert list(sessions) == ["s1", "s2"]
    keys = session_keys(sessions, speakers=frozenset({"Ana", "Ben"}))
    assert keys[0].provenance == ("t1.1", "t1.2")
    assert keys[0].text.startswith("Ana and Ben on 8 May 2023.")
    assert "puppy" in keys[0].text
    ents = entity_keys(turns, speakers=frozenset({"Ana", "Ben"}))
    lisbon = next(k for k in ents if k.id == "entity:Lisbon")
    assert lisbon.provenance == ("t1.1", "t2.1")
    assert lisbon.span is not None and lisbon.span[0].month == 5 and lisbon.span[1].month == 6


def test_an_entity_key_grown_turn_by_turn_and_forgotten_is_dated_as_one_built_at_once() -> None:
    from smartctx.retrieval.keys_tiers import Entities

    speakers = frozenset({"Ana", "Ben"})
    turns = [
        turn(1, "Ana", "It was sunny in Lisbon.", when="2023-06-02T10:00"),
        turn(2, "Ben", "I loved Lisbon in May.", when="2023-05-08T13:56"),
        turn(3, "Ana", "Back to Lisbon in July!", when="2023-07-20T09:00"),
    ]
    grown = Entities()
    for one in turns:  # as a served recaller indexes: a turn at a time, out of date order
        grown.add([one], speakers)
    assert grown.key("Lisbon") == entity_keys(turns, speakers=speakers)[0]
    span = grown.key("Lisbon").span
    assert span is not None and (span[0].month, span[1].month) == (5, 7)
    grown.forget({"t1.3"})  # the July turn: the span shrinks back
    once = entity_keys(turns[:2], speakers=speakers)[0]
    assert grown.key("Lisbon").span == once.span
    assert grown.key("Lisbon").provenance == once.provenance == ("t1.1", "t1.2")
    grown.forget({"t1.1", "t1.2"})
    assert "Lisbon" not in grown.where and "Lisbon" not in grown.span


def test_the_key_table_dates_keys_as_overlap_does() -> None:
    from datetime import date, timedelta

    import numpy as np

    from smartctx.retrieval.dates import overlap
    from smartctx.retrieval.keys_tiers import KeyTable, TierKey

    day = date(2023, 5, 1)
    spans = [
        (day + timedelta(d), day + timedelta(d + length))
        for d, length in [(0, 0), (3, 10), (40, 0), (-100, 2), (15, 30)]
    ]
    keys = [TierKey(f"fact:{i}", "fact", "x", (f"t{i}",), span) for i, span in enumerate(spans)]
    keys += [
        TierKey("entity:Rex", "entity", "Rex", ("t0",), spans[0]),
        TierKey("session:s1", "session", "s", ("t0", "t1", "t9"), None),
    ]
    table = KeyTable()
    rows = [np.array([i], dtype=np.intp) for i in range(len(spans))]
    rows += [np.array([0]), np.array([0, 1, -1])]
    table.put(list(range(len(keys))), keys, rows)
    asked = [(day + timedelta(5), day + timedelta(5)), (day + timedelta(60), day + timedelta(90))]
    near = table.near(asked)
    for i, key in enumerate(keys):
        expected = 0.0
        if key.span is not None and key.kind != "entity":
            expected = max(overlap(key.span, s) for s in asked)
        assert near[i] == expected
    found, which = table.gather(np.array([6, 1]))
    assert found.tolist() == [0, 1, 1] and which.tolist() == [0, 0, 1]  # a turn not indexed: out
    assert table.kind.tolist() == [0, 0, 0, 0, 0, 2, 1]
