"""A cost model of the provider's prompt cache: what each model call of a conversation re-processes.

Providers cache the prompt's prefix: OpenAI automatically, Anthropic at ``cache_control``
breakpoints. A prompt is read here as blocks in the order the providers render them: the tool
definitions first (one block each), then the system prompt, then each message. A call re-processes
every token after the longest run of leading blocks it shares with the previous call's prompt, which
the provider cached whole; the shared tokens are read from the cache (billed at a fraction of the
input price: 0.1 on Anthropic, 0.1-0.5 on OpenAI depending on the model). So one changed tool early
in the list re-processes the whole conversation after it.

What the model leaves out, on purpose: the providers' minimum cacheable prompt (1,024 tokens) and
OpenAI's 128-token granularity, the cache's lifetime (minutes), and output tokens. docs/prompt-cache.md
applies it to a scripted ten-turn conversation (``experiments/prompt_cache.py``).

Example:
    >>> count = lambda text: len(text.split())
    >>> first = prompt_blocks([{"name": "a"}], ["be brief", "hi there"])
    >>> second = prompt_blocks([{"name": "a"}, {"name": "b"}], ["be brief", "hi there", "ok", "more please"])
    >>> [(c.definition_tokens, c.reprocessed) for c in call_costs([first, second, second], count, tools=[1, 2, 2])]
    [(1, 5), (2, 8), (2, 0)]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CallCost", "call_costs", "prompt_blocks", "shared_prefix"]


@dataclass(frozen=True)
class CallCost:
    """One model call: the tokens of its tool definitions, of its whole prompt, and those it re-processes
    (after the prefix shared with the previous call), with whether the previous tool list was its prefix."""

    definition_tokens: int
    prompt_tokens: int
    reprocessed: int
    tools_prefix_kept: bool

    @property
    def cached(self) -> int:
        """Tokens read from the cache."""
        return self.prompt_tokens - self.reprocessed

    def billed(self, cached_price: float = 0.1) -> float:
        """Input tokens as billed, a cached token counting ``cached_price`` of one re-processed."""
        return self.reprocessed + cached_price * self.cached


def prompt_blocks(tools: Sequence[Any], messages: Sequence[str]) -> list[str]:
    """A prompt as the cache sees it: each tool definition (compact JSON), then each message (the system
    prompt first)."""
    defined = [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tools]
    return [*defined, *messages]


def shared_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading blocks ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def call_costs(
    prompts: Sequence[Sequence[str]], count: Callable[[str], int], *, tools: Sequence[int]
) -> list[CallCost]:
    """Each call's :class:`CallCost`, the calls in order; ``tools[i]``: how many of ``prompts[i]``'s leading
    blocks are tool definitions. The first call re-processes everything."""
    out: list[CallCost] = []
    previous: Sequence[str] = ()
    previous_tools = 0
    for prompt, n_tools in zip(prompts, tools, strict=True):
        sizes = [count(block) for block in prompt]
        shared = shared_prefix(previous, prompt)
        kept = bool(previous) and n_tools >= previous_tools and prompt[:previous_tools] == previous[:previous_tools]
        out.append(
            CallCost(
                definition_tokens=sum(sizes[:n_tools]),
                prompt_tokens=sum(sizes),
                reprocessed=sum(sizes[shared:]),
                tools_prefix_kept=kept,
            )
        )
        previous, previous_tools = prompt, n_tools
    return out
