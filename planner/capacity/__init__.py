"""Capacity planning with queues: how many GPUs to commit, and how long jobs may wait."""
