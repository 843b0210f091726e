# llama.cpp is compiled for this CPU (-march=native) but without AMX: some VMs (Firecracker) advertise
# AMX yet trap its instructions, killing the model server with SIGILL on its first request.
NO_AMX := $(if $(filter x86_64,$(shell uname -m)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
EXTRAS := embedded,local-llm,cross-encoder,study-optimizer,audio,dev

# Installs the tested versions: requirements.lock pins the whole tree (pip included) as constraints.
install:
	python3 -m venv .venv
	.venv/bin/pip install --upgrade -c requirements.lock pip
	.venv/bin/pip install -c requirements.lock -e ".[$(EXTRAS)]"
	CFLAGS="$(NO_AMX)" CXXFLAGS="$(NO_AMX)" .venv/bin/python -m core.llm.build
	$(MAKE) ocr-data
	$(MAKE) audio-voices
	$(MAKE) k8s-tools

# OCR's language data (workers/parsing/ocr.py: PyMuPDF's Tesseract reads Debian's tessdata). Installed with
# apt where it is missing and apt is there as root or with password-less sudo; otherwise skipped with one
# line saying how to add it (the product then says OCR is unavailable), so `make install` needs no root.
OCR_DATA_GLOB := /usr/share/tesseract-ocr/*/tessdata/por.traineddata
USER_ID := $(shell id -u)
SUDO := sudo -n
OCR_PACKAGES := tesseract-ocr-eng tesseract-ocr-por
ocr-data:
	@if ls $(OCR_DATA_GLOB) >/dev/null 2>&1; then \
	  echo "OCR language data: present"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "OCR language data skipped: install Tesseract's eng and por data to read scans (README, OCR)"; \
	elif [ "$(USER_ID)" = 0 ]; then \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(OCR_PACKAGES); \
	elif $(SUDO) true >/dev/null 2>&1; then \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $(OCR_PACKAGES); \
	else \
	  echo "OCR language data skipped (needs root): 'sudo apt-get install $(OCR_PACKAGES)' adds it, to read scans"; \
	fi

# Audio overviews' offline voices (core/speech/voices.py): espeak-ng speaks Portuguese (and English where
# the `audio` extra's Piper voice is missing). Installed like the OCR data above; without it the app says
# "no voice installed" for Portuguese rather than failing.
AUDIO_PACKAGES := espeak-ng
audio-voices:
	@if command -v espeak-ng >/dev/null 2>&1; then \
	  echo "Audio voices (espeak-ng): present"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "Audio voices skipped: install espeak-ng for Portuguese audio overviews (README, Audio overviews)"; \
	elif [ "$(USER_ID)" = 0 ]; then \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(AUDIO_PACKAGES); \
	elif $(SUDO) true >/dev/null 2>&1; then \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $(AUDIO_PACKAGES); \
	else \
	  echo "Audio voices skipped (needs root): 'sudo apt-get install $(AUDIO_PACKAGES)' adds Portuguese audio overviews"; \
	fi

# checkov, the security baseline of the Kubernetes manifests (tests/test_kubernetes.py), in a venv of its
# own: it pins versions of packages the project also uses.
k8s-tools:
	python3 -m venv .venv-checkov
	.venv-checkov/bin/pip install -q -c deploy/kubernetes/checkov.lock checkov

# Moves .venv to the newest versions pyproject.toml allows and pins them in requirements.lock;
# run `make test` before committing the new lock.
lock:
	.venv/bin/pip install --upgrade pip
	.venv/bin/pip install --upgrade --upgrade-strategy eager -e ".[$(EXTRAS)]"
	{ echo "# The tested tree for 'make install', CI and the Dockerfile (used as pip constraints)."; \
	  echo "# Regenerate with 'make lock' (the newest versions pyproject.toml allows), then 'make test'."; \
	  echo "# torch is the CPU build (+cpu): from a local wheel directory or PyTorch's CPU wheel index."; \
	  .venv/bin/pip freeze --all --exclude-editable; } > requirements.lock

test:
	.venv/bin/python -m pytest -q

up:
	.venv/bin/studyai up

# The typed boundaries are checked strictly: the store, the runtime, the job specs and framework, the settings,
# the accounts domain and the web layer it shares.
lint:
	.venv/bin/ruff check .
	.venv/bin/mypy core/store core/runtime core/jobs core/settings core/accounts core/observability/audit.py workers/jobs/framework.py \
	  backend/accounts backend/web backend/projects backend/documents backend/qa backend/plans backend/questions \
	  backend/study backend/operations backend/mindmap backend/audio core/speech core/messages

.PHONY: install ocr-data audio-voices k8s-tools lock test up lint
