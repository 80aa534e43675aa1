"""Room: batch (a front end, beside cli). Owns batches of runs (`lw.batch`); may import assemble and below.

Its parts: `tasks` (the task list, RunSpec and the results file), `isolation` (in place, a
copy or a git worktree), `run` (one task's run, the whole-batch budget, the local executor and
the batch itself), `ray_executor` (Ray) and `progress` (stderr). `loopwright batch` is
`cli/batch.py`. (Named `batching`, not `batch`: `lw.batch` is the function.)"""

from __future__ import annotations

from .isolation import Workspace as Workspace
from .progress import Progress as Progress
from .ray_executor import RAY_ENV as RAY_ENV
from .ray_executor import RayExecutor as RayExecutor
from .run import BatchConfig as BatchConfig
from .run import Executor as Executor
from .run import LocalExecutor as LocalExecutor
from .run import LocalSpend as LocalSpend
from .run import batch as batch
from .run import plan as plan
from .run import prepare as prepare
from .run import run_task as run_task
from .run import task_options as task_options
from .tasks import ISOLATIONS as ISOLATIONS
from .tasks import NOT_PER_TASK as NOT_PER_TASK
from .tasks import RETRY_BASE_S as RETRY_BASE_S
from .tasks import BatchError as BatchError
from .tasks import BatchResult as BatchResult
from .tasks import Isolation as Isolation
from .tasks import ResultsFile as ResultsFile
from .tasks import RunSpec as RunSpec
from .tasks import Task as Task
from .tasks import check_tasks as check_tasks
from .tasks import finished as finished
from .tasks import read_tasks as read_tasks
