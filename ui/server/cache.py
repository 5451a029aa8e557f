"""The app's one cache policy: process-wide LRU caches bounded by bytes, keyed by cheap hashable arguments.

Every cached computation of every page goes through :func:`cached`. Unlike ``st.cache_data`` the
arguments are not pickled and hashed on each call (a frozen dataclass of primitives hashes in
microseconds) and a hit returns the stored object itself, not an unpickled copy: values must be
treated as read-only (NumPy arrays in them are made read-only). Each cache holds at most
``max_mb`` megabytes, measured with :func:`nbytes`; the least recently used entries go first.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

_REGISTRY: dict[str, ByteLRU] = {}


def nbytes(obj, _depth: int = 0) -> int:
    """Approximate memory held by ``obj``: NumPy buffers, dataclass fields, containers, strings."""
    if _depth > 6:
        return 64
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes) + 112
    if isinstance(obj, (bytes, bytearray, str)):
        return sys.getsizeof(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return 64 + sum(nbytes(getattr(obj, f.name), _depth + 1) for f in dataclasses.fields(obj))
    if isinstance(obj, dict):
        return 64 + sum(nbytes(k, _depth + 1) + nbytes(v, _depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return 56 + sum(nbytes(v, _depth + 1) for v in obj)
    tensor_bytes = getattr(obj, "element_size", None)
    if callable(tensor_bytes) and hasattr(obj, "nelement"):  # torch.Tensor, without importing torch
        return int(obj.element_size() * obj.nelement()) + 112
    return sys.getsizeof(obj)


def _freeze(obj, _depth: int = 0) -> None:
    """Make the NumPy arrays inside a cached value read-only, so no page can change a shared entry."""
    if _depth > 4:
        return
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _freeze(getattr(obj, f.name), _depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            _freeze(v, _depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _freeze(v, _depth + 1)


class ByteLRU:
    """A thread-safe least-recently-used map that keeps its values' total size under ``max_bytes``.

    A value larger than the whole budget is returned but not kept.
    """

    def __init__(self, name: str, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError(f"max_bytes={max_bytes} must be positive")
        self.name, self.max_bytes = name, int(max_bytes)
        self._data: OrderedDict = OrderedDict()  # key -> (value, size)
        self._lock = threading.Lock()
        self._pending: dict = {}  # key -> threading.Event of the thread computing it now
        self.bytes = 0
        self.hits = self.misses = self.evictions = self.waits = 0

    def get(self, key):
        """(True, value) on a hit, (False, None) on a miss."""
        with self._lock:
            item = self._data.get(key)
            if item is None:
                self.misses += 1
                return False, None
            self._data.move_to_end(key)
            self.hits += 1
            return True, item[0]

    def put(self, key, value, size: int | None = None) -> None:
        size = nbytes(value) if size is None else int(size)
        with self._lock:
            if key in self._data:
                self.bytes -= self._data.pop(key)[1]
            if size > self.max_bytes:
                return
            self._data[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, old) = self._data.popitem(last=False)
                self.bytes -= old
                self.evictions += 1

    def get_or_compute(self, key, compute):
        """The value stored under ``key``, or ``compute()`` stored (read-only) and returned.

        One computation a key at a time: a thread that misses while another computes the same key waits for
        that result instead of computing it again (thirty students who pick the same new value in the same
        second pay for it once, not once each, on a server whose Python runs one thread at a time). When
        the other computation fails or its value is too large to keep, the waiter computes it itself.
        """
        while True:
            with self._lock:
                item = self._data.get(key)
                if item is not None:
                    self._data.move_to_end(key)
                    self.hits += 1
                    return item[0]
                running = self._pending.get(key)
                if running is None:
                    self.misses += 1
                    running = self._pending[key] = threading.Event()
                    break
                self.waits += 1
            running.wait()
        try:
            value = compute()
            _freeze(value)
            self.put(key, value)
        finally:
            with self._lock:
                del self._pending[key]
            running.set()
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._data)


def register(cache: ByteLRU) -> ByteLRU:
    """List a cache made by hand in :func:`cache_report`."""
    _REGISTRY[cache.name] = cache
    return cache


def cached(max_mb: float, name: str | None = None) -> Callable:
    """Decorator: cache a function's results by its (hashable) arguments in a :class:`ByteLRU` of ``max_mb``.

    Arguments must be hashable and cheap to hash: numbers, strings, tuples, frozen dataclasses of them.
    """

    def wrap(fn):
        cache = ByteLRU(name or f"{fn.__module__}.{fn.__qualname__}", int(max_mb * 2**20))
        _REGISTRY[cache.name] = cache

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return cache.get_or_compute(key, lambda: fn(*args, **kwargs))

        inner.cache = cache
        return inner

    return wrap


def cache_report() -> list[dict]:
    """One row per cache: name, entries, bytes held, budget, hits, misses, evictions, waits (for another thread's
    computation of the same key)."""
    return [
        dict(
            name=c.name,
            entries=len(c),
            bytes=c.bytes,
            max_bytes=c.max_bytes,
            hits=c.hits,
            misses=c.misses,
            evictions=c.evictions,
            waits=c.waits,
        )
        for c in _REGISTRY.values()
    ]


def total_budget_mb() -> float:
    """The sum of every cache's budget in MB (what the caches can hold at most)."""
    return sum(c.max_bytes for c in _REGISTRY.values()) / 2**20
