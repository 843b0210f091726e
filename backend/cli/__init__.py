"""The `studyai` command line."""
