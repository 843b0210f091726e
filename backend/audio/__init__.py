"""Audio overviews: a spoken script of chosen documents, made by a worker job (workers/jobs/audio.py)."""
