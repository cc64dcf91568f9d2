"""Identifier parameters and the tools that produce them: the chains a request never spells out.

A REST request such as "Who was the lead actor in The Dark Knight?" needs
``GET /movie/{movie_id}/credits`` *and* ``GET /search/movie``: the second exists only to turn the
title into the ``movie_id`` the first requires, and the request names nothing of it. This module
reads, from the documents alone (no query, no LLM), which identifiers each tool requires and
which tools can produce an identifier of each entity; :mod:`toolret.search.dependencies`
decides per query whether a chosen tool's identifier is unfilled and brings in its producer.

* A **need** is a parameter that is required (or a ``{path}`` parameter) and whose name ends in an
  identifier word (``movie_id``, ``playlistId``, ``ids``, ``uuid``). Its *entity* is the word before
  that (``movie``); a bare ``id``/``ids`` takes the path segment it belongs to (``/albums/{id}`` ->
  ``album``), or for a plain function name the name's last content word (``delete_album(id)``).
* A **producer** of an entity names it in its name, path or first description sentence, does not
  itself need an identifier of that entity, and -- when its response is documented -- returns an
  ``id``. Entities are compared as Snowball stems (``movies`` and ``movie`` -> ``movi``).

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> credits = ToolDoc(name="GET /movie/{movie_id}/credits", description="Get the cast of a movie.",
    ...                   parameters=[ToolParam(name="movie_id", type="integer", required=True)])
    >>> search = ToolDoc(name="GET /search/movie", description="Search for movies.",
    ...                  parameters=[ToolParam(name="query", type="string", required=True)])
    >>> [(n.param, n.word) for n in identifier_needs(credits)]
    [('movie_id', 'movie')]
    >>> index = DependencyIndex.build([credits, search])
    >>> index.producers_of(index.needs[0][0])
    (1,)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolret.documents.text import first_sentence, split_identifier, stem_tokens, tokenize
from toolret.documents.tool_doc import ToolDoc

__all__ = ["DependencyIndex", "IdentifierNeed", "identifier_needs", "path_params"]

#: Words that make a parameter an identifier when they end its name (``key``/``handle`` are left
#: out: ``api_key`` is a credential, not another tool's output).
ID_WORDS = frozenset({"id", "ids", "uuid", "uuids", "guid"})
_PATH_PARAM = re.compile(r"\{([^{}/]+)\}")
_SEGMENT = re.compile(r"[/\s]+")
_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
#: Words that never name an entity (verbs and glue of function names such as ``get_user_by_id``).
_NOT_ENTITY = _METHODS | ID_WORDS | frozenset({"by", "for", "of", "me", "my", "list", "all", "new", "set", "add"})
_RESPONSE_ID = re.compile(r"(?<![A-Za-z])(?:id|ids|uuid|guid)(?![A-Za-z])|[a-z]_id\b|[a-z]Id\b")


@dataclass(frozen=True)
class IdentifierNeed:
    """A required identifier parameter of a tool and the entity it identifies.

    ``entity`` is the Snowball stem producers are matched on, ``word`` the (singular) word as
    written; ``in_path`` says the parameter is part of a REST path (``{movie_id}``).
    """

    param: str
    type: str
    entity: str
    word: str
    in_path: bool = False


def path_params(doc: ToolDoc) -> set[str]:
    """Names of the tool's path parameters: ``{name}`` in its name, or ``"x-in": "path"`` in its schema."""
    found = set(_PATH_PARAM.findall(doc.name))
    props = (doc.input_schema or {}).get("properties")
    if isinstance(props, dict):
        found.update(k for k, v in props.items() if isinstance(v, dict) and v.get("x-in") == "path")
    return found


def _singular(word: str) -> str:
    """``albums`` -> ``album``, ``companies`` -> ``company`` (path segments are plural; entities are not)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _content_words(text: str) -> list[str]:
    return [w for w in split_identifier(text) if w not in _NOT_ENTITY and not w.isdigit()]


def _entity_from_name(name: str, param: str) -> str | None:
    """The entity of a bare ``id``: the static path segment before ``{param}``, else the name's last word."""
    segments = [s for s in _SEGMENT.split(name) if s]
    marker = "{" + param + "}"
    if marker in segments:
        before = segments[: segments.index(marker)]
    else:
        before = [s for s in segments if not _PATH_PARAM.search(s)]
    for segment in reversed(before):
        if _PATH_PARAM.search(segment):
            continue
        words = _content_words(segment)
        if words:
            return words[-1]
    return None


def identifier_needs(doc: ToolDoc) -> tuple[IdentifierNeed, ...]:
    """The identifiers the tool cannot run without (required or path parameters named ``*_id``)."""
    in_path = path_params(doc)
    needs: list[IdentifierNeed] = []
    for param in doc.parameters:
        if not (param.required or param.name in in_path):
            continue
        words = split_identifier(param.name)
        if not words or words[-1] not in ID_WORDS:
            continue
        rest = [w for w in words[:-1] if w not in _NOT_ENTITY and not w.isdigit()]
        word = rest[-1] if rest else _entity_from_name(doc.name, param.name)
        if word is None:
            continue
        word = _singular(word)
        needs.append(
            IdentifierNeed(
                param=param.name,
                type=param.type,
                entity=stem_tokens([word])[0],
                word=word,
                in_path=param.name in in_path,
            )
        )
    return tuple(needs)


def _named_entities(doc: ToolDoc) -> set[str]:
    """Stems of the words a tool's name (path segments, parameters left out) and first sentence use."""
    name = _PATH_PARAM.sub(" ", doc.name)
    words = _content_words(name) + tokenize(first_sentence(doc.description))
    return set(stem_tokens(words))


def _returns_id(doc: ToolDoc) -> bool:
    return not doc.response or bool(_RESPONSE_ID.search(doc.response))


@dataclass(frozen=True)
class DependencyIndex:
    """Per tool its identifier needs, and per needed entity the tools that can produce it.

    Built once per registry snapshot (``Snapshot.dependencies``); a registry without identifier
    parameters (ToolE) gives an empty index and the dependency stage does nothing.
    """

    needs: tuple[tuple[IdentifierNeed, ...], ...]
    producers: dict[str, tuple[int, ...]]

    @classmethod
    def build(cls, docs: Sequence[ToolDoc]) -> DependencyIndex:
        needs = tuple(identifier_needs(doc) for doc in docs)
        wanted = {n.entity for tool in needs for n in tool}
        producers: dict[str, list[int]] = {}
        if wanted:
            for i, doc in enumerate(docs):
                if not _returns_id(doc):
                    continue
                own = {n.entity for n in needs[i]}
                for entity in (_named_entities(doc) & wanted) - own:
                    producers.setdefault(entity, []).append(i)
        return cls(needs=needs, producers={e: tuple(p) for e, p in producers.items()})

    def __bool__(self) -> bool:
        return bool(self.producers)

    def producers_of(self, need: IdentifierNeed) -> tuple[int, ...]:
        """Indexes of the tools that can produce ``need``'s identifier."""
        return self.producers.get(need.entity, ())
