"""The Positions page's chart of scores by offset."""
