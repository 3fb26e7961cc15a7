"""The parity harness: every backend, dtype and device is compared with the NumPy reference.

An algorithm's test module declares what its function takes, in a `Spec` (the operands' shapes,
how their sizes relate, the range of their values), and draws its parameters; the work happens
here:

- `over()`, `targets()`: what to compare, as pytest parameters with ids such as
  ``torch-float32-cuda``. A target is a backend, a dtype and a device; the plugin (plugin.py)
  skips a target whose device is missing (or fails it, with ``--require-device``).
- `Spec`, `operands()`, `edge_operands()`, `sized_operands()`: the inputs a `Spec` allows, drawn
  by hypothesis or fixed; `arrays()` and `log_uniform()` for the rest.
  Values are ``(low, high)`` or intervals with open ends and holes (``"(0, 10]"``, ``"[-10,
  -0.5] | [0.5, 10]"``), honoured by every draw after rounding to the target's dtype; with
  ``extremes``, each call first draws whether it holds extreme values, so about half are
  ordinary. Besides shapes and values, a `Spec` states the constraints of an algorithm: operands of
  integers and their range (``integers={"labels": (0, "c")}``, labels below C), sizes that are
  multiples (``multiples={"d": 2}`` even, ``{"c": "groups"}`` of a parameter) or a multiple of
  another letter (``sides={"e": ("3h", "3h")}``), and the dtypes its ports support (``dtypes``:
  the others' tests are skipped, with the reason). JAX's fixed sizes honour them too. It also
  declares why the ports have no derivative (``no_gradient``: the gradient tests skip) and which
  dtypes cannot hold the problem for some draws (``cannot_hold``: a test there that compared
  nothing skips, naming it).
- `assert_matches_reference()`: the target's result against the float64 NumPy reference computed
  from the very same (rounded) inputs: array type, dtype, device, shape, then values.
- `assert_keeps_type_dtype_device()`: the same checks without values, for PyTorch's ``meta``
  device (tensors without data), which shows device mix-ups without a GPU. A port that calls an
  operation with no meta kernel (``bincount``, ``nonzero``: their shapes depend on the values)
  is skipped there, with the reason; a copy out of a meta tensor (a stray ``.cpu()``) fails.
- `assert_gradient_matches_reference()`: the gradient with respect to every floating operand
  against finite differences of the NumPy reference: NumPy is the spec for gradients too.
- `assert_second_derivative_matches()`, `assert_forward_mode_matches()`: the second derivative
  (a Hessian-vector product) against differences of the port's own first gradient, and forward
  mode against reverse mode ("Second derivatives and forward mode").
- `assert_compiled_matches_eager()`, `assert_vmap_matches_loop()`: compiled and batched code
  gives the eager result (within the room of the computation), and compiles once.
- `assert_rejects_unsupported()`: a clear ``TypeError`` for lists, scalars, array-likes, integer
  arrays and operands from different backends.

How close each port came is kept, per algorithm (the test module's name, ``test_softmax.py``:
softmax), backend, dtype and device: calls compared, elements, and the worst error as a fraction
of what was allowed (1.0: at the limit). The end of a run says it in a line per algorithm and
backend; ``pytest --parity-report=PATH`` (or ``PARITY_REPORT=PATH``) writes it to a JSON file
with the checks passed, skipped (with the reason) and failed, the seed, the versions and the
commit (report.py), which the docs site's algorithm pages show.

Every helper takes the algorithm's operands as a tuple and its parameters as a dict, and its own
options keyword-only, so an algorithm's parameters may have any name (even ``tolerances``). What
each backend needs (make an array, read it back, take gradients, compile) is in one table,
`BACKENDS` (backends.py); JAX is one of them where the repo's pyproject.toml has a ``jax`` extra.
The constants the rules below name (`ROOM`, `NUDGES`, `GRADIENT_TOLERANCE`, ...) are in
core.py (``parity.core.ROOM``); `TOLERANCES`, which a test module overrides per dtype, is public.

The same rules in every helper
------------------------------
- The reference runs first. Where it raises (an empty reduction, say: the reference is the spec),
  the target must raise too, any exception, and nothing else is compared. Where the reference
  returns and the target raises, the failure names both outcomes and the shapes. A result with
  no elements is the exception: raising there is as good as returning it, either way (NumPy
  refuses the maximum of an empty axis even where the result would be empty; PyTorch does not).
  A result that holds a NaN refuses as raising does: JAX's compiled code cannot raise, and its
  linear algebra answers NaN where NumPy's raises (so does the mean of nothing: PyTorch's
  cross-entropy of an empty batch). And at the edge of the reference's domain, where it raises
  on the inputs but returns on a copy nudged by the target dtype's epsilon, or inverts on the
  way a matrix beyond that dtype (below: a matrix singular as its elements round), a port may
  return: its dtype cannot see the edge; nothing is compared.
- No call may change its operands in place: every helper compares them before and after each
  call, the reference's included, and names the operand that changed.
- Warnings about values (`NUMERIC_WARNINGS`: NumPy's floating-point ones, PyTorch's on a
  degenerate reduction) are ignored in the reference and the ports alike: the values tell.

Values
------
A result `r` of a target with dtype `d` matches the float64 reference `e` element by element where::

    |r - e| <= atol + rtol * |e| + room

- ``rtol``, ``atol``: `TOLERANCES` [d], a few units in the last place of `d`: the rounding of each
  element-wise operation. A test overrides them per dtype with ``tolerances=``.
- ``room``: `ROOM` times the larger of two measurements of what the computation cannot do better
  in `d`, both made with the reference itself:

  - its *sensitivity*: how far the reference's result moves when every floating input is nudged
    by a random relative amount up to the epsilon of `d` (`NUDGES` tries, the largest change
    counts). A backward-stable computation commits that much: it grows with the number of terms
    each result sums and with their size.
  - its *rounding*: how far the reference run in `d` itself lands from its result in a wider
    dtype, on the same inputs and on `ROUNDINGS - 1` nudged ones, zeros included (the largest
    counts: other inputs round otherwise, as another order of the same operations would). That
    covers cancellation inside intermediate values, which nudging the inputs does not show. NumPy
    has float32 and float16; bfloat16 is emulated by running in float32 with every operation's
    result rounded to bfloat16 (and by scaling float32's error by the ratio of the epsilons);
    float64 by that scaling too, and by long double where NumPy's is wider (x86: 64-bit
    mantissa), which measures the float64 reference's own rounding error.
  - its *random rounding*, part of the rounding: the reference in float64 with every
    operation's result moved by a random relative amount up to the epsilon of `d` (Monte Carlo
    arithmetic). A real rounding keeps an exact cancellation exact (``x - mean(x)`` of one
    value is 0 in any dtype); a fused library kernel computes it in another order
    (``x * rstd - mean * rstd``) and keeps `d`'s epsilon times the size of the terms that
    cancel. Random rounding shows that size, where the reference's own rounding shows none.
    NumPy's factorisations (``solve``, ``cholesky``, ``eigh``, ...) are backward stable in norm
    only: in this run each moves its matrix by a random amount up to epsilon times that
    matrix's largest magnitude (a solve whose pivots cancel: PyTorch's and JAX's float32 ridge
    regression, 1e-3 off where NumPy's float32 is 1e-8 off).
  - where those runs disagree (the largest error more than `DISAGREE` times their median, and
    more than a few units in the last place of the largest input or result: an ill-conditioned
    problem, whose error depends on how each input happens to round), they go on, up to
    `ROUNDINGS_AT_MOST`, so that the room reaches the tail of that error instead of depending
    on luck.

  Those runs (some 40 of the reference) are made only where the tolerance alone does not hold
  every element; most calls need none of them, and their worst error is then measured against
  the tolerance, a bound on its fraction of the whole allowance.
- A floor under the room, `NORMWISE` times the result's change when every floating input moves
  by a random amount up to the epsilon of `d` times that operand's largest magnitude: a port may
  compute another way than the reference (an FFT for a sum, a blocked matrix product), backward
  stable in norm only, so an element the reference gets exactly (a sum of zero terms) may carry
  the epsilon of `d` times the size of the other elements it mixes in.
- A jump at a signed zero: where an input is 0, the reference also runs with each zero moved
  within the rounding of `d` (either sign, up to its smallest subnormal), and a port's element
  that matches one of those results passes (NumPy's ``angle(-0.0)`` is pi, PyTorch's 0, and in
  float16 a small negative input rounds to -0.0). A jump elsewhere within the rounding of `d`
  shows in the sensitivity above.
- A room that overflows (an element near float64's largest value: 1/x at 1e-308) holds no
  digit of the element: it is not compared. The harness's own arithmetic runs with NumPy's
  floating-point warnings off (``np.errstate``): what it computes from a port's inf and NaN is
  read by these rules, never raised as a warning that ``filterwarnings = error`` would turn into
  a failure. A reference may return a NumPy scalar (a ufunc on a 0-d array does): it is read as
  a 0-d array, and 0-d operands stay arrays in every helper.
- What `d` cannot hold is not the port's error: where the exact result overflows `d` (beyond its
  largest finite value, give or take the room), the port's infinity of the same sign matches;
  where the reference run in `d` itself loses an element (inf or NaN where the float64 result is
  finite: an intermediate value overflowed, or underflowed to a zero it then divides by; every
  element, where it raises: JAX's Cholesky returns NaN where NumPy's raises), or the
  float64 reference does with the float parameters rounded to `d` (an ``eps`` of 1e-8 is 0 in
  float16), `d` cannot hold that computation and the element is not compared. Both NaN also
  matches.
- Where the port raises in `d` and the float64 reference returns, but the reference computing in
  `d` raises too, or keeps no correct digit, in one of the rounding runs (a Cholesky factor of a
  matrix that is positive definite only in float64), `d` cannot hold the problem: that call is
  not compared, and the message says so. Elsewhere a raising port fails.
- Where the reference inverts a matrix (``solve``, ``inv``, ``cholesky``, ``det``, ``slogdet``)
  whose condition number is at least ``1 / (ROOM * eps)`` of `d`, ROOM times the first-order
  error of a stable inversion (condition number times eps times the result) exceeds the result:
  `d` keeps no digit of the call, and its error has no bound beyond that (PyTorch's float32
  ridge regression answers -1114 where the reference gives 90; JAX's, NaN). So too where the
  matrix's inverse is beyond `d`'s largest value (a Gram matrix of a row of 1e-160 is 3e-319:
  a gradient through its inverse overflows in any port). The call is not compared, whatever
  the port answers or raises, its gradient included; the test notes the reason, and a test
  that compared nothing else is skipped with it.

Layouts
-------
A model hands a port views, not only contiguous arrays: for PyTorch and Triton targets,
`assert_matches_reference` calls the port again on the same values laid out as a transposed view
of the last two axes, a slice with a step of 2 at a storage offset, and, where an operand's values
repeat along an axis, broadcast by ``expand`` (stride 0), and compares each result with the same
reference and room (JAX has no strides). A port that raises there where it returns on contiguous
operands (``x.view(-1, n)``), or returns another value (a kernel indexing ``row * n + lane``
without ``.contiguous()``), fails with the layout, the shapes, strides and storage offsets.

Gradients
---------
The gradient of ``sum(w * f(...))``, for fixed random weights w (0 where f is not finite), is
compared with finite differences of the float64 reference, element by element, with a step
``h = DIFFERENCE_STEP * max(1, |x_i|)``. A finite difference is an estimate, and its error is
part of the allowed room: the port's gradient `g` matches where it lies within::

    atol + rtol * |c| + DIFFERENCE_SAFETY * (|c - c2| + rounding / h)

of the interval spanned by the central difference `c` and the forward and backward differences,
widened on each side by ``ROOM * eps * max|g|``:

- ``|c - c2|``, the central difference with step h against the one with step 2h: their
  truncation error (three times c's for a smooth function), and a sample of their rounding error;
- ``rounding / h``: the rounding error of the terms ``w * f`` that the step changes (epsilon times
  ``|w * f|``, plus the reference's own rounding estimated as for values), divided by the step:
  each term is differenced before the sum, so the terms the element does not reach add no error;
- ``ROOM * eps * max|g|``: the port's own backward rounding, `ROOM` times float64's epsilon
  times the largest element of its gradient for that operand: an element may sum terms that
  large (the gradient of log det(A Aᵀ), 2 (A Aᵀ)⁻¹ A, at A of elements 3e-132: elements of
  8.8e130 and, where the exact value is 0, 2e115, one epsilon of them). It is 3e-14 of the
  largest element: a wrong gradient is off by more;
- the one-sided differences: at a kink or a tie (``abs`` or ReLU at 0, equal values in a max), any
  value between the slopes on either side is a correct gradient (a subgradient), and ports differ
  there (``jax.grad(jnp.abs)(0.0)`` is 1, PyTorch's is 0, the central difference gives 0). For a
  smooth function those slopes differ by about ``h * |f''|``, so a wrong gradient still fails.
- a feature closer to x than the step (a clip to a tiny interval; a sine faster than the step;
  an ``eps`` of 1e-12 in a norm; a pole; a period): where `g` lies outside, the one-sided
  differences are taken again on a bounded ladder of finer steps: h/10, h/100, ...
  (`FINER_STEPS` times); where ``0 < |x| < h``, steps of `DIFFERENCE_STEP` times ``|x|`` itself
  (1/x at 4e-269, whose every step of 6e-6 crosses the pole at 0); then steps 1e4 times smaller
  each, down to float64's smallest normal number (``fmod(x, 1e-24)`` at x = 0: each step of 6e-6
  spans 6e18 periods and measures about 0, while the slope is 1). The ladder goes on while that
  rounding error over the step stays within the allowed room, 1e-3 of the slopes or a 16th of
  `g`'s distance from them; beyond that, the reference computes in long double (where NumPy's
  is wider than float64 and the reference keeps it: SciPy's functions do not), which measures
  a slope inside F.normalize's clamp of 1e-12 that float64 differences cannot see. `g` matches
  where it lies between the one-sided differences at one of those steps, within the allowed
  room and 4 times that rounding error; an infinite `g` matches where the exact slope is beyond
  float64 (both one-sided differences of its sign, within `ROOM` of float64's largest value:
  1/x at 4e-269 has the slope -6e536), as a backward pass that squares the result overflows.
  Where every step of the ladder straddles a pole, a jump or a period (the one-sided slopes,
  or their gap, grow tenfold as the step shrinks a hundredfold, to the ladder's end: atan2 at
  the origin; fmod's period of 1e-40 at x = 1, narrower than x's spacing), no step measures
  anything: any `g` passes there, and the element is counted as unmeasured, with that reason
  (``pytest -v``: ``PASSED (4 compared; 1 element unmeasured: ...)``). So too for a finite `g`
  where the function's features are finer than every step the ladder can take (``fmod(9,
  1.2e-76)``, a period far below x's spacing: aliasing noise at every step; ``fmod(1,
  2**-126)``, exactly 0 at every float near 1): at x, or with the other operands moved by up to
  `NEARBY` relative, the range of the function over x + k * step (k = -2 ... 2) is above 0 at
  every step of the ladder and shrinks by less than 1e3 from its first step to its last (a
  slope's or a kink's range shrinks with the step, a flat function has none), in long double as
  in float64 (rounding noise shrinks there).
- a kink in the element itself, where those finer one-sided differences stay apart (their gap,
  less the allowed room, shrinks by less than half over a hundredfold smaller step; a smooth
  function's shrinks a hundredfold): no derivative exists there, and autodiff returns one side
  of each operation's kink, combined in a way no neighbourhood need show (sparsemax of
  ``[1, 0]``: PyTorch's threshold from a support of one element, its clamp's slope of 1 at 0
  for the other, 0.132 where the sides give 0 and 0.129). Any finite value passes there; a NaN
  too (``hypot`` at (0, 0), a norm of a zero vector: 0 / 0 in the libraries' formulas), counted
  as unmeasured. The other elements, and the draws that miss the kink, check the pieces.
- kinks that meet (ties in a sort, a kink at a tie: a 1-D Wasserstein distance of ``u = [0, 0]``):
  autodiff picks one permutation and one side of each kink, a valid subgradient that need not
  lie between each element's own one-sided differences. Where `g` still lies outside, central
  differences are taken at up to `NEIGHBOURS` points near x (every element moved at random by
  up to `NEARBY` times ``max(1, |x_i|)``, by a shift they share and one of their own); `g` matches
  where it lies, within the allowed room, between the smallest and largest of them. At a
  smooth point they all agree, to `NEARBY` times the curvature, so a wrong gradient still
  fails. Elements are examined worst first; the first that neither explains fails the test.
- an element the reference depends on no more than its own rounding shows, at every step of
  that ladder, in long double too (no term changes by more than its estimated rounding error):
  the port's gradient there may be its backward pass's rounding magnified by a gain inside it
  (InfoNCE of a zero row whose logits are all equal: F.normalize's slope of 1/eps = 1e12 times
  the 1e-17 left of ``3 * (1/3) - 1``, 3.5e-6). It passes up to `FLAT_GAIN` times float64's
  epsilon times the largest weight (2.2e-3 of it), where a fake gradient (a straight-through
  estimator's 1 times the weight) still fails. A slope that holds only closer than every step
  (the same zero row against a row of 1e-24: 0.0222 inside the clamp) is measured on the
  ladder, not capped.
- a function without a derivative (``torch.floor_divide``, ``heaviside``; torch.special's Bessel
  functions return results without a graph): the test module's ``SPEC`` declares it,
  ``no_gradient="why"``, and its gradient tests skip with that reason; a port whose backward
  raises, or whose gradient is missing, is told so in its failure message.

No drawn value is subnormal in its target's dtype (it becomes 0, or the smallest normal number
where the domain leaves 0 out): XLA on a CPU, and GPU kernels, flush subnormals to 0 (JAX's
``rsqrt`` of 1.1e-308 is inf), which tells libraries apart, not ports. Gradients are taken where
no floating operand is subnormal either: such elements become 0 first. A
subnormal holds as few as one significant bit, and a backward formula that divides a product by
an input (PyTorch's ``cumprod``) keeps none: at ``x = [5e-324, 5e-324]`` its gradient is 0 where
the slope is the weight, 0.126.

For draws with extreme values (up to 1e4), the tests ask for finiteness only (``compare_values=
False``): a NaN gradient where the reference's differences are finite (an overflow in a branch a
`where` does not take) is a bug, unless the finer steps show no finite slope there (a pole, a jump,
a kink, a slope beyond float64, as above), while the rounding of a backward pass through such values
has no bound to state. Elements where the reference is not finite a step or two away (the edge of
its domain) are not compared; ``atol`` and ``rtol`` are `GRADIENT_TOLERANCE`. A missing gradient
(None: no path from that operand to the result) counts as zero, which passes only where the
differences say zero.

Second derivatives and forward mode
-----------------------------------
A first gradient can be right while its own derivative is wrong: a custom ``autograd.Function``
whose backward uses an intermediate saved outside autograd (pytorch/pytorch#76185, #58509), or
computes under ``torch.no_grad`` (a second derivative of 0), passes the gradient test and breaks
meta-learning, influence functions, gradient penalties. `assert_second_derivative_matches`
takes the Hessian-vector product of the gradient test's loss by the backend's own second
derivative (PyTorch's double backward with ``create_graph=True``, JAX's ``jax.jvp`` of
``jax.grad``, a Triton port through its registered backward), projects it on a random vector u,
and compares it with central differences of the port's own first gradient along a random
direction v, by the rules of "Gradients" (its ladder of finer steps, kinks, poles, a domain's
end): a difference that straddles a kink of the first gradient (relu, a clamp: a second
derivative of 0 almost everywhere) is not a failure, nor a NaN where an operand holds an exact 0
(the libraries' double backward of a zero vector's norm divides 0 by 0; counted unmeasured).
`assert_forward_mode_matches` checks the
Jacobian-vector product (``torch.func.jvp``, ``jax.jvp``) against the reverse-mode gradient by
the identity ``<J v, w> = <v, Jᵀ w>``, within `GRADIENT_TOLERANCE` of the terms' magnitudes; at
a kink, where the two modes may take different sides, a JVP between the reference's one-sided
differences along v passes.

A capability is not correctness (capabilities.py). Where the library refuses what a test asks
(a custom Function without ``jvp`` under forward mode; a classic-style Function, ``forward(ctx,
...)``, under ``torch.func``; a custom operator whose backward has no autograd formula under a
second derivative; a graph break under ``torch.compile(fullgraph=True)``), the test is skipped,
quoting the library's reason, saying how to add the capability and how to require it: ``SPEC =
parity.Spec(..., requires={"second_derivative", "forward_mode", "vmap", "one_graph"})``. A
required capability's absence fails; a wrong value fails always.

No vacuous pass
---------------
A test that calls the harness must compare something: a value (or a gradient, a type, dtype and
device on ``meta``), or a refusal on an edge case (an operand without elements or without axes,
where the reference raising, and the port too, is the spec). A call whose reference refuses any
other input compares nothing: in a hypothesis test the draw is discarded (``assume``) and
another drawn in its place, so that a narrow domain (Cholesky's positive definite matrices among
draws that repeat values) still gets its examples compared. Where every call of a test compared
nothing (every draw refused, as far as hypothesis looked; every fixed operand refused), the test
fails and says so: its inputs are outside what the reference accepts. Where nothing was
compared and the target's dtype could not hold the problem for those calls (above), the test is
skipped with that reason only where the test module's ``SPEC`` declares it for that dtype
(``cannot_hold={"float32": "why"}``); elsewhere it fails and says what to declare: the draws'
ordinary calls (every hypothesis run draws some, before any with extreme values) must be
comparable in every dtype the SPEC does not declare. ``pytest -v`` shows how many calls of
each test compared (``PASSED (10 compared)``), and JUnit XML keeps it as the test's
``compared`` property. `over()` with no target to run (dtypes or backends no backend has) is an
error when the test module is collected.
"""

