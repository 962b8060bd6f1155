"""Benchmarks: scripts that measure and print (never tests). Run them with `make bench...`."""
