"""The release path of `parity`, on a real package index: its sdist and wheel build and pass
`twine check --strict`, upload with twine to a pypiserver on the loopback, and `pip install
parity==VERSION` from that index into a fresh venv gives a parity whose README example passes in
a folder that is no template's. The release workflow takes the same steps (tests/release.py) and
refuses a tag that is not both pyproject.toml files' version; the README's install lines name this
release.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.release import EXAMPLE_PASSED, PACKAGE, ROOT, build, check_tag, run_example, versions
from tests.test_readme_install import local_torch, torch_pin
from tests.torch_index import torch_index_url

VERSION = versions()["packages/parity/pyproject.toml"]
TORCH = torch_pin(ROOT / "template" / "noxfile.py")  # the generated repos' pinned torch
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def package_index(tmp_path: Path) -> Iterator[str]:
    """A pypiserver on 127.0.0.1 (a free port) serving an empty folder, accepting uploads without
    authentication; its URL. Stopped at the end, and nothing is left listening on its port."""
    folder = tmp_path / "index"
    folder.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "pypiserver.log"
    command = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", "."]
    with log.open("w") as output:
        server = subprocess.Popen([*command, str(folder)], stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pypiserver did not start on port {port}:\n{log.read_text()}")
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert not listening(port), f"port {port} still accepts connections after pypiserver stopped"


@pytest.mark.slow
def test_parity_installs_from_a_package_index(package_index: str, tmp_path: Path) -> None:
    started = time.perf_counter()
    # Torch first, as the README says: PyTorch's CPU index where it resolves, else pip's own
    # configuration (its wheel folder here), never PyPI's CUDA build. It installs while the
    # distributions build and upload; its modules compile when the example imports them.
    index = torch_index_url()
    if not index and (why := local_torch(sys.executable, TORCH)):
        pytest.skip(why)
    venv = tmp_path / "venv"  # fresh: this interpreter's pip installs into it (`pip --python`)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile"]
    torch_step = [*pip, f"torch=={TORCH}", *(["--index-url", index] if index else [])]
    torch = subprocess.Popen(torch_step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        dist = build(tmp_path / "dist")
        upload = [sys.executable, "-m", "twine", "upload", "--non-interactive", "--repository-url", package_index]
        uploaded = subprocess.run(
            [*upload, "--username", "anyone", "--password", "unused", *map(str, dist)],
            capture_output=True,
            text=True,
            check=False,
        )
    except BaseException:
        torch.kill()
        raise
    torch_output, _ = torch.communicate()
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    assert torch.returncode == 0, torch_output
    (torch_installed,) = venv.glob("lib/python*/site-packages/torch-*.dist-info")
    assert torch_installed.name == f"torch-{TORCH}+cpu.dist-info", "not the CPU build"
    with urllib.request.urlopen(f"{package_index}/simple/parity/", timeout=10) as page:
        listed = page.read().decode()
    assert f"parity-{VERSION}.tar.gz" in listed, listed
    assert f"parity-{VERSION}-py3-none-any.whl" in listed, listed

    # The index in place of PyPI; pip's configuration (find-links, extra indexes) kept, and
    # pypiserver sends what it lacks (parity's dependencies) on to PyPI. Only a folder that holds
    # a parity wheel already (nox's tests session names one) leaves PIP_FIND_LINKS for this step.
    folders = os.environ.get("PIP_FIND_LINKS", "").split()
    find_links = " ".join(folder for folder in folders if not any(Path(folder).glob("parity-*")))
    report = tmp_path / "report.json"
    install = [*pip, "--report", str(report), "--index-url", f"{package_index}/simple/", f"parity=={VERSION}"]
    env = {**os.environ, "PIP_FIND_LINKS": find_links}
    installed = subprocess.run(install, capture_output=True, text=True, env=env, check=False)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    got: dict[str, dict[str, Any]] = {
        item["metadata"]["name"]: item for item in json.loads(report.read_text(encoding="utf-8"))["install"]
    }
    assert got["parity"]["download_info"]["url"].startswith(f"{package_index}/packages/parity-{VERSION}-")
    assert "torch" not in got, "installing parity replaced the CPU torch installed first"

    result = run_example(python, tmp_path / "any-repo")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"parity-{VERSION}" in result.stdout  # the plugin, from the venv
    assert EXAMPLE_PASSED in result.stdout, result.stdout
    print(f"build, upload, install from the index, the example: {time.perf_counter() - started:.1f} s")


def test_a_tag_is_both_versions(tmp_path: Path) -> None:
    assert versions() == {"pyproject.toml": VERSION, "packages/parity/pyproject.toml": VERSION}
    assert check_tag(f"v{VERSION}") == VERSION
    for tag in (VERSION, f"v{VERSION}rc1", f"v{VERSION}.0", "vX.Y.Z"):
        with pytest.raises(ValueError, match=r"is not vX\.Y\.Z"):
            check_tag(tag)
    # A root version left behind when the package's was raised: the tag cannot release both.
    (tmp_path / "packages" / "parity").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[project]\nversion = "1.0.0"\n', encoding="utf-8")
    (tmp_path / "packages" / "parity" / "pyproject.toml").write_text('[project]\nversion = "1.1.0"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"tag v1\.1\.0, but pyproject\.toml says 1\.0\.0$"):
        check_tag("v1.1.0", tmp_path)


def workflow_step(name: str) -> str:
    """The `run:` script of the release workflow's step called `name`."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (script,) = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if step.get("name") == name]
    assert isinstance(script, str)
    return script


