"""Docstring parsing: the prose, argument descriptions, return text and examples of a callable.

Python callables document themselves in Google, NumPy or reST docstrings. Retrieval needs the
parts separately (a tool's ``description`` field must not repeat its ``Args:`` block, and the
``parameters`` field needs each argument's own sentence), so :func:`parse_docstring` splits a
docstring with the ``docstring_parser`` package and normalises the result. It never raises: a
docstring that cannot be parsed comes back whole as the description.

Example:
    >>> doc = parse_docstring('''Get the weather. Uses a live feed.
    ...
    ... Args:
    ...     location (str): City name.
    ...
    ... Returns:
    ...     The temperature in degrees.
    ... ''')
    >>> doc.summary, doc.params, doc.returns
    ('Get the weather.', {'location': 'City name.'}, 'The temperature in degrees.')
"""

from __future__ import annotations

import inspect
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from toolret.documents.tool_doc import ToolDoc

__all__ = [
    "MAX_DOCSTRING_CHARS",
    "ParsedDocstring",
    "doctest_snippets",
    "docstring_summary",
    "parse_docstring",
    "with_docstrings",
]

logger = logging.getLogger("toolret")

#: Longer docstrings are cut before parsing: documentation, not a data dump (and the parser's
#: cost grows with the text).
MAX_DOCSTRING_CHARS = 50_000

#: Meta sections whose text is prose about the tool, so it stays in the description.
_PROSE_SECTIONS = frozenset({"notes", "note", "warnings", "warning"})
#: Meta keywords that document arguments (``attribute`` documents a class, not a call).
_PARAM_KEYWORDS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
#: Argument Clinic blocks in C builtins' docstrings: "  name" then "    description" lines.
_CLINIC_BLOCK = re.compile(r"^  ([A-Za-z_]\w*)[ \t]*\n((?:    [ \t]*\S.*(?:\n|$))+)", re.MULTILINE)
_EPYDOC_FIELD = re.compile(r"^@(?:param|type|keyword|return|rtype|raise|ivar|cvar|var|yield|ytype)\b", re.MULTILINE)
_MAX_EPYDOC_META = 4_000
_SENTENCE_END = re.compile(r"(.+?[.!?])(?=\s+[A-Z0-9(\"'`]|\s*$)", re.DOTALL)


@dataclass(frozen=True)
class ParsedDocstring:
    """The parts of a docstring that become tool fields; every part may be empty.

    ``param_types`` holds the type a docstring states for an argument (``x : int`` in NumPy
    style, ``:type x: int`` in reST), which ingestion uses when the signature has no hint.
    """

    summary: str = ""
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str = ""
    examples: list[str] = field(default_factory=list)
    param_types: dict[str, str] = field(default_factory=dict)


def docstring_summary(text: str) -> str:
    """The first sentence of a docstring's first paragraph, whitespace collapsed.

    Unlike :func:`toolret.documents.text.first_sentence` it reads only the first paragraph and
    never cuts words, as a docstring's summary line should be kept whole.

    >>> docstring_summary("Find n!. Raise ValueError if negative.\\n\\nMore.")
    'Find n!.'
    """
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    paragraph = " ".join(paragraph.split())
    match = _SENTENCE_END.match(paragraph)
    return match.group(1) if match else paragraph


def doctest_snippets(text: str) -> list[str]:
    """The code of each ``>>>`` statement in ``text`` (continuation lines joined, output dropped).

    >>> doctest_snippets(">>> add(1, 2)\\n3\\n>>> add(\\n...     3, 4)")
    ['add(1, 2)', 'add(\\n    3, 4)']
    """
    snippets: list[str] = []
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(">>>"):
            if current:
                snippets.append("\n".join(current))
            current = [_strip_prompt(line)]
        elif line.startswith("...") and current is not None:
            current.append(_strip_prompt(raw.lstrip()))
        elif current is not None:
            snippets.append("\n".join(current))
            current = None
    if current:
        snippets.append("\n".join(current))
    return [s.strip() for s in snippets if s.strip()]


def parse_docstring(text: str | None) -> ParsedDocstring:
    """Split a Google, NumPy or reST docstring into summary, prose, params, returns and examples.

    Doctest blocks in the prose are moved to ``examples`` (they are code, not description).
    Any failure of the parser falls back to the whole cleaned text as the description. Text past
    :data:`MAX_DOCSTRING_CHARS` characters is ignored.
    """
    if not isinstance(text, str) or not text.strip():
        return ParsedDocstring()
    text, clinic = _clinic_params(text[:MAX_DOCSTRING_CHARS])
    cleaned = inspect.cleandoc(text)
    try:
        return _parse(cleaned, clinic)
    except Exception as exc:  # noqa: BLE001 - third-party parser on arbitrary text
        logger.debug("docstring parser failed (%s); keeping the raw text", exc)
        return ParsedDocstring(summary=docstring_summary(cleaned), description=cleaned, params=clinic)


def _clinic_params(text: str) -> tuple[str, dict[str, str]]:
    """Take the Argument Clinic argument blocks out of a (not yet dedented) C docstring.

    ``os.stat.__doc__`` documents ``path`` as a line "  path" followed by lines indented four
    spaces; no docstring style knows this layout, so it is read here.
    """
    params: dict[str, str] = {}

    def take(match: re.Match[str]) -> str:
        params.setdefault(match.group(1), _one_line(match.group(2)))
        return ""

    if "\n  " not in text:
        return text, params
    return _CLINIC_BLOCK.sub(take, text), params


