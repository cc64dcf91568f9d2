"""Query-time products on one BLAS thread, and the thread count put back afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import threadpoolctl  # a base dependency of toolret (toolret.index.blas)

from toolret.index import blas
from toolret.index.blas import one_blas_thread

ROOT = Path(__file__).resolve().parents[3]


def _blas_threads() -> set[int]:
    """Thread counts of the BLAS libraries loaded when toolret first limited them (numpy's among
    them; a library loaded later, e.g. by torch, does not compute toolret's products)."""
    np.ones(1)
    return {p["num_threads"] for p in blas._get_controller().info() if p["user_api"] == "blas"}


@pytest.fixture
def two_threads():
    # numpy's wheels carry OpenBLAS: finding none means one_blas_thread limits nothing, a failure.
    assert _blas_threads(), "threadpoolctl found no BLAS library behind numpy"
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        yield


def test_one_thread_inside_and_the_setting_restored_after(two_threads):
    with one_blas_thread():
        assert _blas_threads() == {1}
        with one_blas_thread():  # nested: the outer block restores
            assert _blas_threads() == {1}
        assert _blas_threads() == {1}
    assert _blas_threads() == {2}


def test_searches_in_other_threads_take_turns_and_leave_the_setting_as_it_was():
    # OpenBLAS 0.3.31 ignores another thread's change once the main thread has set a count, so
    # what is checked here is the turn-taking and that no block leaves a different count behind.
    before = _blas_threads()
    events: list[str] = []

    def search(name: str) -> None:
        with one_blas_thread():
            events.append(f"{name} in")
            time.sleep(0.02)
            events.append(f"{name} out")

    workers = [threading.Thread(target=search, args=(str(i),)) for i in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(5)
    assert len(events) == 6
    assert [e.split()[0] for e in events[0::2]] == [e.split()[0] for e in events[1::2]]  # no overlap
    assert _blas_threads() == before


def test_single_threaded_process_does_nothing_once_numpy_is_loaded(monkeypatch):
    # The libraries read their thread count when they load: setting the variables now would claim
    # a single thread the process does not have, and the blocks would stop limiting.
    for name in blas._THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert blas.single_threaded_process() is False
    assert not any(name in os.environ for name in blas._THREAD_VARIABLES)
    assert blas._process_single is False


def _fresh(code: str, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in blas._THREAD_VARIABLES}
    paths = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean, "PYTHONPATH": paths, **env},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


_ONE_SEARCH = (
    "import sys\nfrom toolret.index import blas\nprint(blas.single_threaded_process())\n"
    "import numpy as np\nwith blas.one_blas_thread():\n    v = np.ones((300, 384), np.float32) @ np.ones(384, np.float32)\n"
    "print('threadpoolctl' in sys.modules)\nimport threadpoolctl\n"
    "print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas'}))\n"
)


def test_a_one_search_process_loads_blas_on_one_thread_and_skips_the_inspection():
    assert _fresh(_ONE_SEARCH) == ["True", "False", "[1]"]


def test_a_thread_count_the_user_set_is_theirs():
    # OPENBLAS_NUM_THREADS=2: left as set, and the block limits the product through threadpoolctl.
    assert _fresh(_ONE_SEARCH, OPENBLAS_NUM_THREADS="2") == ["False", "True", "[2]"]
