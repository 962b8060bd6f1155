# The planner's app for a team: `docker compose up` (compose.yaml) runs it beside PostgreSQL.
# CPU-only torch (the planner sizes and simulates; it needs no GPU), Debian's Chromium for PDF exports.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt

COPY app.py ./
COPY .streamlit/config.toml .streamlit/config.toml
COPY ui ui
COPY planner planner
COPY data data

# Runtime files (the SQLite store when no database URL is set, measurement records) live here.
ENV PLANNER_HOME=/var/lib/planner
RUN useradd --create-home --uid 10001 planner && mkdir -p /var/lib/planner && chown planner /var/lib/planner
USER planner

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health')"
CMD ["python", "-m", "ui._server", "--server.address", "0.0.0.0", "--server.port", "8501", "--server.headless", "true"]
