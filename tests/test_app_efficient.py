"""AppTest: the Efficient attention page (KV cache, KV memory of real models, sliding windows, FlashAttention).

Every control of the page is moved at default and extreme settings; the numbers on the page are checked
against attention_core (max differences, the receptive-field formula, the memory of published shapes).
"""

import re

import numpy as np
import pytest

from attention_core import run_whatif
from attention_core.flash import flash_attention_steps
from attention_core.gqa import MODELS, MODELS_BY_NAME
from tests.apptest_util import app, chart_datasets, run_ok, texts

PAGE = "pages/Efficient_attention.py"


def metric(at, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, [m.label for m in at.metric]
    return values[0]


def assert_exact(at):
    """The cached decode and the tiled softmax both equal plain attention on screen."""
    assert float(metric(at, "max |cached − one causal pass|")) < 1e-5
    assert float(metric(at, "max |tiled − full softmax|")) < 1e-5


def receptive_sentence(at) -> tuple[int, int]:
    """(measured, formula after the cap) as written on the page; they must agree."""
    text = texts(at)
    assert "They agree." in text and "disagree" not in text
    measured = int(re.search(r"measured receptive field .*? is \*\*(\d+)\*\* tokens", text).group(1))
    m = re.search(r"L\(w−1\)\+1 = (\d+)\((\d+)−1\)\+1 = (\d+)(?:, capped at the (\d+) tokens there are: (\d+))?", text)
    L, w, raw = int(m.group(1)), int(m.group(2)), int(m.group(3))
    assert raw == L * (w - 1) + 1
    return measured, int(m.group(5)) if m.group(5) else raw


def test_defaults_show_exact_numbers_and_llama_70b_memory():
    at = run_ok(app(PAGE))
    assert not at.warning
    assert_exact(at)
    assert receptive_sentence(at) == (7, 7)  # w = 3, L = 3, T = 8
    text = texts(at)
    # Llama-2-70B, 4096 tokens, batch 1, float16: 2 x 80 x 8 x 128 x 4096 x 2 bytes = 1.34 GB; MHA 64 heads: 10.7 GB
    assert "keeps **1.34 GB**" in text and "would need **10.7 GB** (8× its own)" in text
    assert metric(at, "reused: cached K, V rows") == "4 each"  # step 5 of 8
    assert metric(at, "computed: new q, k, v") == "1 row each"
    run = run_whatif(at.session_state["whatif"])  # FlashAttention section: head 1, tiles of 2, no mask
    steps = flash_attention_steps(run.q[0], run.k[0], run.v[0], tile_size=2).steps
    rows = np.zeros(8, bool)
    for s in steps[1:]:
        rows |= np.isfinite(s.m_before) & (s.rescale < 1)  # a later tile raised the row's max
    assert rows.any() and f"{int(rows.sum())} of the 8 query rows had their sum and output rescaled" in text
    # w = 3 on 8 tokens: the mask allows 3 keys to the last 6 queries and 1, 2 to the first two: 21, not T x w = 24
    assert "Each layer computes 21 scores" in text and "24" not in text.split("Each layer computes")[1][:200]
    assert "instead of T(T+1)/2 = 36 for the causal mask" in text
    bars = [f for el in at.get("vega_lite_chart") for f in chart_datasets(el) if "GB" in f.columns][0]
    assert list(bars["KV heads"]) == [64, 8, 1]
    np.testing.assert_allclose(bars["GB"], [10.737418240, 1.34217728, 0.16777216])


def flash_table(at):
    return [d.value for d in at.dataframe if "rescale" in d.value.columns][0]


@pytest.mark.parametrize("query", [{}, {"tile": "1", "fq": "5"}, {"tile": "1", "fq": "1", "temperature": "0.1"}])
def test_rescale_column_shows_what_happened(query):
    """A factor e^(m − m′) only where the followed row's running max rose; a dash with the reason elsewhere."""
    at = run_ok(app(PAGE, query))
    tile, fq = int(query.get("tile", 2)), int(query.get("fq", 8)) - 1
    run = run_whatif(at.session_state["whatif"].replace(mask="none"))
    steps = flash_attention_steps(
        run.q[0], run.k[0], run.v[0], tile_size=tile, temperature=at.session_state["whatif"].temperature
    ).steps
    shown = list(flash_table(at)["rescale"])
    assert len(shown) == len(steps)
    for s, cell in zip(steps, shown):
        if s.rescaled[fq]:
            assert cell.startswith("× ") and f"{float(s.rescale[fq]):.4g}" in cell and float(s.rescale[fq]) < 1
        else:
            assert cell.startswith("— (") and cell != "1"
    assert shown[0] == "— (first allowed keys)"
    assert "1" not in shown and "0" not in shown  # the old column read 1 (nothing rescaled) and 0 (nothing before)


@pytest.mark.parametrize(
    "query, says",
    [
        ({"window": "1"}, "Each layer computes 8 scores (one a query, itself) instead of T(T+1)/2 = 36."),
        ({"window": "2"}, "Each layer computes 15 scores, the mask's allowed cells: the last 7 queries see w = 2 keys"),
        ({"window": "8"}, "With w ≥ T = 8 the window is the whole causal mask: each layer computes all T(T+1)/2 = 36"),
        ({"seq_len": "512", "window": "512"}, "each layer computes all T(T+1)/2 = 131328 scores"),
        ({"seq_len": "512", "window": "100"}, f"Each layer computes {512 * 100 - 100 * 99 // 2} scores"),
        ({"seq_len": "1"}, "With w ≥ T = 1 the window is the whole causal mask: each layer computes all T(T+1)/2 = 1"),
    ],
)
def test_window_cost_is_counted_from_the_mask(query, says):
    assert says in texts(run_ok(app(PAGE, query, timeout=120)))


def test_every_control_moves():
    at = run_ok(app(PAGE))
    at.select_slider(key="eff_kv").set_value(1)
    run_ok(at)
    assert_exact(at)
    assert "4 query heads share it" in texts(at)
    for step in (1, 8):
        at.slider(key="eff_step").set_value(step)
        run_ok(at)
        assert metric(at, "reused: cached K, V rows") == f"{step - 1} each"
    at.selectbox(key="eff_head").set_value(3)
    run_ok(at)
    assert "Query head 4 reads KV head 1" in texts(at)
    for name in MODELS_BY_NAME:
        at.selectbox(key="eff_model").set_value(name)
        run_ok(at)
        model = MODELS_BY_NAME[name]
        assert f"{name} ({model.layers} layers, {model.heads} query heads, {model.kv_heads} KV heads" in texts(at)
    at.number_input(key="eff_ctx").set_value(32768)
    at.number_input(key="eff_batch").set_value(8)
    at.selectbox(key="eff_dtype").set_value("float32")
    run_ok(at)
    mistral = MODELS_BY_NAME["Mistral-7B (v0.1)"]
    full = mistral.cache_bytes(32768, 8, "float32", rolling=False) / 1e9
    assert "rolling cache of the last 4,096 tokens only" in texts(at) and f"would take {full:.3g} GB" in texts(at)
    assert f"keeps **{mistral.cache_bytes(32768, 8, 'float32') / 1e9:.3g} GB**" in texts(at)
    for window, layers in ((1, 1), (8, 32), (2, 5)):
        at.slider(key="eff_window").set_value(window)
        at.slider(key="eff_layers").set_value(layers)
        run_ok(at)
        measured, formula = receptive_sentence(at)
        assert measured == formula == min(8, layers * (window - 1) + 1)
    for tile in (1, 8, 3):
        at.slider(key="eff_tile").set_value(tile)
        run_ok(at)
        assert metric(at, "tiles") == f"{-(-8 // tile)} of ≤ {tile} keys"
        assert metric(at, "largest tile") == f"{8 * tile * 4:,} bytes"
        assert metric(at, "full T × T scores") == "256 bytes"
        assert_exact(at)
    for fq in (1, 8):
        at.slider(key="eff_fq").set_value(fq)
        run_ok(at)
        assert f"query **t{fq}**" in texts(at)
    params = at.query_params
    assert params["tile"] == "3" and params["window"] == "2" and params["llm"] == "Mistral-7B (v0.1)"


@pytest.mark.slow
def test_extremes_long_sequence_wide_model():
    at = run_ok(
        app(
            PAGE,
            {
                "seq_len": "512",
                "d_model": "1024",
                "heads": "16",
                "kv": "1",
                "tile": "1",
                "window": "512",
                "layers": "32",
                "step": "512",
                "fq": "512",
                "mask": "causal",
            },
            timeout=240,
        )
    )
    assert not at.warning
    assert_exact(at)
    assert metric(at, "tiles") == "512 of ≤ 1 keys"
    assert receptive_sentence(at) == (512, 512)
    at.slider(key="eff_tile").set_value(512)
    at.slider(key="eff_window").set_value(1)
    run_ok(at)
    assert metric(at, "tiles") == "1 of ≤ 512 keys"
    assert receptive_sentence(at) == (1, 1)
    assert_exact(at)


def test_one_token():
    at = run_ok(app(PAGE, {"seq_len": "1"}))
    assert_exact(at)
    assert receptive_sentence(at) == (1, 1)
    assert metric(at, "tiles") == "1 of ≤ 1 keys"
    assert "clamp" not in texts(at)


def test_shrinking_seq_len_clamps_the_page_controls_with_a_notice():
    at = run_ok(app(PAGE, {"seq_len": "64", "tile": "50", "step": "60"}))
    assert not at.warning
    at.sidebar.slider(key="ctl_seq_len").set_value(4)
    run_ok(at)
    notice = "\n".join(w.value for w in at.warning)
    assert "tile=50 is outside 1 to 4 for seq_len 4; using 4." in notice and "step=60 is outside 1 to 4" in notice
    assert metric(at, "tiles") == "1 of ≤ 4 keys"
    assert_exact(at)


def test_padding_mask_and_a_fully_masked_row():
    at = run_ok(app(PAGE, {"mask": "causal+padding", "pad": "3", "fq": "2"}))
    assert_exact(at)
    assert "mask: causal (computed per tile) and padding (3 keys)" in texts(at)
    at = run_ok(app(PAGE, {"mask": "padding", "pad": "8"}))
    assert_exact(at)
    assert "Every key of this row is masked: m stays −∞, l stays 0, and the output is 0 (not NaN)." in texts(at)


def test_typed_sentence_stays_text():
    at = run_ok(app(PAGE, {"input": "sentence", "sentence": "a *b* <i>c</i> [d](x)", "step": "2", "fq": "4"}))
    text = texts(at)
    assert r"for **\*b\***" in text and r"query **\[d\]\(x\)**" in text and r"lets **\[d\]\(x\)** see" in text
    assert_exact(at)


def test_models_table_lists_every_shape_and_source():
    at = run_ok(app(PAGE))
    shapes = [d.value for d in at.dataframe if "KV heads" in d.value.columns][0]
    sources = [d.value for d in at.dataframe if "source (config.json)" in d.value.columns][0]
    assert list(shapes["model"]) == list(sources["model"]) == [m.name for m in MODELS]
    assert list(shapes["KV heads"]) == [m.kv_heads for m in MODELS]
    assert all(s.startswith("https://huggingface.co/") for s in sources["source (config.json)"])


@pytest.mark.parametrize(
    "query, says",
    [
        ({"heads": "1"}, ["per query head (1)", "(no other query head reads it)", "a KV head of its own here"]),
        ({"heads": "4", "kv": "1"}, ["(4 query heads share it)", "with a KV head for each of the 4 query heads it"]),
        ({"heads": "4", "kv": "4"}, ["(no other query head reads it)", "a KV head of its own here"]),
    ],
)
def test_kv_cache_sentence_counts_heads_right(query, says):
    shown = texts(run_ok(app(PAGE, query)))
    for part in says:
        assert part in shown
    assert "1 heads" not in shown and "1 query head share" not in shown


@pytest.mark.parametrize(
    "query, answer",
    [
        ({"seq_len": "1"}, "There is one token: the last token is the only one, and one layer lets it see itself."),
        ({"window": "1"}, "With w = 1 a token sees only itself, in every layer: never."),
        ({"window": "8"}, "L ≥ (T−1)/(w−1) = 1, so 1 layer."),
        ({"window": "3"}, "L ≥ (T−1)/(w−1) = 3.5, so 4 layers."),
    ],
)
def test_layers_needed_answer_at_the_edges(query, answer):
    assert answer in texts(run_ok(app(PAGE, query)))
