"""Fixtures shared by the source tests: the real MCP test server over streamable HTTP."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

#: A real MCP server (FastMCP) with a few tool flavours; tests start it over stdio or HTTP.
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_tools_server.py"


@pytest.fixture
def http_server(free_port):
    """The calc flavour served over streamable HTTP on 127.0.0.1, stopped by its pid."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "calc", "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the MCP HTTP server did not start") from None
            time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
