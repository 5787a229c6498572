"""What `reconcile` is asked to do beyond a diff: save or load a plan, apply it, and the guard rails' limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.sources.settings import LiveSettings

DEFAULT_LEASE_NAMESPACE = "kai-gitops"


@dataclass(frozen=True)
class ReconcileSettings:
    apply: bool = False
    plan_file: str | None = None      # --plan: apply exactly this saved plan
    plan_out: str | None = None       # --plan-out: save the plan
    max_changes: int = 10
    lease_namespace: str | None = None
    lease_wait_s: float = 30.0
    audit_log: str | None = None
    audit_log_max_bytes: int = 0      # past it, the audit log keeps only each field's last write (0: never trimmed)
    live: LiveSettings = field(default_factory=LiveSettings)   # a snapshot: a plan can be shown, never applied
    allow_over_quota: bool = False    # apply a change KAI-Q-020 flags (a quota cut below running work)

    def lease_ns(self) -> str:
        """--lease-namespace, else the pod's own namespace, else kai-gitops."""
        if self.lease_namespace:
            return self.lease_namespace
        from reconciler.sources.cluster.kubeconfig import service_account_dir

        try:
            own = (service_account_dir() / "namespace").read_text().strip()
        except OSError:
            own = ""
        return own or DEFAULT_LEASE_NAMESPACE
