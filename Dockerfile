# accel-audit: the GitHub App service (`accel-audit serve`) and its workers (`accel-audit worker`).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    ACCEL_DATA_DIR=/data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY accel_audit ./accel_audit
COPY checks ./checks
COPY reports ./reports
COPY review ./review
COPY bot ./bot
COPY autofix ./autofix
RUN pip install . \
    && useradd --system --uid 10001 --home-dir /data accel \
    && mkdir -p /data && chown accel /data

USER accel
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"
ENTRYPOINT ["accel-audit"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
