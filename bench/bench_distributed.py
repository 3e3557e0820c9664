"""All-reduce through uma.distributed against mpi4py on NumPy arrays (and torch.distributed
with Gloo where it initialises) in the same run, and the digits training step in 1 vs N processes.

    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \\
      mpirun -np 2 --oversubscribe .venv/bin/python bench/bench_distributed.py   # both tables
    .venv/bin/python bench/bench_distributed.py --step-only                      # the 1-process step

Table 1 (N ranks): float32 sum all-reduce of 1 KiB ... 256 MiB, in place, median and best
wall time of several repeats on rank 0 (each repeat starts after a barrier), for uma
(``uma.distributed.all_reduce(x, out=x)``, with and without the signature check), mpi4py
``Allreduce(IN_PLACE, a)`` on a NumPy array and ``torch.distributed.all_reduce`` (Gloo).
Table 2: one data-parallel step of ``uma.examples.train`` (MLP, 64 hidden, global batch 32,
float64, backend cpu): ms per step and the share of it spent inside MPI calls
(``uma.distributed.stats``). Printed as Markdown rows.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import uma  # noqa: E402
import uma.distributed as dist  # noqa: E402


def timeit(fn, reps, barrier):
    ts = []
    for _ in range(reps):
        barrier()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)


def fmt(t):
    return f"{t * 1e6:.0f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def allreduce_table(rank, world, max_mib):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    torch_ok, tdist = False, None
    try:
        import torch
        import torch.distributed as tdist
        port = comm.bcast(29500 + os.getpid() % 1000 if rank == 0 else None, root=0)
        tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                 world_size=world)
        torch_ok = True
    except Exception as e:  # noqa: BLE001
        if rank == 0:
            print(f"torch.distributed (gloo): not available ({type(e).__name__}: {e})")
    rows = []
    size = 1024
    while size <= max_mib * 2 ** 20:
        n = size // 4
        reps = 50 if size <= 2 ** 20 else (10 if size <= 16 * 2 ** 20 else 3)
        a = np.ones(n, dtype=np.float32)
        u = uma.asarray(np.ones(n, dtype=np.float32))
        res = {
            "uma": timeit(lambda: dist.all_reduce(u, out=u), reps, comm.Barrier),
            "uma, check=False": timeit(lambda: dist.all_reduce(u, out=u, check=False), reps, comm.Barrier),
            "mpi4py (NumPy)": timeit(lambda: comm.Allreduce(MPI.IN_PLACE, a), reps, comm.Barrier),
        }
        if torch_ok:
            t = torch.ones(n, dtype=torch.float32)
            res["torch.distributed (gloo)"] = timeit(lambda: tdist.all_reduce(t), reps, comm.Barrier)
        rows.append((size, res))
        del a, u
        size *= 4
    if rank == 0:
        names = list(rows[0][1])
        print(f"\nall-reduce (sum, float32, in place), {world} ranks; median (best) on rank 0\n")
        print("| size | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for size, res in rows:
            label = f"{size // 1024} KiB" if size < 2 ** 20 else f"{size // 2 ** 20} MiB"
            print(f"| {label} | " + " | ".join(f"{fmt(m)} ({fmt(b)})" for m, b in res.values()) + " |")
    if torch_ok:
        tdist.destroy_process_group()


def step_row(world, steps, wide=False):
    """One table row: the time per data-parallel step on `world` processes. The digits MLP (64
    hidden, float64, global batch 32), or with `wide` a 1024-1024-10 MLP (float32, global batch
    256) on synthetic data (4096 samples of 1024 features, 10 classes)."""
    from uma.examples import train as T
    if wide:
        rng = np.random.default_rng(0)
        Xtr = rng.standard_normal((4096, 1024)).astype(np.float32)
        ytr = rng.integers(0, 10, 4096)
        n_in, hidden, dtype, global_bs = 1024, 1024, "float32", 256
    else:
        X, y = T.load_data(T.default_data_path())
        Xtr, ytr, _, _ = T.split(X, y)
        n_in, hidden, dtype, global_bs = X.shape[1], 64, "float64", 32
    rank = dist.rank()
    if world > 1:
        n = Xtr.shape[0] // world
        Xtr, ytr = np.ascontiguousarray(Xtr[rank::world][:n]), np.ascontiguousarray(ytr[rank::world][:n])
    bs = global_bs // world
    _, train, _, _ = T.build_model(uma, n_in, hidden, 10, 0.3 if not wide else 0.01, 0, dtype, "cpu",
                                   distributed=world > 1)
    Xu, yu = uma.asarray(Xtr), uma.asarray(ytr)
    batches = [(Xu[i:i + bs], yu[i:i + bs]) for i in range(0, Xtr.shape[0] - bs + 1, bs)]
    for xb, yb in batches[:20]:  # warm-up
        train(xb, yb)
    dist.barrier()
    dist.stats(reset=True)
    t0 = time.perf_counter()
    for k in range(steps):
        train(*batches[k % len(batches)])
    secs = time.perf_counter() - t0
    comm = dist.stats()
    if rank == 0:
        print(f"| {world} | {bs} | {secs / steps * 1e3:.3f} ms | "
              f"{100 * comm['seconds'] / secs:.0f}% ({comm['calls']} MPI calls) |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-mib", type=int, default=256)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--step-only", action="store_true")
    p.add_argument("--wide-steps", type=int, default=50, help="steps of the 1024-1024-10 model (0: skip it)")
    a = p.parse_args()
    rank, world = dist.init()
    if not a.step_only and world > 1:
        allreduce_table(rank, world, a.max_mib)
    if rank == 0:
        print("\ndigits step (MLP 64 hidden, global batch 32, float64, cpu)\n")
        print("| processes | batch per process | time per step | inside MPI |")
        print("|---|---|---|---|")
    step_row(world, a.steps)
    if a.wide_steps:
        if rank == 0:
            print("\nwide step (MLP 1024-1024-10, global batch 256, float32, cpu, synthetic data)\n")
            print("| processes | batch per process | time per step | inside MPI |")
            print("|---|---|---|---|")
        step_row(world, a.wide_steps, wide=True)


if __name__ == "__main__":
    main()