def _parse_any_style(cleaned: str) -> Any:
    """``docstring_parser.parse`` in AUTO mode, but epydoc only for docstrings that use it.

    The epydoc parser's meta regex is quadratic in the text after the first line starting with
    "@" (20k characters of it: 20 s), so that style runs only when an epydoc field is present
    and that part is at most :data:`_MAX_EPYDOC_META` characters (0.3 s at worst).
    """
    import docstring_parser
    from docstring_parser import DocstringStyle, ParseError

    styles = [DocstringStyle.REST, DocstringStyle.GOOGLE, DocstringStyle.NUMPYDOC]
    first = _EPYDOC_FIELD.search(cleaned)
    if first and len(cleaned) - first.start() <= _MAX_EPYDOC_META:
        styles.append(DocstringStyle.EPYDOC)
    results: list[Any] = []
    error: Exception | None = None
    for style in styles:
        try:
            results.append(docstring_parser.parse(cleaned, style=style))
        except ParseError as exc:
            error = exc
    if not results:
        raise error or ValueError("no docstring style applies")
    return max(results, key=lambda d: len(d.meta))  # AUTO's rule: most meta wins, first on ties


def _parse(cleaned: str, clinic: dict[str, str]) -> ParsedDocstring:
    parsed = _parse_any_style(cleaned)
    short = (parsed.short_description or "").strip()
    long = (parsed.long_description or "").strip()
    joiner = "\n\n" if parsed.blank_after_short_description else "\n"
    prose_parts = [joiner.join(p for p in (short, long) if p)]
    examples_text: list[str] = []
    for meta in parsed.meta:
        key = meta.args[0].lower() if meta.args else ""
        if key in _PROSE_SECTIONS and meta.description:
            prose_parts.append(meta.description.strip())
        elif key in ("examples", "example"):
            snippet = getattr(meta, "snippet", None)
            examples_text.extend(t for t in (snippet, meta.description) if t)
    prose = "\n\n".join(p for p in prose_parts if p)

    params: dict[str, str] = dict(clinic)
    param_types: dict[str, str] = {}
    for param in parsed.params:
        if not param.args or param.args[0].lower() not in _PARAM_KEYWORDS or not param.arg_name:
            continue
        name = param.arg_name.strip()
        params[name] = _one_line(param.description) or params.get(name, "")
        if param.type_name and name not in param_types:
            param_types[name] = param.type_name.strip()

    returns = ""
    if parsed.returns is not None:
        returns = _one_line(parsed.returns.description) or (parsed.returns.type_name or "").strip()

    examples = _examples_from_section("\n".join(examples_text))
    examples += [s for s in doctest_snippets(prose) if s not in examples]
    description = _drop_doctests(prose)
    return ParsedDocstring(
        summary=docstring_summary(description),
        description=description,
        params=params,
        returns=returns,
        examples=examples,
        param_types=param_types,
    )


def _examples_from_section(text: str) -> list[str]:
    """Doctest code when the section has any, else its paragraphs (prose examples)."""
    if not text.strip():
        return []
    snippets = doctest_snippets(text)
    if snippets:
        return snippets
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _drop_doctests(text: str) -> str:
    """The text without its ``>>>`` blocks (each prompt with the output lines after it)."""
    kept: list[str] = []
    in_block = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_block = True
            continue
        if in_block and stripped:
            continue
        in_block = False
        kept.append(line)
    result = "\n".join(kept)
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", result).strip()


def _strip_prompt(line: str) -> str:
    body = line[3:]
    return body.removeprefix(" ")


def _one_line(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def with_docstrings(doc: ToolDoc, *texts: str | None, **fields: Any) -> ToolDoc:
    """``doc`` completed from docstrings, the first text first: its description without the ``Args:`` /
    ``Returns:`` sections (the first text's prose), each parameter's missing sentence, and the response and
    examples it lacks; ``fields`` replace any others (``metadata=...``).

    A framework hands a tool's docstring whole as its description (LangChain's ``@tool``, LlamaIndex's
    ``FunctionTool``) and its schema may lack the argument sentences, which belong in their own fields.

    >>> doc = ToolDoc(name="get_weather", description="Weather now.\\n\\nArgs:\\n    city: City name.",
    ...               parameters=[{"name": "city", "type": "string"}])
    >>> done = with_docstrings(doc, doc.description)
    >>> done.description, done.parameters[0].description
    ('Weather now.', 'City name.')
    """
    parsed = [parse_docstring(text) for text in texts if text]
    if not parsed:
        return doc.model_copy(update=fields) if fields else doc

    def sentence(name: str) -> str:
        return next((p.params[name] for p in parsed if p.params.get(name)), "")

    params = [p if p.description else p.model_copy(update={"description": sentence(p.name)}) for p in doc.parameters]
    out = doc.model_dump(exclude={"parameters"})
    out.update(
        description=parsed[0].description or doc.description,
        response=doc.response or next((p.returns for p in parsed if p.returns), ""),
        examples=doc.examples or next((p.examples for p in parsed if p.examples), []),
        **fields,
    )
    return ToolDoc(parameters=params, **out)
