install:
	python3 -m venv .venv
	.venv/bin/pip install --upgrade pip
	.venv/bin/pip install -e ".[embedded,local-llm,cross-encoder,dev]"

test:
	.venv/bin/python -m pytest -q

up:
	.venv/bin/studyai up

lint:
	.venv/bin/ruff check .

.PHONY: install test up lint
