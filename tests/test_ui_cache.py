"""The one cache policy: LRU bounded by bytes, cheap keys, stored objects returned read-only."""

import numpy as np
import pytest

from ui.server.cache import ByteLRU, cache_report, cached, nbytes


def test_evicts_least_recently_used_to_stay_under_the_byte_budget():
    cache = ByteLRU("test.evict", max_bytes=3 * 1000 + 500)
    for i in range(3):
        cache.put(i, np.zeros(1000, dtype=np.uint8), size=1000)
    assert cache.get(0)[0]  # 0 is now the most recently used
    cache.put(3, np.zeros(1000, dtype=np.uint8), size=1000)  # over budget: 1 (least recent) goes
    assert [k for k in range(4) if cache.get(k)[0]] == [0, 2, 3]
    assert cache.bytes <= cache.max_bytes and cache.evictions == 1


def test_a_value_larger_than_the_budget_is_returned_but_not_kept():
    calls = []

    @cached(max_mb=0.01)
    def big(n):
        calls.append(n)
        return np.zeros(n, dtype=np.uint8)

    assert big(100_000).shape == (100_000,) and big(100_000).shape == (100_000,)
    assert calls == [100_000, 100_000] and big.cache.bytes == 0


def test_hits_return_the_stored_object_read_only():
    @cached(max_mb=1)
    def square(n):
        return np.arange(n) ** 2

    a, b = square(5), square(5)
    assert a is b and square.cache.hits == 1
    with pytest.raises(ValueError):
        a[0] = 7  # a page cannot change a shared entry
    assert any(r["name"].endswith("square") for r in cache_report())


def test_nbytes_counts_arrays_inside_containers_and_dataclasses():
    from attention_core import WhatIf, run_whatif

    run = run_whatif(WhatIf(seq_len=16, d_model=64, n_heads=4))
    arrays = run.x.nbytes + run.weights.nbytes + run.output.nbytes
    assert nbytes(run) >= arrays
    assert nbytes({"a": np.zeros(1000)}) >= 8000


def test_bad_budget_is_rejected():
    with pytest.raises(ValueError, match="must be positive"):
        ByteLRU("test.bad", 0)


def test_matrix_table_is_built_once_per_content_and_keeps_its_labels():
    from streamlit import dataframe_util

    from ui.draw.tables import matrix_table, prefixed

    m = np.array([[0.123456, 1.0], [2.0, -3.987654]])
    t1 = matrix_table(m, ["A1", "B2"], prefixed("q", 2), decimals=4, extra=(("row sum", m.sum(1)),))
    t2 = matrix_table(m.copy(), ["A1", "B2"], prefixed("q", 2), decimals=4, extra=(("row sum", m.sum(1)),))
    assert t1 is t2  # the same numbers and labels: the stored table, no second conversion
    assert matrix_table(m, ["A1", "B2"], ["q0", "q1"]) is not t1  # unrounded is another table
    df = dataframe_util.convert_arrow_bytes_to_pandas_df(dataframe_util.convert_anything_to_arrow_bytes(t1))
    assert list(df.index) == ["A1", "B2"] and list(df.columns) == ["q0", "q1", "row sum"]
    assert df.loc["A1", "q0"] == 0.1235 and df.loc["B2", "q1"] == -3.9877
    assert df.loc["B2", "row sum"] == round(2.0 - 3.987654, 4)
    with pytest.raises(ValueError, match="2 row labels"):
        matrix_table(m, ["A1", "B2", "A3"], ["q0", "q1"])


def test_runs_of_one_d_model_and_seed_share_their_projection_weights():
    """cached_run draws W_q, W_k, W_v, W_o once per (d_model, seed): a temperature change reuses them, and the
    run is the same as one that draws its own."""
    from attention_core import WhatIf, random_projection_weights, run_whatif
    from ui.compute import cached_run, cached_weights

    cfg = WhatIf(seq_len=6, d_model=16, n_heads=2, seed=11)
    a, b = cached_run(cfg), cached_run(cfg.replace(temperature=0.3, scaled=False, mask="causal"))
    assert all(x is y for x, y in zip(a.w, b.w)) and a.w is cached_weights(16, 11)
    for kept, drawn in zip(a.w, random_projection_weights(16, 11)):
        np.testing.assert_array_equal(kept, drawn)
    np.testing.assert_array_equal(
        b.weights, run_whatif(cfg.replace(temperature=0.3, scaled=False, mask="causal")).weights
    )
    assert cached_run(cfg.replace(seed=12)).w[0] is not a.w[0]


