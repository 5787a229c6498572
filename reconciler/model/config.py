"""The repository's declared clusters, as typed objects (parsed and validated by sources/repoconfig.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from reconciler.core.errors import UserError
from reconciler.yamlio.document import YamlDoc

DEFAULT_STACK_KAI_VERSION = "v0.16.7"


@dataclass(frozen=True)
class SharedClusterIntent:
    intent: str = "dedicated"              # "dedicated" | "shared"
    nodes: tuple[str, ...] = ()
    node_selector: dict[str, str] | None = None


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    mode: str                              # "addon" | "standalone"
    kai_chart_version: str
    kube_context: str | None = None
    environment_file: str | None = None
    stack_base_file: str | None = None
    stack_kai_version: str = DEFAULT_STACK_KAI_VERSION
    kai_values_file: str | None = None
    nvca_values_file: str | None = None
    shared_cluster: SharedClusterIntent = field(default_factory=SharedClusterIntent)
    queue_files: tuple[str, ...] = ()
    kai_manifest_files: tuple[str, ...] = ()   # KAI Config / SchedulingShard objects applied outside the chart
    index: int = 0                         # position in `clusters`, to locate findings about this entry


@dataclass(frozen=True)
class GitHostConfig:
    """The `gitHost:` block, as written (every field optional; flags override, the remote URL fills in)."""

    host: str | None = None
    url: str | None = None
    repo: str | None = None
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    base_branch: str | None = None
    bot_identities: tuple[str, ...] = ()    # authors adopted as the tool's own, besides the token's user


SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class IdentityPattern:
    """One entry of `audit.identities`: fnmatch patterns on the username and/or on the user agent.

    A user agent is whatever the client declares (`curl -A 'Helm/3.16.0'`), while the username is what the API
    server authenticated: a pattern on the user agent alone therefore matches ServiceAccounts only (a machine's
    credential, run by a tool), never a person's or any other user's name. To class a user by its tool, name
    both: `{user: ci-deployer, userAgent: 'Helm/*'}`."""

    user: str | None = None
    user_agent: str | None = None

    def matches(self, user: str, user_agent: str | None) -> bool:
        if self.user_agent is not None and (user_agent is None or not fnmatchcase(user_agent, self.user_agent)):
            return False
        if self.user is not None:
            return fnmatchcase(user, self.user)
        return self.user_agent is not None and user.startswith(SERVICE_ACCOUNT_PREFIX)


# Listed whatever kai-gitops.yaml says (its lists add to these): kai-gitops itself, Helm (both by user agent: a
# ServiceAccount running them; a person running them stays a person), the KAI operator, Argo CD and Flux.
DEFAULT_GITOPS = (IdentityPattern(user="system:serviceaccount:*:kai-gitops"),
                  IdentityPattern(user_agent="kai-gitops/*"), IdentityPattern(user_agent="Helm/*"),
                  IdentityPattern(user="system:serviceaccount:kai-scheduler:kai-operator"),
                  IdentityPattern(user="system:serviceaccount:argocd:argocd-application-controller"),
                  IdentityPattern(user="system:serviceaccount:flux-system:*"))
# Besides every system:* user that is no ServiceAccount (a name only the cluster's own components get):
# kube-system's ServiceAccounts and KAI's own components other than the operator.
DEFAULT_SYSTEM = (IdentityPattern(user="system:serviceaccount:kube-system:*"),
                  IdentityPattern(user="system:serviceaccount:kai-scheduler:*"))


@dataclass(frozen=True)
class AuditIdentities:
    """The `audit.identities` block: who counts as a GitOps tool and who as the system; anyone else is a person."""

    gitops: tuple[IdentityPattern, ...] = DEFAULT_GITOPS
    system: tuple[IdentityPattern, ...] = DEFAULT_SYSTEM


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
    chart: str | None = None               # chart directory, repo-relative ("" for a chart at the root)
    values: tuple[str, ...] = ()           # values files, repo-relative, in helm -f order
    manifests: str | None = None           # an already rendered manifest file, repo-relative
    index: int = 0                         # position in `workloads`, to locate errors about this entry

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

    def workloads_for(self, cluster: str) -> tuple[WorkloadConfig, ...]:
        return tuple(w for w in self.workloads if cluster in w.clusters)

    def select(self, name: str | None) -> tuple[ClusterConfig, ...]:
        if name is None:
            return self.clusters
        chosen = tuple(c for c in self.clusters if c.name == name)
        if not chosen:
            known = ", ".join(c.name for c in self.clusters)
            raise UserError(f"no cluster named '{name}'", where=self.doc.file,
                            hint=f"known clusters: {known}")
        return chosen
