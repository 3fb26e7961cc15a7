"""Refuse bad answers before cookiecutter writes anything.

The rules are the `validator:` expressions of copier.yml, evaluated here with the same Jinja
filters copier provides, so both engines accept and refuse exactly the same answers.
"""

import json
import os
import re
import sys
from pathlib import Path

import yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment

# The answers arrive as JSON, where every quote is escaped: no answer can end this raw string and
# run as code.
CONTEXT = json.loads(r"""{{ cookiecutter | tojson }}""")


def template_repo(repo_dir: str) -> Path:
    """The template's folder, absolute: cookiecutter may record it relative, as typed.

    Hooks run in the project folder while cookiecutter itself sits in the template folder: on
    Linux that is the parent's cwd; elsewhere the shell's $PWD (left alone by cookiecutter's chdir)
    resolves a relative path. post_gen_project.py repeats this: hooks cannot import each other.
    """
    parent_cwd = Path(f"/proc/{os.getppid()}/cwd")
    if parent_cwd.exists():
        return parent_cwd.resolve()
    return Path(os.environ.get("PWD", Path.cwd()), repo_dir).resolve()


def regex_search(value: str, pattern: str) -> str | None:
    match = re.search(pattern, value)
    return match.group() if match else None


def regex_replace(value: str, pattern: str, replacement: str = "") -> str:
    return re.sub(pattern, replacement, value)


def refusals(repo_dir: Path, answers: dict[str, object]) -> list[str]:
    """Messages of every copier.yml validator that refuses its answer."""
    questions = yaml.safe_load((repo_dir / "copier.yml").read_text(encoding="utf-8"))
    env = SandboxedEnvironment(loader=FileSystemLoader(repo_dir))
    env.filters.update(regex_search=regex_search, regex_replace=regex_replace)
    messages = []
    for name, question in questions.items():
        if name.startswith("_") or "validator" not in question:
            continue
        # copier passes the raw `--data` values as _copier_conf.data; cookiecutter has
        # already turned yes/no answers into booleans.
        message = env.from_string(question["validator"]).render(answers, _copier_conf={"data": answers})
        if message.strip():
            messages.append(f"  {name}: {message.strip()}")
    return messages


def checkout_problem(repo_dir: Path) -> str | None:
    """cookiecutter reaches template/ through a symlink; a checkout without symlinks (git on
    Windows without core.symlinks) holds a small text file there instead."""
    (entry,) = (path for path in repo_dir.iterdir() if "cookiecutter" in path.name and "{" in path.name)
    if entry.is_dir():
        return None
    return (
        f"{entry} is not a symlink to template/ in this checkout (git without symlink support?).\n"
        "  Clone again with `git clone -c core.symlinks=true ...` (on Windows, enable Developer Mode\n"
        "  first), or render with `copier copy`, which does not need the symlink."
    )


def main() -> int:
    repo_dir = template_repo(CONTEXT["_repo_dir"])
    if problem := checkout_problem(repo_dir):
        print(problem, file=sys.stderr)
        return 1
    answers = {key: value for key, value in CONTEXT.items() if not key.startswith("_")}
    messages = refusals(repo_dir, answers)
    if messages:
        print("The template refused these answers; nothing was generated:", file=sys.stderr)
        print("\n".join(messages), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
