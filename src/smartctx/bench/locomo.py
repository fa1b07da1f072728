"""``smartctx bench locomo``: evidence recall and evidence retention on LoCoMo.

For each conversation, every turn becomes a slot (source id = ``dia_id``, time = the session
date, speaker in metadata). For each question of categories 1-4:

- recall@k (k = 5, 10, 25, 50): the share of its evidence turns among the top k turns retrieved
  for the question (the LoCoMo paper's Table 3 measure), for smartctx's ``HybridRecaller`` and for
  plain BM25 (lower-cased words, no stemming, no stop words, the turn text alone);
- where each evidence turn ranks for smartctx (top 10, 11-50, beyond 50), and how many of those
  missed at 10 share no word with the question (analysed as BM25 does, the speakers' names left
  out): those only the embedder's sense of meaning can find;
- retention at budgets (512, 1,024, 2,048, 4,096 tokens): the share of its evidence turns whose
  text is verbatim in the prompt assembled for the question, for the smartctx window (a
  ``ContextWindow`` with a ``HybridRecaller`` attached; the prompt is ``assemble(question)``)
  and for a first-in-first-out window (:mod:`smartctx.bench.locomo_windows`). Beside it: the
  mean number of slots recalled, the mean prompt tokens, and what each window holds after ingest.

Each number is a mean over questions, overall and per category, as a fraction in [0, 1]. The
question text is the only input to retrieval; evidence is used for scoring alone, and every
parameter is fixed once for the whole run (see :class:`LocomoConfig`).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from smartctx.bench.locomo_data import CATEGORIES, LoCoMo, Question, Turn
from smartctx.bench.locomo_windows import FifoWindow, SmartWindow, conversation_slots, retained
from smartctx.core.embeddings import Embedder
from smartctx.core.slots import Slot
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.analysis import analyze, words
from smartctx.retrieval.hybrid import HybridIndex
from smartctx.retrieval.keys_tiers import KeyExtractor
from smartctx.retrieval.tiered import TieredRecaller, TierWeights

Progress = Callable[[str, int], None]
"""Called with (phase description, units done since the last call)."""

KS = (5, 10, 25, 50)
BUDGETS = (512, 1024, 2048, 4096)


@dataclass(frozen=True)
class LocomoConfig:
    """Every knob of the run, chosen once (never per question)."""

    ks: tuple[int, ...] = KS
    budgets: tuple[int, ...] = BUDGETS
    recall_ratio: float = 0.8
    recall_k: int = 256
    rrf_k: int = 20
    weights: tuple[float, float] = (1.0, 1.0)
    context_weight: float = 0.5
    tiers: TierWeights = field(default_factory=TierWeights)
    lean: bool = False
    """Match the tier keys by BM25 only, as a served window's recaller does."""


