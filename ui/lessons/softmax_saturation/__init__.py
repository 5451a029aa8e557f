"""Softmax saturation: its sentences and its charts over d_k."""
