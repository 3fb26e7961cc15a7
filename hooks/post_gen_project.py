"""Finish a cookiecutter render so that it equals copier's output and `copier update` works.

- Remove folders whose files all rendered to empty names (copier excludes them via `_exclude`).
- Write `.copier-answers.yml` from the same template file copier renders, with `_commit`
  (the template's `git describe --tags --always`) and `_src_path` (absolute for a local template).
- Print the next steps from templates/next-steps.jinja, the file copier prints as
  `_message_after_copy`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment

# The answers arrive as JSON, where every quote is escaped: no answer can end this raw string and
# run as code.
CONTEXT = json.loads(r"""{{ cookiecutter | tojson }}""")
ANSWERS_FILE = ".copier-answers.yml"


def template_repo(repo_dir: str) -> Path:
    """The template's folder, absolute (see the same function in pre_gen_project.py)."""
    parent_cwd = Path(f"/proc/{os.getppid()}/cwd")
    if parent_cwd.exists():
        return parent_cwd.resolve()
    return Path(os.environ.get("PWD", Path.cwd()), repo_dir).resolve()


def remove_empty_folders(root: Path) -> None:
    """Deepest first, so a folder emptied by removing its children goes too."""
    for folder in sorted((path for path in root.rglob("*") if path.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()


def template_version(repo: Path) -> str | None:
    """`git describe --tags --always` of the template; None without git or outside a checkout."""
    try:
        result = subprocess.run(
            ["git", "-C", str(repo), "describe", "--tags", "--always"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:  # git is not installed
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def source_path(template: str, repo: Path) -> str:
    """What copier needs to find the template again: a URL as typed, a local folder absolute (as
    cruft passes it: `repo` is then cruft's temporary clone)."""
    if Path(template).is_absolute() and Path(template).is_dir():
        return template
    looks_remote = ":" in template and not Path(template).exists()
    return template if looks_remote else str(repo)


def write_answers(repo: Path) -> None:
    answers = {key: value for key, value in CONTEXT.items() if not key.startswith("_")}
    commit = template_version(repo)
    if commit is None:
        print(
            f"Note: {repo} is not a git checkout (or git is missing), so `copier update` will not "
            "be able to bring later template changes into this project.",
            file=sys.stderr,
        )
    else:
        answers["_commit"] = commit
    answers["_src_path"] = source_path(CONTEXT["_template"], repo)

    env = SandboxedEnvironment(keep_trailing_newline=True)
    env.filters["to_nice_yaml"] = lambda data: yaml.dump(data, indent=4, allow_unicode=True, default_flow_style=False)
    (template_file,) = (repo / "template").glob("*_copier_conf.answers_file*")
    text = env.from_string(template_file.read_text(encoding="utf-8")).render(_copier_answers=answers)
    Path(ANSWERS_FILE).write_text(text, encoding="utf-8")


def shown_path(project: Path) -> str:
    """The project's folder as the user would type it: relative to the shell's folder if inside it."""
    try:
        return str(project.relative_to(Path(os.environ["PWD"]).resolve()))
    except (KeyError, ValueError):
        return str(project)


def print_next_steps(repo: Path) -> None:
    """The text copier prints after a copy, rendered with the same names (see copier.yml)."""
    env = SandboxedEnvironment(loader=FileSystemLoader(str(repo)), keep_trailing_newline=True)
    message = env.get_template("templates/next-steps.jinja").render(
        cookiecutter=CONTEXT, _copier_conf={"dst_path": shown_path(Path.cwd().resolve())}
    )
    print(message, file=sys.stderr)


if __name__ == "__main__":
    remove_empty_folders(Path.cwd())
    repo = template_repo(CONTEXT.get("_repo_dir", "."))
    write_answers(repo)
    print_next_steps(repo)
