"""Tracing, timings and JSON log lines."""
