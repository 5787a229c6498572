"""The repository's declared clusters, as typed objects (parsed and validated by sources/repoconfig.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

from reconciler.core.errors import UserError
from reconciler.model.rollout import RolloutConfig
from reconciler.model.sensitive import SensitiveAllow
from reconciler.yamlio.document import YamlDoc

DEFAULT_STACK_KAI_VERSION = "v0.16.7"


SharedIntent = Literal["dedicated", "shared", "undeclared"]
UNDECLARED: SharedIntent = "undeclared"


@dataclass(frozen=True)
class SharedClusterIntent:
    """`sharedCluster` of a cluster entry. Without one the intent is "undeclared": no node label is written
    for it either way (NVCA-S-003 says which line to add), since one label turns NVCA's Shared Cluster mode on."""

    intent: SharedIntent = UNDECLARED
    nodes: tuple[str, ...] = ()
    node_selector: dict[str, str] | None = None

    @property
    def declared(self) -> bool:
        return self.intent != UNDECLARED


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    mode: str  # "addon" | "standalone"
    kai_chart_version: str
    kube_context: str | None = None
    cluster_uid: str | None = None  # the kube-system namespace's UID: which cluster a snapshot must be of
    environment_file: str | None = None
    stack_base_file: str | None = None
    stack_kai_version: str = DEFAULT_STACK_KAI_VERSION
    kai_values_file: str | None = None
    nvca_values_file: str | None = None
    shared_cluster: SharedClusterIntent = field(default_factory=SharedClusterIntent)
    queue_files: tuple[str, ...] = ()
    kai_manifest_files: tuple[str, ...] = ()  # KAI Config / SchedulingShard objects applied outside the chart
    krm_files: tuple[str, ...] = ()  # KAI Resource Management Projects, Departments, NodePools kept in Git
    index: int = 0  # position in `clusters`, to locate findings about this entry
    allow_sensitive_writes: tuple[SensitiveAllow, ...] = ()  # KAI-S-001 fields self-heal may write
    custom_scheduler_plugins: tuple[str, ...] = ()  # shard plugin names beyond the pinned KAI's (KAI-V-023)
    custom_scheduler_actions: tuple[str, ...] = ()  # shard action names beyond the pinned KAI's (KAI-V-023)
    labels: tuple[tuple[str, str], ...] = ()  # the entry's labels, sorted: for rollout waves' selectors


@dataclass(frozen=True)
class GitHostConfig:
    """The `gitHost:` block, as written (every field optional; flags override, the remote URL fills in)."""

    host: str | None = None
    url: str | None = None
    repo: str | None = None
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    base_branch: str | None = None
    bot_identities: tuple[str, ...] = ()  # authors adopted as the tool's own, besides the token's user


@dataclass(frozen=True)
class IdentityPattern:
    """One entry of `audit.identities`: an fnmatch pattern on the username, optionally narrowed by one on the
    user agent and one on the field manager that owns the drifted fields.

    The username is what the API server authenticated; a user agent is whatever the client declares
    (`curl -A 'Helm/3.16.0'`), so it only narrows a user already named, never classes anyone alone:
    `{user: ci-deployer, userAgent: 'Helm/*', fieldManager: helm}` is that user's Helm runs, where Helm owns
    the fields (managedFields), not its `kubectl` edits."""

    user: str
    user_agent: str | None = None
    field_manager: str | None = None

    def matches(self, user: str, user_agent: str | None, managers: Sequence[str] = ()) -> bool:
        if self.user_agent is not None and (user_agent is None or not fnmatchcase(user_agent, self.user_agent)):
            return False
        if self.field_manager is not None and not any(fnmatchcase(m, self.field_manager) for m in managers):
            return False
        return fnmatchcase(user, self.user)


