"""The rules written in Python (the differ, waivers, policy changes): their one description, as Rego metas are.

The checks raise their findings from these (`QUEUE_DRIFT.finding(...)`), and reports list every rule
that ran with its description and remedy (SARIF's rule table, JUnit test cases).
"""

from __future__ import annotations

from reconciler.findings.finding import Severity
from reconciler.findings.krm_rules import KRM_RULES as KRM_RULES  # re-exported: the run lists them with these
from reconciler.findings.nvca_values_rules import NVCA_VALUES_RULES as NVCA_VALUES_RULES
from reconciler.findings.rules import DoctorList, RuleMeta, Scope
from reconciler.findings.schema_rules import MANIFEST_SCHEMA_RULES

_DRIFT_SOURCE = "kai-gitops differ (docs/policies.md#rule-ids)"
_WAIVER_SOURCE = "kai-gitops waivers (docs/policies.md#waivers)"
_OPERATOR_SOURCE = (
    "docs/policies.md#kai-config-health / KAI-Scheduler pkg/operator/controller/status_reconciler, "
    "templates/hooks/post/kai-config-deployer at each tag"
)
_KEYS_SOURCE = (
    "docs/policies.md#every-values-key-accounted-for / KAI-Scheduler deployments/kai-scheduler "
    "values.yaml and templates at the pinned tag; nvcf-compute-plane environments/base.yaml"
)

