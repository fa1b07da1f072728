"""``smartctx bench locomo --qa``: answers, not only evidence.

For each question (categories 1-4), three prompts of the same conversation are put to a
configured OpenAI-compatible model (``ask``: chat messages in, reply text out):

- ``smartctx``: what the smartctx window (the product's code path,
  :class:`~smartctx.bench.locomo_windows.SmartWindow` with the tiered recaller) assembles for the
  question under ``budget`` tokens: its active slots and the archived ones it recalls;
- ``fifo``: the most recent turns that fit the same budget;
- ``full``: the whole conversation.

Each is rendered alike, one line per slot in conversation order with its date and speaker
(``[8 May 2023] Caroline: ...``; a summary slot as ``[summary] ...``), so only the selection
differs. Answers are scored with the LoCoMo paper's F1 (:func:`locomo_f1`: token F1 after
normalisation; multi-hop answers split at commas, each gold part matched by its best predicted
part; open-domain gold cut at ``;``), and, when ``judge`` is given, by an LLM judge that says
CORRECT or WRONG (the share judged correct). The paper stems with Porter; this uses smartctx's
light English stemmer (:func:`smartctx.retrieval.analysis.stem`), which differs on a few words.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smartctx.bench.locomo_data import CATEGORIES, Conversation, LoCoMo, Turn
from smartctx.bench.locomo_windows import FifoWindow, SmartWindow, conversation_slots
from smartctx.core.embeddings import Embedder
from smartctx.core.slots import Slot, SlotKind
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.analysis import stem
from smartctx.retrieval.tiered import TieredRecaller, TierWeights

Ask = Callable[[list[dict[str, str]]], str]
Progress = Callable[[str, int], None]
SYSTEMS = ("smartctx", "fifo", "full")

INSTRUCTIONS = (
    "You answer a question about a long conversation between two people, using only the "
    "conversation excerpts below (each line: [date] speaker: text). Answer with a short phrase, "
    "not a sentence. For a question about when something happened, answer with a date, resolving "
    "words like 'yesterday' or 'last week' against the line's date."
)
JUDGE = (
    "Label an answer to a question about a conversation as CORRECT or WRONG, given the gold "
    "answer. Be generous: the same meaning, date or entity in other words is CORRECT. "
    "Reply with one word: CORRECT or WRONG.\n\nQuestion: {question}\nGold answer: {gold}\n"
    "Generated answer: {answer}"
)


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles (nor ``and``), single spaces (the paper's rule)."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def token_f1(prediction: str, truth: str) -> float:
    """Token F1 of stemmed, normalised words."""
    pred = [stem(w) for w in normalize_answer(prediction).split()]
    gold = [stem(w) for w in normalize_answer(truth).split()]
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(prediction: str, truth: str, category: int) -> float:
    """The paper's F1 for a question of ``category`` (see the module doc)."""
    if category == 1:
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in truth.split(",")]
        return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)
    if category == 3:
        truth = truth.split(";")[0]
    return token_f1(prediction, truth)


def judged_correct(reply: str) -> bool:
    """True when the judge's reply says CORRECT before (or without) WRONG."""
    match = re.search(r"\b(CORRECT|WRONG)\b", reply.upper())
    return match is not None and match.group(1) == "CORRECT"


def render_turns(turns: list[Turn]) -> str:
    """Turns as ``[date] speaker: text`` lines (the ``full`` prompt)."""
    return "\n".join(_line(t) for t in turns)


def _line(turn: Turn) -> str:
    caption = f" [shares a photo: {turn.caption}]" if turn.caption else ""
    return f"[{turn.date or '?'}] {turn.speaker}: {turn.text}{caption}"


def render_slots(slots: list[Slot], by_dia: dict[str, Turn]) -> str:
    """Slots of a LoCoMo window in conversation order: turns as :func:`render_turns` does,
    summaries first as ``[summary] ...``."""
    order = {dia: i for i, dia in enumerate(by_dia)}
    turns = sorted(
        (by_dia[s.source_id] for s in slots if s.source_id in by_dia),
        key=lambda t: order[t.dia_id],
    )
    summaries = [f"[summary] {s.text}" for s in slots if s.kind is SlotKind.SUMMARY]
    return "\n".join([*summaries, *(_line(t) for t in dict.fromkeys(turns))])


