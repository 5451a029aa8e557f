"""The home page's preset gallery."""
