"""After rendering, both engines print the same next steps, and they are the generated README's
first block, which starts the repository (`git init`, a first commit) before anything needs it.

copier prints templates/next-steps.jinja as `_message_after_copy` (no `--trust`), the cookiecutter
hook renders the same file; the README includes the commands from templates/first-steps.sh.
That the steps work as written is test_readme_install.py's part. The hook's rendered copy, which
cookiecutter leaves in the temporary folder, deletes itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.render import BIN, COOKIECUTTER_JSON, run

# The first line of the message, with the folder the repo was made in.
HEADER = re.compile(r"^Made (?P<name>.+) in (?P<folder>\S+)\. Next steps", re.MULTILINE)


def message(output: str) -> tuple[str, str]:
    """The next steps in an engine's output (from their first line to the end), and the folder
    they name."""
    found = HEADER.search(output)
    assert found, f"no next steps in:\n{output}"
    assert found["name"] == COOKIECUTTER_JSON["project_name"]
    return output[found.start() :].strip(), found["folder"]


def test_both_engines_print_the_readme_first_block(template_repo: Path, tmp_path: Path) -> None:
    shell = {**os.environ, "PWD": str(tmp_path)}  # as a shell sets it: the hook shows paths from there
    made = run([BIN / "cookiecutter", "--no-input", "-o", "one", template_repo], cwd=tmp_path, env=shell)
    from_cookiecutter, folder = message(made.stderr)
    assert folder == "one/my-research-project"
    copied = run([BIN / "copier", "copy", "--defaults", template_repo, "two/my-research-project"], cwd=tmp_path)
    from_copier, copier_folder = message(copied.stderr)
    assert copier_folder == "two/my-research-project"
    assert from_copier.replace("two/", "one/") == from_cookiecutter

    readme = (tmp_path / folder / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0]  # the README's first code block
    steps = [line.strip() for line in from_cookiecutter.splitlines() if line.startswith("    ")]
    assert steps == [f"cd {folder}", *block.splitlines()]
    first, *rest = block.splitlines()
    assert re.fullmatch(r"git init && git add -A && git commit .*", first), first
    needs_git = [line for line in rest if "pre-commit" in line or "copier" in line]
    assert needs_git, "the README's first block no longer installs the pre-commit hook"


def test_cookiecutter_leaves_nothing_in_the_temporary_folder(template_repo: Path, tmp_path: Path) -> None:
    """cookiecutter runs a rendered copy of the hook from the temporary folder and keeps it; the
    copy deletes itself, so renders do not pile up files there."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run([BIN / "cookiecutter", "--no-input", "-o", tmp_path, template_repo], env={**os.environ, "TMPDIR": str(scratch)})
    assert (tmp_path / "my-research-project" / ".copier-answers.yml").is_file()
    assert not list(scratch.iterdir()), "a render left files in the temporary folder"
