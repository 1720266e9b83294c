#!/usr/bin/env python3
"""stencil_baseline.py: apps/stencil's algorithm in PyTorch and in CuPy on the same GPU, timed the
same way (ms per iteration, GB/s counted as 2 x sizeof(real) bytes per interior point per iteration).

Field (nz, ny + 4, nx + 4), halo h = 2, periodic halo in i and j; per iteration: halo update,
tmp = lap(in) on the interior grown by one, out = lap(tmp) on the interior, out = in - alpha * out,
alpha = 1/32 (apps/stencil/README.md). Each framework is skipped if its module is missing.

usage: stencil_baseline.py NX NY NZ ITER [f64|f32]
"""
import sys
import time

H = 2


def initial(xp, nx, ny, nz, dtype):
    f = xp.zeros((nz, ny + 2 * H, nx + 2 * H), dtype=dtype)
    f[nz // 4:3 * nz // 4, H + ny // 4:H + 3 * ny // 4, H + nx // 4:H + 3 * nx // 4] = 1
    return f


def halo(f, nx, ny):
    # j-edges without corners, then i-edges with corners (the course's order)
    f[:, 0:H, H:nx + H] = f[:, ny:ny + H, H:nx + H]
    f[:, ny + H:ny + 2 * H, H:nx + H] = f[:, H:2 * H, H:nx + H]
    f[:, :, 0:H] = f[:, :, nx:nx + H]
    f[:, :, nx + H:nx + 2 * H] = f[:, :, H:2 * H]


def step(f, out, nx, ny, alpha):
    halo(f, nx, ny)
    # tmp on the interior grown by one point: rows/cols [H-1, n+H+1)
    c = f[:, 1:ny + 2 * H - 1, 1:nx + 2 * H - 1]
    tmp = -4 * c + f[:, 1:-1, 0:-2] + f[:, 1:-1, 2:] + f[:, 0:-2, 1:-1] + f[:, 2:, 1:-1]
    lap2 = -4 * tmp[:, 1:-1, 1:-1] + tmp[:, 1:-1, 0:-2] + tmp[:, 1:-1, 2:] + tmp[:, 0:-2, 1:-1] + tmp[:, 2:, 1:-1]
    out[:, H:ny + H, H:nx + H] = f[:, H:ny + H, H:nx + H] - alpha * lap2


def run(name, xp, sync, nx, ny, nz, iters, dtype, esize):
    a = initial(xp, nx, ny, nz, dtype)
    b = xp.zeros_like(a)
    alpha = 1.0 / 32
    step(a, b, nx, ny, alpha)  # warm-up (kernel compilation, allocator)
    sync()
    a = initial(xp, nx, ny, nz, dtype)
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        step(a, b, nx, ny, alpha)
        a, b = b, a
    sync()
    sec = time.perf_counter() - t0
    gbs = 2 * esize * nx * ny * nz * iters / sec * 1e-9
    print(f"{name}: {nx}x{ny}x{nz} {'f64' if esize == 8 else 'f32'}, {iters} iterations: "
          f"{1e3 * sec / iters:.3f} ms/iter, {gbs:.2f} GB/s, checksum {float(a.sum()):.6e}")


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    nx, ny, nz, iters = (int(v) for v in sys.argv[1:5])
    prec = sys.argv[5] if len(sys.argv) > 5 else "f64"
    esize = 8 if prec == "f64" else 4
    ran = 0
    try:
        import torch
        if torch.cuda.is_available():
            with torch.no_grad():
                run("pytorch", torch_ns(torch), torch.cuda.synchronize, nx, ny, nz, iters,
                    torch.float64 if esize == 8 else torch.float32, esize)
            ran += 1
        else:
            print("pytorch: SKIP (no CUDA device visible to torch)")
    except ImportError:
        print("pytorch: SKIP (module torch missing)")
    try:
        import cupy
        run("cupy", cupy, cupy.cuda.Device().synchronize, nx, ny, nz, iters,
            cupy.float64 if esize == 8 else cupy.float32, esize)
        ran += 1
    except ImportError:
        print("cupy: SKIP (module cupy missing)")
    return 0 if ran else 77


def torch_ns(torch):
    """The few array functions run() needs, on the GPU, in torch's spelling."""
    class NS:
        @staticmethod
        def zeros(shape, dtype):
            return torch.zeros(shape, dtype=dtype, device="cuda")

        @staticmethod
        def zeros_like(a):
            return torch.zeros_like(a)
    return NS


if __name__ == "__main__":
    sys.exit(main())