from __future__ import annotations

# The names imported `as` themselves are what test files that earlier releases' `parity new`
# wrote may call: importable still, so that a repo's harness can move on before its tests do;
# not public (not in __all__, not on the reference page).
from .backends import ARRAY_API, BACKENDS, DEFAULT, PORTS
from .core import DEVICES as DEVICES
from .core import DTYPES, TOLERANCES, Tolerance
from .core import GRADIENT_TOLERANCE as GRADIENT_TOLERANCE
from .core import ROOM as ROOM
from .derivatives import assert_forward_mode_matches, assert_second_derivative_matches
from .fixed import edge_operands, sized_operands
from .fixed import edge_shapes as edge_shapes
from .fixed import sized_shapes as sized_shapes
from .gradients import assert_gradient_matches_reference
from .inputs import arrays, log_uniform, operands
from .inputs import integers as integers
from .inputs import labels as labels
from .inputs import shapes as shapes
from .refusals import ArrayLike as ArrayLike
from .refusals import assert_rejects_unsupported
from .room import assert_close as assert_close
from .spec import Spec
from .targets import Target, over, targets
from .transforms import assert_compiled_matches_eager, assert_vmap_matches_loop
from .values import assert_keeps_type_dtype_device, assert_matches_reference

# What a test module calls. The plugin's and the commands' own helpers (tallying a test's
# comparisons, its status line, a missing device, a port called through its public function)
# live in their modules and are imported from there: the reference page lists these alone.
__all__ = [
    "ARRAY_API",
    "BACKENDS",
    "DEFAULT",
    "DTYPES",
    "PORTS",
    "TOLERANCES",
    "Spec",
    "Target",
    "Tolerance",
    "arrays",
    "assert_compiled_matches_eager",
    "assert_forward_mode_matches",
    "assert_gradient_matches_reference",
    "assert_keeps_type_dtype_device",
    "assert_matches_reference",
    "assert_rejects_unsupported",
    "assert_second_derivative_matches",
    "assert_vmap_matches_loop",
    "edge_operands",
    "log_uniform",
    "operands",
    "over",
    "sized_operands",
    "targets",
]
