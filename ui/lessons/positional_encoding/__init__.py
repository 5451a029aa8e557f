"""The Positional encoding page's line charts."""
