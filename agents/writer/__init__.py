"""Content Writer: a Markdown study note, study guide, FAQ or glossary written section by section from a
plan, with citations."""
