"""Pydantic models at the API edge, one module per group of routes."""
