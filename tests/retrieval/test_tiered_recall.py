"""TieredRecaller: turns plus tier keys, dates, the named speaker and the second hop."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from smartctx.core import HashingEmbedder, InvalidInput
from smartctx.core.recall import Recaller
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.multihop import feedback_terms, hop_terms, second_query
from smartctx.retrieval.tiered import TieredRecaller, TierWeights

OFF = TierWeights(
    fact=0,
    session=0,
    entity=0,
    date=0,
    hop=0,
    speaker=0,
    neighbour=0,
    neighbour2=0,
    hop_feedback=0,
    hop_words=0,
    asks=0,
)
FILLER = [
    "The traffic on the way home was slow again today",
    "Work has been busy with meetings and reports all week",
    "The neighbours had a loud party until late",
    "We cooked pasta and watched a long film together",
]


def turn(i: int, speaker: str, text: str, session: int = 1, day: str = "2023-05-08") -> Slot:
    meta: dict[str, Any] = {"speaker": speaker, "time": f"{day}T10:00", "session": session}
    return Slot(
        SlotKind.USER, text, id=f"s{session}:{i:02d}", source_id=f"D{session}:{i}", metadata=meta
    )


def conversation(
    specials: dict[int, tuple[str, str]], session: int = 1, day: str = "2023-05-08"
) -> list[Slot]:
    out = []
    for i in range(12):
        speaker, text = specials.get(i, ("Ana" if i % 2 == 0 else "Ben", FILLER[i % 4]))
        out.append(turn(i, speaker, text, session, day))
    return out


class Counting(HashingEmbedder):
    """Records every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Any) -> Any:
        self.texts += list(texts)
        return super().embed(texts)


def top(recaller: Any, query: str, slots: list[Slot], k: int = 3) -> list[str]:
    return [s.id for s, _ in recaller.rank(query, slots, k)]


def test_it_is_a_recaller_and_rejects_negative_weights() -> None:
    assert isinstance(TieredRecaller(), Recaller)
    with pytest.raises(InvalidInput):
        TierWeights(hop=-1)
    with pytest.raises(InvalidInput):
        TierWeights(asks=1.5)


def test_a_turn_that_asks_ranks_below_the_answer_that_says_it() -> None:
    # The question repeats the words asked about; the evidence is the statement beside it.
    slots = conversation(
        {
            4: ("Ben", "What did you make at the pottery class?"),
            5: ("Ana", "A bowl, at the pottery class."),
        }
    )
    query = "What did Ana make at the pottery class?"
    plain = TieredRecaller(embedder=HashingEmbedder(), weights=OFF)
    asks = TieredRecaller(embedder=HashingEmbedder(), weights=replace(OFF, asks=0.3))
    before, after = plain.scores(query, slots), asks.scores(query, slots)
    assert before["s1:04"] > before["s1:05"]  # the question matches more of the words
    assert top(asks, query, slots, 1) == ["s1:05"]
    # a statement keeps its score; a text that only asks keeps 1 - asks of it
    assert after["s1:05"] == pytest.approx(before["s1:05"])
    assert after["s1:04"] == pytest.approx(0.7 * before["s1:04"])


def test_a_dated_fact_key_finds_a_turn_that_names_no_date() -> None:
    slots = conversation(
        {
            3: ("Ana", "I went hiking in the hills yesterday"),
            5: ("Ana", "I love hiking in the hills"),
        }
    )
    question = "What did Ana do on 7 May 2023?"
    plain = TieredRecaller(weights=OFF)
    tiered = TieredRecaller(weights=replace(OFF, fact=1.0, date=1.0))
    assert top(tiered, question, slots, 1) == ["s1:03"]
    assert top(plain, question, slots, 1) != ["s1:03"]


def test_the_named_speakers_turns_come_first() -> None:
    slots = conversation(
        {
            2: ("Ana", "Ben, does your sister play the violin or the viola?"),
            3: ("Ben", "She plays the violin"),
        }
    )
    question = "What does Ben's sister play?"
    assert top(TieredRecaller(weights=OFF), question, slots, 1) == ["s1:02"]
    assert top(TieredRecaller(weights=replace(OFF, speaker=1.0)), question, slots, 1) == ["s1:03"]


