"""Training a tiny transformer live: config, tasks, model, head scores, trainer and trajectories.

Imports torch (unlike the top of ``attention_core``); never imports streamlit.
"""

from .config import POSITIONAL, TASK_LABELS, TASKS, TrainConfig, positional_kinds
from .model import TinyTransformer, build_model, count_parameters, flat_parameters, load_flat_parameters
from .scores import SCORE_NAMES, attention_on_b_score, head_scores, prefix_matching_score, previous_token_score
from .tasks import Batch, is_causal, make_batch, period_range, probe_batch
from .trainer import Snapshot, Trainer, loss_and_accuracy, snapshot_interval

__all__ = [
    "TASKS",
    "TASK_LABELS",
    "POSITIONAL",
    "TrainConfig",
    "positional_kinds",
    "TinyTransformer",
    "build_model",
    "count_parameters",
    "flat_parameters",
    "load_flat_parameters",
    "SCORE_NAMES",
    "head_scores",
    "previous_token_score",
    "prefix_matching_score",
    "attention_on_b_score",
    "Batch",
    "make_batch",
    "is_causal",
    "period_range",
    "probe_batch",
    "Trainer",
    "Snapshot",
    "loss_and_accuracy",
    "snapshot_interval",
]
