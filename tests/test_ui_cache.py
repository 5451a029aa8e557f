"""The one cache policy: LRU bounded by bytes, cheap keys, stored objects returned read-only."""

import numpy as np
import pytest

from ui.cache import ByteLRU, cache_report, cached, nbytes


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
