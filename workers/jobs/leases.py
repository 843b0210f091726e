"""Leases on running jobs: a job whose worker was killed is picked up again within WORKER_LEASE_S.

arq marks a job it starts with `arq:in-progress:<job_id>`, and no worker starts a job whose key exists.
arq gives that key a TTL of the longest job timeout + 10 s, so a worker killed with `kill -9` (or by the
kernel for memory) blocks its job for an hour. Here the key is a short lease instead: it is written with
a TTL of `lease_s`, and the worker renews it every third of that while the job runs. A dead worker
renews nothing, the key expires, and the job, still in the queue with its original score, is started
by the next worker that polls. A live worker's jobs never lose their key, however long they run."""

import asyncio
import contextlib
import logging
from typing import Any

from arq.constants import in_progress_key_prefix
from arq.worker import Worker

log = logging.getLogger(__name__)


class LeasedWorker(Worker):
    """An arq Worker whose in-progress keys are leases renewed while their jobs run."""

    def __init__(self, *args: Any, lease_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # arq computed job_timeout + 10 s; the lease replaces it (a public attribute of arq's Worker).
        self.in_progress_timeout_s = lease_s
        self.lease_s = lease_s

    async def main(self) -> None:
        renewer = asyncio.create_task(self._renew_leases(), name=f"leases:{self.queue_name}")
        try:
            await super().main()
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer

    def running_job_ids(self) -> list[str]:
        return [job_id for job_id, task in self.tasks.items() if not task.done()]

    async def renew_leases(self) -> None:
        """Pushes back the expiry of every running job's in-progress key (PEXPIRE: a key that is already
        gone, because the job just finished, is not created again)."""
        running = self.running_job_ids()
        if not running or self._pool is None:
            return
        async with self.pool.pipeline(transaction=False) as pipe:
            for job_id in running:
                pipe.pexpire(in_progress_key_prefix + job_id, int(self.lease_s * 1000))
            await pipe.execute()

    async def _renew_leases(self) -> None:
        # A task of its own, not arq's poll loop: a slow poll must never let a live job's lease lapse.
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await self.renew_leases()
            except Exception as error:  # Redis blinked: the next renewal, a third of the lease later, retries
                log.warning("could not renew job leases on %s: %r", self.queue_name, error)
