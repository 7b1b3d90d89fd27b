"""Summarization calls and tokens sent to the summarizer, with and without the compaction breaker.

The scenario: a scripted agent calls a ``read_file`` tool that returns an oversized output
(over the summarization trigger by itself) on every call. LangChain's plain
``SummarizationMiddleware`` then re-summarizes on every step; ``GuardedSummarizationMiddleware``
stops after the allowed rapid refills, or at once with ``predict_futile``. Scripted models only.

    PYTHONPATH=src python bench/compaction.py [--turns 40] [--output-chars 12000] [--trigger 2000]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents.middleware import SummarizationMiddleware
from tests.compaction.scripted import (
    CountingSummarizer,
    ScriptedAgentModel,
    build_agent,
    file_reader,
    run,
)

from loopfuse.adapters.langchain import GuardedSummarizationMiddleware

VARIANTS: dict[str, tuple[type[SummarizationMiddleware], dict[str, Any]]] = {
    "plain SummarizationMiddleware": (SummarizationMiddleware, {}),
    "guarded, predict_futile=False": (GuardedSummarizationMiddleware, {"predict_futile": False}),
    "guarded (defaults)": (GuardedSummarizationMiddleware, {}),
}


def measure(variant: str, opts: argparse.Namespace) -> tuple[int, int, int]:
    """(summarization calls, tokens sent to the summarizer, tool bodies run) for one run."""
    cls, extra = VARIANTS[variant]
    summarizer = CountingSummarizer()
    middleware = cls(summarizer, trigger=("tokens", opts.trigger), keep=("messages", 4), **extra)
    reader, ran = file_reader(opts.output_chars)
    run(build_agent(ScriptedAgentModel(tool_turns=opts.turns), reader, middleware))
    return summarizer.calls, summarizer.tokens_sent, len(ran)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--output-chars", type=int, default=12_000)
    parser.add_argument("--trigger", type=int, default=2_000)
    opts = parser.parse_args()
    logging.getLogger("loopfuse.compaction").setLevel(logging.ERROR)  # the trip warning is not a figure
    print(
        f"{opts.turns} tool turns, ~{opts.output_chars // 4:,}-token output each, "
        f"trigger {opts.trigger:,} tokens"
    )
    print(f"{'variant':<32} {'summaries':>9} {'tokens sent':>12} {'tools run':>9} {'tokens ratio':>12}")
    baseline = None
    for variant in VARIANTS:
        calls, tokens, ran = measure(variant, opts)
        baseline = baseline or tokens
        print(f"{variant:<32} {calls:>9} {tokens:>12,} {ran:>9} {tokens / baseline:>12.3f}")


if __name__ == "__main__":
    main()
