"""SIMD helpers for the numba kernels (:mod:`annokit.metrics.kernels`): a 4-wide add, inlining.

``add4(a, x, v0, v1, v2, v3)`` adds ``(v0, v1, v2, v3)`` to ``a[x:x + 4]`` as
one ``<4 x double>`` load, add and store. Each element gets the same IEEE
addition as four scalar ``a[x + j] += v_j`` (the results are bit-identical);
one vector read-modify-write replaces four, which is what the per-bin scatter
spends its time on. No bounds check: the caller guarantees ``x + 4 <= a.size``
and a C-contiguous ``a``.

No vector-width attribute: the kernels once set LLVM's ``"prefer-vector-width"="512"``
on their functions. On the benchmark machine (AMD EPYC, Zen 4, AVX-512; LLVM target
``znver4``) LLVM already vectorises with 512-bit registers, and the attribute gave the
same machine code (3356 zmm operands in the KL kernel with and without it) and the same
times (single-thread CPU time per row of ``kernels.batch_sums`` on the rows of
``benchmarks/bench_metrics.py``, within 1% with and without), so it was removed.
"""

from __future__ import annotations

from llvmlite import ir as _ir
from numba import types as _types
from numba.extending import intrinsic as _intrinsic

__all__ = ["add4", "always_inline"]


@_intrinsic
def add4(typingctx, a, x, v0, v1, v2, v3):  # pragma: no cover - compiled
    """``a[x:x + 4] += (v0, v1, v2, v3)`` for a C-contiguous float64 ``a``, integer ``x``."""
    if not (isinstance(a, _types.Array) and a.dtype == _types.float64 and a.layout == "C"
            and isinstance(x, _types.Integer)):
        return None
    f64 = _types.float64
    sig = _types.void(a, x, f64, f64, f64, f64)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        vty = _ir.VectorType(_ir.DoubleType(), 4)
        ptr = builder.bitcast(builder.gep(data, [args[1]]), vty.as_pointer())
        v = _ir.Constant(vty, _ir.Undefined)
        for j in range(4):
            v = builder.insert_element(v, args[2 + j], _ir.Constant(_ir.IntType(32), j))
        builder.store(builder.fadd(builder.load(ptr, align=8), v), ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


@_intrinsic
def always_inline(typingctx):  # pragma: no cover - compiled
    """Mark the calling function ``alwaysinline`` for LLVM.

    A row function compiled once by numba (not inlined into each caller's numba IR,
    which copies the IR per call site and made the first call slow) and inlined by
    LLVM into every loop that calls it, where the loop's constants (the number of
    classes) unroll it and the loop vectorises.
    """
    def codegen(context, builder, sig, args):
        builder.function.attributes.add("alwaysinline")
        return context.get_dummy_value()

    return _types.void(), codegen
