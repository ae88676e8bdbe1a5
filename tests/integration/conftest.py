"""Integration tests use the Redis and worker fixtures of tests/conftest.py."""
