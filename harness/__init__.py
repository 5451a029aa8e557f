"""What the tests and the tools (benchmarks, the loopback cluster) share: a server, a browser, a cluster, a Redis,
containers, an AppTest of a page, tiny models.

Imports go one way: tests/ and benchmarks/ import harness/, harness/ imports neither, and deploy/ holds only the
shipped files (tests/test_layout.py checks it).
"""
