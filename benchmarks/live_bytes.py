"""What the live maps cost on the wire and on the server: page load, a temperature release, a seq_len change.

For each scenario (the Playground and Compare at the default, 128 tokens x 8 heads and 512 x 16) one protocol
client (benchmarks/protocol.py, no browser) opens the page with live maps and measures:

- page load: the bytes of every ForwardMsg of the first run, in parts: the raw scores (the float32 arrays the live
  maps' components carry: the scores S, or Q and K where they are smaller, and X, V and W_o where the browser draws
  the outputs), the live maps' other bytes (their module, header and settings), every other element,
  and Streamlit's own messages (session, page info, status, script finished); and the images the browser fetches
  over HTTP (``/media/...``: the maps drawn as PNG at large sizes), each address once per session, as a browser
  caches them;
- a temperature release: what the browser sends when the learner lets go of the live maps' temperature (the maps
  component's state, ``{"setting": ...}``) at a temperature the session has not had before, verified by the URL's
  temperature parameter; bytes and the server's CPU over the change, medians of ``--changes`` releases;
- a seq_len change (the sidebar's slider, a full run that changes the scores), the same figures.

In the same process (no server), at 512 x 16: what Streamlit's message cache alone would cost per run if the scores
stayed in the maps' element (the element's identity hash of the bytes, then the message's serialization and hash),
and what the page's own maths for a new temperature costs (the run and its saturation, which the sentences need).

Beside them, when bertviz is installed (requirements-dev.txt), the bytes of BertViz's head view of the same attention
(the page's weights at each size, one layer, ``html_action="return"``).

``--app-dir`` measures another checkout of the app in the same run (the "before" rows): its server is started
from that folder, with this folder's client.

    python benchmarks/live_bytes.py [--changes 5] [--app-dir /tmp/old-checkout] [--scenarios Playground]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import struct
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from benchmarks._timing import table  # noqa: E402
from benchmarks.protocol import LIVE_COMPONENTS, StreamlitClient, cpu_seconds, machine, size_query, start_server  # noqa: E402
from ui.skeleton.controls import TEMPERATURES  # noqa: E402

SIZES = {"default": "", "128 x 8": size_query(128, 8), "512 x 16": size_query(512, 16)}
PAGES = {"Playground": ("", "temperature", "seq_len"), "Compare": ("A", "a_temperature", "a_seq_len")}
PARTS = ("scores", "live maps, other", "other elements", "Streamlit's own", "images (HTTP)")
THINK = 1.5  # seconds between two changes, as a student's (a request within 1 s of a run's end is sent without
# references to the browser's message cache: ui/server/fairness.py's CACHE_GRACE)


def score_bytes(data: bytes) -> int:
    """The float32 arrays in a live component's packed data ("AEL1", header length, header, arrays): the scores or
    their factors Q and K, and X, V and W_o."""
    if data[:4] != b"AEL1":
        return 0
    n = struct.unpack("<I", data[4:8])[0]
    return len(data) - 8 - n - (-n) % 4


@dataclass
class Tally:
    """Bytes of one run's ForwardMsgs, by part."""

    parts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTS, 0))

    def add(self, msg: ForwardMsg, size: int) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            if el.WhichOneof("type") == "bidi_component" and el.bidi_component.component_name.startswith(
                LIVE_COMPONENTS
            ):
                s = score_bytes(el.bidi_component.bytes)
                self.parts["scores"] += s
                self.parts["live maps, other"] += size - s
                return
        if kind in ("delta", "ref_hash"):
            self.parts["other elements"] += size
        else:
            self.parts["Streamlit's own"] += size

    @property
    def total(self) -> int:
        return sum(self.parts.values())


class CountingClient(StreamlitClient):
    """A protocol client that sorts the bytes of each run into parts (``self.tally``, reset by ``measure``). With
    ``fetch_images`` it also fetches every image a run names that this session has not fetched, as a browser does,
    and counts its bytes (``fetched`` holds the addresses)."""

    tally = Tally()
    fetch_images = False

    def handle(self, msg: ForwardMsg, errors: list[str]) -> str | None:
        self.tally.add(msg, msg.ByteSize())
        if self.fetch_images and msg.WhichOneof("type") == "delta":
            el = msg.delta.new_element if msg.delta.WhichOneof("type") == "new_element" else None
            if el is not None and el.WhichOneof("type") == "imgs":
                for img in el.imgs.imgs:
                    self.fetch(img.url)
        return super().handle(msg, errors)

    def fetch(self, url: str) -> None:
        fetched = self.__dict__.setdefault("fetched", set())
        if not url.startswith("/media/") or url in fetched:
            return
        fetched.add(url)
        with urllib.request.urlopen(self.origin + url, timeout=60) as r:  # a small PNG from the loopback server
            self.tally.parts["images (HTTP)"] += len(r.read())


