"""The tests that need a Redis Cluster (see ../conftest.py)."""
