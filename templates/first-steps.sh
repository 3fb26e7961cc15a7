git init && git add -A && git commit -q -m "Start from the template"  # pre-commit and copier update need a repository
python -m venv .venv
source .venv/bin/activate
python -m pip install --upgrade pip
# torch alone, the CPU build; where PyTorch's index is unreachable, one quick try, then pip's own configuration (a cluster's mirror)
pip install torch --index-url https://download.pytorch.org/whl/cpu --retries 0 --timeout 10 || pip install "torch==2.13.0"
# the package, its tools (the dev group) and the parity harness, from the template's repository
pip install --group dev --group parity -e "{{ cookiecutter.__install_target }}"
pre-commit install  # run the checks in .pre-commit-config.yaml on every commit
