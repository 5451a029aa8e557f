"""The Real model page: model picker and loading, where one word looks, the head view and the model view."""
