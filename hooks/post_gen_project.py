"""Finish a cookiecutter render so that it equals copier's output and `copier update` works.

local_extensions.py computed the two texts below in cookiecutter's process, while cookiecutter
rendered this script: the answers file copier writes (with `_commit` and `_src_path`), and the
next steps copier prints (`_message_after_copy`). This process writes one, prints the other and
removes the folders whose files all rendered to empty names (copier leaves them out via
`_exclude`). cookiecutter runs a rendered copy of this script from the temporary folder and never
deletes it (a file per render, thousands where renders are frequent), so the copy deletes itself;
the unrendered script cannot get that far (its hexadecimal is a Jinja tag). It imports nothing
beyond what Python starts with (json's import alone would take a fifth of its time, pathlib's a
tenth), so it uses `os`; the texts arrive in hexadecimal, where no character can end the string.
"""

import os
import sys

ANSWERS_FILE = bytes.fromhex("{{ answers_file(cookiecutter) | hex }}").decode()
NEXT_STEPS = bytes.fromhex("{{ next_steps(cookiecutter) | hex }}").decode()


def remove_empty_folders(root: str) -> None:
    """Deepest first, so a folder emptied by removing its children goes too."""
    for folder, _, _ in os.walk(root, topdown=False):
        if folder != root and not os.listdir(folder):
            os.rmdir(folder)


if __name__ == "__main__":
    os.remove(__file__)
    remove_empty_folders(".")
    with open(".copier-answers.yml", "w", encoding="utf-8") as answers:
        answers.write(ANSWERS_FILE)
    print(NEXT_STEPS, file=sys.stderr)
