"""The Compare page's sentences."""
