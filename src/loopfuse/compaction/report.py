"""The culprit report of a refused compaction: what keeps the context over its trigger.

Host-neutral: an adapter measures the messages a compaction would keep and hands them
over as ``KeptMessage`` values. The report names the largest ones (for a tool output, the
tool and its path or command argument, which names the culprit for the user; no other
argument value ever appears) and says when the fixed part of the prompt alone is near the
trigger, which no chunked reading can fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .._shown import logged, shown_tool

__all__ = ["CompactionReport", "KeptMessage", "build_report"]

TOP_CULPRITS = 3
FIXED_NEAR_SHARE = 0.8
_MAX_ARGUMENT_CHARS = 120


@dataclass(frozen=True, slots=True)
class KeptMessage:
    """One message of the tail a compaction would keep, with its approximate size.

    ``role`` is ``"tool"``, ``"assistant"``, ``"user"``, ``"summary"`` or ``"system"``;
    ``argument`` is the call's path or command argument as ``key=value``, or ``None``.
    """

    role: str
    tokens: int
    tool: str | None = None
    argument: str | None = None

    def label(self) -> str:
        """How the report names the message: its tool and argument escaped, so that neither can
        forge a log line or colour a terminal (a model writes both)."""
        if self.tool is None:
            return f"{_clip(self.role)} message"
        if self.argument is None:
            return f"{logged(shown_tool(self.tool))} output"
        return f"{logged(shown_tool(self.tool))} output ({_clip(self.argument)})"


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """Why a compaction was refused and what the kept tail is made of."""

    reason: str
    culprits: tuple[KeptMessage, ...]
    kept_tokens: int
    trigger_tokens: int | None
    fixed_prompt_tokens: int | None

    @property
    def fixed_prompt_near_trigger(self) -> bool:
        """True when the system prompt and tool definitions alone are near the trigger."""
        share = self.share(self.fixed_prompt_tokens)
        return share is not None and share >= FIXED_NEAR_SHARE

    def share(self, tokens: int | None) -> float | None:
        """``tokens`` as a fraction of the trigger, when the trigger is counted in tokens."""
        if tokens is None or not self.trigger_tokens:
            return None
        return tokens / self.trigger_tokens

    def describe(self) -> str:
        """One paragraph for a log line, a status page or the model's notice."""
        parts = [f"Automatic compaction stopped: {self.reason}."]
        if self.culprits:
            listed = "; ".join(self._sized(m.label(), m.tokens) for m in self.culprits)
            parts.append(f"Largest messages kept after a compaction: {listed}.")
        parts.append(f"The kept tail alone is {self._sized('', self.kept_tokens).strip()}.")
        if self.fixed_prompt_near_trigger:
            fixed = self._sized("", self.fixed_prompt_tokens or 0).strip()
            parts.append(
                f"The fixed part of the prompt (system prompt and tool definitions) alone is {fixed}: "
                "reading in smaller chunks cannot fix this; shorten it or raise the trigger."
            )
        return " ".join(parts)

    def _sized(self, label: str, tokens: int) -> str:
        share = self.share(tokens)
        size = f"~{tokens:,} tokens"
        if share is not None:
            size += f", {share:.0%} of the {self.trigger_tokens:,}-token trigger"
        return f"{label} {size}" if label else size


def build_report(
    reason: str,
    kept: Iterable[KeptMessage],
    trigger_tokens: int | None,
    fixed_prompt_tokens: int | None = None,
) -> CompactionReport:
    """The report for a refusal: the ``TOP_CULPRITS`` largest kept messages, largest first."""
    kept = list(kept)
    largest = sorted(kept, key=lambda m: m.tokens, reverse=True)[:TOP_CULPRITS]
    total = sum(m.tokens for m in kept)
    return CompactionReport(reason, tuple(largest), total, trigger_tokens, fixed_prompt_tokens)


def _clip(text: object) -> str:
    shown = logged(text if type(text) is str else _as_text(text))
    return shown if len(shown) <= _MAX_ARGUMENT_CHARS else shown[: _MAX_ARGUMENT_CHARS - 3] + "..."


def _as_text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # the caller's object: its type names it
        return f"<{type(value).__name__}>"
