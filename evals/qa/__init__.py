"""RAG QA evaluation over the development quizzes and FaQuAD (python -m evals.qa)."""
