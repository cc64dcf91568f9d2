"""LangChain ``LLMToolSelectorMiddleware``'s LLM options, as the engine's :class:`~toolret.llm.steps.LLMSteps`.

A deployment migrating from LangChain's selector passes ``system_prompt``, ``max_retries`` and
``on_parsing_failure``; in toolret they govern the search's LLM steps
(``RetrievalConfig.llm_steps``): the system prompt joins the rerank's, the retries are every
step's, and a parsing-failure policy makes a malformed answer raise out of the search so the
adapter can apply the policy. Given without an LLM, they have no effect, and a warning says so.

Example:
    >>> cfg = with_selector_options(None, None, object(), system_prompt="Prefer read-only tools.", max_retries=2)
    >>> cfg.llm_steps.selection_instructions, cfg.llm_steps.retries, cfg.name
    ('Prefer read-only tools.', 2, 'full')
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from toolret.config import RetrievalConfig
from toolret.errors import ConfigError

__all__ = ["check_parsing_failure", "with_selector_options"]


def check_parsing_failure(policy: Any) -> None:
    """``on_parsing_failure`` is ``"error"``, ``"none"``, ``"all"``, a list of tool names or a function."""
    if policy is None or callable(policy) or policy in ("error", "none", "all"):
        return
    if isinstance(policy, str) or not isinstance(policy, Sequence) or not all(isinstance(n, str) for n in policy):
        raise ConfigError(
            f"on_parsing_failure must be 'error', 'none', 'all', a list of tool names or a function, not {policy!r}"
        )


def with_selector_options(
    config: RetrievalConfig | str | None,
    default: RetrievalConfig | None,
    llm: Any,
    *,
    system_prompt: str | None = None,
    max_retries: int | None = None,
    on_parsing_failure: Any = None,
    owner: str = "ToolSelectionMiddleware",
) -> RetrievalConfig | str | None:
    """``config`` (resolved over ``default``, ``"full"`` with an ``llm``) with the options in its
    ``llm_steps``; ``config`` as it is when none is given."""
    check_parsing_failure(on_parsing_failure)
    given = {"system_prompt": system_prompt, "max_retries": max_retries, "on_parsing_failure": on_parsing_failure}
    if all(v is None for v in given.values()):
        return config
    if isinstance(max_retries, bool) or (
        max_retries is not None and (not isinstance(max_retries, int) or max_retries < 0)
    ):
        raise ConfigError(f"max_retries must be an integer >= 0, not {max_retries!r}")
    if llm is None:
        warnings.warn(
            f"{owner}: {', '.join(n + '=' for n, v in given.items() if v is not None)} only govern an LLM "
            "selection step; without model= (or llm=) selection is retrieval only and they have no effect",
            UserWarning,
            stacklevel=3,
        )
    steps: dict[str, Any] = {}
    if system_prompt is not None:
        steps["selection_instructions"] = system_prompt
    if max_retries is not None:
        steps["retries"] = max_retries
    if on_parsing_failure is not None:
        steps["on_malformed"] = "raise"
    return RetrievalConfig.resolve(RetrievalConfig.for_llm(config, llm), default=default).with_(llm_steps=steps)
