"""Running the Train page's standalone training script (attention_core.training.export) in a fresh Python."""

import subprocess
import sys

import numpy as np

from attention_core.training import TrainConfig, Trainer
from attention_core.training.export import standalone_script

# A larger model than the default for the script tests: sorting, MLP and LayerNorm on, 4 heads, odd context.
SORT_WITH_MLP = TrainConfig(task="sort", mlp=True, layernorm=True, n_heads=4, vocab=10, context=13, batch=8, seed=3)


def script_losses(cfg: TrainConfig, tmp_dir, steps: int = 4) -> list[float]:
    """The per-step losses the standalone script for ``cfg`` prints when run for ``steps`` steps."""
    script = tmp_dir / "train_tiny.py"
    script.write_text(standalone_script(cfg))
    out = subprocess.run(
        [sys.executable, str(script), "--steps", str(steps)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        check=True,
    ).stdout
    return [float(line.split("loss")[1]) for line in out.splitlines() if line.startswith("step")]


def assert_script_matches_trainer(cfg: TrainConfig, tmp_dir, steps: int = 4) -> list[float]:
    """Run the script for ``cfg`` and assert it prints the Trainer's losses, step for step; returns them."""
    printed = script_losses(cfg, tmp_dir, steps)
    ours = Trainer(cfg).train(steps).train_loss
    assert len(printed) == steps
    np.testing.assert_allclose(printed, ours, rtol=0, atol=2e-6)  # printed with 6 decimals
    return printed
