"""s_p of many distinct parameters at once: the parameter penalty's inner loop as array operations.

The penalty (:mod:`toolret.scoring.penalty`) needs s_p (:meth:`ArgumentFit.satisfaction_of
<toolret.scoring.arguments.ArgumentFit.satisfaction_of>`) for every distinct parameter of a
query's candidates: about 430 at 100k tools, each a few dictionary look-ups and a set test in
Python, which was about a millisecond a search. s_p depends on the query only through the best
fit of its values per *kind* of parameter (type and name hint, a few per query), whether the
query's words hold all the parameter's name words, and for enumerations whether they hold an
allowed value. :class:`KeyShapes` lays out, once per :class:`~toolret.scoring.param_table.ParamTable`,
each distinct parameter's kind, name words, flags and allowed values; :func:`key_satisfactions`
then works out each kind once and the name-word test for all parameters by counting, per query
word, the name-word sets that hold it. The numbers are those of ``satisfaction_of``, bit for bit
(a maximum picks one of its operands).

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> from toolret.scoring.arguments import spot_arguments
    >>> table = ParamTable.build([ToolDoc(name="a", parameters=[
    ...     ToolParam(name="city", type="string"), ToolParam(name="count", type="integer")])])
    >>> fit = ArgumentFit(spot_arguments("3 hotels"), {"3", "hotels"})
    >>> key_satisfactions(fit, KeyShapes.of(table), np.arange(2)).tolist()
    [0.6, 1.0]
    >>> [fit.satisfaction_of(*key) for key in table.keys]
    [0.6, 1.0]
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from toolret.scoring.arguments import ID_FLOOR, NAMED_FLOOR, ArgumentFit, ParamShape, param_shape
from toolret.scoring.param_table import ParamTable

__all__ = ["KeyShapes", "key_satisfactions"]

_cache: weakref.WeakKeyDictionary[ParamTable, KeyShapes] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(frozen=True)
class KeyShapes:
    """Per distinct parameter of a table (``ParamTable.keys``): what its s_p reads, as arrays.

    ``kind[k]`` indexes ``kinds`` (one representative shape per (type, name hint) pair, which is
    all :meth:`ArgumentFit.kind_best` reads); ``words[k]`` indexes the distinct name-word sets
    (-1 for a name without words), ``set_size`` gives each set's size and ``sets_with`` the sets
    that hold each word; ``enum[k]`` are the allowed values (lowercased text, ``()`` for none).
    """

    free: np.ndarray
    is_id: np.ndarray
    kind: np.ndarray
    kinds: tuple[ParamShape, ...]
    words: np.ndarray
    set_size: np.ndarray
    sets_with: dict[str, np.ndarray]
    enum: tuple[tuple[str, ...], ...]
    has_enum: np.ndarray

    @classmethod
    def of(cls, table: ParamTable) -> KeyShapes:
        """The shapes of ``table``'s parameters, built on first use and kept while the table lives."""
        with _lock:
            shapes = _cache.get(table)
        if shapes is None:
            shapes = cls.build(table)
            with _lock:
                _cache[table] = shapes
        return shapes

    @classmethod
    def build(cls, table: ParamTable) -> KeyShapes:
        kinds: dict[tuple[str, str | None], int] = {}
        sets: dict[frozenset[str], int] = {}
        shapes = [param_shape(name, type_) for name, type_, _ in table.keys]
        kind = [
            kinds.setdefault((s.base_type, s.hinted if s.base_type == "string" else None), len(kinds)) for s in shapes
        ]
        words = [sets.setdefault(s.name_words, len(sets)) if s.name_words else -1 for s in shapes]
        representative: dict[int, ParamShape] = {}
        for s, k in zip(shapes, kind):
            representative.setdefault(k, s)
        holders: dict[str, list[int]] = {}
        for name_words, n in sets.items():
            for word in name_words:
                holders.setdefault(word, []).append(n)
        return cls(
            free=np.array([s.free for s in shapes], dtype=bool),
            is_id=np.array([s.is_id for s in shapes], dtype=bool),
            kind=np.array(kind, dtype=np.int64),
            kinds=tuple(representative[k] for k in range(len(kinds))),
            words=np.array(words, dtype=np.int64),
            set_size=np.array([len(w) for w in sets], dtype=np.int64),
            sets_with={w: np.array(n, dtype=np.int64) for w, n in holders.items()},
            enum=tuple(e for _, _, e in table.keys),
            has_enum=np.array([bool(e) for _, _, e in table.keys], dtype=bool),
        )


def key_satisfactions(fit: ArgumentFit, shapes: KeyShapes, keys: np.ndarray) -> np.ndarray:
    """s_p of each of ``keys`` (distinct parameters of the table ``shapes`` was built from)."""
    kind = shapes.kind[keys]
    present, back = np.unique(kind, return_inverse=True)
    s_p = np.array([fit.kind_best(shapes.kinds[k]) for k in present.tolist()], dtype=np.float64)[back]
    hits = np.zeros(len(shapes.set_size), dtype=np.int64)
    for word in fit.query_words:
        holders = shapes.sets_with.get(word)
        if holders is not None:
            hits[holders] += 1  # a set holds a word once: no repeated index
    words = shapes.words[keys]
    named = np.zeros(len(keys), dtype=bool)
    if len(hits):
        named = (words >= 0) & (hits[words] == shapes.set_size[words])
    s_p = np.where(named, np.maximum(s_p, NAMED_FLOOR), s_p)
    s_p = np.where(shapes.is_id[keys], np.maximum(s_p, ID_FLOOR), s_p)
    s_p = np.where(shapes.free[keys], 1.0, s_p)
    for at in np.flatnonzero(shapes.has_enum[keys]).tolist():
        if fit.enum_filled(shapes.enum[int(keys[at])]):
            s_p[at] = 1.0
    return s_p
