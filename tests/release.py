"""The steps of a release of `parity` that both .github/workflows/release.yml and
tests/test_release.py take: the tag is the version, the distributions build and pass
`twine check --strict`, and the example of the package's README passes with an installed parity.

Plain Python (the standard library, `build` and `twine`), run by its path in the workflow:

    python tests/release.py tag vX.Y.Z          # fails unless both pyproject.toml files say X.Y.Z
    python tests/release.py build DIST          # the sdist, the wheel from it, twine check --strict
    python tests/release.py example PYTHON      # the README's example with PYTHON's parity
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "packages" / "parity"
#: The line the plugin reports, under `pytest -v`, for the example's first target.
EXAMPLE_PASSED = "test_matches_reference[torch-float32-cpu] PASSED (10 compared)"


def versions(root: Path = ROOT) -> dict[str, str]:
    """The version in each pyproject.toml released together: the template's and parity's."""
    files = {
        "pyproject.toml": root / "pyproject.toml",
        "packages/parity/pyproject.toml": root / "packages" / "parity" / "pyproject.toml",
    }
    return {name: tomllib.loads(path.read_text(encoding="utf-8"))["project"]["version"] for name, path in files.items()}


def check_tag(tag: str, root: Path = ROOT) -> str:
    """The version that `tag` (vX.Y.Z) releases; ValueError unless both pyproject.toml files say it."""
    if not re.fullmatch(r"v\d+\.\d+\.\d+", tag):
        msg = f"tag {tag!r} is not vX.Y.Z"
        raise ValueError(msg)
    if wrong := {name: version for name, version in versions(root).items() if f"v{version}" != tag}:
        msg = f"tag {tag}, but " + ", ".join(f"{name} says {version}" for name, version in wrong.items())
        raise ValueError(msg)
    return tag[1:]


def build(dist: Path, python: str = sys.executable) -> list[Path]:
    """Build parity's sdist, then its wheel from that sdist, into `dist`; check both with
    `twine check --strict`; return [sdist, wheel]."""
    subprocess.run([python, "-m", "build", "--outdir", str(dist), str(PACKAGE)], check=True)
    built = [*dist.glob("parity-*.tar.gz"), *dist.glob("parity-*.whl")]
    if len(built) != 2:
        msg = f"expected one sdist and one wheel in {dist}, found {sorted(path.name for path in built)}"
        raise RuntimeError(msg)
    subprocess.run([python, "-m", "twine", "check", "--strict", *map(str, built)], check=True)
    return built


def example() -> str:
    """The python block of parity's README: a test module for any repo."""
    block: str
    (block,) = re.findall(r"```python\n(.*?)```", (PACKAGE / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    return block


def run_example(python: str | Path, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run the README's example with `python -m pytest -v` in `folder`, a project of its own (a
    pytest.ini, no pyproject.toml), with `python`'s parity alone: no PYTHONPATH, no PYTEST_ options."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_logsumexp.py").write_text(example(), encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "PYTEST"))}
    env["HYPOTHESIS_PROFILE"] = "ci"
    command = [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider", "-W", "error"]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)


def main(argv: list[str]) -> int:
    match argv:
        case ["tag", tag]:
            try:
                print(f"releasing parity {check_tag(tag)}")
            except ValueError as error:
                print(f"error: {error}", file=sys.stderr)
                return 1
        case ["build", dist]:
            print("\n".join(path.name for path in build(Path(dist))))
        case ["example", python]:
            with tempfile.TemporaryDirectory() as folder:
                result = run_example(python, Path(folder) / "any-repo")
            print(result.stdout + result.stderr)
            if result.returncode != 0 or EXAMPLE_PASSED not in result.stdout:
                print(f"error: the README's example did not pass with {python}'s parity", file=sys.stderr)
                return 1
        case _:
            print(__doc__, file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
