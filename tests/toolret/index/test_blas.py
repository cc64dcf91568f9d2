"""Query-time products on one BLAS thread, and the thread count put back afterwards."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import threadpoolctl  # a base dependency of toolret (toolret.index.blas)

from toolret.index import blas
from toolret.index.blas import one_blas_thread


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
