# One image for every studyAI service; EXTRAS picks the optional parts its command needs:
#   ""          the API and the workers (real Postgres and Redis: docker-compose.yml)
#   local-llm   the chat model service (`python -m core.llm.server`): llama.cpp's server compiled here
#   embedded    a single-container `studyai up` with the embedded Postgres and Redis
# The versions are the tested ones of requirements.lock (`make lock`), as for `make install`.
FROM python:3.11-slim

ARG EXTRAS=""

# llama-server is compiled from source: a compiler and cmake, only in an image that needs it.
RUN case ",${EXTRAS}," in \
      *,local-llm,*) apt-get update \
        && apt-get install -y --no-install-recommends build-essential cmake \
        && rm -rf /var/lib/apt/lists/* ;; \
    esac

# OCR of scanned PDFs and page images (workers/parsing/ocr.py): Tesseract's English and Portuguese data.
# espeak-ng: the offline voice of audio overviews in Portuguese (core/speech/voices.py).
RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr-eng tesseract-ocr-por espeak-ng \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
COPY core core
COPY backend backend
COPY workers workers
COPY agents agents
COPY evals evals
COPY migrations migrations
COPY frontend frontend

# Editable, so migrations/ is found next to core/. llama.cpp is compiled for the build machine's CPU but
# without AMX (as `make install` does): some VMs advertise AMX yet trap its instructions.
RUN pip install --no-cache-dir -c requirements.lock -e ".${EXTRAS:+[$EXTRAS]}" \
    && case ",${EXTRAS}," in \
      *,local-llm,*) NO_AMX="$(if [ "$(uname -m)" = x86_64 ]; then echo -mno-amx-tile -mno-amx-int8 -mno-amx-bf16; fi)" \
        && CFLAGS="$NO_AMX" CXXFLAGS="$NO_AMX" python -m core.llm.build ;; \
    esac

ENV STUDYAI_DATA_DIR=/data
EXPOSE 8000 8080
CMD ["studyai", "up", "--host", "0.0.0.0", "--no-worker"]