@dataclass
class QaResult:
    """Mean F1 (and judged accuracy) by system, overall and per category."""

    budget: int
    questions: int = 0
    model: str = ""
    judge: str = ""
    scores: dict[str, list[float]] = field(default_factory=dict)
    answers: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, category: int, value: float) -> None:
        self.scores.setdefault(f"{name}|all", []).append(value)
        self.scores.setdefault(f"{name}|{category}", []).append(value)

    def mean(self, name: str, category: str = "all") -> float:
        values = self.scores.get(f"{name}|{category}", [])
        return sum(values) / len(values) if values else 0.0

    def to_json(self) -> dict[str, Any]:
        cats = ["all", *(str(c) for c in CATEGORIES)]
        measures = ["f1", *(["judge"] if self.judge else [])]
        return {
            "budget": self.budget,
            "questions": self.questions,
            "model": self.model,
            "judge": self.judge or None,
            "systems": {
                system: {
                    m: {c: self.mean(f"{system}:{m}", c) for c in cats if self._has(system, m, c)}
                    for m in measures
                }
                for system in SYSTEMS
            },
            "answers": self.answers,
        }

    def _has(self, system: str, measure: str, category: str) -> bool:
        return f"{system}:{measure}|{category}" in self.scores


def _prompts(
    conv: Conversation, question: str, smart: SmartWindow, fifo: FifoWindow
) -> dict[str, str]:
    by_dia = {t.dia_id: t for t in conv.turns}
    assembled = smart.window.assemble(question)
    fifo_prompt = fifo.prompt
    return {
        "smartctx": render_slots([*assembled.slots, *assembled.recalled], by_dia),
        "fifo": render_slots(list(fifo_prompt.slots), by_dia),
        "full": render_turns(conv.turns),
    }


def run_qa(
    data: LoCoMo,
    *,
    ask: Ask,
    embedder: Embedder | None,
    counter: TokenCounter,
    budget: int = 4096,
    tiers: TierWeights | None = None,
    judge: Ask | None = None,
    model: str = "",
    judge_model: str = "",
    progress: Progress | None = None,
) -> QaResult:
    """Ask ``ask`` every question three ways and score the answers (see the module doc)."""
    tick = progress or (lambda _phase, _n: None)
    result = QaResult(budget, model=model, judge=judge_model if judge is not None else "")
    for conv in data.conversations:
        recaller = TieredRecaller(embedder=embedder, weights=tiers)
        recaller.prepare(conversation_slots(conv))
        smart = SmartWindow(conv, budget, counter=counter, recaller=recaller, recall_ratio=0.8)
        fifo = FifoWindow(conv, budget, counter=counter)
        for question in conv.questions:
            result.questions += 1
            record: dict[str, Any] = {"question": question.text, "gold": question.answer}
            for system, context in _prompts(conv, question.text, smart, fifo).items():
                messages = [
                    {"role": "system", "content": INSTRUCTIONS},
                    {"role": "user", "content": f"{context}\n\nQuestion: {question.text}"},
                ]
                answer = ask(messages).strip()
                score = locomo_f1(answer, question.answer, question.category)
                result.add(f"{system}:f1", question.category, score)
                record[system] = {"answer": answer, "f1": score}
                if judge is not None:
                    verdict = judge(
                        [
                            {
                                "role": "user",
                                "content": JUDGE.format(
                                    question=question.text, gold=question.answer, answer=answer
                                ),
                            }
                        ]
                    )
                    correct = judged_correct(verdict)
                    result.add(f"{system}:judge", question.category, float(correct))
                    record[system]["judged_correct"] = correct
            result.answers.append(record)
            tick(f"{conv.sample_id}: answers", 1)
    return result
