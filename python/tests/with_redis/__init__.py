"""The tests that need a Redis server (see ../conftest.py)."""
