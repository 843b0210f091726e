"""Content Writer: a Markdown study note written section by section from a plan, with citations."""
