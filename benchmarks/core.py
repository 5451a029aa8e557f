"""Core speed: attention with weights (NumPy and torch-from-scratch) beside PyTorch's fused
F.scaled_dot_product_attention, measured in the same run, float32, on q, k, v of shape (H, T, d_k);
then the tiled online softmax (FlashAttention's idea) against full attention (time and tracemalloc peak
memory), and grouped-query attention against multi-head attention (time and KV bytes).

    python benchmarks/core.py                 # every table, the full grid
    python benchmarks/core.py --quick         # a few rows of each
    python benchmarks/core.py --only flash    # one table: sdpa, flash or gqa
"""

from __future__ import annotations

import argparse
import os
import sys
import tracemalloc
from pathlib import Path

# One BLAS thread unless told otherwise: on 2 shared cores OpenBLAS's spinning threads made a (1, 1024) x
# (1024, 1024) product 60x slower under load (measured). Set OPENBLAS_NUM_THREADS to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attention_core import causal_mask, scaled_dot_product_attention  # noqa: E402
from attention_core.flash import flash_attention  # noqa: E402
from attention_core.gqa import grouped_query_attention  # noqa: E402
from attention_core.torch_attention import scaled_dot_product_attention_torch  # noqa: E402
from benchmarks._timing import median_ms, table  # noqa: E402

MiB = 2**20

# Each table's columns: header -> format spec of its cells (strings, e.g. "skipped", are printed as they are).
SDPA_COLUMNS = {
    "T": "",
    "d_model": "",
    "heads": "",
    "NumPy (app path)": ".3f",
    "torch scratch": ".3f",
    "F.sdpa": ".3f",
    "NumPy / F.sdpa": ".2f",
    "torch / F.sdpa": ".2f",
}
FLASH_COLUMNS = {
    "T": "",
    "tile": "",
    "tiled ms": ".1f",
    "full ms": ".1f",
    "time ratio": ".2f",
    "tiled peak MiB": ".1f",
    "full peak MiB": ".1f",
    "peak ratio": ".3f",
    "T x T float32 MiB": ".0f",
    "max abs diff": ".1e",
}
GQA_COLUMNS = {
    "case": "",
    "T_q": "",
    "T_k": "",
    "attention": "",
    "KV MiB": ".2f",
    "KV vs MHA": ".3f",
    "NumPy ms": ".2f",
    "NumPy vs MHA": ".2f",
    "torch ms": ".2f",
    "torch vs MHA": ".2f",
}


def _tick() -> None:
    """One measured row done (a dot on stderr)."""
    print(".", end="", file=sys.stderr, flush=True)


def _report(note: str, columns: dict[str, str], rows: list[tuple]) -> None:
    """End the line of dots, then print ``note`` and ``rows`` as a Markdown table in the ``columns``' formats."""
    print(file=sys.stderr)
    print(note)
    cells = [
        [v if isinstance(v, str) else format(v, f) for v, f in zip(r, columns.values(), strict=True)] for r in rows
    ]
    print(table(list(columns), cells))


def sdpa_table(args) -> None:
    Ts = [8, 64, 512] if args.quick else [8, 64, 256, 512]
    ds = [16, 1024] if args.quick else [16, 128, 512, 1024]
    Hs = [1, 16] if args.quick else [1, 4, 16]
    rows = []
    rng = np.random.default_rng(0)
    for T in Ts:
        for d in ds:
            for H in Hs:
                if d % H:
                    continue
                d_k = d // H
                q, k, v = (rng.standard_normal((H, T, d_k), dtype=np.float32) for _ in range(3))
                tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
                with torch.inference_mode():
                    t_np = median_ms(lambda: scaled_dot_product_attention(q, k, v), args.repeat)
                    t_torch = median_ms(lambda: scaled_dot_product_attention_torch(tq, tk, tv), args.repeat)
                    t_ref = median_ms(lambda: F.scaled_dot_product_attention(tq, tk, tv), args.repeat)
                rows.append((T, d, H, t_np, t_torch, t_ref, t_np / t_ref, t_torch / t_ref))
                _tick()
    _report(
        f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} threads, float32, "
        f"median of {args.repeat} runs (ms). Ratios are against F.scaled_dot_product_attention in the same run; "
        "NumPy and torch-from-scratch also return the (H, T, T) weights, F.sdpa does not.\n",
        SDPA_COLUMNS,
        rows,
    )


