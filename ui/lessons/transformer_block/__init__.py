"""The Transformer block page's sentences."""
