"""What a process that runs one search and exits does differently (``toolret search`` as a program).

A long-lived process (an agent, a server) amortises its start-up; a ``toolret search`` pays all of
it for one query, and its wall time is the command's whole cost (README, "Cold start";
docs/decisions/2026-11-27-cold-start.md). :func:`prepare` runs before anything loads numpy or
builds a pydantic model and drops the start-up work one query does not repay; :func:`end_now`
ends the process once the output is out, without the interpreter's teardown. The library, and
``toolret.cli.main([...])`` called from Python, use neither.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

__all__ = ["end_now", "prepare"]


def prepare() -> None:
    """Set up this process for one search, before numpy loads.

    One query repays none of three start-up costs a long-lived process amortises:
    - BLAS's thread pool and its inspection by threadpoolctl (:func:`toolret.index.blas.single_threaded_process`);
    - pydantic's plugin discovery, which reads every installed package's entry points (3 ms in
      the base install, 5-8 ms beside the dev extras); a plugin has no user code to observe in this
      process. ``PYDANTIC_DISABLE_PLUGINS`` is set only when the user has not set it (set it
      empty to keep your plugins);
    - onnxruntime's graph optimisation (0.07 s; :func:`toolret.index.onnx_embedding.load_sessions_quickly`).
    """
    from toolret.index.blas import single_threaded_process

    single_threaded_process()  # first: the next import loads numpy
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from toolret.index.onnx_embedding import load_sessions_quickly

    load_sessions_quickly()


def end_now(status: int) -> NoReturn:
    """End the process once a read-only verb's output is out, without tearing the interpreter down.

    Finalising every module, the model's onnxruntime session and numpy's buffers cost a fresh
    ``toolret search`` ~0.06 s after it printed (0.45x the floor import of README's cold start),
    and a search leaves nothing to finalise: it writes no file. What an exit must still do is done
    here: the output is flushed (also into a pipe), non-daemon threads are waited for (the model's
    background load), atexit handlers run (logging's among them).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to deliver
            stream.flush()
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    os._exit(status)
