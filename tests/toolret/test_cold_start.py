"""A fresh process pays only for what it uses: ``import toolret`` loads nothing, the command line
builds its parser without the tool model, and a search loads neither asyncio nor ChromaDB.

Each check runs a fresh interpreter: what another test imported must not hide a regression.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Never needed to open a saved knowledge base and search it with the default model.
NOT_ON_THE_SEARCH_PATH = ("asyncio", "chromadb", "torch", "transformers", "sentence_transformers")
TOOLRET_NOT_ON_THE_SEARCH_PATH = ("toolret.training.trainer", "toolret.eval.runner", "toolret.llm.openai_client")


def _modules_after(code: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_toolret_loads_no_module_of_its_own():
    loaded = {m for m in _modules_after("import toolret") if m.startswith("toolret")}
    assert loaded == {"toolret", "toolret._exports"}


def test_every_public_name_still_resolves_lazily():
    code = "import toolret\nfor name in toolret.__all__:\n    getattr(toolret, name)\nprint(toolret.ToolKnowledgeBase)"
    assert "toolret.knowledge_base" in _modules_after(code)


def test_the_command_line_parser_builds_no_pydantic_model():
    # pydantic's first model costs a fresh process ~0.07 s; the parser needs only plain names.
    loaded = _modules_after("from toolret.cli import build_parser\nbuild_parser()")
    assert "pydantic.main" not in loaded and "toolret.documents.tool_doc" not in loaded


@pytest.fixture(scope="module")
def saved_kb(tmp_path_factory) -> Path:
    from toolret import ToolKnowledgeBase

    def get_weather(city: str) -> str:
        """Current weather for a city."""

    def convert_currency(amount: float, to: str) -> float:
        """Convert an amount of money into another currency."""

    path = tmp_path_factory.mktemp("cold") / "tools.kb"
    kb = ToolKnowledgeBase(path)
    kb.add([get_weather, convert_currency], progress=False)
    kb.save()
    kb.close()
    return path


def test_a_command_line_search_loads_only_what_a_search_needs(saved_kb: Path):
    code = (
        "import contextlib, io\nfrom toolret.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['search', '--kb', {str(saved_kb)!r}, 'rain in Paris?'])"
    )
    loaded = _modules_after(code)
    assert "toolret.index.onnx_embedding" in loaded  # it did search with the model
    assert not {m.split(".")[0] for m in loaded} & set(NOT_ON_THE_SEARCH_PATH)
    assert not loaded & set(TOOLRET_NOT_ON_THE_SEARCH_PATH)


def test_opening_a_saved_knowledge_base_starts_loading_its_model_before_the_rest_imports(saved_kb: Path):
    # With a core to spare, the model's session builds in a background thread (onnxruntime releases
    # the GIL) while the index stack imports and the knowledge base opens; a search finds it loaded.
    code = (
        "import sys\nfrom toolret.index import onnx_embedding\nfrom toolret.index.onnx_embedding import OnnxEmbedder\n"
        "onnx_embedding._idle_core = lambda: True  # as on an idle machine, whatever this one's load\n"
        "seen = []\nwarm = OnnxEmbedder.warm_up_in_background\n"
        "def spy(self):\n    seen.append('toolret.index.persistence' in sys.modules)\n    warm(self)\n"
        "OnnxEmbedder.warm_up_in_background = spy\n"
        "from toolret import ToolKnowledgeBase\n"
        f"kb = ToolKnowledgeBase.load({str(saved_kb)!r})\n"
        "kb.embedder._warming.join()\nloaded = kb.embedder._session is not None\n"
        "print(seen[0], loaded, kb.search('rain in Paris?', k=1).tools[0].id)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "get_weather"]
