"""The Real model page: model picker and loading, where one word looks, the head and model views, its sentences."""
