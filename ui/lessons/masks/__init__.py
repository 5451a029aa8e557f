"""The Masks page's sentences."""
