"""Text heuristics for English and Portuguese, languages and upload types."""
