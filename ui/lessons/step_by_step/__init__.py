"""Step by step: its sentences and its large labelled matrices."""
