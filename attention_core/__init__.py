"""attention_core: self-attention in NumPy and PyTorch, small enough to read beside the page.

Shape legend (used in every docstring and comment):
    B        batch size (NumPy functions keep any leading dims ``...``)
    T        number of tokens (seq_len); T_q / T_k = query / key tokens (cross-attention: T_q != T_k)
    d_model  embedding width
    H        number of heads (n_heads)
    d_k      query/key width per head = d_model / H;  d_v  value width

Masks are boolean with **True = may attend**. A query row with nothing allowed gets all-zero
weights and a zero output, never NaN. Bad arguments raise ``ValueError`` saying what is allowed.

The torch parts (``SelfAttention``, ``MultiHeadAttention``, ``MultiHeadSelfAttention``,
``scaled_dot_product_attention_torch``, ``softmax_torch``) are imported lazily, so ``import attention_core``
does not load torch; ``sweep.score_gradient`` (the gradient that reaches the scores, by autograd) imports torch
when it is called.
"""

# modern attention (NumPy): positions, grouped queries and the KV cache, windows, tiles, sinks, linear attention
from .alibi import alibi_attention, alibi_bias, alibi_slopes, attention_with_bias
from .attention import (
    attention_scores,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    score_factor,
    split_heads,
)

# runners behind the pages (each returns a frozen dataclass)
from .block_run import BlockRun, run_block
from .class_notes import HeadsDemo, purposeful_vs_random_heads
from .config import INPUT_KINDS, MASK_KINDS, WhatIf, allowed_heads
from .cross_attention import CrossRun, run_cross_attention
from .flash import flash_attention, flash_attention_steps
from .gqa import allowed_kv_heads, grouped_query_attention, kv_cache_bytes
from .inputs import (
    class_notes_weights,
    one_hot_embeddings,
    position_labels,
    random_embeddings,
    random_projection_weights,
    sentence_embeddings,
    tokenize,
)
from .kv_cache import decode_with_cache
from .linear_attention import elu_feature_map, linear_attention, linear_attention_recurrent
from .mask_demo import clamp_pad, mask_lab, textbook_softmax
from .masks import causal_mask, combine_masks, padding_mask
from .matrices import check_matrix, format_matrix, parse_matrix
from .permutation import ShuffleResult, shuffle_experiment
from .positional import position_similarity, sinusoidal_positional_encoding
from .readout import Comparison, compare_runs, differing_settings, relative_difference, sharpness
from .rope import apply_rope, rope_angles, rope_attention, rope_scores
from .saturation import (
    NEAR_ONE_HOT,
    SaturationMetrics,
    head_divergence_matrix,
    js_divergence,
    saturation_metrics,
    score_std,
    softmax_jacobian,
)
from .sinks import sink_attention, streaming_mask
from .softmax import softmax
from .walkthrough import Walkthrough, walkthrough
from .whatif import WhatIfRun, run_whatif, twin_weights
from .windows import measured_receptive_field, receptive_field_formula, sliding_window_mask

_TORCH_NAMES = {
    "SelfAttention",
    "MultiHeadAttention",
    "MultiHeadSelfAttention",
    "scaled_dot_product_attention_torch",
    "softmax_torch",
}


def __getattr__(name):
    if name in _TORCH_NAMES:
        from . import torch_attention

        return getattr(torch_attention, name)
    raise AttributeError(f"module 'attention_core' has no attribute {name!r}")


__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "attention_scores",
    "score_factor",
    "multi_head_attention",
    "split_heads",
    "merge_heads",
    "causal_mask",
    "padding_mask",
    "combine_masks",
    "sinusoidal_positional_encoding",
    "shuffle_experiment",
    "saturation_metrics",
    "SaturationMetrics",
    "js_divergence",
    "head_divergence_matrix",
    "softmax_jacobian",
    "score_std",
    "NEAR_ONE_HOT",
    "one_hot_embeddings",
    "random_embeddings",
    "sentence_embeddings",
    "tokenize",
    "position_labels",
    "class_notes_weights",
    "random_projection_weights",
    "WhatIf",
    "allowed_heads",
    "MASK_KINDS",
    "INPUT_KINDS",
    "check_matrix",
    "parse_matrix",
    "format_matrix",
    "WhatIfRun",
    "run_whatif",
    "twin_weights",
    "alibi_attention",
    "alibi_bias",
    "alibi_slopes",
    "attention_with_bias",
    "flash_attention",
    "flash_attention_steps",
    "allowed_kv_heads",
    "grouped_query_attention",
    "kv_cache_bytes",
    "decode_with_cache",
    "elu_feature_map",
    "linear_attention",
    "linear_attention_recurrent",
    "clamp_pad",
    "mask_lab",
    "textbook_softmax",
    "apply_rope",
    "rope_angles",
    "rope_attention",
    "rope_scores",
    "sink_attention",
    "streaming_mask",
    "Walkthrough",
    "walkthrough",
    "measured_receptive_field",
    "receptive_field_formula",
    "sliding_window_mask",
    "BlockRun",
    "run_block",
    "HeadsDemo",
    "purposeful_vs_random_heads",
    "CrossRun",
    "run_cross_attention",
    "ShuffleResult",
    "position_similarity",
    "Comparison",
    "compare_runs",
    "differing_settings",
    "relative_difference",
    "sharpness",
    *sorted(_TORCH_NAMES),
]