def test_the_second_hop_follows_a_name_the_first_hit_mentions() -> None:
    slots = conversation(
        {
            1: ("Ana", "I travelled with Jean to Porto in spring"),
            7: ("Ben", "Porto had the best pastries ever"),
        }
    )
    question = "Who travelled with Jean?"
    # Without neighbourhood matching, so only the hop can bring the Porto turn.
    one_hop = TieredRecaller(weights=replace(OFF, hop=0.0), context_weight=0.0)
    two_hops = TieredRecaller(weights=replace(OFF, hop=1.0, hop_depth=1), context_weight=0.0)
    assert "s1:07" not in top(one_hop, question, slots, 3)
    found = top(two_hops, question, slots, 3)
    assert found[0] == "s1:01" and "s1:07" in found
    assert hop_terms(question, [slots[1]], 5, frozenset({"Ana", "Ben"})) == ["Porto"]
    assert second_query("q", []) == "q"


def test_feedback_words_of_the_first_hits_bring_a_turn_that_shares_nothing_with_the_question() -> (
    None
):
    slots = conversation(
        {
            1: ("Ana", "I baked a lemon cake yesterday"),
            7: ("Ben", "That lemon frosting was tricky to get right"),
        }
    )
    question = "What was baked yesterday?"
    names_only = TieredRecaller(weights=replace(OFF, hop=1.0), context_weight=0.0)
    feedback = TieredRecaller(weights=replace(OFF, hop=1.0, hop_feedback=2), context_weight=0.0)
    assert "s1:07" not in top(names_only, question, slots, 12)
    assert top(feedback, question, slots, 2) == ["s1:01", "s1:07"]
    feedback.prepare(slots)
    df, turns = feedback.document_frequencies()
    assert turns == 12
    # "cake" is in one turn, "lemon" in two: the rarer word first; the question's words never.
    assert feedback_terms(question, [slots[1]], 2, df, turns) == ["cake", "lemon"]
    assert feedback_terms(question, [slots[1]], 0, df, turns) == []


def test_the_second_hop_searches_more_words_but_embeds_only_the_question() -> None:
    slots = conversation(
        {
            1: ("Ana", "I travelled with Jean to Porto in spring"),
            7: ("Ben", "Porto had the best pastries ever"),
        }
    )
    question = "Who travelled with Jean?"
    for hop_embed in (False, True):
        embedder = Counting()
        weights = replace(OFF, hop=1.0, hop_depth=1, hop_embed=hop_embed)
        recaller = TieredRecaller(embedder=embedder, weights=weights, context_weight=0.0)
        recaller.prepare(slots)
        embedder.texts.clear()
        found = top(recaller, question, slots, 3)
        assert found[0] == "s1:01" and "s1:07" in found  # the hop's word "Porto" counts
        # without hop_embed, the question is the one query embedded (by the turns and the
        # keys); with it, "Who travelled with Jean? Porto" is embedded too
        assert (set(embedder.texts) == {question}) is not hop_embed


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memo that keeps nothing: every pass computes its vector rankings afresh."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def test_the_second_hop_reuses_the_questions_vector_rankings_to_the_bit() -> None:
    slots = conversation(
        {
            1: ("Ana", "I travelled with Jean to Porto in spring"),
            7: ("Ben", "Porto had the best pastries ever"),
            9: ("Ana", "Jean loves the pastries of Lisbon"),
        }
    )
    question = "Who travelled with Jean?"
    weights = replace(TierWeights(), hop=1.0, hop_depth=2, hop_embed=False)
    kept, fresh = (TieredRecaller(embedder=HashingEmbedder(), weights=weights) for _ in "ab")
    fresh._dense = _Forgetful()
    for recaller in (kept, fresh):
        recaller.prepare(slots)
    products = {"kept": 0, "fresh": 0}
    for name, recaller in (("kept", kept), ("fresh", fresh)):
        for index in (recaller.turns.index, recaller.turns._context, recaller.keys):
            similarity = index.similarity

            def counted(vector: Any, similarity: Any = similarity, name: str = name) -> Any:
                products[name] += 1
                return similarity(vector)

            index.similarity = counted  # type: ignore[method-assign]
    assert kept.scores(question, slots) == fresh.scores(question, slots)
    # one product per index (the turns, their contexts, the keys) for both passes, not two
    assert products == {"kept": 3, "fresh": 6}
    assert kept.rank(question, slots, 5) == fresh.rank(question, slots, 5)


