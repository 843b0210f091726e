"""Content Planner: an outline of sections grounded in retrieved chunks, with coverage and gaps."""
