"""The template's noxfile chooses the torch index as the tests and benchmarks do (tests/torch_index.py).

nox loads the noxfile by its path, without its folder on sys.path, so the noxfile keeps its own
copy of the choice; here both run on the same environments and answers from DNS.
"""

from __future__ import annotations

import importlib.util
import socket
from types import ModuleType
from typing import Any

import pytest

from tests import torch_index
from tests.render import ROOT


class Session:
    """The one method of nox.Session that `torch_index_url` calls."""

    def log(self, message: str) -> None:
        print(message)


@pytest.fixture(scope="module")
def noxfile() -> ModuleType:
    """noxfile.py, loaded by its path as nox loads it."""
    spec = importlib.util.spec_from_file_location("template_noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("variable", "online", "expected"),
    [
        ("https://mirror.example.org/torch", False, "https://mirror.example.org/torch"),
        ("", True, ""),
        (None, True, torch_index.TORCH_CPU_INDEX),
        (None, False, ""),
    ],
    ids=["set", "set-empty", "unset-online", "unset-offline"],
)
def test_noxfile_chooses_the_torch_index_as_the_tests_do(
    noxfile: ModuleType, monkeypatch: pytest.MonkeyPatch, variable: str | None, online: bool, expected: str
) -> None:
    if variable is None:
        monkeypatch.delenv("TORCH_INDEX_URL", raising=False)
    else:
        monkeypatch.setenv("TORCH_INDEX_URL", variable)

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        if online:
            return []
        raise socket.gaierror(f"{host} does not resolve here")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    caches = (noxfile.resolves.cache_clear, torch_index.resolves.cache_clear)  # each host's answer is kept
    for clear in caches:
        clear()
    try:
        assert noxfile.torch_index_url(Session()) == torch_index.torch_index_url() == expected
    finally:
        for clear in caches:
            clear()
