"""Where CPU builds of torch come from, for the tests and benchmarks that install torch.

The template's noxfile loads this module by its path; the generated repos' noxfile keeps a copy of
the rule, as a repo must stand alone: tests/test_noxfiles_agree.py proves the two choose alike.
"""

from __future__ import annotations

import functools
import os
import socket

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_INDEX_HOST = "download.pytorch.org"


@functools.cache
def resolves(host: str) -> bool:
    """Whether `host` has an address: offline machines reach package indexes through a mirror."""
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def torch_index_url() -> str:
    """TORCH_INDEX_URL as set; unset, PyTorch's CPU index where it resolves, else "" (pip's own
    index and configuration: what an offline machine has, a local wheelhouse or mirror)."""
    if "TORCH_INDEX_URL" in os.environ:
        return os.environ["TORCH_INDEX_URL"]
    return TORCH_CPU_INDEX if resolves(TORCH_INDEX_HOST) else ""
