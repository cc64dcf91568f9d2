"""Python callables as tools: signature, type hints and docstring -> ToolDoc.

Functions, methods, ``functools.partial`` objects and C builtins all work; a builtin without
a readable signature falls back to its docstring's first line. ``from_module`` turns a whole
module's public functions into a registry (the demo indexes the standard library this way).
"""

from __future__ import annotations

import collections.abc as cabc
import enum
import functools
import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

from pydantic import ValidationError

from toolret.documents.docstrings import parse_docstring
from toolret.documents.guards import MAX_DOCSTRING_CHARS, checked_doc, safe_label
from toolret.documents.tool_doc import ToolDoc, ToolParam
from toolret.errors import InvalidToolError

__all__ = ["from_callable", "from_module"]

logger = logging.getLogger("toolret")

_UNNAMED = "<unnamed>"


# ================================================================== callables
#: A default that exists but cannot be written as JSON (never stored).
_NO_VALUE = object()


class _Arg(NamedTuple):
    name: str
    annotation: Any
    default: Any
    has_default: bool


_JSON_NAMES = {
    "int": "integer", "integer": "integer", "float": "number", "number": "number", "complex": "number",
    "str": "string", "string": "string", "bool": "boolean", "boolean": "boolean", "list": "array",
    "tuple": "array", "set": "array", "sequence": "array", "iterable": "array", "array": "array",
    "dict": "object", "mapping": "object", "object": "object", "none": "null",
}  # fmt: skip