class _Means:
    """Running means of named series, overall and per category."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)

    def add(self, name: str, category: int, value: float) -> None:
        self.values[f"{name}|all"].append(value)
        self.values[f"{name}|{category}"].append(value)

    def mean(self, name: str, category: str = "all") -> float:
        vals = self.values.get(f"{name}|{category}", [])
        return sum(vals) / len(vals) if vals else 0.0


@dataclass
class LocomoResult:
    """Means by system and measure; ``to_json`` gives the documented JSON shape."""

    config: LocomoConfig
    questions: int = 0
    conversations: int = 0
    turns: int = 0
    per_category: dict[int, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    embedder: str = ""
    means: _Means = field(default_factory=_Means)
    windows: dict[int, dict[str, int]] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    cv: dict[str, Any] | None = None
    holdout: dict[str, Any] | None = None
    qa: dict[str, Any] | None = None
    ranks: Counter[str] = field(default_factory=Counter)
    """Evidence turns by ``"<category or all>|<band>"`` (:data:`BANDS`, and ``"no shared
    word"`` for those missed at 10 that share no word with their question)."""

    def evidence_ranks(self) -> dict[str, dict[str, int]]:
        """``{"all" | category: {band: evidence turns}}`` (see :attr:`ranks`)."""
        groups = ["all", *(str(c) for c in sorted(self.per_category))]
        return {g: {b: self.ranks[f"{g}|{b}"] for b in (*BANDS, NO_SHARED_WORD)} for g in groups}

    def add_window(self, budget: int, composition: dict[str, int]) -> None:
        """Sum one conversation's window composition into the budget's totals."""
        total = self.windows.setdefault(budget, {})
        for name, value in composition.items():
            total[name] = total.get(name, 0) + value

    def window_means(self) -> dict[str, dict[str, float]]:
        """Per budget: the mean over conversations of each composition count, plus the mean
        slots recalled and prompt tokens per question."""
        n = max(1, self.conversations)
        out: dict[str, dict[str, float]] = {}
        for budget in self.config.budgets:
            row = {k: v / n for k, v in self.windows.get(budget, {}).items()}
            row["recalled_per_question"] = self.means.mean(f"smartctx:recalled:{budget}")
            row["prompt_tokens"] = self.means.mean(f"smartctx:prompt_tokens:{budget}")
            out[str(budget)] = row
        return out

    def value(self, system: str, measure: str, x: int, category: str = "all") -> float:
        return self.means.mean(f"{system}:{measure}:{x}", category)

    def table(self, system: str, measure: str, category: str = "all") -> dict[str, float]:
        xs = self.config.ks if measure == "recall" else self.config.budgets
        return {str(x): self.value(system, measure, x, category) for x in xs}

    def to_json(self) -> dict[str, Any]:
        cats = {str(c): CATEGORIES[c] for c in sorted(self.per_category)}
        return {
            "questions": self.questions,
            "conversations": self.conversations,
            "turns": self.turns,
            "skipped": dict(self.skipped),
            "embedder": self.embedder,
            "config": {
                "recall_ratio": self.config.recall_ratio,
                "recall_k": self.config.recall_k,
                "rrf_k": self.config.rrf_k,
                "weights": list(self.config.weights),
                "context_weight": self.config.context_weight,
                "tiers": {
                    name: getattr(self.config.tiers, name)
                    for name in (
                        "fact",
                        "session",
                        "entity",
                        "date",
                        "hop",
                        "speaker",
                        "neighbour",
                        "neighbour2",
                        "hop_feedback",
                        "diversity",
                        "hop_embed",
                    )
                },
                "lean": self.config.lean,
            },
            "smartctx": {
                "recall": self.table("smartctx", "recall"),
                "retention": self.table("smartctx", "retention"),
            },
            "smartctx_window": self.window_means(),
            "cost": dict(self.cost),
            "cv": self.cv,
            "holdout": self.holdout,
            "qa": self.qa,
            "fifo": {"retention": self.table("fifo", "retention")},
            "bm25": {"recall": self.table("bm25", "recall")},
            "evidence_ranks": self.evidence_ranks(),
            "categories": {
                c: {
                    "name": name,
                    "questions": self.per_category[int(c)],
                    "smartctx": {
                        "recall": self.table("smartctx", "recall", c),
                        "retention": self.table("smartctx", "retention", c),
                    },
                    "fifo": {"retention": self.table("fifo", "retention", c)},
                    "bm25": {"recall": self.table("bm25", "recall", c)},
                }
                for c, name in cats.items()
            },
        }


BANDS = ("top 10", "11-50", "beyond 50")
"""Where an evidence turn ranks for smartctx (50 is the deepest ``k``)."""
NO_SHARED_WORD = "missed at 10, no shared word"


def _rank_evidence(
    result: LocomoResult,
    question: Question,
    ranked: list[str],
    turns: Mapping[str, Turn],
    names: frozenset[str],
) -> None:
    """Count where ``question``'s evidence turns rank and which missed ones share no word
    (``turns`` by dialogue id; ``names``: the speakers' names, analysed, left out)."""
    place = {dia: i for i, dia in enumerate(ranked)}
    asked = set(analyze(question.text)) - names
    for dia in question.evidence:
        rank = place.get(dia)
        if rank is None:
            band = BANDS[2]
        elif rank < 10:
            band = BANDS[0]
        else:
            band = BANDS[1]
        found = [band]
        turn = turns.get(dia)
        if band != BANDS[0] and turn is not None:
            said = set(analyze(f"{turn.text} {turn.caption}")) - names
            if not asked & said:
                found.append(NO_SHARED_WORD)
        for name in found:
            result.ranks[f"all|{name}"] += 1
            result.ranks[f"{question.category}|{name}"] += 1


def _recall_at(ranked: list[str], evidence: tuple[str, ...], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for d in evidence if d in top) / len(evidence)


def _recaller(
    embedder: Embedder | None,
    cfg: LocomoConfig,
    slots: list[Slot],
    questions: list[str],
    extractor: KeyExtractor | None = None,
) -> TieredRecaller:
    """A recaller with the run's parameters, the turns and the questions embedded ahead."""
    recaller = TieredRecaller(
        embedder=embedder,
        weights=cfg.tiers,
        rrf_k=cfg.rrf_k,
        turn_weights=cfg.weights,
        context_weight=cfg.context_weight,
        extractor=extractor,
        lean=cfg.lean,
    )
    recaller.prepare(slots)
    recaller.turns.index.prepare_queries(questions)
    recaller.keys.prepare_queries(questions)
    return recaller


def run_locomo(
    data: LoCoMo,
    *,
    embedder: Embedder | None,
    counter: TokenCounter,
    config: LocomoConfig | None = None,
    progress: Progress | None = None,
    extractor: KeyExtractor | None = None,
) -> LocomoResult:
    """Run the benchmark over ``data`` (see the module doc). ``embedder=None`` makes smartctx's
    recaller lexical only. ``progress`` hears about each conversation ingested and question done."""
    cfg = config or LocomoConfig()
    tick = progress or (lambda _phase, _n: None)
    result = LocomoResult(cfg, conversations=len(data.conversations), turns=data.turns)
    result.skipped = dict(data.skipped)
    result.embedder = embedder.name if embedder is not None else "none (BM25 only)"
    depth = max(*cfg.ks, 50)  # deep enough for the rank bands (BANDS) whatever the ks
    index_s = query_s = 0.0
    keys = 0
    for conv in data.conversations:
        slots = conversation_slots(conv)
        by_dia = {t.dia_id: t for t in conv.turns}
        names = frozenset(w for who in conv.speakers for w in analyze(who))
        questions = [q.text for q in conv.questions]
        started = time.perf_counter()
        recaller = _recaller(embedder, cfg, slots, questions, extractor)
        index_s += time.perf_counter() - started
        keys += len(recaller.keys)
        bm25 = HybridIndex(embedder=None, analyzer=words)
        bm25.add([t.dia_id for t in conv.turns], [t.text for t in conv.turns])
        # Each window gets its own recaller (as in the product), so the summaries one window
        # makes never enter another's index nor the turn-only index that recall@k is measured on.
        smart = {
            b: SmartWindow(
                conv,
                b,
                counter=counter,
                recaller=_recaller(embedder, cfg, slots, questions, extractor),
                recall_ratio=cfg.recall_ratio,
                recall_k=cfg.recall_k,
            )
            for b in cfg.budgets
        }
        for b, window in smart.items():
            result.add_window(b, window.composition())
        fifo = {b: FifoWindow(conv, b, counter=counter) for b in cfg.budgets}
        tick(f"{conv.sample_id}: windows built", 0)
        for question in conv.questions:
            cat = question.category
            result.per_category[cat] = result.per_category.get(cat, 0) + 1
            result.questions += 1
            started = time.perf_counter()
            ranked = [s.source_id or "" for s, _ in recaller.rank(question.text, slots, depth)]
            query_s += time.perf_counter() - started
            _rank_evidence(result, question, ranked, by_dia, names)
            lexical = [h.id for h in bm25.search(question.text, depth)]
            for k in cfg.ks:
                result.means.add(
                    f"smartctx:recall:{k}", cat, _recall_at(ranked, question.evidence, k)
                )
                result.means.add(f"bm25:recall:{k}", cat, _recall_at(lexical, question.evidence, k))
            for b in cfg.budgets:
                prompt = smart[b].assemble(question.text)
                kept = retained(question.evidence, by_dia, prompt.text)
                result.means.add(f"smartctx:retention:{b}", cat, kept)
                result.means.add(f"smartctx:recalled:{b}", cat, float(len(prompt.recalled)))
                result.means.add(f"smartctx:prompt_tokens:{b}", cat, float(prompt.tokens))
                gone = retained(question.evidence, by_dia, fifo[b].assemble(question.text).text)
                result.means.add(f"fifo:retention:{b}", cat, gone)
            tick(f"{conv.sample_id}: questions", 1)
    result.cost = {
        "index_ms_per_turn": 1000 * index_s / max(1, data.turns),
        "query_ms_per_question": 1000 * query_s / max(1, result.questions),
        "keys_per_turn": keys / max(1, data.turns),
    }
    return result
