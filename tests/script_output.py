"""Reading what the "reproduce in Python" scripts (ui/lessons/playground/export.py) print, for the tests that run them."""

import io

import numpy as np


def parse_printed_weights(text: str) -> list[np.ndarray]:
    """Read the heads printed by the scripts back into arrays (for tests)."""
    heads, cur = [], None
    for line in io.StringIO(text):
        line = line.strip()
        if line.startswith("head "):
            cur = []
            heads.append(cur)
        elif cur is not None and line and (line[0].isdigit() or line[0] == "-"):
            cur.append([float(x) for x in line.split()])
    return [np.array(h) for h in heads]
