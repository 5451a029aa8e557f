"""Efficient attention: its sentences and its chart specs."""
