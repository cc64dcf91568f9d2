"""Query-time dense scoring on one BLAS thread.

A search multiplies each field's tool vectors by one query vector: a matrix-vector product of
about a million multiply-adds for a 3,000-tool registry, which one core does in ~0.1 ms.
OpenBLAS nevertheless splits a product that size across all its threads, and on a busy machine
(several agent processes, or other jobs, sharing the cores) waking those threads costs a
scheduler slice each time: measured 24 ms per product on two loaded cores, against 0.09 ms on
one thread — most of the search, for no gain. :func:`one_blas_thread` runs a block with the BLAS
libraries on one thread and puts their thread counts back afterwards.

The thread count is process-wide, so blocks take turns (a lock held for the block, about a
millisecond): with overlapping blocks an early leaver would restore over a later one, and a thread
restoring a count another thread lowered is ignored by OpenBLAS 0.3.31 — either way the process
would be left on one thread for good. The thread that lowers the count restores it. (That
OpenBLAS also ignores a worker thread's change once the main thread has set a count itself: then
a search from a worker thread, e.g. ``asearch``, keeps the process's setting — slower under load,
never wrong.) Without ``threadpoolctl`` the block runs unchanged.

A process that runs one search and exits (``toolret search``) has nothing to share its cores
with and one product to compute. It calls :func:`single_threaded_process` before numpy loads:
BLAS then starts on one thread and never spawns a pool, and the block skips ``threadpoolctl``
(importing it and inspecting the loaded libraries cost 5-9 ms; with OpenBLAS's thread start-up,
a fresh ``toolret search`` took 0.020 s longer, median of 20).

Example:
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones((4, 3), dtype=np.float32) @ np.ones(3, dtype=np.float32) @ np.ones(4))
    12.0
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread", "single_threaded_process"]

_lock = threading.RLock()
_depth = 0
_controller: Any = None
_unavailable = False
#: What BLAS libraries read their thread count from at load: OpenBLAS (numpy's wheels), MKL and Accelerate.
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: True once :func:`single_threaded_process` loaded BLAS on one thread: no block has anything to limit.
_process_single = False


def single_threaded_process() -> bool:
    """Load BLAS on one thread for the whole process, when that is still possible; True if it was done.

    For a process that runs one search (``toolret search``), called before anything imports
    numpy. It sets the BLAS thread variables and from then on :func:`one_blas_thread` limits
    nothing. It does nothing, and returns False, once numpy is loaded (the libraries read the
    variables only at load) or when the user set any of the variables: their count is then
    theirs, and the blocks go on limiting as usual.
    """
    global _process_single
    if "numpy" in sys.modules or any(name in os.environ for name in _THREAD_VARIABLES):
        return _process_single
    for name in _THREAD_VARIABLES:
        os.environ[name] = "1"
    _process_single = True
    return True


def _get_controller() -> Any:
    """The process's BLAS libraries, inspected once (inspecting them costs milliseconds)."""
    global _controller, _unavailable
    if _controller is None and not _unavailable:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _unavailable = True
            return None
        _controller = ThreadpoolController()
    return _controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with BLAS on one thread (see the module docstring for why)."""
    global _depth
    if _process_single:  # BLAS loaded on one thread: nothing to limit, nothing to put back
        yield
        return
    with _lock:
        limiter = None
        if _depth == 0:
            controller = _get_controller()
            if controller is not None:
                limiter = controller.limit(limits=1, user_api="blas")
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
            if limiter is not None:
                limiter.restore_original_limits()
