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


def test_a_program_search_ends_without_tearing_the_interpreter_down(saved_kb: Path):
    # Finalising every module, the model's session and numpy's buffers cost a fresh `toolret search`
    # ~0.06 s after its output (as much as 0.45x the floor import); the verb only reads, so it ends at
    # once: output flushed even into a pipe, atexit handlers run, no object finalised.
    code = (
        "import atexit, sys\nfrom toolret.cli import main\n"
        "class Finalised:\n    def __del__(self):\n        sys.stderr.write('finalised\\n')\n"
        "keep = Finalised()\natexit.register(lambda: sys.stderr.write('atexit ran\\n'))\n"
        f"sys.argv = ['toolret', 'search', '--kb', {str(saved_kb)!r}, 'rain in Paris?', '--json']\n"
        "sys.exit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tools"][0]["id"] == "get_weather"  # all of it, through a pipe
    assert out.stderr.splitlines() == ["atexit ran"]


def test_a_search_called_from_python_returns_and_other_verbs_end_as_usual(saved_kb: Path, capsys):
    from toolret.cli import main

    assert main(["search", "--kb", str(saved_kb), "rain in Paris?", "-k", "1"]) == 0  # argv given: no exit
    assert "get_weather" in capsys.readouterr().out
    code = (
        "import sys\nfrom toolret.cli import main\n"
        "class Finalised:\n    def __del__(self):\n        sys.stderr.write('finalised\\n')\n"
        "keep = Finalised()\nsys.argv = ['toolret', '--help']\nsys.exit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and out.stderr.splitlines() == ["finalised"]


def test_a_program_search_loads_its_model_without_graph_optimisation(saved_kb: Path):
    # The one query of a `toolret search` does not repay onnxruntime's graph optimisation (~0.07 s to
    # load, ~0.7 ms a query); the library's sessions, which embed registries and many queries, keep it.
    code = (
        "import atexit, sys\nfrom toolret.cli import main\nfrom toolret.index import embedding\n"
        "def report():\n"
        "    for emb in embedding._PACKAGED.values():\n"
        "        print(emb._session.get_session_options().graph_optimization_level.name, file=sys.stderr)\n"
        "atexit.register(report)\n"
        "assert main(['search', '--kb', sys.argv[1], 'rain in Paris?']) == 0\nreport()\n"
        "sys.argv = ['toolret', 'search', '--kb', sys.argv[1], 'rain in Paris?']\n"
        "embedding._PACKAGED.clear()\nsys.exit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", code, str(saved_kb)], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.split() == ["ORT_ENABLE_ALL", "ORT_DISABLE_ALL"]


def test_a_program_search_skips_the_blas_pool_and_pydantic_plugins_unless_the_user_set_them(saved_kb: Path):
    # One query repays neither BLAS's thread pool (and threadpoolctl's inspection of it) nor pydantic's
    # scan of every installed package for plugins; a variable the user set stays theirs.
    code = (
        "import atexit, os, sys\nfrom toolret.cli import main\n"
        "def report():\n"
        "    print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('PYDANTIC_DISABLE_PLUGINS'),\n"
        "          'threadpoolctl' in sys.modules, file=sys.stderr)\n"
        "atexit.register(report)\n"
        f"sys.argv = ['toolret', 'search', '--kb', {str(saved_kb)!r}, 'rain in Paris?', '-k', '1']\n"
        "sys.exit(main())\n"
    )
    paths = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "PYDANTIC_DISABLE_PLUGINS")
    }
    runs = {}
    for label, extra in {
        "default": {},
        "user": {"OPENBLAS_NUM_THREADS": "2", "PYDANTIC_DISABLE_PLUGINS": "none"},
    }.items():
        env = {**clean, "PYTHONPATH": paths, **extra}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        assert "get_weather" in out.stdout
        runs[label] = out.stderr.split()
    assert runs == {"default": ["1", "__all__", "False"], "user": ["2", "none", "True"]}