def peak_bytes(fn) -> int:
    """Peak traced allocation of one call (NumPy's buffers are traced by tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def available_bytes() -> int:
    """MemAvailable from /proc/meminfo (0 where it cannot be read)."""
    try:
        with open("/proc/meminfo") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable"))
    except (OSError, StopIteration):
        return 0


def flash_table(args) -> None:
    """Tiled online softmax vs full attention: one head, d_k 64, causal, float32."""
    Ts = [1024, 4096] if args.quick else [1024, 4096, 16384]
    tile, d_k, rows, notes = 64, 64, [], []
    rng = np.random.default_rng(0)
    for T in Ts:
        q, k, v = (rng.standard_normal((T, d_k), dtype=np.float32) for _ in range(3))
        repeat = max(1, args.repeat if T <= 4096 else 3)
        tiled = lambda: flash_attention(q, k, v, causal=True, tile_size=tile)  # noqa: E731
        full = lambda: scaled_dot_product_attention(q, k, v, mask=causal_mask(T))  # noqa: E731
        t_tiled, p_tiled = median_ms(tiled, repeat, warmup=1), peak_bytes(tiled)
        need = 3 * T * T * 4  # the T x T logits/weights, the bool mask and headroom
        if available_bytes() > need + 2**30:
            t_full, p_full = median_ms(full, repeat, warmup=1), peak_bytes(full)
            diff = float(np.abs(tiled() - full()[0]).max())
            rows.append(
                (
                    T,
                    tile,
                    t_tiled,
                    t_full,
                    t_tiled / t_full,
                    p_tiled / MiB,
                    p_full / MiB,
                    p_tiled / p_full,
                    T * T * 4 / MiB,
                    diff,
                )
            )
        else:
            rows.append((T, tile, t_tiled, "skipped", "", p_tiled / MiB, "skipped", "", T * T * 4 / MiB, ""))
            notes.append(
                f"T = {T}: the full version was skipped: it needs about {need / 2**30:.1f} GiB and "
                f"{available_bytes() / 2**30:.1f} GiB were available."
            )
        _tick()
    _report(
        f"\nTiled online softmax (attention_core.flash, tiles of {tile} keys) vs full attention "
        f"(scaled_dot_product_attention with a causal mask, which also returns the T x T weights), one head, "
        f"d_k {d_k}, float32, causal. Time: median of {args.repeat} runs (3 at T > 4096), ms; "
        "peak: tracemalloc, MiB; "
        "ratios tiled / full in the same run.\n",
        FLASH_COLUMNS,
        rows,
    )
    for n in notes:
        print(f"\n{n}")


def gqa_table(args) -> None:
    """Grouped-query vs multi-head attention: H = 32 query heads, d_k 128, prefill and one decoding step."""
    H, d_k = 32, 128
    cases = [("prefill", 1024, 1024), ("decode step", 1, 4096)]
    if args.quick:
        cases = [("prefill", 256, 256), ("decode step", 1, 1024)]
    rows = []
    rng = np.random.default_rng(0)
    for name, T_q, T_k in cases:
        q = rng.standard_normal((H, T_q, d_k), dtype=np.float32)
        base = None
        for G in (32, 8, 1):
            k, v = (rng.standard_normal((G, T_k, d_k), dtype=np.float32) for _ in range(2))
            t_np = median_ms(lambda: grouped_query_attention(q, k, v), args.repeat)
            tq, tk, tv = (torch.from_numpy(a)[None] for a in (q, k, v))
            with torch.inference_mode():
                t_torch = median_ms(lambda: F.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True), args.repeat)
            kv = k.nbytes + v.nbytes
            base = base or (t_np, t_torch, kv)
            label = "MHA" if G == H else ("MQA" if G == 1 else "GQA")
            rows.append(
                (
                    name,
                    T_q,
                    T_k,
                    f"{label} (G = {G})",
                    kv / MiB,
                    kv / base[2],
                    t_np,
                    t_np / base[0],
                    t_torch,
                    t_torch / base[1],
                )
            )
            _tick()
    _report(
        f"\nGrouped-query attention, H = {H} query heads, d_k {d_k}, float32, batch 1: attention_core "
        "(NumPy, returns the weights too) and F.scaled_dot_product_attention(enable_gqa=True); median of "
        f"{args.repeat} runs, ms; ratios against MHA (G = H) in the same run. KV MiB = bytes of K and V.\n",
        GQA_COLUMNS,
        rows,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", choices=["sdpa", "flash", "gqa"], help="print one table")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}", file=sys.stderr)
    for name, fn in (("sdpa", sdpa_table), ("flash", flash_table), ("gqa", gqa_table)):
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
