FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY core core
COPY backend backend
COPY workers workers
COPY agents agents
COPY evals evals
COPY migrations migrations
RUN pip install --no-cache-dir -e .
ENV STUDYAI_DATA_DIR=/data
EXPOSE 8000
CMD ["studyai", "up", "--host", "0.0.0.0", "--no-worker"]
