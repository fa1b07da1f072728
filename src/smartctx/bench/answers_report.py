"""The ``bench:answers`` section of ``docs/benchmarks.md``: a table per split and a plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from smartctx.bench.answers_data import Question, load_questions
from smartctx.bench.docs import machine_line

TARGETS = (
    "Targets (issue 9): evidence in prompt >= 95% in every mode; answer accuracy >= 80% and "
    "abstention >= 90%; the memory modes never below `fresh`; 0 junk replies; prompt tokens and "
    "latency of the memory modes at most 1.3x `fresh`."
)


LANGUAGES = {"de": "German", "es": "Spanish", "fr": "French", "hi": "Hindi", "ko": "Korean"}


def question_set(questions: Sequence[Question]) -> str:
    """What the question set holds, counted: "103 questions ... (58 in English, 13 in German,
    Spanish or Korean, 32 with no answer in the knowledge base; 66 dev, 37 test)"."""
    answerable = [q for q in questions if q.answerable]
    english = sum(q.lang == "en" for q in answerable)
    others = sorted({q.lang for q in answerable if q.lang != "en"})
    names = [LANGUAGES.get(code, code) for code in others]
    spoken = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)
    dev = sum(q.split == "dev" for q in questions)
    return (
        f"{len(questions)} questions over the shipped helpdesk knowledge base, asked as users ask "
        f"them ({english} in English, {len(answerable) - english} in {spoken}, "
        f"{len(questions) - len(answerable)} with no answer in the knowledge base; {dev} dev, "
        f"{len(questions) - dev} test; `src/smartctx/data/bench/answers.jsonl`)"
    )


def _rows(modes: dict[str, Any]) -> list[str]:
    fresh = modes.get("fresh", {})
    out = [
        "| mode | answer accuracy | abstention | evidence in prompt | prompt tokens | "
        "junk replies | median ms | tokens vs fresh | latency vs fresh |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode, r in modes.items():
        tokens = r["prompt_tokens"] / fresh["prompt_tokens"] if fresh.get("prompt_tokens") else 0
        latency = r["median_ms"] / fresh["median_ms"] if fresh.get("median_ms") else 0
        out.append(
            f"| {mode} | {100 * r['answer_accuracy']:.1f}% | {100 * r['abstain_accuracy']:.1f}% "
            f"| {100 * r['evidence_in_prompt']:.1f}% | {r['prompt_tokens']:.0f} "
            f"| {r['junk_replies']} | {r['median_ms']:.0f} | {tokens:.2f}x | {latency:.2f}x |"
        )
    return out


def markdown(result: dict[str, Any], command: str, image: str) -> str:
    """The section body: command, machine, what is measured, one table per split, the plot."""
    lines = [
        "## Answers over A2A (`smartctx bench answers`)",
        "",
        f"Command: `{command}`. {machine_line()}",
        "",
        f"{question_set(load_questions())}, through a real server over A2A. The model "
        "is a recording OpenAI-compatible server on loopback that answers with the offline "
        "`GroundedResponder`, so every figure is taken on the prompt a real model would get. "
        "Modes: `fresh` (new owner per question), `shared` (one owner, new context per "
        "question: memory on), `thread` (one long context). Thresholds are calibrated on the "
        "`dev` split only; `test` is held out.",
        "",
        TARGETS,
        "",
        "All questions:",
        "",
        *_rows(result["modes"]),
    ]
    for split in ("dev", "test"):
        if result.get("splits", {}).get(split):
            lines += ["", f"`{split}` split:", "", *_rows(result["splits"][split])]
    lines += ["", f"![answers]({image})"]
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> Path:
    """Grouped bars per mode: answer accuracy, abstention, evidence in prompt (%)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = list(result["modes"])
    metrics = (
        ("answer_accuracy", "answer accuracy"),
        ("abstain_accuracy", "abstention"),
        ("evidence_in_prompt", "evidence in prompt"),
    )
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=120)
    width = 0.8 / len(metrics)
    for i, (key, label) in enumerate(metrics):
        xs = [m + (i - 1) * width for m in range(len(modes))]
        ax.bar(xs, [100 * result["modes"][m][key] for m in modes], width=width, label=label)
    ax.axhline(80, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(list(range(len(modes))), modes)
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_title("Answers over A2A, by memory mode")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