def _setting(tau: float) -> dict:
    return {"temperature": tau, "scaled": True, "mask": "none", "pad": 0, "head": 0, "query": 0}


async def measure(url: str, pid: int, path: str, panel: str, tau_param: str, seq_param: str, changes: int) -> dict:
    out = {}
    async with CountingClient(url, path, timeout=300) as c:
        pass  # a first visit warms the server's caches (the core's run of this setting)
    c = CountingClient(url, path, timeout=300)
    c.tally, c.fetch_images = Tally(), True
    await c.open()
    out["load"] = c.tally
    try:
        # a new temperature every time, as a student's drag ends on one: a value this session has seen is answered
        # from the caches and sent as references to what the browser holds, which would flatter both figures
        taus = [t for t in TEMPERATURES if t != 1.0]
        cpu, sent, ok = [], [], 0
        for i in range(changes + 1):
            tau = taus[(3 * i) % len(taus)]
            await asyncio.sleep(THINK)
            c.tally = Tally()
            c0 = cpu_seconds(pid)
            r = await c._run(c.release_state({panel: _setting(tau)}))
            c1 = cpu_seconds(pid)
            good = not r.errors and float(c.query_params.get(tau_param, "nan")) == tau
            if i:  # the first release warms the page's caches for the new temperature
                cpu.append(1e3 * (c1 - c0))
                sent.append(c.tally)
                ok += good
        out["temperature"] = (sent, cpu, ok)
        label = "seq_len (tokens)" + (f" ({panel})" if panel else "")
        w = c.page.widget(label)
        lo = int(w.value)
        cpu, sent, ok = [], [], 0
        for i in range(changes):
            v = lo - 1 - i % 2 if lo > 4 else lo + 1 + i % 2  # a new seq_len: new scores
            await asyncio.sleep(THINK)
            c.tally = Tally()
            c0 = cpu_seconds(pid)
            r = await c.change(w.label, v, param=seq_param)
            c1 = cpu_seconds(pid)
            cpu.append(1e3 * (c1 - c0))
            sent.append(c.tally)
            ok += r.ok
        out["seq_len"] = (sent, cpu, ok)
    finally:
        await c.close()
    return out


def bertviz_bytes(query: str) -> int | None:
    """Bytes of BertViz's head view of the attention the page draws at ``query``'s size (None without bertviz)."""
    try:
        import torch
        from bertviz import head_view
    except ImportError:
        return None
    from urllib.parse import parse_qsl

    from attention_core import WhatIf, run_whatif

    q = dict(parse_qsl(query))
    cfg = WhatIf(**{k: int(q[n]) for k, n in (("seq_len", "seq_len"), ("d_model", "d_model"), ("n_heads", "heads"))})
    run = run_whatif(cfg)
    attention = [torch.tensor(run.weights, dtype=torch.float32).unsqueeze(0)]  # one layer, (1, H, T, T)
    return len(head_view(attention, [str(t) for t in run.tokens], html_action="return").data.encode("utf-8"))


def inprocess_costs() -> list[list[str]]:
    """CPU ms, at 512 x 16, of hashing the scores as an element carrying them is hashed on every run, and of the
    page's maths for a new temperature (median of 5 each)."""
    import time

    from streamlit.util import calc_hash

    from attention_core import WhatIf
    from ui.compute import cached_run, cached_saturation

    def ms(fn, n: int = 5) -> float:
        out = []
        for i in range(n):
            t0 = time.process_time()
            fn(i)
            out.append(1e3 * (time.process_time() - t0))
        return statistics.median(out)

    cfg = WhatIf(seq_len=512, d_model=1024, n_heads=16)
    run = cached_run(cfg)
    data = (run.q @ run.k.swapaxes(-1, -2)).astype("<f4").tobytes()  # (H, T, T) float32, what the maps need
    msg = ForwardMsg()
    msg.delta.new_element.bidi_component.bytes = data
    hashed = ms(lambda i: (calc_hash(data), calc_hash(msg.SerializeToString(deterministic=True))))

    def new_temperature(i: int) -> None:
        changed = cfg.replace(temperature=0.3 + 0.1 * i)
        cached_run(changed)
        cached_saturation(changed)

    new_tau = ms(new_temperature)
    least = ms(_least_maths(cfg))
    return [
        ["hash the scores' element as Streamlit does on every run (identity + message)", f"{hashed:.0f}"],
        ["a new temperature: the run and its saturation (the page's sentences)", f"{new_tau:.0f}"],
        ["the least a new temperature needs, in float32 PyTorch (softmax, A V, W_o, four row sums)", f"{least:.0f}"],
    ]


