"""Exports of a project's study material: the approved question bank (CSV, JSON) and an Anki deck."""
