"""Per-field lexical indexes (BM25 through bm25s; saved ones are read back without it).

One BM25 index per MFTR field, so a query word that matches a parameter name is scored
against parameter text, not diluted in one concatenated blob.

Example:
    >>> idx = LexicalIndex.build(["weather forecast for a city", "convert currency"])
    >>> scores = idx.scores("city weather")
    >>> bool(scores[0] > scores[1])
    True
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from toolret.documents.text import joined_compounds, stem_tokens, tokenize

__all__ = ["LexicalIndex", "analyze", "analyze_query", "import_bm25s"]


@functools.cache
def import_bm25s() -> Any:
    """``import bm25s``, whose logger then follows the user's logging configuration.

    bm25s sets its own logger to DEBUG on import, so under ``logging.basicConfig(level=WARNING)``
    every index build would print ``DEBUG:bm25s:Building index from tokens``. A dependency must
    not be noisier than the user's configuration: the level bm25s set is cleared (NOTSET, so the
    root's applies); a level someone set afterwards is theirs and stays.
    """
    import bm25s

    log = logging.getLogger("bm25s")
    if log.level == logging.DEBUG:
        log.setLevel(logging.NOTSET)
    return bm25s


def analyze(text: str) -> list[str]:
    """Tokens as both the index and the query see them: split, stopwords out, stemmed."""
    return stem_tokens(tokenize(text))


def analyze_query(text: str) -> list[str]:
    """A query's tokens: :func:`analyze`'s, plus its hyphenated letter-digit names joined ("SHA-256" -> sha256).

    Query side only: adding the joined form to tool texts too made those texts longer and
    lowered their BM25 scores, which cost bfcl a hit; a tool's own "sha256" or "gpt2" is
    already one token.
    """
    return analyze(text) + stem_tokens(joined_compounds(text))


def _per_term_max(retriever: object | None) -> np.ndarray:
    """Best score of each vocabulary term in any document (bm25s stores scores per term, CSC)."""
    if retriever is None:
        return np.zeros(0, dtype=np.float32)
    mat = retriever.scores  # type: ignore[attr-defined]
    data, indptr = np.asarray(mat["data"]), np.asarray(mat["indptr"])
    out = np.zeros(len(indptr) - 1, dtype=np.float32)
    nonempty = indptr[1:] > indptr[:-1]
    if data.size:
        out[nonempty] = np.maximum.reduceat(data, indptr[:-1][nonempty])
    return out


#: bm25s variants whose scores are the stored term-document matrix alone (no non-occurrence term).
_PLAIN_METHODS = {"lucene", "robertson", "atire"}
_ARRAYS = ("data", "indices", "indptr")


class _SavedBM25:
    """A saved bm25s index, read and scored without importing bm25s (which imports scipy).

    A fresh process that opens a saved knowledge base to search once would otherwise spend
    most of its start-up importing them. It reads the files bm25s wrote (the CSC matrix of
    per-term, per-document scores, the vocabulary) and scores a query with bm25s's own
    arithmetic (``get_scores``: known tokens only, ``np.add.at`` term by term, in order), so
    the scores are the same numbers; it writes the same files back for :meth:`LexicalIndex.save`.
    """

    def __init__(self, folder: Path, params: dict[str, object]) -> None:
        self.params = params
        self.dtype = np.dtype(str(params.get("dtype", "float32")))
        self.int_dtype = np.dtype(str(params.get("int_dtype", "int32")))
        self.vocab_dict: dict[str, int] = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        self.scores: dict[str, Any] = {
            name: np.load(folder / f"{name}.csc.index.npy", allow_pickle=False) for name in _ARRAYS
        }
        self.scores["num_docs"] = int(params["num_docs"])  # type: ignore[call-overload]

    @classmethod
    def load(cls, folder: Path) -> object:
        """This reader when the saved index is a plain BM25 variant, else bm25s's own loader."""
        params = json.loads((folder / "params.index.json").read_text())
        if params.get("method") in _PLAIN_METHODS and "num_docs" in params:
            return cls(folder, params)
        bm25s = import_bm25s()
        return bm25s.BM25.load(str(folder), load_corpus=False)

    def get_scores(self, tokens: list[str]) -> np.ndarray:
        ids = np.asarray([self.vocab_dict[t] for t in tokens if t in self.vocab_dict], dtype=self.int_dtype)
        data, indices, indptr = (self.scores[name] for name in _ARRAYS)
        if int(ids.max(initial=0)) >= len(indptr) - 1:  # bm25s's "" token has no column: it raises too
            raise ValueError("the query contains tokens that are not in the index")
        out = np.zeros(self.scores["num_docs"], dtype=self.dtype)
        for start, end in zip(indptr[ids], indptr[ids + 1]):
            np.add.at(out, indices[start:end], data[start:end])
        return out

    def save(self, folder: str, show_progress: bool = False) -> None:
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        for name in _ARRAYS:
            np.save(path / f"{name}.csc.index.npy", self.scores[name])
        (path / "vocab.index.json").write_text(json.dumps(self.vocab_dict, ensure_ascii=False), encoding="utf-8")
        (path / "params.index.json").write_text(json.dumps(self.params, indent=4))


