"""The Sinks and linear attention page: the sinks URL list and the memory chart."""
