"""Room: batch (a front end, beside cli). Owns the Ray executor: each task a Ray task, the spend in
a Ray actor (Ray is imported only here, only when used)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..extras import require
from ..ids import new_hex
from ..telemetry import adopt, flush
from ..usage import SharedSpend
from .run import LocalSpend, _error_result, run_task
from .tasks import BatchResult, RunSpec, result_line

# What a Ray worker needs from the driver's environment to reach the same model and keep
# transcripts in the same place.
RAY_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
           "LOOPWRIGHT_HOME", "LOOPWRIGHT_SESSIONS_DIR", "LOOPWRIGHT_MODEL")


class RayExecutor:
    """Each task a Ray task on a local Ray (`address=None`) or a running cluster (`"auto"`,
    `"ray://host:10001"`). The spend lives in a Ray actor; results come back to the driver,
    which alone writes RESULTS. A worker that dies has its task rerun by Ray (`retries`)."""

    def __init__(self, address: str | None = None, retries: int = 2, num_cpus: int | None = None) -> None:
        require("loopwright batch --ray", "ray", "ray")
        import ray  # only here: Ray is an optional extra

        self.ray = ray
        self.retries = retries
        if not ray.is_initialized():
            # Workers run where the cluster started them: they get the driver's provider settings.
            env = {k: v for k in RAY_ENV if (v := os.environ.get(k)) is not None}
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "ignore_reinit_error": True, "runtime_env": {"env_vars": env}}
            if address is None:
                kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
            ray.init(address=address, **kwargs)
            self._own = True
        else:
            self._own = False
        self._remote = ray.remote(max_retries=retries, retry_exceptions=False)(_ray_run_task)
        self.spend: RaySpend | None = None
        self._tally = LocalSpend(None)

    def make_spend(self, limit_usd: float | None) -> SharedSpend:
        if limit_usd is None:  # nothing to hold back: the driver sums the results
            self.spend = None
            self._tally = LocalSpend(None)
            return self._tally
        # One actor per driver holds the S of each of its batches: a batch does not wait for a
        # process to start. It is kept here (Ray ends an actor when its last handle goes) and
        # ends with the driver's Ray job.
        job = self.ray.get_runtime_context().get_job_id()
        if job not in _SPEND_ACTORS:
            _SPEND_ACTORS[job] = self.ray.remote(_SpendActor).options(num_cpus=0).remote()
        self.spend = RaySpend(_SPEND_ACTORS[job], new_hex(), limit_usd)
        return self.spend

    async def run(self, spec: RunSpec) -> BatchResult:
        spend = self.spend
        ref = self._remote.options(num_cpus=0.5).remote(spec, spend.actor if spend else None,
                                                        spend.batch if spend else "", spend.limit_usd if spend else None)
        try:
            out: BatchResult = await ref
        except asyncio.CancelledError:  # the batch stopped: so does the task (else it runs and spends on)
            self.ray.cancel(ref, force=True)
            raise
        except self.ray.exceptions.RayError as e:  # retries exhausted (worker deaths)
            out = result_line(spec.task.id, _error_result(f"Ray task failed: {type(e).__name__}: {e}"),
                              task_sha256=spec.task.fingerprint)
        if spend is None:
            self._tally.add(float(out.get("total_cost_usd") or 0.0))
        return out

    async def aclose(self) -> None:
        if self.spend is not None:
            self.spend.actor.drop.remote(self.spend.batch)
            self.spend = None
        if self._own:
            self.ray.shutdown()


_SPEND_ACTORS: dict[str, Any] = {}  # Ray job id -> the spend actor of this driver


class _SpendActor:
    """The spend S of each batch (by batch id) of one driver, held by one Ray actor for every worker."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def add(self, batch: str, usd: float) -> float:
        self.spent[batch] = self.spent.get(batch, 0.0) + usd
        return self.spent[batch]

    def get(self, batch: str) -> float:
        return self.spent.get(batch, 0.0)

    def drop(self, batch: str) -> None:
        self.spent.pop(batch, None)


class RaySpend:
    """A worker's (or the driver's) view of a batch's S in the actor: each charge and each check
    is a call to the actor."""

    def __init__(self, actor: Any, batch: str, limit_usd: float | None) -> None:
        self.actor = actor
        self.batch = batch
        self.limit_usd = limit_usd

    def add(self, usd: float) -> None:
        import ray

        ray.get(self.actor.add.remote(self.batch, usd))

    @property
    def spent_usd(self) -> float:
        import ray

        return float(ray.get(self.actor.get.remote(self.batch)))

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd


def _ray_run_task(spec: RunSpec, actor: Any, batch: str, limit_usd: float | None) -> BatchResult:
    """The Ray task: runs in a worker process."""
    adopt(spec.trace)  # telemetry: the driver's OTEL_* (from its environment or its settings)
    try:
        return asyncio.run(run_task(spec, RaySpend(actor, batch, limit_usd) if actor is not None else None))
    finally:
        flush()  # the worker lives on: its spans leave now
