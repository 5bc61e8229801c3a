"""Benchmarks of the engine (python3 bench/run.py)."""