# Listed whatever kai-gitops.yaml says (its lists add to these), each by a name a tenant cannot take: a
# ServiceAccount in a namespace of its own tool. kai-gitops's shipped ServiceAccount (deploy/: kai-gitops in
# kai-gitops; a run in a pod adds the one it runs as), the KAI operator, Argo CD and Flux. Nothing by user
# agent: any client sends any, and a tenant's ServiceAccount named kai-gitops in its own namespace is a tenant.
DEFAULT_GITOPS = (
    IdentityPattern(user="system:serviceaccount:kai-gitops:kai-gitops"),
    IdentityPattern(user="system:serviceaccount:kai-scheduler:kai-operator"),
    IdentityPattern(user="system:serviceaccount:argocd:argocd-application-controller"),
    IdentityPattern(user="system:serviceaccount:flux-system:*"),
)
# Besides the Kubernetes control plane's own users (CONTROL_PLANE_USERS, and nodes by their group):
# kube-system's ServiceAccounts and KAI's own components other than the operator.
DEFAULT_SYSTEM = (
    IdentityPattern(user="system:serviceaccount:kube-system:*"),
    IdentityPattern(user="system:serviceaccount:kai-scheduler:*"),
)
# The users upstream Kubernetes's components authenticate as (their certificates' common names). Not every
# `system:` name: other distributions give people such logins (OpenShift's and MicroK8s's `system:admin`).
CONTROL_PLANE_USERS = frozenset(
    {
        "system:apiserver",
        "system:kube-controller-manager",
        "system:kube-scheduler",
        "system:kube-proxy",
        "system:volume-scheduler",
    }
)
NODE_USER_PREFIX, NODES_GROUP = "system:node:", "system:nodes"  # the Node authorizer's pair: both, or no node


@dataclass(frozen=True)
class AuditIdentities:
    """The `audit.identities` block: who counts as a GitOps tool and who as the system; anyone else is a person.
    `running_as`: the usernames this run authenticates as (its pod's ServiceAccount), the tool's own writes."""

    gitops: tuple[IdentityPattern, ...] = DEFAULT_GITOPS
    system: tuple[IdentityPattern, ...] = DEFAULT_SYSTEM
    running_as: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldOwnership:
    """The `ownership` block: more field managers (fnmatch patterns) whose fields reconcile leaves to them; the
    built-in controllers (checks/ownership.py) are listed whatever it says."""

    controllers: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkloadConfig:
    """A function chart (`chart` + `values`) or rendered manifest file (`manifests`) and where it deploys."""

    name: str
    clusters: tuple[str, ...]
    chart: str | None = None  # chart directory, repo-relative ("" for a chart at the root)
    values: tuple[str, ...] = ()  # values files, repo-relative, in helm -f order
    manifests: str | None = None  # an already rendered manifest file, repo-relative
    index: int = 0  # position in `workloads`, to locate errors about this entry

    @property
    def source(self) -> str:
        return self.chart_shown if self.chart is not None else self.manifests or ""

    @property
    def chart_shown(self) -> str:
        """The chart directory as messages name it: `.` for the repository root."""
        return "." if self.chart == "" else self.chart or ""

    def chart_file(self, inside: str) -> str:
        """The repository path of `inside` (`templates/sts.yaml`) in the chart."""
        return f"{self.chart}/{inside}" if self.chart else inside


@dataclass(frozen=True)
class RepoConfig:
    doc: YamlDoc
    clusters: tuple[ClusterConfig, ...]
    policy_dirs: tuple[str, ...] = ()
    policy_data: tuple[str, ...] = ()
    waivers_file: str | None = None
    git_host: GitHostConfig | None = None
    audit_identities: AuditIdentities = field(default_factory=AuditIdentities)
    workloads: tuple[WorkloadConfig, ...] = ()
    ownership: FieldOwnership = field(default_factory=FieldOwnership)
    rollout: RolloutConfig | None = None

    def workloads_for(self, cluster: str) -> tuple[WorkloadConfig, ...]:
        return tuple(w for w in self.workloads if cluster in w.clusters)

    def select(self, name: str | None) -> tuple[ClusterConfig, ...]:
        if name is None:
            return self.clusters
        chosen = tuple(c for c in self.clusters if c.name == name)
        if not chosen:
            known = ", ".join(c.name for c in self.clusters)
            raise UserError(f"no cluster named '{name}'", where=self.doc.file, hint=f"known clusters: {known}")
        return chosen
