"""What the model is sent of a selection: each chosen tool's definition, as the adapter binds it.

Two rules on the chosen tools (best first, after ``k`` or ``k="auto"`` chose them), one trace
step (``definitions``) for both:

* a tool whose definition cannot be produced (a LangChain ``args_schema`` with a dangling
  ``$ref``, a LlamaIndex ``fn_schema`` pydantic cannot render) is left out, with a warning
  naming it: binding it would raise and end the agent's turn for every other tool;
* with ``token_budget``, the definitions fit it. Tools are taken best first; one whose
  definition would overflow what is left is left out, and the next is tried. Tokens are
  counted on the definition as sent (JSON, or the text given) by
  :func:`toolret.documents.tokens.token_counter`, which the trace names.

``definition`` is how the caller binds a tool: the engine's default is the stored document's
OpenAI definition (:meth:`toolret.ToolDoc.definition`); an adapter passes the one it will bind
(condensed or not). ``always`` are definitions sent with every selection (``always_include``
tools): counted first, never left out here.

Example:
    >>> from toolret import ScoredTool, SearchResult
    >>> tools = [ScoredTool(id=n, name=n, score=1.0) for n in ("get_weather", "broken", "send_email")]
    >>> def definition(tool):
    ...     if tool.name == "broken":
    ...         raise KeyError("Reference '#/$defs/Thing' not found.")
    ...     return {"type": "function", "function": {"name": tool.name, "parameters": {}}}
    >>> fitted = fit_definitions(SearchResult(query="q", tools=tools), definition)
    >>> fitted.ids, fitted.trace[-1].note
    (['get_weather', 'send_email'], "left out 1 tool that cannot be bound: broken (KeyError: Reference '#/$defs/Thing' not found.)")
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from toolret.documents.guards import safe_label
from toolret.documents.tokens import TokenCounter, token_counter
from toolret.errors import QueryError
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, SearchResult, TraceStep

__all__ = ["Definition", "definition_text", "fit_definitions", "problem_text", "stored_definition", "validate_budget"]

logger = logging.getLogger("toolret")

#: A chosen tool -> its definition as the model is sent it (a JSON-able dict, or text); raising
#: means the tool cannot be bound.
Definition = Callable[[ScoredTool], Any]


def validate_budget(token_budget: object) -> int | None:
    """``token_budget`` if it is None or a positive integer, else :class:`~toolret.QueryError`."""
    if token_budget is None:
        return None
    if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
        raise QueryError(f"token_budget must be a positive integer (tokens of tool definitions), not {token_budget!r}")
    return token_budget


def stored_definition(snap: Snapshot) -> Definition:
    """The engine's own way to bind a tool: its stored document's OpenAI definition."""
    return lambda tool: snap.docs[snap.index_of[tool.id]].definition()


def definition_text(definition: Any) -> str:
    """The text a definition takes on the wire: text as it is, anything else as compact JSON."""
    if isinstance(definition, str):
        return definition
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


def problem_text(exc: BaseException) -> str:
    """Why a tool cannot be bound, in one short line: the exception's type and first line."""
    lines = str(exc).strip().strip('"').splitlines()
    return safe_label(f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": "), limit=160)


def fit_definitions(
    result: SearchResult,
    definition: Definition,
    token_budget: int | None = None,
    *,
    always: Sequence[Any] = (),
    counter: TokenCounter | None = None,
) -> SearchResult:
    """``result`` without the tools that cannot be bound and, with ``token_budget``, cut to fit it.

    The ``definitions`` trace step says which tools were left out and why, and with a budget
    the tokens used (also :attr:`SearchResult.tokens`). Without a budget and with every tool
    bound, the result comes back as it is.
    """
    start = time.perf_counter()
    budget = validate_budget(token_budget)
    count = (counter or token_counter()) if budget is not None else None
    used = sum(count.count(definition_text(d)) for d in always) if count is not None else 0
    kept: list[ScoredTool] = []
    unbound: list[str] = []
    over: list[str] = []
    for tool in result.tools:
        try:
            text = definition_text(definition(tool))
        except Exception as exc:  # noqa: BLE001 - one tool that cannot be bound is left out, not the turn
            logger.warning(
                "tool %r cannot be bound (%s); left out of this selection", safe_label(tool.name), problem_text(exc)
            )
            unbound.append(f"{tool.name} ({problem_text(exc)})")
            continue
        if count is not None and budget is not None:
            tokens = count.count(text)
            if used + tokens > budget:
                over.append(f"{tool.name} ({tokens})")
                continue
            used += tokens
        kept.append(tool)
    if count is None and not unbound:
        return result
    notes = []
    if count is not None:
        fixed = f" ({len(always)} always sent)" if always else ""
        notes.append(f"{used} of {budget} tokens{fixed}, {count.name}")
        if over:
            notes.append(f"left out {len(over)} over the budget: {', '.join(over)}")
    if unbound:
        notes.append(f"left out {_tools(len(unbound))} that cannot be bound: {', '.join(unbound)}")
    step = TraceStep(
        stage="definitions", path="offline", ms=(time.perf_counter() - start) * 1000, note="; ".join(notes)
    )
    return result.model_copy(
        update={
            "tools": kept,
            "trace": [*result.trace, step],
            "tokens": used if count is not None else result.tokens,
        }
    )


def _tools(n: int) -> str:
    return f"{n} tool" if n == 1 else f"{n} tools"