def from_callable(fn: Callable[..., Any], *, name: str | None = None) -> ToolDoc:
    """A tool from a Python function, method or builtin: signature, type hints and docstring.

    Parameters come from the signature (``self``/``cls``/``*args``/``**kwargs`` are left out
    and recorded in ``metadata["varargs"]``/``["varkw"]``); a builtin without a readable
    signature falls back to its docstring's first line (``log(x, [base=math.e])``). Types map
    to JSON names (``int`` → ``integer``, ``Optional[str]`` → ``string|null``, unknown →
    ``any``); descriptions, response and examples come from the docstring.

    >>> def area(width: float, height: float = 1.0) -> float:
    ...     '''Area of a rectangle.
    ...
    ...     Args:
    ...         width: Width in metres.
    ...     '''
    ...     return width * height
    >>> from_callable(area).field_text("parameters")
    'width (number, required): Width in metres.\\nheight (number, optional)'
    """
    own_name = _callable_name(fn)
    label = safe_label(name.strip() if isinstance(name, str) and name.strip() else own_name.strip() or _UNNAMED)
    if not callable(fn):
        raise InvalidToolError(label, "callable", f"expected a callable, got {type(fn).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise InvalidToolError(label, "name", f"expected a non-empty string, got {name!r:.80}")
    tool_name = (name or own_name or "").strip()
    if not tool_name:
        raise InvalidToolError(_UNNAMED, "name", "the callable has no __name__; pass name=")
    raw_doc = _attr(fn, "__doc__")
    raw_doc = raw_doc if isinstance(raw_doc, str) else ""
    if len(raw_doc) > MAX_DOCSTRING_CHARS:
        logger.warning(
            "tool %r cannot be indexed as it is (its docstring is %s characters long, limit %s); indexed with "
            "its docstring cut to the first %d characters",
            label,
            f"{len(raw_doc):,}",
            f"{MAX_DOCSTRING_CHARS:,}",
            MAX_DOCSTRING_CHARS,
        )
        raw_doc = raw_doc[:MAX_DOCSTRING_CHARS]
    sig = _signature(fn, own_name or tool_name, raw_doc)
    parsed = parse_docstring(sig.doc)
    hints = _type_hints(fn)
    # "random() -> x in the interval [0, 1)." describes the tool when nothing else does,
    # else its result when the docstring has no Returns section.
    description = parsed.description or sig.arrow
    response = parsed.returns or (sig.arrow if parsed.description else "")

    params: list[ToolParam] = []
    properties: dict[str, Any] = {}
    for arg in sig.args:
        kind, enum_values = _json_type(hints.get(arg.name, arg.annotation))
        if kind == "any" and arg.name in parsed.param_types:
            kind = _named_type(parsed.param_types[arg.name])
        default = _json_value(arg.default) if arg.has_default else None
        text = parsed.params.get(arg.name, "")
        if not isinstance(arg.name, str) or not arg.name.strip():
            raise InvalidToolError(label, "parameters", f"parameter name {arg.name!r} is empty or not a string")
        try:
            params.append(
                ToolParam(
                    name=arg.name,
                    type=kind,
                    required=not arg.has_default,
                    description=text,
                    enum=enum_values,
                    default=default,
                )
            )
        except ValidationError as exc:
            problem = str(exc.errors()[0].get("msg", exc))
            raise InvalidToolError(label, f"parameters.{safe_label(arg.name)}", problem) from None
        prop: dict[str, Any] = {} if kind == "any" else {"type": kind.split("|") if "|" in kind else kind}
        if text:
            prop["description"] = text
        if enum_values:
            prop["enum"] = enum_values
        if arg.has_default and (default is not None or arg.default is None):
            prop["default"] = default
        properties[arg.name] = prop
    schema = {"type": "object", "properties": properties, "required": [p.name for p in params if p.required]}

    metadata: dict[str, Any] = {}
    module = _attr(fn, "__module__")
    if isinstance(module, str):
        metadata["module"] = module
    if sig.varargs:
        metadata["varargs"] = sig.varargs
    if sig.varkw:
        metadata["varkw"] = sig.varkw
    return checked_doc(
        ToolDoc(
            name=tool_name,
            description=description,
            parameters=params,
            response=response,
            examples=parsed.examples,
            input_schema=schema,
            metadata=metadata,
        )
    )


def _attr(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)`` that survives objects whose attribute lookup raises anything."""
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - user objects may raise anything from __getattr__
        return None


def _callable_name(fn: Any) -> str:
    target = fn.func if isinstance(fn, functools.partial) else fn
    value = _attr(target, "__name__")
    return value if isinstance(value, str) else type(fn).__name__


class _Signature(NamedTuple):
    args: list[_Arg]
    varargs: str
    varkw: str
    doc: str  # the docstring without its leading signature lines
    arrow: str  # what an old-style signature line says after "->", e.g. "floating point number"


def _signature(fn: Any, short_name: str, doc: str) -> _Signature:
    """Arguments from ``inspect.signature``, else from a docstring line like ``log(x, [base])``."""
    lines = doc.lstrip("\n").splitlines()
    sig_line = re.compile(rf"^(?:\w+\s*=\s*)?(?:[\w.]+\.)?{re.escape(short_name.rsplit('.', 1)[-1])}\s*\((.*)$")
    text_args: str | None = None
    arrow = ""
    while lines and (match := sig_line.match(lines[0].strip())):
        if text_args is None:
            text_args = match.group(1)
            tail = re.match(r"[^)]*\)\s*->\s*(.+)", text_args)
            arrow = tail.group(1).strip() if tail else ""
            if " " not in arrow and arrow.strip(".").lower() not in _JSON_NAMES:
                arrow = ""  # "-> value", "-> x": a placeholder, not a description
        line = lines.pop(0)
        open_parens = line.count("(") - line.count(")")
        while open_parens > 0 and lines:  # a signature wrapped over lines, as in csv.reader
            open_parens += lines[0].count("(") - lines.pop(0).count(")")
    doc = "\n".join(lines)
    try:
        signature = inspect.signature(fn)
    except Exception:  # noqa: BLE001 - builtins without one (ValueError), user objects (anything)
        return _Signature(*_parse_text_signature(text_args or ""), doc, arrow)
    args: list[_Arg] = []
    varargs = varkw = ""
    for param in signature.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            varargs = param.name
        elif param.kind is param.VAR_KEYWORD:
            varkw = param.name
        elif param.name not in ("self", "cls"):
            has_default = param.default is not param.empty
            args.append(_Arg(param.name, param.annotation, param.default if has_default else None, has_default))
    return _Signature(args, varargs, varkw, doc, arrow)


def _parse_text_signature(text: str) -> tuple[list[_Arg], str, str]:
    """Arguments of a docstring signature such as ``x, [base=math.e]`` or ``a, b[, c]``."""
    inside = text.split(")", 1)[0]
    args: list[_Arg] = []
    varargs = varkw = ""
    depth = 0
    for token in re.split(r"(,|\[|\])", inside):
        if token in ("[", "]"):
            depth += 1 if token == "[" else -1
            continue
        token = token.strip()
        if not token or token in (",", "/", "*", "..."):
            continue
        raw_name, has_eq, default_text = (part.strip() for part in token.partition("="))
        if raw_name.startswith("**"):
            varkw = raw_name[2:]
        elif raw_name.startswith("*"):
            varargs = raw_name[1:]
        elif raw_name.isidentifier() and raw_name not in ("self", "cls") and raw_name not in {a.name for a in args}:
            default = _literal(default_text) if has_eq else _NO_VALUE
            args.append(_Arg(raw_name, inspect.Parameter.empty, default, bool(has_eq) or depth > 0))
    return args, varargs, varkw


def _literal(text: str) -> Any:
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_VALUE  # e.g. ``base=math.e``: a default exists but is not a literal


def _type_hints(fn: Any) -> dict[str, Any]:
    target = fn.__init__ if isinstance(fn, type) else fn  # type: ignore[misc]  # a class: its constructor's hints
    try:
        return typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - unresolvable forward references, odd objects
        return {}


def _json_type(annotation: Any) -> tuple[str, list[Any] | None]:
    """JSON-schema type name (and enum values for Literal/Enum) of a Python annotation."""
    try:
        return _json_type_inner(annotation)
    except Exception:  # noqa: BLE001 - exotic annotation objects
        return "any", None


def _json_type_inner(annotation: Any) -> tuple[str, list[Any] | None]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return "any", None
    if isinstance(annotation, str):
        return _named_type(annotation), None
    if annotation is None or annotation is type(None):
        return "null", None
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _json_type_inner(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        values = [v for v in typing.get_args(annotation) if _json_value(v) == v]
        kinds = dict.fromkeys(_json_type_inner(type(v))[0] for v in values)
        return "|".join(kinds) or "any", values or None
    if origin is typing.Union or origin is types.UnionType:
        kinds = dict.fromkeys(part for a in typing.get_args(annotation) for part in _json_type_inner(a)[0].split("|"))
        return ("any" if "any" in kinds else "|".join(kinds)), None
    if origin is not None:
        annotation = origin
    if not isinstance(annotation, type):
        return "any", None
    if issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation if _json_value(m.value) == m.value]
        kinds = dict.fromkeys(_json_type_inner(type(v))[0] for v in values)
        return (kinds.popitem()[0] if len(kinds) == 1 else "any"), values or None
    for py_type, json_name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if issubclass(annotation, py_type):
            return json_name, None
    if issubclass(annotation, cabc.Mapping):
        return "object", None
    if issubclass(annotation, (list, tuple, set, frozenset)) or annotation in (
        cabc.Sequence,
        cabc.MutableSequence,
        cabc.Set,
        cabc.MutableSet,
        cabc.Collection,
        cabc.Iterable,
    ):
        return "array", None
    return "any", None


def _named_type(text: str) -> str:
    """JSON type of a type written as text: ``"int, optional"``, ``"list of str"``, ``"str | None"``."""
    kinds: list[str] = []
    for part in re.split(r"\||\bor\b", text.replace("Optional[", "None|")):
        word = re.split(r"[\[\s,(]", part.strip().strip("]").lower(), maxsplit=1)[0]
        kinds.append(_JSON_NAMES.get(word.rsplit(".", 1)[-1], "any") if word != "optional" else "any")
    unique = list(dict.fromkeys(kinds))
    return "any" if not unique or "any" in unique else "|".join(unique)


def _json_value(value: Any) -> Any:
    """``value`` as plain JSON (tuples become lists), or ``None`` when it is not JSON.

    Not JSON: Python objects, NaN and infinities, cycles, text that is not valid Unicode.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")  # a lone surrogate cannot be stored
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None


# ================================================================== modules
def from_module(module: ModuleType, *, include_private: bool = False, prefix: bool | str = True) -> list[ToolDoc]:
    """The public functions of a module as tools, in name order.

    Takes the module's ``__all__`` when it has one, else the functions whose ``__module__``
    is this module or its C implementation (``_heapq`` for ``heapq``); classes are skipped.
    Names are ``f"{module.__name__}.{fn}"`` with ``prefix=True``, ``f"{prefix}.{fn}"`` when
    ``prefix`` is a string (``os.path`` is ``posixpath`` on Linux), bare with ``False``.

    >>> import math
    >>> "math.factorial" in {doc.name for doc in from_module(math)}
    True
    """
    if not isinstance(module, ModuleType):
        raise InvalidToolError(repr(module)[:80], "module", f"expected a module, got {type(module).__name__}")
    base = prefix if isinstance(prefix, str) else (module.__name__ if prefix else "")
    exported = getattr(module, "__all__", None)
    trusted = {n for n in exported if isinstance(n, str)} if isinstance(exported, (list, tuple)) else set()
    candidates = set(trusted) if trusted else set(vars(module))
    if include_private:
        candidates |= {n for n in vars(module) if n.startswith("_")}
    docs: list[ToolDoc] = []
    for attr in sorted(candidates):
        if attr.startswith("__") or (attr.startswith("_") and not include_private):
            continue
        try:
            obj = getattr(module, attr)
        except Exception:  # noqa: BLE001, S112 - a module __getattr__ may raise anything
            continue
        if isinstance(obj, type) or not inspect.isroutine(obj):
            continue
        if attr not in trusted and not _defined_in(obj, module):
            continue
        tool_name = f"{base}.{attr}" if base else attr
        try:
            docs.append(from_callable(obj, name=tool_name))
        except InvalidToolError as exc:
            logger.debug("skipping %s: %s", tool_name, exc)
    return docs


def _defined_in(obj: Any, module: ModuleType) -> bool:
    owner = getattr(obj, "__module__", None)
    if not isinstance(owner, str):
        return False
    return owner == module.__name__ or owner.lstrip("_") == module.__name__.rsplit(".", 1)[-1]
