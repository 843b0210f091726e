"""Background workers: concurrency, polling, retries and the leases that recover a dead worker's job."""

from pydantic import Field

from core.settings.group import SettingsGroup


class WorkerSettings(SettingsGroup):
    job_max_tries: int = Field(default=3, validation_alias="JOB_MAX_TRIES")
    max_jobs: int = Field(default=2, validation_alias="WORKER_MAX_JOBS")
    # Seconds between queue polls; arq's 0.5 s default adds visible latency.
    poll_delay: float = Field(default=0.1, validation_alias="WORKER_POLL_DELAY")
    # A running job's arq in-progress key lives this long unless its worker renews it (every third of
    # it): a killed worker's job is picked up again at most this long after the kill (workers/jobs/leases.py,
    # DATA_MODEL.md "Jobs and workers").
    lease_s: float = Field(default=30.0, validation_alias="WORKER_LEASE_S")
    # How often each queue's `{queue}:health-check` key is written.
    health_check_s: float = Field(default=10.0, validation_alias="WORKER_HEALTH_CHECK_S")
    # Each worker process renews its row in worker_processes this often; one silent for 3 beats is dead
    # (GET /health/ready lists every process, a dead one within a minute).
    beat_s: float = Field(default=15.0, gt=0, le=20, validation_alias="WORKER_BEAT_S")
    # A job whose worker died this many times under it fails (a poison pill).
    job_max_deaths: int = Field(default=3, validation_alias="JOB_MAX_DEATHS")
    # An index job running longer ends `failed` with the reason.
    index_job_timeout_s: float = Field(default=1800.0, validation_alias="INDEX_JOB_TIMEOUT_S")
    # Likewise for a write_note job (model-bound, minutes long).
    note_job_timeout_s: float = Field(default=3600.0, validation_alias="NOTE_JOB_TIMEOUT_S")