def _least_maths(cfg):
    """What no page can skip for a new temperature and still state its figures, written as lean as PyTorch allows in
    float32: the softmax of every head's scores, the output Z = concat(A V) W_o, and the row sums the saturation
    figures need (entropy from the log-softmax, the largest weight, the sums of p^2 and p^3). A floor, not the page's
    code (which is float64 and checks its input)."""
    import torch

    from ui.compute import cached_run

    run = cached_run(cfg)
    S = torch.from_numpy(np.ascontiguousarray(run.q @ run.k.swapaxes(-1, -2), np.float32)) / math.sqrt(cfg.d_k)
    V = torch.from_numpy(np.ascontiguousarray(run.v, np.float32))
    H, T, d_k = V.shape
    W_o = torch.randn(H * d_k, H * d_k)

    def once(i: int) -> None:
        z = S / (0.3 + 0.1 * i)
        A = torch.softmax(z, -1)
        (A @ V).transpose(0, 1).reshape(T, H * d_k) @ W_o
        -(A * torch.log_softmax(z, -1)).sum(-1), A.amax(-1), (A * A).sum(-1), (A * A * A).sum(-1)

    return once


def kb(n: float) -> str:
    return f"{n / 1e3:,.1f}" if n < 1e6 else f"{n / 1e3:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=int, default=5)
    ap.add_argument("--app-dir", type=Path, default=None, help="another checkout to measure first (the 'before')")
    ap.add_argument("--scenarios", default="", help="comma-separated parts of scenario names (default: all)")
    ap.add_argument("--cores", default=None, help="taskset CPU list for the server, e.g. 0,1")
    args = ap.parse_args()
    apps = ([("before", args.app_dir)] if args.app_dir else []) + [("now", ROOT)]
    rows, part_rows = [], []
    for name, app_dir in apps:
        with start_server(cores=args.cores, app_dir=app_dir, timeout=180) as server:
            for page, (panel, tau_param, seq_param) in PAGES.items():
                for size, query in SIZES.items():
                    title = f"{page}, {size}"
                    if args.scenarios and not any(s in title for s in args.scenarios.split(",")):
                        continue
                    path = f"{page}?{query}" if query else page
                    got = asyncio.run(measure(server.url, server.pid, path, panel, tau_param, seq_param, args.changes))
                    load = got["load"]
                    t_sent, t_cpu, t_ok = got["temperature"]
                    s_sent, s_cpu, s_ok = got["seq_len"]
                    med = statistics.median
                    rows.append(
                        [
                            title,
                            name,
                            kb(load.total),
                            kb(med(t.total for t in t_sent)),
                            kb(med(t.parts["scores"] for t in t_sent)),
                            kb(med(t.parts["scores"] + t.parts["live maps, other"] for t in t_sent)),
                            kb(med(t.parts["images (HTTP)"] for t in t_sent)),
                            kb(med(t.total for t in s_sent)),
                            f"{med(t_cpu):.0f}",
                            f"{med(s_cpu):.0f}",
                            f"{t_ok}/{len(t_cpu)}, {s_ok}/{len(s_cpu)}",
                        ]
                    )
                    part_rows.append([title, name, *(kb(load.parts[p]) for p in PARTS), kb(load.total)])
                    print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(
        table(
            [
                "scenario",
                "app",
                "page load (KB)",
                "temperature release (KB)",
                "of it scores (KB)",
                "of it the live maps (KB)",
                "of it images (KB)",
                "seq_len change (KB)",
                "server CPU, release (ms)",
                "server CPU, seq_len (ms)",
                "verified (release, seq_len)",
            ],
            rows,
        )
    )
    print()
    print(table(["scenario", "app", *(f"{p} (KB)" for p in PARTS), "page load (KB)"], part_rows))
    print(
        f"\nprotobuf bytes of the ForwardMsgs, and the images fetched over HTTP; medians of {args.changes} changes after"
        f" a warm-up; {machine()}"
    )
    print()
    print(table(["at 512 x 16, in the process", "CPU (ms)"], inprocess_costs()))
    rows = [[size, kb(n)] for size, query in SIZES.items() if query and (n := bertviz_bytes(query)) is not None]
    if rows:
        print()
        print(table(["the same attention", "BertViz head view (KB)"], rows))


if __name__ == "__main__":
    main()
