"""Embedding models, their on-disk cache and their cosine thresholds."""