class LexicalIndex:
    """A bm25s index over one field of every tool, in knowledge-base order.

    Empty documents are allowed (a tool without examples); they score 0 for every query.
    """

    def __init__(self, retriever: object | None, n_docs: int) -> None:
        self._retriever = retriever
        self.n_docs = n_docs
        self._term_max = _per_term_max(retriever)
        self._df: dict[str, int] | None = None

    @classmethod
    def build(cls, texts: list[str]) -> LexicalIndex:
        tokens = [analyze(t) for t in texts]
        if not any(tokens):
            return cls(None, len(texts))
        bm25s = import_bm25s()  # scipy with it: a knowledge base that is never filled never pays the import
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(retriever, len(texts))

    def scores(self, query: str | list[str]) -> np.ndarray:
        """BM25 score of every document for the query (0 for no overlap)."""
        tokens = analyze_query(query) if isinstance(query, str) else query
        if self._retriever is None or not tokens or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)  # type: ignore[attr-defined]

    def doc_freq(self) -> dict[str, int]:
        """How many documents contain each vocabulary term (read from the index, cached)."""
        if self._df is None:
            if self._retriever is None:
                self._df = {}
            else:
                indptr = np.asarray(self._retriever.scores["indptr"])  # type: ignore[attr-defined]
                counts = indptr[1:] - indptr[:-1]
                vocab = self._retriever.vocab_dict  # type: ignore[attr-defined]
                self._df = {t: int(counts[i]) for t, i in vocab.items() if i < len(counts) and counts[i] > 0}
        return self._df

    def upper_bound(self, query: str | list[str]) -> float:
        """The most BM25 evidence any document could get for this query.

        Sum over query tokens of the best single-document score of that token: a document
        reaching it matches every query word as well as the best document for each word.
        Dividing by it says "share of the achievable lexical evidence", which, unlike dividing
        by the best candidate's score, does not call a one-weak-word match perfect.
        """
        tokens = analyze_query(query) if isinstance(query, str) else query
        if self._retriever is None or not tokens:
            return 0.0
        vocab = self._retriever.vocab_dict  # type: ignore[attr-defined]
        return float(sum(self._term_max[vocab[t]] for t in tokens if t in vocab))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").write_text(json.dumps({"n_docs": self.n_docs, "empty": self._retriever is None}))
        if self._retriever is not None:
            self._retriever.save(str(folder), show_progress=False)  # type: ignore[attr-defined]

    @classmethod
    def load(cls, folder: Path) -> LexicalIndex:
        """A saved index (:class:`_SavedBM25`: no bm25s import for the usual BM25 variants)."""
        meta = json.loads((folder / "meta.json").read_text())
        if meta["empty"]:
            return cls(None, int(meta["n_docs"]))
        return cls(_SavedBM25.load(folder), int(meta["n_docs"]))
