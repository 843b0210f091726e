"""Sections into chunks: whole sections where they fit, long ones cut at their coarsest boundary."""
