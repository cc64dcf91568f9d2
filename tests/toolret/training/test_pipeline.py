"""The whole training pipeline on a few hundred real pairs: pairs, train, export, load, search.

CI never trains for real; this proves each step works end to end and that training moves the
model the right way: on requests held back from training (same registry, unseen wording), the
trained model ranks the right tool higher than the stock one.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from toolret import ToolKnowledgeBase
from toolret.errors import ConfigError
from toolret.eval.datasets import load_dataset
from toolret.index.embedding import STOCK_EMBEDDER_NAME, resolve_embedder
from toolret.index.onnx_embedding import OnnxEmbedder
from toolret.training.export import MODEL_CARD_FILE, export_onnx_int8, file_sha256
from toolret.training.pairs import pairs_from_bundles
from toolret.training.trainer import TrainConfig, train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def toole(benchmarks):
    ds = load_dataset(benchmarks / "toole_single")
    queries = random.Random(0).sample(ds.queries, 300)
    tools = {d.id: d for d in ds.tool_docs()}
    return tools, queries[:200], queries[200:]


def _mrr(embedder, tools, queries) -> float:
    from toolret.training.pairs import document_text

    ids = list(tools)
    docs = embedder.embed([document_text(tools[i]) for i in ids])
    qs = embedder.embed([q.query for q in queries])
    ranks = []
    for row, q in zip(qs @ docs.T, queries):
        order = [ids[j] for j in np.argsort(-row)]
        ranks.append(1.0 / (1 + min(order.index(t) for t in q.relevant)))
    return float(np.mean(ranks))


@pytest.fixture(scope="module")
def trained(toole, tmp_path_factory):
    tools, train_queries, _ = toole
    out = tmp_path_factory.mktemp("train")
    pairs = pairs_from_bundles("toole", tools, [(q.query, q.relevant) for q in train_queries])
    config = TrainConfig(epochs=2, batch_size=16, learning_rate=2e-4, save_every=5)
    result = train(pairs, out / "run", config)
    card = export_onnx_int8(result.model_dir, out / "model", name="test-model", check_texts=[p.document for p in pairs])
    return out, result, card


def test_training_ranks_held_back_requests_better_than_the_stock_model(toole, trained) -> None:
    tools, _, held_back = toole
    out, result, _ = trained
    assert result.steps > 0 and result.last_loss is not None
    stock = _mrr(resolve_embedder(STOCK_EMBEDDER_NAME), tools, held_back)  # the model training starts from
    tuned = _mrr(OnnxEmbedder(model_dir=out / "model"), tools, held_back)
    assert tuned > stock + 0.01, (stock, tuned)


def test_the_export_is_int8_close_to_fp32_and_described(trained) -> None:
    out, _, card = trained
    model = out / "model"
    assert (model / "model.onnx").stat().st_size < 25_000_000
    stored = json.loads((model / MODEL_CARD_FILE).read_text())
    assert stored["sha256"] == file_sha256(model / "model.onnx")
    assert card["int8_cosine_to_fp32"]["min"] >= 0.98


def test_a_knowledge_base_searches_with_the_model_directory_and_reopens_with_it(toole, trained, tmp_path) -> None:
    tools, _, held_back = toole
    out, _, _ = trained
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=str(out / "model"))
    kb.add(list(tools.values()))
    kb.save()
    hits = sum(bool(set(q.relevant) & {t.id for t in kb.search(q.query, k=5).tools}) for q in held_back[:30])
    kb.close()
    assert hits >= 20
    reopened = ToolKnowledgeBase.load(tmp_path / "kb")
    assert reopened.embedder.name == str((out / "model").resolve())
    reopened.close()


def test_a_checkpoint_resumes_to_the_same_model_as_an_uninterrupted_run(toole, tmp_path) -> None:
    import torch

    tools, train_queries, _ = toole
    pairs = pairs_from_bundles("toole", tools, [(q.query, q.relevant) for q in train_queries[:32]])
    config = TrainConfig(batch_size=8, save_every=2)
    straight = train(pairs, tmp_path / "straight", config)
    first = train(pairs, tmp_path / "resumed", config, max_steps=2)
    assert first.steps == 2 and not (tmp_path / "resumed" / "model").exists()
    second = train(pairs, tmp_path / "resumed", config)
    assert second.resumed_from == 2 and second.steps == straight.steps
    a = torch.load(tmp_path / "straight" / "checkpoint" / "tensors.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "resumed" / "checkpoint" / "tensors.pt", weights_only=True)["model"]
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_a_checkpoint_of_another_run_is_refused(toole, tmp_path) -> None:
    tools, train_queries, _ = toole
    pairs = pairs_from_bundles("toole", tools, [(q.query, q.relevant) for q in train_queries[:16]])
    train(pairs, tmp_path, TrainConfig(batch_size=4), max_steps=1)
    with pytest.raises(ConfigError, match="another run"):
        train(pairs[:12], tmp_path, TrainConfig(batch_size=4), max_steps=1)


def test_mined_hard_negatives_join_the_batch_and_make_another_run(toole, tmp_path) -> None:
    from toolret.training.negatives import mine_hard_negatives

    tools, train_queries, _ = toole
    pairs = pairs_from_bundles("toole", tools, [(q.query, q.relevant) for q in train_queries[:32]])
    mined = mine_hard_negatives(pairs, {"toole": tools}, per_pair=2)
    assert all(len(p.negatives) == 2 for p in mined)
    plain = train(mined, tmp_path / "plain", TrainConfig(batch_size=8), max_steps=1)
    hard = train(mined, tmp_path / "hard", TrainConfig(batch_size=8, hard_negatives=2), max_steps=1)
    # Same model, same first batch: 16 more (and harder) documents to tell the right one from. (The
    # negatives are mined with the engine's own ranking, so the gap moves with it: 0.50 with issue 43's.)
    assert hard.first_loss is not None and plain.first_loss is not None
    assert hard.first_loss > plain.first_loss + 0.3
    with pytest.raises(ConfigError, match="another run"):
        train(mined, tmp_path / "plain", TrainConfig(batch_size=8, hard_negatives=2), max_steps=1)
