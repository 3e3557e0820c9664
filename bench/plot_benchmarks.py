"""Draws docs/benchmarks.png from the GPU benchmark outputs kept under docs/measurements/.

    pip install matplotlib
    python3 bench/plot_benchmarks.py [--measurements docs/measurements/gpu-cuda] [--out docs/benchmarks.png]

Reads ``bench_cuda_transfer.json`` (written by ``bench/bench_cuda_transfer.py --json``) and
``bench_cuda_ops.json`` (``bench/bench_cuda_ops.py --json``) and draws four panels:
host -> GPU and GPU -> host rates by size (GB/s, log-scaled sizes, the pinned-DMA ceiling
dashed), elementwise/reduction bandwidth on 1 GiB (GB/s) and matmul throughput (TFLOP/s),
uma against each peer measured in the same run. A panel whose input is missing is left out.
"""
from __future__ import annotations

import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measurements", default="docs/measurements/gpu-cuda")
    ap.add_argument("--out", default="docs/benchmarks.png")
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def load(name):
        path = os.path.join(args.measurements, name)
        if not os.path.exists(path):
            print(f"plot_benchmarks: {path} not found; its panels are left out")
            return None
        with open(path) as f:
            return json.load(f)

    transfer, ops = load("bench_cuda_transfer.json"), load("bench_cuda_ops.json")
    panels = []
    if transfer:
        panels += [("h2d", "host -> GPU, float32"), ("d2h", "GPU -> host, float32")]
    if ops:
        panels += [("elementwise", "1 GiB float32 (GB/s)"), ("matmul", "matmul (TFLOP/s)")]
    if not panels:
        raise SystemExit("plot_benchmarks: no measurements to draw")
    ncols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.6 * nrows), squeeze=False)
    peer_colors = ["C0", "C1", "C2", "C4", "C5", "C6", "C8", "C9"]  # C3 (red) is uma's
    for ax, (key, title) in zip(axes.flat, panels):
        if key in ("h2d", "d2h"):
            rows = transfer[key]
            sizes = sorted(rows, key=int)
            peers = iter(peer_colors)
            for col in rows[sizes[0]]:
                ys = [rows[s].get(col) for s in sizes]
                if col == "uma":
                    style = dict(linewidth=2.5, color="C3")
                elif "ceiling" in col:
                    style = dict(linestyle="--", color="grey")
                else:
                    style = dict(color=next(peers))
                ax.plot([int(s) for s in sizes], ys, marker="o", label=col, **style)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("MiB")
            ax.set_ylabel("GB/s")
            ax.set_yscale("log")
        elif key == "elementwise":
            rows = ops["elementwise"]
            names = list(rows)
            colors = ["C3" if "uma" in n else ("grey" if "ceiling" in n else "C0") for n in names]
            ax.barh(names, [rows[n] for n in names], color=colors)
            ax.invert_yaxis()
            ax.set_xlabel("GB/s")
        else:
            rows = ops["matmul"]
            shapes = list(rows)
            impls = list(rows[shapes[0]])
            w = 0.8 / len(impls)
            for k, impl in enumerate(impls):
                ax.bar([i + k * w for i in range(len(shapes))], [rows[s][impl] for s in shapes], width=w,
                       label=impl.replace(" TFLOP/s", ""), color="C3" if impl.startswith("uma") else peer_colors[k])
            ax.set_xticks([i + w * (len(impls) - 1) / 2 for i in range(len(shapes))])
            ax.set_xticklabels(shapes, rotation=20, fontsize=8)
            ax.set_ylabel("TFLOP/s")
            ax.set_yscale("log")
        ax.set_title(title)
        if key != "elementwise":
            ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    gpu = (ops or {}).get("gpu", "GPU")
    fig.suptitle(f"uma vs peers on {gpu} (same run; bench/bench_cuda_transfer.py, bench/bench_cuda_ops.py)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
