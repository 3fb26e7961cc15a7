git init && git add -A && git commit -q -m "Start from the template"  # pre-commit and copier update need a repository
python -m venv .venv
source .venv/bin/activate
python -m pip install --upgrade pip
pip install torch --index-url https://download.pytorch.org/whl/cpu  # or a CUDA build on a GPU machine
pip install --group dev -e "{{ cookiecutter.__install_target }}"
pre-commit install  # run the checks in .pre-commit-config.yaml on every commit