QUEUE_MISSING = RuleMeta(
    "KAI-D-001",
    "Queue defined in Git is missing",
    Severity.ERROR,
    Scope.LIVE,
    "A Queue that Git defines does not exist in the cluster; workloads that name it stay Pending.",
    "Create the Queue from Git (kai-gitops shows the manifest; the chart only creates default queues on helm install).",
    _DRIFT_SOURCE,
)
QUEUE_DRIFT = RuleMeta(
    "KAI-D-002",
    "Queue differs from Git",
    Severity.ERROR,
    Scope.LIVE,
    "A live Queue's parent or resources differ from Git; the default queues are never updated by "
    "helm upgrade (helm.sh/resource-policy: keep).",
    "Patch the live Queue's spec to Git's (kubectl patch … --type merge, shown per finding).",
    _DRIFT_SOURCE,
    lists_changes=True,
)
SHARD_DRIFT = RuleMeta(
    "KAI-D-003",
    "SchedulingShard differs from values",
    Severity.ERROR,
    Scope.LIVE,
    "The SchedulingShard default does not match what the KAI values render.",
    "Re-apply the KAI chart values with helm upgrade (kai-gitops never runs Helm).",
    _DRIFT_SOURCE,
)
RELEASE_VALUES_DRIFT = RuleMeta(
    "KAI-D-004",
    "Release values differ from Git",
    Severity.WARNING,
    Scope.LIVE,
    "The kai-scheduler Helm release was installed with values that differ from Git.",
    "helm upgrade the release with the values from Git.",
    _DRIFT_SOURCE,
)
CONFIG_DRIFT = RuleMeta(
    "KAI-D-005",
    "kai-config differs from Git",
    Severity.ERROR,
    Scope.LIVE,
    "The KAI operator deploys every component from kai-config; a field that differs from what the pinned "
    "chart renders from the values (a hand edit, a deployer hook that did not run, an E1 chart re-creating it "
    "on upgrade) runs the components with settings Git does not hold.",
    "Patch kai-config's spec to Git's values (kai-gitops reconcile --apply does it; the finding shows the "
    "merge patch), or change the values.",
    _DRIFT_SOURCE,
    listed_in=DoctorList.KAI,
)
CONFIG_MISSING = RuleMeta(
    "KAI-D-006",
    "kai-config missing",
    Severity.ERROR,
    Scope.LIVE,
    "The KAI release is deployed but the operator's kai-config does not exist: the operator deploys nothing, "
    "and what it owned is garbage-collected (KAI-Scheduler #1751; Argo CD runs no post-install hook on an "
    "automated sync).",
    "Re-create kai-config: re-run the chart's hooks (helm upgrade), or apply it from Git when Git keeps it.",
    _DRIFT_SOURCE,
    listed_in=DoctorList.KAI,
)
SHARD_UNDECLARED = RuleMeta(
    "KAI-D-007",
    "SchedulingShard not declared in Git",
    Severity.WARNING,
    Scope.LIVE,
    "Every SchedulingShard runs a scheduler of its own; one that Git does not declare is configuration "
    "nobody reviews. kai-gitops reports it and never deletes it.",
    "Declare it in kaiManifestFiles, or delete it if nobody uses it.",
    _DRIFT_SOURCE,
)
FIELD_OWNED = RuleMeta(
    "KAI-D-008",
    "Drifted field owned by another controller",
    Severity.WARNING,
    Scope.LIVE,
    "The field's managedFields owner is a controller (the KAI operator or its chart's deployer, KAI Resource "
    "Management, another Helm release, Argo CD, Flux, or one kai-gitops.yaml lists under ownership.controllers). "
    "A patch would be written back by it on its next pass: a controller fight, not a fix. Hand edits (kubectl) "
    "are not a controller's and are still undone.",
    "Change the value where it comes from (the finding names it), or stop that controller managing the field; "
    "reconcile never writes it.",
    _DRIFT_SOURCE,
)
CONTROLLER_FIGHT = RuleMeta(
    "KAI-D-009",
    "Controller fight: a field kai-gitops wrote was written back",
    Severity.WARNING,
    Scope.LIVE,
    "A field reconcile wrote on an earlier run (its --audit-log) drifts again, set since by another field "
    "manager that is no person: writing it again would feed the fight, every run, forever. The field is left "
    "alone and the finding names both managers.",
    "Make the other manager apply Git's value, list it under ownership.controllers in kai-gitops.yaml to leave "
    "it the field (KAI-D-008), or change Git to its value.",
    _DRIFT_SOURCE,
)
KRM_MANAGED = RuleMeta(
    "KAI-D-010",
    "Queue or SchedulingShard in Git on a KAI Resource Management cluster",
    Severity.WARNING,
    Scope.LIVE,
    "KAI Resource Management generates Queues from its Projects and Departments and SchedulingShards from its "
    "NodePools: it takes over a Queue whose name a Project or Department would use and adopts every existing "
    "SchedulingShard, rewriting its spec. An object Git also declares is written by both, forever.",
    "Declare it in KAI Resource Management (a Project or Department spec.queues[] entry, a NodePool's "
    "schedulingShardConfig), or keep it Git's with KRM's opt-out label: kai.resources/resource-manual-override=true "
    "on a Queue, kai.scheduler/ignore-shard-for-krm=true on a SchedulingShard.",
    _DRIFT_SOURCE,
)
CONFIG_NOT_RECONCILED = RuleMeta(
    "KAI-O-001",
    "kai-config reconciled by the KAI operator",
    Severity.ERROR,
    Scope.LIVE,
    "A kai-config that matches Git does nothing until the operator acts on it: its conditions say whether "
    "the current generation was deployed and every operand is available. v0.10.0 to v0.12.15 set Reconciling "
    "True on every pass and write no Ready, so those two are not read there.",
    "Read the conditions' messages, the operand Deployments in kai-scheduler and the kai-operator logs.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
CONFIG_HOOK_LEFT = RuleMeta(
    "KAI-O-002",
    "kai-config carries no Helm hook annotation",
    Severity.WARNING,
    Scope.LIVE,
    "Pre-hook charts rendered kai-config as a pre-install/pre-upgrade hook, which Helm deletes and re-creates on "
    "every upgrade (KAI-Scheduler #1536); the post-install kai-config-deployer Job of later charts strips the "
    "annotations. Still there means the Job has not run successfully.",
    "Check Job kai-config-deployer in kai-scheduler, then remove the annotations.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
OPERANDS_UNAVAILABLE = RuleMeta(
    "KAI-O-003",
    "KAI operands available and owned by the current kai-config",
    Severity.ERROR,
    Scope.LIVE,
    "The operator deploys every component from kai-config and owns what it deploys; an operand with fewer "
    "available or updated replicas than wanted is not serving, and one owned by another kai-config UID was "
    "deployed from a kai-config that was deleted (an E1 upgrade re-creates it) and is being garbage-collected.",
    "Describe the Deployment; for an old owner, wait for the operator to re-create it or restart kai-operator.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
TOKEN_WINDOW = RuleMeta(
    "KAI-O-004",
    "KAI pods started after their ServiceAccount was created",
    Severity.ERROR,
    Scope.LIVE,
    "When kai-config is re-created the operator re-creates the ServiceAccounts it owns; pods started before "
    "keep a token bound to the deleted one and get 401 Unauthorized (leader election, watches) until the "
    "kubelet rotates it, about 48 minutes (KAI-Scheduler #1536; before v0.17.0 the scheduler stays Ready).",
    "Restart the Deployment of each such pod (the message gives the command).",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
DEPLOYER_FAILED = RuleMeta(
    "KAI-O-005",
    "kai-config-deployer Job did not fail",
    Severity.ERROR,
    Scope.LIVE,
    "E2/E3 charts apply kai-config with a post-install Job; a failed one (image pull, RBAC) leaves kai-config "
    "as it was and the release failed, and Helm keeps the Job.",
    "Read the Job's pod logs, fix the cause, and run the Helm upgrade again.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
LEADER_NOT_RENEWED = RuleMeta(
    "KAI-O-006",
    "KAI scheduler's leader Lease renewed",
    Severity.ERROR,
    Scope.LIVE,
    "The scheduler renews its leader Lease (kai-scheduler in kai-scheduler) every few seconds; one not renewed "
    "for several durations means no scheduler leads, e.g. on 401 Unauthorized after its ServiceAccount was "
    "re-created (KAI-Scheduler #1536): pods stay Pending while everything looks Running.",
    "Read the scheduler's logs; on Unauthorized, restart deployment/kai-scheduler-default.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
SHARD_NOT_RECONCILED = RuleMeta(
    "KAI-O-007",
    "SchedulingShards reconciled by the KAI operator",
    Severity.ERROR,
    Scope.LIVE,
    "The operator writes the same conditions on every SchedulingShard as on kai-config (DependenciesFulfilled "
    "is always True there). A shard whose conditions are for an older generation or say not ready runs a "
    "scheduler with an old config, or none; with kai-config missing the shard reconcile fails before its "
    "status update, so stale shard conditions are also the trace of a missing kai-config.",
    "Read the shard's conditions, check that kai-config exists, then the kai-operator logs.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
SCHEDULER_RESTARTED_ON_401 = RuleMeta(
    "KAI-O-008",
    "KAI scheduler not restarted by a 401 after a ServiceAccount change",
    Severity.WARNING,
    Scope.LIVE,
    "From v0.17.0 the scheduler exits on 401 Unauthorized and the kubelet restarts it with a token of the "
    "current ServiceAccount (KAI-Scheduler #1817, #1823). A scheduler container that ended after its "
    "ServiceAccount was re-created, in a pod started before, went through the 401 window and recovered: no "
    "scheduling from the re-creation to the restart, and the cause (kai-config deleted or re-created, as every "
    "pre-hook chart upgrade does) comes back. A warning, not an error: nothing is broken now.",
    "Find why kai-config was re-created (its creationTimestamp, the chart version's era).",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)
CONFIG_NOT_HELM_OWNED = RuleMeta(
    "KAI-O-009",
    "kai-config adoptable by Helm in render mode",
    Severity.ERROR,
    Scope.LIVE,
    "With kaiConfig.render true (v0.17.0+) the chart renders kai-config as a regular release resource. A live "
    "kai-config written by the deployer Job or an older chart has no Helm ownership metadata, and Helm 3 refuses "
    'to adopt it: the install or upgrade fails with "invalid ownership metadata" (Argo CD\'s server-side '
    "apply adopts it).",
    "Annotate and label kai-config for the release (the message gives the commands), then upgrade.",
    _OPERATOR_SOURCE,
    listed_in=DoctorList.KAI,
)

_GANG_SOURCE = (
    "docs/policies.md#gangs-and-topology / KAI-Scheduler v0.17.0 pkg/apis/scheduling/v2alpha2 "
    "(PodGroup status), pkg/podgrouper; NVIDIA/nvcf fadc0f81 nvcf-cluster-topology chart; Grove "
    "v0.1.0-alpha.11 ClusterTopologyBinding; NVIDIA k8s-dra-driver-gpu"
)
GANG_UNSCHEDULABLE = RuleMeta(
    "KAI-T-001",
    "PodGroups with Pending members placed by the scheduler",
    Severity.ERROR,
    Scope.LIVE,
    "KAI holds a gang until all its required members fit; when it cannot place one it writes an "
    "UnschedulableOnNodePool scheduling condition per node pool on the PodGroup, with structured reasons "
    "(QueueDoesNotExist, OverLimit, NonPreemptibleOverQuota, PreemptionDelayNotElapsed) or the topology or "
    "capacity message. The function stays Pending with nothing else to say why. A condition on a gang whose pods "
    "are all bound is stale (left behind before v0.17.0) and not reported.",
    "Act on the reason (the message says what): create or fix the queue, raise its quota or limit, free "
    "capacity in the node pool, or fix the topology the gang requires.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
GANG_PENDING = RuleMeta(
    "KAI-T-002",
    "Gang members not Pending with scheduling failures",
    Severity.WARNING,
    Scope.LIVE,
    "The Pending members of one gang fail for one cause; their Unschedulable / FailedScheduling events read per "
    "gang (each distinct message once, with how many pods it was said of) say it once instead of once per pod.",
    "Read the events and the PodGroup's scheduling conditions (the command is in the finding).",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
GANG_GROUP_MISSING = RuleMeta(
    "KAI-T-003",
    "Gang members name an existing PodGroup",
    Severity.ERROR,
    Scope.LIVE,
    "A pod whose pod-group-name names a PodGroup that does not exist is never scheduled by KAI: an external "
    "group was not created (or was deleted), or the pod-grouper is not running.",
    "Create the PodGroup, or remove the annotation so the pod-grouper creates one.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
TOPOLOGY_NOT_AS_RENDERED = RuleMeta(
    "KAI-T-004",
    "KAI Topology present as the stack renders it",
    Severity.ERROR,
    Scope.LIVE,
    "With topology-aware scheduling on, the stack installs each Topology of addons.topologyAwareScheduling "
    "(nvcf-mnnvl-topology: nvidia.com/gpu.clique, kubernetes.io/hostname); a workload or PodGroup that names a "
    "missing Topology, or a level it does not have, stays Pending.",
    "Sync the stack's topology release, or correct the topology the workload names.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
BINDING_NOT_AS_RENDERED = RuleMeta(
    "KAI-T-005",
    "Grove ClusterTopologyBinding present, as rendered and in sync",
    Severity.ERROR,
    Scope.LIVE,
    "With topology-aware scheduling and Grove on, the stack installs <topology>-binding, mapping each level to a "
    "domain (gpuclique, hostname) and binding kai-scheduler to the KAI Topology; Grove refuses constraints naming "
    "a missing binding and reports SchedulerTopologyDrift when KAI's Topology no longer matches it.",
    "Sync the stack's Grove topology release; on drift, make the KAI Topology's levels match the binding.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
LEVEL_LABEL_MISSING = RuleMeta(
    "KAI-T-006",
    "Nodes carry every topology level's label",
    Severity.ERROR,
    Scope.LIVE,
    "KAI places a gang inside one domain of the required level, read from a node label; with no node labelled "
    "(nvidia.com/gpu.clique on NVLink clusters comes from the GPU operator's feature discovery) a gang that "
    "requires that level never fits.",
    "Label the nodes (the GPU operator with GFD on NVLink nodes), or drop the level.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)
DRA_DRIVER_MISSING = RuleMeta(
    "KAI-T-007",
    "GPU DRA driver's CRDs present for topology-aware scheduling",
    Severity.ERROR,
    Scope.LIVE,
    "Multi-node NVLink gangs need the NVIDIA GPU DRA driver (its ComputeDomain kind, "
    "computedomains.resource.nvidia.com) to set up the IMEX domain across the clique.",
    "Install the NVIDIA DRA driver for GPUs.",
    _GANG_SOURCE,
    listed_in=DoctorList.GANGS,
)

WAIVER_EXPIRED = RuleMeta(
    "KAI-W-001",
    "Waiver has expired",
    Severity.WARNING,
    Scope.STATIC,
    "An expired waiver no longer hides its findings; they are reported again.",
    "Fix the findings, or renew the waiver with a new reason and expiry.",
    _WAIVER_SOURCE,
)
WAIVER_UNUSED = RuleMeta(
    "KAI-W-002",
    "Waiver matches nothing",
    Severity.INFO,
    Scope.STATIC,
    "A waiver that matches no finding is dead weight and may hide a future one.",
    "Delete the waiver if the problem is fixed.",
    _WAIVER_SOURCE,
)
POLICY_CHANGE = RuleMeta(
    "KAI-W-003",
    "Change edits policies or waivers",
    Severity.INFO,
    Scope.STATIC,
    "A pull request that edits its own policies or waivers is judged by the base versions.",
    "Have the policy owners review these files.",
    _WAIVER_SOURCE,
)

VALUE_IGNORED = RuleMeta(
    "KAI-V-010",
    "Value is carried by the pinned KAI chart version",
    Severity.WARNING,
    Scope.STATIC,
    "Some values are accepted by a chart version and then dropped: the template never renders them into "
    "kai-config (or the SchedulingShard), or the add-on stack never forwards them. Helm reports nothing and "
    "the operator applies its default (KAI-Scheduler #859, #890, #942, #1101, #1655, #1774).",
    "Remove the value, or pin a KAI chart version that carries it (the message names it).",
    _KEYS_SOURCE,
)
VALUE_UNKNOWN = RuleMeta(
    "KAI-V-011",
    "Values key is known to the pinned KAI chart or the stack",
    Severity.ERROR,
    Scope.STATIC,
    "Helm ignores a values key no template reads, so a misspelt key (placementStratgy, defaultQueues, "
    "kaiSchedular) silently leaves the chart default in place.",
    "Correct the key's spelling (the message suggests the closest known key; --fix-git renames it when "
    "exactly one is close) or delete it.",
    _KEYS_SOURCE,
)

# -- values keys a release renamed, removed or deprecated, and values outside a key's set (checks/key_changes.py)
_HISTORY_SOURCE = (
    "docs/policies.md#renamed-removed-and-deprecated-keys / KAI-Scheduler deployments/kai-scheduler "
    "values.yaml and templates/_helpers.tpl at each tag and release branch"
)
VALUE_RENAMED = RuleMeta(
    "KAI-V-015",
    "Values key is not renamed or removed by the pinned KAI chart",
    Severity.ERROR,
    Scope.STATIC,
    "A key the pinned chart version renamed or dropped is ignored by Helm without a word: global.fips: true on a "
    "chart that reads only global.fipsMode installs the non-FIPS images.",
    "Rename the key to the one the message names (--fix-git does it, converting the value, when the meaning is "
    "the same), or delete a removed key.",
    _HISTORY_SOURCE,
)
VALUE_DEPRECATED = RuleMeta(
    "KAI-V-016",
    "Values key is not deprecated by the pinned KAI chart",
    Severity.WARNING,
    Scope.STATIC,
    "A deprecated key is still honoured, but only while the new key is unset, and the next release may drop it.",
    "Rename the key to the one the message names (--fix-git does it when the new key is not also set).",
    _HISTORY_SOURCE,
)
VALUE_NOT_ALLOWED = RuleMeta(
    "KAI-V-017",
    "Value is one the pinned KAI chart acts on",
    Severity.ERROR,
    Scope.STATIC,
    "Some keys take one of a few strings and the template compares against them: any other value (a typo, "
    "an unquoted on/off that YAML reads as a boolean, a value of a later release) is silently the default.",
    "Write one of the values the message lists, quoted.",
    _HISTORY_SOURCE,
)

PIN_CHANGE = RuleMeta(
    "KAI-V-018",
    "KAI chart pin change comes with its upgrade plan",
    Severity.INFO,
    Scope.STATIC,
    "A pull request that moves a cluster's kaiChartVersion changes more than its keys: defaults, kai-config "
    "fields and CRDs move with the chart, and the live default queues stay as they were installed.",
    "Read the plan (kai-gitops upgrade-plan --cluster C --to VERSION -o markdown) and follow its steps in order.",
    "docs/upgrade-plan.md",
)

# -- issue 28 (versions): shard plugin and action names -------------------------------------------------------
SHARD_NAME_UNKNOWN = RuleMeta(
    "KAI-V-023",
    "Shard plugin and action names are known to the pinned KAI version",
    Severity.ERROR,
    Scope.STATIC,
    "The KAI operator merges a SchedulingShard's plugins and actions over its version's default set and takes "
    "any other name for a new one, enabled with priority 0; nothing rejects it. A misspelt plugin "
    '(nodeplacment) is then skipped by the scheduler with only a log line ("Failed to get plugin"), and the '
    "override meant for the real one (elastc: {enabled: false}) never applies; a misspelt action makes the "
    'scheduler refuse its configuration ("failed to find Action").',
    "Correct the name (the message suggests the closest one the pinned version knows, and names the versions "
    "that have a name this one lacks), or, for a plugin or action built into your own scheduler image, list it "
    "in the cluster's customSchedulerPlugins or customSchedulerActions in kai-gitops.yaml.",
    "docs/policies.md#shard-plugins-and-actions / KAI-Scheduler pkg/apis/kai/v1/schedulingshard_types.go "
    "(setDefaultPlugins, setDefaultActions) and pkg/scheduler/plugins/factory.go at the pinned tag",
)
SHARD_NAME_RULES = (SHARD_NAME_UNKNOWN,)

_INTENT_SOURCE = "docs/policies.md#shared-cluster-mode / docs/configuration.md#intent-not-assumption"
SHARED_INTENT_UNDECLARED = RuleMeta(
    "NVCA-S-003",
    "Shared-cluster intent is declared",
    Severity.INFO,
    Scope.STATIC,
    "One node labelled nvca.nvcf.nvidia.io/schedule=true turns NVCA's Shared Cluster mode on and removing the "
    "last one turns it off, so kai-gitops acts on the label only when Git says which mode the cluster is in: "
    "without sharedCluster it writes no node label, either way.",
    "Add sharedCluster to the cluster's entry in kai-gitops.yaml: {intent: dedicated} when NVCF owns every "
    "node, or {intent: shared} with the NVCF nodes (names or a nodeSelector).",
    _INTENT_SOURCE,
)
SENSITIVE_CHANGE = RuleMeta(
    "KAI-S-001",
    "Security-sensitive change to what KAI or NVCA runs",
    Severity.WARNING,
    Scope.STATIC,
    "A change to an image (repository, registry, name or tag other than the pinned chart's), a securityContext "
    "or privilege, host access (network, paths), extra args or a service account changes what the cluster runs "
    "and with which rights; it passes every other check, so it is named at review time. Self-heal never writes "
    "such a field unless the cluster's allowSensitiveWrites names it.",
    "Have the change reviewed by someone who may approve it; to let self-heal write the field, name it in the "
    "cluster's allowSensitiveWrites in kai-gitops.yaml.",
    "kai-gitops sensitive fields (docs/policies.md#security-sensitive-changes)",
)

DRIFT_RULES = (
    QUEUE_MISSING,
    QUEUE_DRIFT,
    SHARD_DRIFT,
    RELEASE_VALUES_DRIFT,
    CONFIG_DRIFT,
    CONFIG_MISSING,
    SHARD_UNDECLARED,
    FIELD_OWNED,
    CONTROLLER_FIGHT,
    KRM_MANAGED,
)
REPOSITORY_RULES = (WAIVER_EXPIRED, WAIVER_UNUSED, POLICY_CHANGE)
VALUES_KEY_RULES = (VALUE_IGNORED, VALUE_UNKNOWN, VALUE_RENAMED, VALUE_DEPRECATED, VALUE_NOT_ALLOWED)
INTENT_RULES = (SHARED_INTENT_UNDECLARED,)
SENSITIVE_RULES = (SENSITIVE_CHANGE,)
UPGRADE_RULES = (PIN_CHANGE,)
OPERATOR_RULES = (
    CONFIG_NOT_RECONCILED,
    CONFIG_HOOK_LEFT,
    OPERANDS_UNAVAILABLE,
    TOKEN_WINDOW,
    DEPLOYER_FAILED,
    LEADER_NOT_RENEWED,
    SHARD_NOT_RECONCILED,
    SCHEDULER_RESTARTED_ON_401,
    CONFIG_NOT_HELM_OWNED,
)
GANG_RULES = (
    GANG_UNSCHEDULABLE,
    GANG_PENDING,
    GANG_GROUP_MISSING,
    TOPOLOGY_NOT_AS_RENDERED,
    BINDING_NOT_AS_RENDERED,
    LEVEL_LABEL_MISSING,
    DRA_DRIVER_MISSING,
)
BY_ID = {
    meta.id: meta
    for meta in (
        *DRIFT_RULES,
        *REPOSITORY_RULES,
        *VALUES_KEY_RULES,
        *SHARD_NAME_RULES,
        *MANIFEST_SCHEMA_RULES,
        *OPERATOR_RULES,
        *GANG_RULES,
        *INTENT_RULES,
        *SENSITIVE_RULES,
        *UPGRADE_RULES,
        *KRM_RULES,
        *NVCA_VALUES_RULES,
    )
}


def lists_changes(rule_id: str) -> bool:
    """Whether the outputs show the rule's field changes one a line (`RuleMeta.lists_changes`)."""
    rule = BY_ID.get(rule_id)
    return rule is not None and rule.lists_changes
