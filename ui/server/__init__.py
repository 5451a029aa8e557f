"""The server's budget: one byte-bounded cache policy, garbage collection and threads, fair reruns for every session."""
