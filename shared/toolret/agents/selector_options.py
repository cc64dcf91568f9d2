"""LangChain ``LLMToolSelectorMiddleware``'s LLM options, as the engine's :class:`~toolret.llm.steps.LLMSteps`.

A deployment migrating from LangChain's selector passes ``system_prompt``, ``max_retries`` and
``on_parsing_failure``; in toolret they govern the search's LLM steps
(``RetrievalConfig.llm_steps``): the system prompt joins the rerank's, the retries are every
step's, and a parsing-failure policy makes a malformed answer raise out of the search so the
adapter can apply the policy (:func:`parsing_fallback`). Given without an LLM, they have no effect,
and a warning says so. ``max_tools`` is ``k`` under LangChain's name (:func:`selector_k`).

Example:
    >>> cfg = with_selector_options(None, None, object(), system_prompt="Prefer read-only tools.", max_retries=2)
    >>> cfg.llm_steps.selection_instructions, cfg.llm_steps.retries, cfg.name
    ('Prefer read-only tools.', 2, 'full')
    >>> selector_k(None, None), selector_k(3, UNSET), selector_k(None, UNSET)
    ('auto', 3, 5)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from toolret.agents.fixed_tools import Fallback
from toolret.config import K, RetrievalConfig, validate_k
from toolret.errors import ConfigError, QueryError
from toolret.llm.protocol import MalformedOutputError

__all__ = [
    "UNSET",
    "check_one_model",
    "check_parsing_failure",
    "parsing_fallback",
    "selector_k",
    "with_selector_options",
]

#: ``max_tools`` not passed (``None`` passed means LangChain's "no fixed cap": ``k="auto"``).
UNSET: Any = object()


def selector_k(k: K | None, max_tools: int | None = UNSET, default: K = 5) -> K:
    """The selection's ``k`` from ``k=`` or LangChain's ``max_tools=`` (the same setting; ``None`` for
    ``max_tools`` is LangChain's "no fixed cap", ``"auto"``); both given and different is a :class:`QueryError`."""
    limit = None if max_tools is UNSET else ("auto" if max_tools is None else max_tools)
    if k is not None and limit is not None and k != limit:
        raise QueryError(f"pass k= or max_tools= (the same setting), not both ({k!r} and max_tools={max_tools!r})")
    return validate_k(next((v for v in (k, limit) if v is not None), default))


def check_one_model(model: Any, llm: Any) -> None:
    """``model=`` (LangChain's name) and ``llm=`` are the same setting, the LLM of the selection: one of them."""
    if model is not None and llm is not None:
        raise ConfigError("pass model= or llm= (the same setting: the LLM of the selection), not both")


def parsing_fallback(policy: Any, exc: BaseException, always_include: Sequence[str]) -> Fallback | None:
    """What a selection whose LLM answer stayed malformed offers under ``on_parsing_failure``:
    ``"error"`` raises ``exc``, ``"none"`` offers ``always_include`` only, ``"all"`` every tool, names
    (or a function of the raw answer returning them) those names besides ``always_include``. None:
    ``exc`` is no parsing failure, or no policy is set (the selector's own fallback applies)."""
    if policy is None or not isinstance(exc, MalformedOutputError):
        return None
    if policy == "error":
        raise exc
    if policy in ("none", "all"):
        return "always_include" if policy == "none" else "all"
    names = policy(exc.raw) if callable(policy) else policy
    return [*always_include, *names]


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