def test_run_whatif_rejects_weights_of_another_width():
    from attention_core import WhatIf, random_projection_weights, run_whatif

    with pytest.raises(ValueError, match=r"four \(16, 16\) projection matrices of d_model=16; got shapes"):
        run_whatif(WhatIf(d_model=16, n_heads=2), tuple(random_projection_weights(8, 0)))
    with pytest.raises(ValueError, match="four"):
        run_whatif(WhatIf(d_model=16, n_heads=2), tuple(random_projection_weights(16, 0))[:3])


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"scaled": False, "temperature": 0.2},
        {"seq_len": 12, "d_model": 64, "n_heads": 8, "mask": "causal+padding", "pad_count": 3},
        {"seq_len": 1, "d_model": 8, "n_heads": 1, "temperature": 10.0},
    ],
)
def test_twin_saturation_is_the_twin_settings_saturation(settings):
    """The Playground's "against the twin" figures come from the run on screen (twin_weights), not a second run:
    they must be the figures of the twin setting itself."""
    from attention_core import WhatIf
    from ui.compute import cached_saturation, cached_twin_saturation

    cfg = WhatIf(**settings)
    expected = cached_saturation(cfg.replace(scaled=not cfg.scaled))
    assert [cached_twin_saturation(cfg, h) for h in range(cfg.n_heads)] == expected


def test_threads_that_miss_the_same_key_at_once_compute_it_once():
    """Single flight: while one thread computes a key, the others wait for its value instead of computing it too."""
    import threading

    cache, calls, started = ByteLRU("single", 2**20), [], threading.Event()
    release = threading.Event()

    def slow():
        calls.append(threading.get_ident())
        started.set()
        release.wait(5)
        return np.arange(4.0)

    got = []
    first = threading.Thread(target=lambda: got.append(cache.get_or_compute("k", slow)))
    first.start()
    assert started.wait(5)  # the first thread is inside the computation
    others = [threading.Thread(target=lambda: got.append(cache.get_or_compute("k", slow))) for _ in range(5)]
    for t in others:
        t.start()
    while cache.waits < 5:  # every other thread is waiting for the first one's result
        threading.Event().wait(0.01)
    release.set()
    for t in [first, *others]:
        t.join(5)
    assert len(calls) == 1 and len(got) == 6
    assert all(v is got[0] for v in got)  # the one stored (read-only) array
    assert (cache.misses, cache.waits, cache.hits) == (1, 5, 5)


def test_a_waiter_computes_the_key_itself_when_the_first_computation_fails():
    import threading

    cache, started, release = ByteLRU("fails", 2**20), threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait(5)
        raise RuntimeError("boom")

    errors, got = [], []

    def first():
        try:
            cache.get_or_compute("k", failing)
        except RuntimeError as exc:
            errors.append(str(exc))

    t1 = threading.Thread(target=first)
    t1.start()
    assert started.wait(5)
    t2 = threading.Thread(target=lambda: got.append(cache.get_or_compute("k", lambda: "second")))
    t2.start()
    while cache.waits < 1:
        threading.Event().wait(0.01)
    release.set()
    t1.join(5)
    t2.join(5)
    assert errors == ["boom"] and got == ["second"]
    assert cache.get("k") == (True, "second") and not cache._pending


def test_every_cache_is_byte_bounded_and_no_page_declares_one():
    """One policy (ui/server/cache.py): no st.cache_data / st.cache_resource / functools caches anywhere in the app, no
    cache declared in a page, every cached computation in ui/compute.py (chart, table and file-read caches
    beside what they draw or read), and docs/DESIGN.md's budget table lists every cache with its budget."""
    import importlib
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sources = {
        p: p.read_text(encoding="utf-8") for d in ("ui", "pages", "attention_core") for p in (root / d).rglob("*.py")
    }
    sources[root / "streamlit_app.py"] = (root / "streamlit_app.py").read_text(encoding="utf-8")
    other = re.compile(
        r"^\s*@(st\.cache_data|st\.cache_resource|functools\.lru_cache|functools\.cache|lru_cache|cache)\b", re.M
    )
    assert [str(p) for p, text in sources.items() if other.search(text)] == []
    in_pages = [p.name for p, text in sources.items() if "pages" in p.parts and re.search(r"@cached\(|ByteLRU\(", text)]
    assert in_pages == []
    for path in sorted((root / "ui").rglob("*.py")):  # every module that could declare a cache, whatever ran before
        importlib.import_module(path.relative_to(root).with_suffix("").as_posix().replace("/", "."))
    design = (root / "docs" / "DESIGN.md").read_text(encoding="utf-8")  # its "Memory: the caches"
    rows = {n: float(mb) for n, mb in re.findall(r"^\| `([\w.]+)`[^|]*\| ([\d.]+) MB \|$", design, re.M)}
    report = {r["name"]: r["max_bytes"] / 2**20 for r in cache_report() if not r["name"].startswith("test")}
    missing = [f"| `{n}` | {mb:.1f} MB |" for n, mb in sorted(report.items()) if n not in rows]
    assert not missing, "docs/DESIGN.md's cache table lacks these rows (add them):\n" + "\n".join(missing)
    gone = sorted(set(rows) - set(report))
    assert not gone, f"docs/DESIGN.md's cache table lists caches the code no longer has (remove them): {gone}"
    wrong = {n: (rows[n], round(mb, 2)) for n, mb in report.items() if abs(rows[n] - mb) > 0.05}
    assert not wrong, f"docs/DESIGN.md's cache table states other budgets than the code (DESIGN, code): {wrong}"
    total = re.search(r"\*\*all (\d+) caches\*\* \| \*\*([\d,]+) MB\*\*", design)
    assert (int(total[1]), float(total[2].replace(",", ""))) == (
        len(report),
        pytest.approx(sum(report.values()), abs=1),
    )
