"""The Sinks and linear attention page: its sentences, the sinks URL list and the memory chart."""
