"""Every change sent once with dryRun=All before anything is written: admission, validation and the
resourceVersion precondition all get their say, and one refusal aborts the whole plan.

Each change is dry-run against the cluster as it is, not as the earlier changes of the plan would leave
it: a plan that creates both a parent and a child Queue dry-runs the child before the parent exists, so
an admission webhook that insists on an existing parent would refuse it (the test server has none).
"""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.reconcile.apply import ApiFailure, ClusterWriter, Pending, concurrently


def dry_run(writer: ClusterWriter, pending: list[Pending]) -> None:
    def attempt(item: Pending) -> str | None:
        try:
            writer.write_change(item.change, item.resource_version, dry_run=True)
        except ApiFailure as exc:
            return f"{item.change.operation.value} {item.change.ref}: {exc.line()}"
        return None

    refusals = [r for r in concurrently(pending, attempt, writer.settings.workers) if r]
    if refusals:
        shown = "; ".join(refusals[:3]) + (f"; and {len(refusals) - 3} more" if len(refusals) > 3 else "")
        raise UserError(f"the server-side dry-run refused the plan, nothing was written: {shown}")