@pytest.mark.parametrize("tag", ["v0.0.1", "v99.0.0", "latest"])
def test_the_workflow_refuses_a_tag_that_is_not_the_version(tag: str) -> None:
    script = workflow_step("the tag is both versions")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # `python`: this one, as setup-python's
    env = {**os.environ, "PATH": path, "GITHUB_REF_NAME": tag}
    refused = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode != 0, refused.stdout
    assert tag in refused.stderr
    env["GITHUB_REF_NAME"] = f"v{VERSION}"
    accepted = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert accepted.returncode == 0, accepted.stderr
    assert f"releasing parity {VERSION}" in accepted.stdout


def test_the_workflow_publishes_only_what_it_tested() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert workflow[True]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]  # PyYAML reads `on:` as True
    build_job, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    scripts = "\n".join(step.get("run", "") for step in build_job["steps"])
    for step in ("tag", "build dist", "example"):
        assert f"python tests/release.py {step}" in scripts, f"the workflow does not run `release.py {step}`"
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}, "trusted publishing, and nothing else"
    assert publish["environment"]["name"] == "pypi"
    assert "id-token" not in json.dumps(build_job), "the job that runs the tests can mint no token"
    (uses,) = [step["uses"] for step in publish["steps"] if "gh-action-pypi-publish" in step.get("uses", "")]
    assert re.fullmatch(r"pypa/gh-action-pypi-publish@[0-9a-f]{40}", uses), f"not pinned by commit: {uses}"


def install_section() -> str:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_installs_this_release() -> None:
    section = install_section()
    torch_lines = [line for line in section.splitlines() if line.startswith("pip install torch ")]
    assert torch_lines == [
        "pip install torch --index-url https://download.pytorch.org/whl/cpu --retries 0 --timeout 10"
        f' || pip install "torch=={TORCH}"'
    ]
    tags = re.findall(r"@v(\d+\.\d+\.\d+)#subdirectory=packages/parity", section)
    pins = re.findall(r"parity==(\S+?)[`\s]", section)
    assert len(tags) == 1, section
    assert len(pins) == 2, section  # from PyPI, and from a folder of wheels
    assert set(tags) | set(pins) == {VERSION}, "the install lines name another release"


@pytest.mark.slow
def test_the_readmes_git_line_installs_the_tagged_parity(template_repo: Path, tmp_path: Path) -> None:
    """The README's git line, with the template's URL replaced by this tree's snapshot (tagged
    v0.1.0 as a release would be): pip finds parity at the tag, in packages/parity."""
    (line,) = [line for line in install_section().splitlines() if "git+https://" in line]
    requirement = re.search(r'"(parity @ git\+.*)"', line)
    assert requirement, line
    local = re.sub(r"git\+https://github\.com/[^@]+@", f"git+{template_repo.as_uri()}@", requirement.group(1))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--dry-run"]
    result = subprocess.run(
        [*command, "--no-deps", "--quiet", "--report", str(report), local], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (parity,) = json.loads(report.read_text(encoding="utf-8"))["install"]
    assert parity["metadata"]["name"] == "parity"
    assert parity["metadata"]["version"] == VERSION
    assert parity["download_info"]["vcs_info"]["requested_revision"] == f"v{VERSION}"
