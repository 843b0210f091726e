"""Grading quality: the Question Evaluator against hand-labelled student answers (evals/data/grading)."""
