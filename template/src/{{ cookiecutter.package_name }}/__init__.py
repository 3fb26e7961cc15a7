"""Algorithms with a NumPy reference implementation and a PyTorch port{% if cookiecutter.jax %} (and a JAX one){% endif %}.

Each public function takes {% if cookiecutter.jax %}NumPy arrays, PyTorch tensors or JAX arrays{% else %}NumPy arrays or PyTorch tensors{% endif %}, dispatches on
their type, and returns the same kind of array (same dtype, same device).
"""

from .cross_entropy import cross_entropy
from .softmax import softmax

__all__ = ["cross_entropy", "softmax"]
