"""Where torch comes from: the template's noxfile and the generated one decide alike.

The generated repo must stand alone, so its noxfile holds the rule, and the template's noxfile takes
it from there (tests/torch_index.py): TORCH_INDEX_URL as set; unset, PyTorch's CPU index where its
host resolves, else "" (pip's own configuration, as on an offline cluster), decided at once instead
of after pip's retries. The template's noxfile decides per session, the generated one when it is
loaded. A real `nox -s tests` on such a machine is test_generated_repo.py's inner-loop test.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.render import COMBINATIONS, ROOT, Render
from tests.torch_index import TORCH_CPU_INDEX, TORCH_INDEX_HOST

GENERATED_NOXFILE = ROOT / "template" / "noxfile.py"  # plain Python: no Jinja in it
HOST = "download.pytorch.org"

# Loads a noxfile in a fresh interpreter, `getaddrinfo` answering as asked, and prints the CPU index
# it chooses. The template's noxfile decides per session; the generated one when it is loaded.
DECIDE = """
import importlib.util, json, socket, sys
path, resolves = sys.argv[1], sys.argv[2] == "resolves"
def getaddrinfo(host, *args, **kwargs):
    if resolves:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", 443))]
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
if sys.argv[2] != "real":
    socket.getaddrinfo = getaddrinfo
spec = importlib.util.spec_from_file_location("noxfile", path)
noxfile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(noxfile)
class Session:
    venv_backend = "virtualenv"
    logged = []
    def log(self, message):
        self.logged.append(message)
session = Session()
if hasattr(noxfile, "torch_index"):
    import nox
    chosen = {"index": noxfile.TORCH_INDEX_URL, "backend": nox.options.default_venv_backend}
else:
    chosen = {"index": noxfile.torch_index_url(session)}
print(json.dumps(chosen))
"""


def constants(noxfile: Path) -> dict[str, object]:
    """The module-level `NAME = <literal>` assignments of a noxfile."""
    found: dict[str, object] = {}
    for node in ast.parse(noxfile.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            found |= {target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)}
    return found


def decide(noxfile: Path, cwd: Path, resolves: str, index: str | None, wrapper: Sequence[str] = ()) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCH_")}
    if index is not None:
        env["TORCH_INDEX_URL"] = index
    command = [*wrapper, sys.executable, "-c", DECIDE, str(noxfile), resolves]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    chosen: dict[str, str] = json.loads(result.stdout)
    return chosen


@pytest.fixture(scope="module")
def repo(rendered: Render) -> Path:
    return rendered("cookiecutter", COMBINATIONS[0])


def test_the_index_is_pytorchs() -> None:
    assert TORCH_CPU_INDEX == "https://download.pytorch.org/whl/cpu"
    assert TORCH_INDEX_HOST == HOST
    assert urlsplit(str(constants(GENERATED_NOXFILE)["CUDA_INDEX"])).hostname == HOST


@pytest.mark.parametrize(
    ("resolves", "index", "expected"),
    [
        ("resolves", None, "https://download.pytorch.org/whl/cpu"),
        ("fails", None, ""),
        ("fails", "https://mirror.example/torch", "https://mirror.example/torch"),
        ("resolves", "", ""),
    ],
    ids=["online", "offline", "set", "set-empty"],
)
def test_the_same_rule(repo: Path, resolves: str, index: str | None, expected: str) -> None:
    ours = decide(ROOT / "noxfile.py", ROOT, resolves, index)
    generated = decide(repo / "noxfile.py", repo, resolves, index)
    assert ours["index"] == generated["index"] == expected
    # uv ignores pip's configuration: where torch (CPU or, offline, CUDA) comes from there, the
    # sessions use virtualenv.
    from_pip = not expected or resolves == "fails"
    assert generated["backend"] == ("virtualenv" if from_pip else "uv|virtualenv")


def offline() -> list[str]:
    """A command prefix that runs without any network (a new network namespace), so that nothing
    resolves; skips where namespaces are not allowed and this machine resolves PyTorch's host."""
    probe = ["unshare", "--user", "--map-root-user", "--net"]
    if shutil.which("unshare") and subprocess.run([*probe, "true"], check=False).returncode == 0:
        return probe
    try:
        socket.getaddrinfo(HOST, 443)
    except OSError:
        return []  # this machine is offline already
    pytest.skip("cannot make a host unresolvable here: `unshare --net` is not permitted")


def test_an_offline_machine_falls_back_at_once(repo: Path) -> None:
    """No monkeypatching: a real failed lookup, timed from starting Python to the decision."""
    wrapper = offline()
    started = time.perf_counter()
    chosen = decide(repo / "noxfile.py", repo, "real", None, wrapper)
    elapsed = time.perf_counter() - started
    assert chosen == {"index": "", "backend": "virtualenv"}
    assert elapsed < 10, f"deciding took {elapsed:.1f} s"
    print(f"offline: decided in {elapsed:.2f} s, Python's start and the noxfile's imports included")
