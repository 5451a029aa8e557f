"""Core speed: attention with weights (NumPy and torch-from-scratch) beside PyTorch's fused
F.scaled_dot_product_attention, measured in the same run, float32, on q, k, v of shape (H, T, d_k).

    python benchmarks/core.py            # the full grid
    python benchmarks/core.py --quick    # a few rows
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attention_core import scaled_dot_product_attention  # noqa: E402
from attention_core.torch_attention import scaled_dot_product_attention_torch  # noqa: E402
from benchmarks._timing import median_ms, table  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
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
                rows.append([T, d, H, f"{t_np:.3f}", f"{t_torch:.3f}", f"{t_ref:.3f}",
                             f"{t_np / t_ref:.2f}", f"{t_torch / t_ref:.2f}"])
                print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} threads, float32, "
          f"median of {args.repeat} runs (ms). Ratios are against F.scaled_dot_product_attention in the same run; "
          "NumPy and torch-from-scratch also return the (H, T, T) weights, F.sdpa does not.\n")
    print(table(["T", "d_model", "heads", "NumPy (app path)", "torch scratch", "F.sdpa", "NumPy / F.sdpa",
                 "torch / F.sdpa"], rows))


if __name__ == "__main__":
    main()