def test_a_hit_brings_the_reply_beside_it() -> None:
    slots = conversation(
        {
            3: ("Ana", "Where did you go on holiday, Ben?"),
            4: ("Ben", "Porto, with my sister"),
        }
    )
    question = "Where was the holiday?"
    alone = TieredRecaller(weights=OFF, context_weight=0.0)
    beside = TieredRecaller(weights=replace(OFF, neighbour=0.5), context_weight=0.0)
    assert top(alone, question, slots, 12) == ["s1:03"]
    # The turns just before and after share the hit's credit (ties by slot id).
    assert top(beside, question, slots, 12) == ["s1:03", "s1:02", "s1:04"]
    farther = TieredRecaller(weights=replace(OFF, neighbour2=0.5), context_weight=0.0)
    assert top(farther, question, slots, 12) == ["s1:03", "s1:01", "s1:05"]


def test_session_keys_wait_for_the_session_to_close_and_indexing_is_incremental() -> None:
    first = conversation({4: ("Ana", "We adopted a puppy called Rex from Lisbon")})
    second = conversation({2: ("Ben", "Rex chewed my shoes")}, session=2, day="2023-06-02")
    both = TieredRecaller(embedder=HashingEmbedder())
    both.prepare(first + second)
    step = TieredRecaller(embedder=HashingEmbedder())
    step.prepare(first)
    assert not any(k.startswith("session:") for k in step.keys.ids)
    step.prepare(first + second)
    assert sorted(step.keys.ids) == sorted(both.keys.ids)
    assert "session:s1" in step.keys.ids and "session:s2" not in step.keys.ids
    question = "What is the name of the puppy?"
    assert top(step, question, first + second) == top(both, question, first + second)


def test_forget_drops_turns_and_the_keys_resting_on_them_alone() -> None:
    slots = conversation({1: ("Ana", "We visited Lisbon"), 3: ("Ana", "Lisbon was sunny")})
    recaller = TieredRecaller()
    recaller.prepare(slots)
    assert "fact:s1:01" in recaller.keys.ids
    recaller.forget(["s1:01"])
    assert "fact:s1:01" not in recaller.keys.ids
    assert "s1:01" not in top(recaller, "Lisbon", slots[:1] + slots[2:], 12)
    recaller.clear()
    assert len(recaller.keys) == 0


def test_filters_apply_as_in_the_hybrid_recaller() -> None:
    slots = conversation({1: ("Ana", "I play chess"), 2: ("Ben", "I play chess too")})
    recaller = TieredRecaller()
    # Neighbours are counted in the conversation, not in the filtered list: Ben's turn 3 is
    # beside the hit and shares its score; his turn 5 is three turns away, Ana's are filtered.
    assert top(recaller.filtered(speaker="Ben"), "chess", slots, 12) == ["s1:02", "s1:03"]
    assert top(recaller, "chess", slots, 5)[:2] == ["s1:01", "s1:02"]


def test_a_window_recalls_through_it() -> None:
    from smartctx.core import get_counter
    from smartctx.window import ContextWindow

    window = ContextWindow(
        120, counter=get_counter(), embedder=None, recaller=TieredRecaller(), recall_ratio=0.5
    )
    slots = [turn(0, "Ana", "My puppy is called Rex")]
    slots += [turn(i, "Ben", f"{FILLER[i % 4]} on day {i}") for i in range(1, 30)]
    window.add_many(slots)
    prompt = window.assemble("What is Ana's puppy called?")
    assert any("Rex" in s.text for s in prompt.recalled)


