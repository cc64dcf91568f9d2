"""A knowledge base built with other weights of toolret-embed-mini is refused, never searched stale.

Issue 42 shipped new weights under the same name, ``packaged:toolret-embed-mini``. A knowledge base
records the weights' revision beside the name. Reopened by a toolret that ships other weights, it
raises ModelMismatchError naming both revisions. It is never searched with query vectors of one
model against tool vectors of another.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import toolret.index.embedding as embedding
from toolret import ModelMismatchError, ToolDoc, ToolKnowledgeBase
from toolret.index.embedding import SHIPPED_EMBEDDER_NAME, STOCK_EMBEDDER_NAME, embedder_revision

TOOLS = [
    ToolDoc(name="get_weather", description="Current weather for a city."),
    ToolDoc(name="send_email", description="Send an email to a recipient."),
]


def _forget_clients() -> None:
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def _build(path: Path, embedder: str | None = None) -> None:
    kb = ToolKnowledgeBase(path, embedder=embedder)
    kb.add(TOOLS)
    kb.save()
    kb.close()
    _forget_clients()


def test_the_shipped_revision_is_the_card_sha256_and_other_models_have_none() -> None:
    import json

    card = json.loads((Path(embedding.shipped_model_dir()) / "toolret-model.json").read_text())
    assert embedder_revision(SHIPPED_EMBEDDER_NAME) == card["sha256"][:12]
    assert embedder_revision(STOCK_EMBEDDER_NAME) == ""


def test_reopened_by_a_toolret_with_other_weights_it_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = embedder_revision(SHIPPED_EMBEDDER_NAME)
    _build(tmp_path / "kb")
    assert ToolKnowledgeBase.load(tmp_path / "kb").search("weather in Paris", k=1).ids == ["get_weather"]
    _forget_clients()
    monkeypatch.setattr(embedding, "_shipped_revision", lambda: "0123456789ab")  # the next release
    with pytest.raises(ModelMismatchError, match=f"revision {built}; this toolret ships revision 0123456789ab"):
        ToolKnowledgeBase.load(tmp_path / "kb")
    with pytest.raises(ModelMismatchError, match="Index the tools again"):
        ToolKnowledgeBase(tmp_path / "kb", embedder=SHIPPED_EMBEDDER_NAME)


def test_a_knowledge_base_of_the_first_release_has_no_revision_and_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with monkeypatch.context() as m:
        m.setattr(embedding, "_shipped_revision", lambda: "")  # what toolret wrote before revisions
        _build(tmp_path / "old")
    with pytest.raises(ModelMismatchError, match="the first release"):
        ToolKnowledgeBase.load(tmp_path / "old")


def test_a_stock_model_knowledge_base_opens_as_before(tmp_path: Path) -> None:
    _build(tmp_path / "stock", embedder=STOCK_EMBEDDER_NAME)
    kb = ToolKnowledgeBase.load(tmp_path / "stock")
    assert kb.embedder.name == STOCK_EMBEDDER_NAME and len(kb) == 2
    kb.close()
