#!/usr/bin/env python3
"""cg_baseline.py: CuPy's CG (cupyx.scipy.sparse.linalg.cg) on apps/cg's 3-D Poisson problem
(7-point Laplacian on an n^3 grid, Dirichlet boundary, CSR), a fixed number of iterations,
timed per iteration like apps/cg. Skipped (exit 77) if CuPy is missing.

usage: cg_baseline.py N MAXITER
"""
import sys
import time


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    n, maxiter = int(sys.argv[1]), int(sys.argv[2])
    try:
        import cupy as cp
        import cupyx.scipy.sparse as sp
        import cupyx.scipy.sparse.linalg as spla
    except ImportError:
        print("cupy-cg: SKIP (module cupy missing)")
        return 77
    one = sp.identity(n, format="csr", dtype=cp.float64)
    d = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr", dtype=cp.float64)
    A = (sp.kron(sp.kron(d, one), one) + sp.kron(sp.kron(one, d), one) + sp.kron(sp.kron(one, one), d)).tocsr()
    b = cp.ones(n ** 3, dtype=cp.float64)
    spla.cg(A, b, maxiter=2)  # warm-up
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    x, info = spla.cg(A, b, tol=1e-30, maxiter=maxiter) if "tol" in spla.cg.__code__.co_varnames else \
        spla.cg(A, b, rtol=1e-30, maxiter=maxiter)
    cp.cuda.Device().synchronize()
    sec = time.perf_counter() - t0
    r = float(cp.linalg.norm(b - A @ x))
    print(f"cupy-cg: 3-D Poisson {n}^3 ({n ** 3} unknowns, {A.nnz} nonzeros), {maxiter} iterations: "
          f"{1e3 * sec / maxiter:.3f} ms/iter, |r| = {r:.6e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