def test_lean_matches_keys_by_bm25_and_embeds_only_the_turns() -> None:
    turns = conversation({3: ("Ana", "I adopted a puppy called Biscuit in Lisbon yesterday")})
    embedder = Counting()
    lean = TieredRecaller(embedder=embedder, lean=True)
    ranked = lean.rank("Where did Ana adopt Biscuit?", turns, 3)
    assert ranked[0][0].id == "s1:03"
    keys = {f"{t.metadata['speaker']}: {t.text}" for t in turns}
    # embedded as Ana would ask it (see test_a_question_naming_a_speaker_is_embedded_...)
    question = "Where did I adopt Biscuit?"
    # the turns' keys and the queries (first and second hop), never a fact or entity key
    assert keys <= set(embedder.texts)
    assert all(p in keys or p.startswith(question) for p in embedder.texts)
    assert lean.keys.embedder is None and len(lean.keys) > 0


def test_offline_fact_keys_of_a_growing_session_equal_those_over_the_whole_session() -> None:
    from smartctx.retrieval.keys_tiers import OfflineExtractor

    turns = conversation({5: ("Ben", "You told me you moved to Porto yesterday")})
    recaller = TieredRecaller(embedder=None)
    for slot in turns:  # one turn at a time, as a served window archives them
        recaller.prepare([slot])
    whole = {k.id: k.text for k in OfflineExtractor().facts(turns)}
    grown = {k.id: k.text for k in recaller._key.values() if k.kind == "fact"}
    assert grown == whole


def test_diversity_brings_the_second_evidence_turn_above_a_repeat_of_the_first() -> None:
    slots = conversation(
        {
            1: ("Ana", "I read the book Dune by Frank Herbert last week"),
            2: ("Ana", "I read the book Dune by Frank Herbert again this week"),
            8: ("Ana", "My favourite novel is Emma, I read it every summer"),
        }
    )
    question = "Which books has Ana read?"
    embedder = HashingEmbedder()
    plain = TieredRecaller(embedder=embedder, weights=replace(OFF, diversity=0.0))
    varied = TieredRecaller(embedder=embedder, weights=replace(OFF, diversity=1.5))
    before = top(plain, question, slots, 12)
    after = top(varied, question, slots, 12)
    assert before[:2] == ["s1:01", "s1:02"]
    assert after[0] == "s1:01"
    assert after.index("s1:08") < after.index("s1:02")
    assert sorted(after) == sorted(before)
    # the service's path (scores computed ahead, then ordered) gives the same list
    scored = varied.scores(question, slots)
    assert [s.id for s, _ in varied.order(scored, slots, 12)] == after
    # without vectors the order is the score order
    lexical = TieredRecaller(weights=replace(OFF, diversity=1.5))
    assert top(lexical, question, slots, 12) == top(
        TieredRecaller(weights=replace(OFF, diversity=0.0)), question, slots, 12
    )


READS: list[str] = []


