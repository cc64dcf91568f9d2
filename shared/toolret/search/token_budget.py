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
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from toolret.documents.guards import safe_label
from toolret.documents.tokens import TokenCounter, token_counter
from toolret.errors import QueryError
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, SearchResult, TraceStep

__all__ = [
    "Definition",
    "DefinitionCache",
    "definition_text",
    "fit_definitions",
    "problem_text",
    "stored_definition",
    "validate_budget",
]

logger = logging.getLogger("toolret")

#: A chosen tool -> its definition as the model is sent it (a JSON-able dict, or text); raising
#: means the tool cannot be bound.
Definition = Callable[[ScoredTool], Any]
#: Tool objects whose conversion a :class:`DefinitionCache` remembers; past it the cache starts over.
_CACHE_LIMIT = 10_000


class DefinitionCache:
    """A framework's tool objects converted to what the model is sent, once each (a failure too).

    A tool whose schema does not convert raises inside the framework's ``bind_tools``, and the
    agent's turn ends for every other tool too. Adapters convert each tool object through this
    cache (thread-safe, keyed by identity) for two uses: :func:`fit_definitions` reads the selected
    tools' definitions as they will be bound, and :meth:`bindable` drops, with a warning naming
    it, any other tool that cannot be bound (an ``always_include`` tool, a fallback set) from the
    final list. ``is_tool`` tells the framework's tools from entries that pass as they are
    (provider-side dict tools); ``name`` reads a tool's name for the warning.

    >>> def convert(tool: str) -> dict:
    ...     if tool == "broken":
    ...         raise KeyError("Reference '#/$defs/Thing' not found.")
    ...     return {"name": tool}
    >>> DefinitionCache(convert, is_tool=lambda t: isinstance(t, str), name=str).bindable(["ok", "broken"], "demo")
    ['ok']
    """

    def __init__(
        self, convert: Callable[[Any], Any], *, is_tool: Callable[[Any], bool], name: Callable[[Any], str]
    ) -> None:
        self._convert = convert
        self._is_tool = is_tool
        self._name = name
        self._cache: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def __call__(self, tool: Any) -> Any:
        """The definition the framework would send for ``tool``; raises what the conversion raises."""
        entry = self._cache.get(id(tool))
        if entry is None or entry[0] is not tool:
            try:
                out: Any = self._convert(tool)
            except Exception as exc:  # noqa: BLE001 - remembered, and raised to the caller below
                out = _Failed(exc)
            entry = (tool, out)
            with self._lock:
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[id(tool)] = entry
        if isinstance(entry[1], _Failed):
            raise entry[1].error
        return entry[1]

    def safe(self, tool: Any) -> Any:
        """:meth:`__call__`, or None when ``tool`` cannot be bound."""
        try:
            return self(tool)
        except Exception:  # noqa: BLE001 - None is the answer for a tool that cannot be bound
            return None

    def bindable(self, tools: Sequence[Any], owner: str) -> list[Any]:
        """``tools`` without the framework tools that cannot be bound, each named in a warning."""
        kept: list[Any] = []
        for tool in tools:
            if self._is_tool(tool):
                try:
                    self(tool)
                except Exception as exc:  # noqa: BLE001 - this tool is left out, the others are bound
                    logger.warning(
                        "%s: tool %r cannot be bound (%s); left out of this model call",
                        owner,
                        safe_label(self._name(tool)),
                        problem_text(exc),
                    )
                    continue
            kept.append(tool)
        return kept


class _Failed:
    """A remembered conversion failure (an exception object as a cached value is not a definition)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


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
    keep_best: bool = False,
) -> SearchResult:
    """``result`` without the tools that cannot be bound and, with ``token_budget``, cut to fit it.

    The ``definitions`` trace step says which tools were left out and why, and with a budget
    the tokens used (also :attr:`SearchResult.tokens`). Without a budget and with every tool
    bound, the result comes back as it is. A budget that fits none of the chosen tools is never
    silent: a warning names the budget and the smallest definition; with ``keep_best`` (an agent
    whose model would otherwise be called with no tool at all) the best bindable tool is kept,
    over the budget, and the warning names it.
    """
    start = time.perf_counter()
    budget = validate_budget(token_budget)
    count = (counter or token_counter()) if budget is not None else None
    used = sum(count.count(definition_text(d)) for d in always) if count is not None else 0
    kept: list[ScoredTool] = []
    unbound: list[str] = []
    over: list[tuple[ScoredTool, int]] = []
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
                over.append((tool, tokens))
                continue
            used += tokens
        kept.append(tool)
    if count is None and not unbound:
        return result
    if over and not kept:
        used += _none_fit(budget, over, keep_best, kept)
    notes = []
    if count is not None:
        fixed = f" ({len(always)} always sent)" if always else ""
        notes.append(f"{used} of {budget} tokens{fixed}, {count.name}")
        if left := [f"{t.name} ({n})" for t, n in over if t not in kept]:
            notes.append(f"left out {len(left)} over the budget: {', '.join(left)}")
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


def _none_fit(budget: int | None, over: list[tuple[ScoredTool, int]], keep_best: bool, kept: list[ScoredTool]) -> int:
    """Warn that ``budget`` fits none of the tools in ``over`` (naming the smallest definition); with
    ``keep_best``, keep the best of them in ``kept``. Returns the tokens that adds."""
    smallest = min(n for _, n in over)
    what = (
        f"the best one, {safe_label(over[0][0].name)!r} ({over[0][1]} tokens), is bound over the budget"
        if keep_best
        else "no tool is returned"
    )
    logger.warning(
        "token_budget=%s fits none of the %d selected tools (the smallest definition takes %d tokens); %s",
        budget,
        len(over),
        smallest,
        what,
    )
    if not keep_best:
        return 0
    kept.append(over[0][0])
    return over[0][1]


def _tools(n: int) -> str:
    return f"{n} tool" if n == 1 else f"{n} tools"