class Watched(Slot):
    """A slot that notes whose metadata is read (ranking reads speaker, session and time)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name == "metadata":
            READS.append(object.__getattribute__(self, "id"))
        return object.__getattribute__(self, name)


def watched(n: int, start: int = 0) -> list[Slot]:
    out: list[Slot] = []
    for i in range(start, start + n):
        text = f"{FILLER[i % 4]}, and the parcel {i} went to {['Porto', 'Lisbon', 'Oslo'][i % 3]}"
        meta = {"speaker": "Ana" if i % 2 else "Ben", "time": "2023-05-08T10:00", "session": 1}
        out.append(Watched(SlotKind.USER, text, id=f"w{i:04d}", metadata=meta))
    return out


def test_asking_again_over_the_same_candidates_does_no_work_per_candidate() -> None:
    slots = watched(300)
    recaller = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    recaller.rank("Where did the parcel go?", slots, 8)
    READS.clear()
    recaller.rank("Which parcel went to Oslo with Ben?", list(slots), 8)
    # only the best turns the second hop reads (their photo captions), not all 300
    assert len(set(READS)) <= recaller.weights.hop_depth
    more = slots + watched(2, start=300)
    recaller.prepare(more[-2:])  # indexing reads its neighbours: the service does it apart
    READS.clear()
    recaller.rank("What went to Lisbon?", more, 8)
    assert len(set(READS)) <= recaller.weights.hop_depth + 2  # and the two new turns
    # the same view, grown: kept between queries, not rebuilt
    view = recaller.view(more)
    assert recaller.view(list(more)) is view and len(view.slots) == 302


def test_the_same_candidates_as_other_copies_grow_the_kept_view() -> None:
    # The service hands the window's own archived slots to rank and copies of them to index:
    # the same slots (ids and texts) as other objects are the same list, grown, not a new one.
    slots = watched(50)
    recaller = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    recaller.rank("Where did the parcel go?", slots, 8)
    view = recaller.view(slots)
    copies = [s.copy() for s in slots] + watched(1, start=50)
    assert recaller.view(copies) is view and len(view.slots) == 51
    changed = [*copies[:10], copies[10].copy(text="another text"), *copies[11:]]
    assert recaller.view(changed) is not view


def test_rankings_over_a_growing_archive_equal_those_of_a_recaller_asked_once() -> None:
    slots = watched(120)
    slots[40:44] = [
        turn(40, "Ana", "I adopted a puppy called Rex on 3 May 2023", session=2, day="2023-05-09"),
        turn(41, "Ben", "Rex is a lovely name for a puppy", session=2, day="2023-05-09"),
        turn(42, "Ana", "Ben, your sister plays the violin in Porto", session=2, day="2023-05-09"),
        turn(43, "Ben", "She moved there in spring", session=2, day="2023-05-09"),
    ]
    questions = [
        "What is the name of Ana's puppy?",
        "What did Ana do on 3 May 2023?",
        "Where does Ben's sister play?",
        "Where did the parcel 17 go?",
    ]
    grown = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    only_ben = grown.filtered(speaker="Ben")
    batches: list[list[Slot]] = []
    for end in range(10, len(slots) + 1, 10):
        batches.append(slots[end - 10 : end])
        grown.prepare(batches[-1])
        archive = slots[:end]
        once = TieredRecaller(embedder=HashingEmbedder(), lean=True)
        for batch in batches:  # the same index, no views kept
            once.prepare(batch)
        for question in questions:
            assert grown.rank(question, archive, 10) == once.rank(question, list(archive), 10)
            assert only_ben.rank(question, archive, 10) == once.filtered(speaker="Ben").rank(
                question, list(archive), 10
            )
            doubled = archive + archive[:2]  # a repeated id scores at its last place
            assert grown.rank(question, doubled, 10) == once.rank(question, list(doubled), 10)


def test_a_text_changed_in_place_is_searched_by_its_new_text() -> None:
    slots = conversation({})
    recaller = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    assert top(recaller, "zebra crossing", slots, 1) != ["s1:05"]
    slots[5].text = "We waited at the zebra crossing"
    assert top(recaller, "zebra crossing", slots, 1) == ["s1:05"]
    recaller.forget(["s1:05"])
    assert "s1:05" not in top(recaller, "zebra crossing", slots[:5] + slots[6:], 3)


def test_a_question_naming_a_speaker_is_embedded_as_they_would_say_it() -> None:
    from smartctx.retrieval.keys_tiers import first_person

    assert first_person("What activities does Melanie partake in?", ["Melanie"]) == (
        "What activities do I partake in?"
    )
    assert first_person("What do Melanie's kids like?", {"Melanie Smith"}) == (
        "What do my kids like?"
    )
    assert first_person("Is Caroline going to the parade?", ["Melanie", "Caroline"]) == (
        "Am I going to the parade?"
    )
    assert first_person("Did Melanie and Caroline meet?", ["Melanie", "Caroline"]) == (
        "Did I and I meet?"
    )
    assert first_person("What is the VPN?", ["Melanie"]) == "What is the VPN?"
    embedder = Counting()
    recaller = TieredRecaller(embedder=embedder, weights=OFF)
    slots = [
        turn(0, "Melanie", "I went camping in the mountains with my kids"),
        turn(1, "Caroline", "Melanie, that sounds lovely, I went to a support group"),
    ]
    recaller.prepare(slots)
    recaller.rank("Where did Melanie go camping?", slots, 2)
    # the turns say "I went camping": the dense query is said the same way; BM25 keeps the name
    assert "Where did I go camping?" in embedder.texts
    assert "Where did Melanie go camping?" not in embedder.texts
