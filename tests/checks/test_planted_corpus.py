"""One corpus of planted mistakes for what KAI versions and owners allow (issue 28), run as a user runs it.

Each case is a small GitOps repository (a real Git commit) with one realistic mistake planted in it, checked
with `kai-gitops check --repo`. The line holding a planted mistake ends in the comment `# planted`; each
expected finding must be raised at the next such line of its file (and at the key's column where the rule gives
one). A case whose mistake is bad input (a number YAML reads as infinite or not-a-number where kai-gitops reads
it as a quantity) expects the one-line error `file:line:` and exit 1 instead.

Precision: a run may raise no finding of the issue-28 rule families (FAMILIES) beyond the expected ones. The
per-feature corpora (tests/manifest_schema_corpus/, CORPUS in tests/checks/test_key_history.py, the cases in
tests/checks/test_krm.py and tests/checks/test_shard_names.py) stay as they are, with the finer assertions on messages
and
fixes; this one counts, per category, what is found and what is missed.

`python -m tests.checks.test_planted_corpus` prints the counts table (category, cases, found, missed).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import DEMO, ROOT, load_demo_builder, make_repo, run_cli
from tests.support.tools import ToolMissing, tool_path

# The rules of issue 28 (key history, manifest schemas, shard names, KRM, NVCA values) and KAI-V-011, the
# unknown-key rule that names the release adding a key a pin does not have yet.
FAMILIES = frozenset(
    {
        "KAI-V-011",
        "KAI-V-015",
        "KAI-V-016",
        "KAI-V-017",
        "KAI-V-018",
        "KAI-V-020",
        "KAI-V-021",
        "KAI-V-022",
        "KAI-V-023",
        "KAI-K-001",
        "KAI-K-002",
        "KAI-K-003",
        "KAI-K-004",
        "NVCA-V-001",
        "NVCA-G-014",
    }
)
MARK = "# planted"
INPUT_ERROR = "input error"  # the expectation of a case whose mistake kai-gitops refuses to read


@dataclass(frozen=True)
class Case:
    category: str
    title: str
    pin: str
    files: dict[str, str]  # kai-values.yaml, queues.yaml, shards.yaml, krm.yaml, fn.yaml
    expect: tuple[tuple[str, str], ...]  # (rule or INPUT_ERROR, file), each at the next planted line


def config(case: Case) -> str:
    """kai-gitops.yaml for one standalone cluster `lab` that reads each file the case has in its place."""
    text = (
        f"apiVersion: kai-gitops/v1\nclusters:\n  - name: lab\n    mode: standalone\n"
        f"    kaiChartVersion: {case.pin}\n    kaiValuesFile: kai-values.yaml\n"
        "    sharedCluster: {intent: shared, nodeSelector: {nvcf: 'true'}}\n"
    )
    for name, key in (("queues.yaml", "queueFiles"), ("shards.yaml", "kaiManifestFiles"), ("krm.yaml", "krmFiles")):
        if name in case.files:
            text += f"    {key}: [{name}]\n"
    if "fn.yaml" in case.files:
        text += "workloads:\n  - name: fn\n    clusters: [lab]\n    manifests: fn.yaml\n"
    return text


# -- the KRM organisation the collision cases start from (as in tests/checks/test_krm.py) -----------------------------

KRM_ORG = """\
apiVersion: kai.resources/v1alpha1
kind: Department
metadata:
  name: engineering
spec:
  queues:
    - nodepool: h100
      name: engineering-h100
      resources:
        gpu: {deserved: 8, limit: 16, overQuotaWeight: 1}
    - nodepool: default
      resources:
        gpu: {deserved: 0, limit: -1, overQuotaWeight: 1}
---
apiVersion: kai.resources/v1alpha1
kind: Project
metadata:
  name: research
spec:
  parent: engineering
  queues:
    - nodepool: h100
      resources:
        gpu: {deserved: 3, limit: 8, overQuotaWeight: 2}
---
apiVersion: kai.resources/v1alpha1
kind: NodePool
metadata:
  name: h100
spec:
  labelKey: pool
  labelValue: h100
"""


def git_queue(name: str, parent: str | None, mark: bool = True) -> str:
    planted = f"  {MARK}" if mark else ""
    text = f"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: {name}{planted}\nspec:\n"
    if parent:
        text += f"  parentQueue: {parent}\n"
    return text + "  resources:\n    gpu:\n      quota: -1\n      limit: -1\n      overQuotaWeight: 1\n"


def queue_file(body: str) -> str:
    """A Queue as a team keeps it, `body` its spec lines (one of them planted)."""
    return f"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: team-a\nspec:\n{body}"


def shard_file(body: str) -> str:
    return f"apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata:\n  name: gpu\nspec:\n{body}"


SHARD_KNOWN = "  partitionLabelValue: gpu\n"

CASES: tuple[Case, ...] = (
    # -- renamed keys: the old key is ignored by the pinned chart (KAI-V-015) or deprecated in favour of one
    Case(
        "renamed keys",
        "global.fips after the v0.17.1 rename",
        "v0.17.1",
        {"kai-values.yaml": f"global:\n  fips: true  {MARK}\n"},
        (("KAI-V-015", "kai-values.yaml"),),
    ),
    Case(
        "renamed keys",
        "global.fips: false below another key",
        "v0.17.1",
        {"kai-values.yaml": f"global:\n  tag: v0.17.1\n  fips: false  {MARK}\n"},
        (("KAI-V-015", "kai-values.yaml"),),
    ),
    Case(
        "renamed keys",
        "admission.gpuPodRuntimeClassName, deprecated since v0.16.0",
        "v0.16.8",
        {"kai-values.yaml": f"admission:\n  gpuPodRuntimeClassName: nvidia  {MARK}\n"},
        (("KAI-V-016", "kai-values.yaml"),),
    ),
    Case(
        "renamed keys",
        "both runtime-class keys set on v0.17.0",
        "v0.17.0",
        {
            "kai-values.yaml": f"admission:\n  gpuFractionRuntimeClassName: nvidia\n  gpuPodRuntimeClassName: runc  "
            f"{MARK}\n"
        },
        (("KAI-V-016", "kai-values.yaml"),),
    ),
    # -- removed keys: nothing reads them any more (KAI-V-015)
    Case(
        "removed keys",
        "admission.certSecretName after v0.17.0",
        "v0.17.0",
        {"kai-values.yaml": f"admission:\n  certSecretName: kai-admission-tls  {MARK}\n"},
        (("KAI-V-015", "kai-values.yaml"),),
    ),
    Case(
        "removed keys",
        "queuecontroller.certSecretName on v0.17.1",
        "v0.17.1",
        {"kai-values.yaml": f"queuecontroller:\n  replicas: 1\n  certSecretName: qc-tls  {MARK}\n"},
        (("KAI-V-015", "kai-values.yaml"),),
    ),
    Case(
        "removed keys",
        "binder.cdi, gone since v0.10.0",
        "v0.14.7",
        {"kai-values.yaml": f"binder:\n  cdi: true  {MARK}\n"},
        (("KAI-V-015", "kai-values.yaml"),),
    ),
    # -- enum values: a value the template or the CRD does not act on (KAI-V-017, KAI-V-021)
    Case(
        "enum values",
        "fipsMode: yes (YAML's boolean true)",
        "v0.17.1",
        {"kai-values.yaml": f"global:\n  fipsMode: yes  {MARK}\n"},
        (("KAI-V-017", "kai-values.yaml"),),
    ),
    Case(
        "enum values",
        'fipsMode: "true" (the old key\'s value)',
        "v0.17.1",
        {"kai-values.yaml": f'global:\n  fipsMode: "true"  {MARK}\n'},
        (("KAI-V-017", "kai-values.yaml"),),
    ),
    Case(
        "enum values",
        'fipsMode: "only" (main only, no release)',
        "v0.17.1",
        {"kai-values.yaml": f'global:\n  fipsMode: "only"  {MARK}\n'},
        (("KAI-V-017", "kai-values.yaml"),),
    ),
    Case(
        "enum values",
        "a PodGroup's preemptibility misspelt",
        "v0.17.1",
        {
            "kai-values.yaml": "{}\n",
            "fn.yaml": "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: fn\n"
            f"  namespace: team-a\nspec:\n  queue: team-a\n  minMember: 1\n"
            f"  preemptibility: nonpreemptible  {MARK}\n",
        },
        (("KAI-V-021", "fn.yaml"),),
    ),
    # -- queue-file typos: fields the API server prunes without a word (KAI-V-020)
    Case(
        "queue-file typos",
        "parentQueu",
        "v0.17.1",
        {"queues.yaml": queue_file(f"  parentQueu: research  {MARK}\n")},
        (("KAI-V-020", "queues.yaml"),),
    ),
    Case(
        "queue-file typos",
        "qouta",
        "v0.17.1",
        {"queues.yaml": queue_file(f"  resources:\n    gpu:\n      qouta: 4  {MARK}\n      limit: 8\n")},
        (("KAI-V-020", "queues.yaml"),),
    ),
    Case(
        "queue-file typos",
        "overQuotaWieght",
        "v0.16.9",
        {"queues.yaml": queue_file(f"  resources:\n    cpu:\n      overQuotaWieght: 2  {MARK}\n")},
        (("KAI-V-020", "queues.yaml"),),
    ),
    Case(
        "queue-file typos",
        "reclaimMinRunTime",
        "v0.17.0",
        {"queues.yaml": queue_file(f"  reclaimMinRunTime: 5m  {MARK}\n")},
        (("KAI-V-020", "queues.yaml"),),
    ),
    # -- shard typos: SchedulingShard fields kept in Git (KAI-V-020)
    Case(
        "shard typos",
        "placementStratgy",
        "v0.17.0",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  placementStratgy:  {MARK}\n    gpu: spread\n")},
        (("KAI-V-020", "shards.yaml"),),
    ),
    Case(
        "shard typos",
        "partitionLabelValu",
        "v0.17.1",
        {"shards.yaml": shard_file(f"  partitionLabelValu: gpu  {MARK}\n")},
        (("KAI-V-020", "shards.yaml"),),
    ),
    Case(
        "shard typos",
        "minRuntime misspelt",
        "v0.16.8",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  minRunTime:  {MARK}\n    preemptMinRuntime: 5m\n")},
        (("KAI-V-020", "shards.yaml"),),
    ),
    # -- plugin and action typos: names the pinned scheduler does not know (KAI-V-023)
    Case(
        "plugin typos",
        "nodeplacment in the values",
        "v0.17.1",
        {
            "kai-values.yaml": f"scheduler:\n  plugins:\n    nodeplacment:  {MARK}\n      arguments:\n"
            "        gpu: spread\n"
        },
        (("KAI-V-023", "kai-values.yaml"),),
    ),
    Case(
        "plugin typos",
        "consolidaton action in the values",
        "v0.16.9",
        {"kai-values.yaml": f"scheduler:\n  actions:\n    consolidaton:  {MARK}\n      enabled: false\n"},
        (("KAI-V-023", "kai-values.yaml"),),
    ),
    Case(
        "plugin typos",
        "elastc in a shard kept in Git",
        "v0.17.1",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  plugins:\n    elastc:  {MARK}\n      enabled: false\n")},
        (("KAI-V-023", "shards.yaml"),),
    ),
    Case(
        "plugin typos",
        "preemt action in a shard kept in Git",
        "v0.17.0",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  actions:\n    preemt:  {MARK}\n      enabled: false\n")},
        (("KAI-V-023", "shards.yaml"),),
    ),
    Case(
        "plugin typos",
        "numa before the version that builds it in",
        "v0.15.3",
        {"kai-values.yaml": f"scheduler:\n  plugins:\n    numa:  {MARK}\n      enabled: true\n"},
        (("KAI-V-023", "kai-values.yaml"),),
    ),
    # -- fields ahead of the pinned version: served only by a later release (KAI-V-022, KAI-V-011)
    Case(
        "ahead of the pin",
        "global.fipsMode on v0.17.0",
        "v0.17.0",
        {"kai-values.yaml": f'global:\n  fipsMode: "on"  {MARK}\n'},
        (("KAI-V-011", "kai-values.yaml"),),
    ),
    Case(
        "ahead of the pin",
        "goMemLimitRatio on v0.16.8",
        "v0.16.8",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  goMemLimitRatio: 0.8  {MARK}\n")},
        (("KAI-V-022", "shards.yaml"),),
    ),
    Case(
        "ahead of the pin",
        "minMember: 0 on v0.16.8",
        "v0.16.8",
        {
            "kai-values.yaml": "{}\n",
            "fn.yaml": "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: batch\n"
            f"  namespace: team-a\nspec:\n  queue: team-a\n  minMember: 0  {MARK}\n",
        },
        (("KAI-V-022", "fn.yaml"),),
    ),
    Case(
        "ahead of the pin",
        "a Topology level alias on v0.16.9",
        "v0.16.9",
        {
            "kai-values.yaml": "{}\n",
            "fn.yaml": "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata:\n  name: gb200\nspec:\n"
            f"  levels:\n    - nodeLabel: nvidia.com/gpu.clique\n      alias: clique  {MARK}\n",
        },
        (("KAI-V-022", "fn.yaml"),),
    ),
    Case(
        "ahead of the pin",
        "a PodGroup preemptionDelay on v0.16.8",
        "v0.16.8",
        {
            "kai-values.yaml": "{}\n",
            "fn.yaml": "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: batch\n"
            f"  namespace: team-a\nspec:\n  queue: team-a\n  minMember: 1\n  preemptionDelay: 5m  {MARK}\n",
        },
        (("KAI-V-022", "fn.yaml"),),
    ),
    Case(
        "ahead of the pin",
        "a lendingLimit no release serves (a proposal, KAI-Scheduler #2202)",
        "v0.17.1",
        {"queues.yaml": queue_file(f"  resources:\n    gpu:\n      quota: 4\n      lendingLimit: 2  {MARK}\n")},
        (("KAI-V-020", "queues.yaml"),),
    ),
    # -- KAI Resource Management: Git and KRM's Projects and Departments owning the same thing
    Case(
        "KRM collisions",
        "a Git Queue with the name Project research generates",
        "v0.17.1",
        {"krm.yaml": KRM_ORG, "queues.yaml": git_queue("research-h100", "engineering-h100")},
        (("KAI-K-001", "queues.yaml"),),
    ),
    Case(
        "KRM collisions",
        "a Git Queue KRM generates under another parent",
        "v0.17.1",
        {"krm.yaml": KRM_ORG, "queues.yaml": git_queue("research-h100", "default-parent-queue")},
        (("KAI-K-002", "queues.yaml"),),
    ),
    Case(
        "KRM collisions",
        "a Git Queue hung under a Department's generated queue",
        "v0.17.1",
        {"krm.yaml": KRM_ORG, "queues.yaml": git_queue("adhoc", "engineering-h100")},
        (("KAI-K-002", "queues.yaml"),),
    ),
    Case(
        "KRM collisions",
        "a SchedulingShard the NodePool h100 owns",
        "v0.17.1",
        {
            "krm.yaml": KRM_ORG,
            "shards.yaml": "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata:\n"
            f"  name: h100  {MARK}\nspec:\n  partitionLabelValue: h100\n",
        },
        (("KAI-K-003", "shards.yaml"),),
    ),
    Case(
        "KRM collisions",
        "a Project queue for a node pool its Department has none for",
        "v0.17.1",
        {
            "krm.yaml": KRM_ORG.replace(
                "        gpu: {deserved: 3, limit: 8, overQuotaWeight: 2}\n",
                "        gpu: {deserved: 3, limit: 8, overQuotaWeight: 2}\n"
                f"    - nodepool: a100  {MARK}\n      resources:\n"
                "        gpu: {deserved: 2, limit: 2, overQuotaWeight: 1}\n",
            )
        },
        (("KAI-K-004", "krm.yaml"),),
    ),
    # -- non-finite numbers: .inf / .nan where a number must be one
    Case(
        "non-finite numbers",
        "quota: .inf in a queue file",
        "v0.17.1",
        {"queues.yaml": queue_file(f"  resources:\n    gpu:\n      quota: .inf  {MARK}\n      limit: -1\n")},
        ((INPUT_ERROR, "queues.yaml"),),
    ),
    Case(
        "non-finite numbers",
        "limit: .nan in the values' default queue",
        "v0.17.1",
        {
            "kai-values.yaml": "defaultQueue:\n  parentResources:\n    gpu:\n      quota: -1\n"
            f"      limit: .nan  {MARK}\n      overQuotaWeight: 1\n"
        },
        ((INPUT_ERROR, "kai-values.yaml"),),
    ),
    Case(
        "non-finite numbers",
        "deserved: .inf in a KRM Project",
        "v0.17.1",
        {
            "krm.yaml": KRM_ORG.replace(
                "gpu: {deserved: 3, limit: 8, overQuotaWeight: 2}",
                f"gpu:\n          deserved: .inf  {MARK}\n          limit: 8\n          overQuotaWeight: 2",
            )
        },
        ((INPUT_ERROR, "krm.yaml"),),
    ),
    Case(
        "non-finite numbers",
        "a shard's kValue: .nan",
        "v0.17.1",
        {"shards.yaml": shard_file(SHARD_KNOWN + f"  kValue: .nan  {MARK}\n")},
        (("KAI-V-021", "shards.yaml"),),
    ),
)


# -- running a case ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    case: Case
    found: int  # expectations met
    missed: list[str]  # expectations not met, each said
    unexpected: list[str]  # findings of FAMILIES no expectation names


def planted_lines(text: str) -> list[tuple[int, int]]:
    """(line, column of the line's key) of each planted line, 1-based: a list item's key is after its `- `."""
    return [
        (number, len(line) - len(line.lstrip(" -")) + 1)
        for number, line in enumerate(text.splitlines(), 1)
        if line.rstrip().endswith(MARK)
    ]


def expected_places(case: Case) -> list[tuple[str, str, int, int]]:
    """(rule, file, line, column) of each expectation: the n-th expectation of a file at its n-th planted line."""
    lines = {name: planted_lines(text) for name, text in case.files.items()}
    taken: Counter[str] = Counter()
    places = []
    for rule, name in case.expect:
        line, column = lines[name][taken[name]]
        taken[name] += 1
        places.append((rule, name, line, column))
    assert sum(len(v) for v in lines.values()) == len(places), f"{case.title}: a planted line with no expectation"
    return places


def run_case(case: Case, where: Path) -> Outcome:
    files = {"kai-values.yaml": "{}\n", **case.files, "kai-gitops.yaml": config(case)}
    repo, _ = make_repo(where, files)
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
    places = expected_places(case)
    if any(rule == INPUT_ERROR for rule, *_ in places):
        [(_, name, line, _)] = places
        met = (
            code == 1
            and err.startswith(f"kai-gitops: error: {name}:{line}:")
            and err.count("\n") == 1
            and "Traceback" not in err
        )
        return Outcome(case, int(met), [] if met else [f"{name}:{line} input error (exit {code}: {err.strip()})"], [])
    assert code in (0, 2), err
    findings = [f for c in json.loads(out)["clusters"] for f in c["findings"] if f["rule"] in FAMILIES]
    missed = []
    for rule, name, line, column in places:
        hit = next(
            (
                f
                for f in findings
                if (f["rule"], f["location"]["file"], f["location"]["line"]) == (rule, name, line)
                and f["location"]["column"] in (None, 0, column)
            ),
            None,
        )
        if hit is None:
            missed.append(f"{rule} {name}:{line}:{column}")
        else:
            findings.remove(hit)
    unexpected = [f"{f['rule']} {f['location']['file']}:{f['location']['line']} {f['message']}" for f in findings]
    return Outcome(case, len(places) - len(missed), missed, unexpected)


def counts_table(outcomes: list[Outcome]) -> str:
    rows: dict[str, list[int]] = {}
    for outcome in outcomes:
        row = rows.setdefault(outcome.case.category, [0, 0, 0, 0])
        row[0] += 1
        row[1] += outcome.found
        row[2] += len(outcome.missed)
        row[3] += len(outcome.unexpected)
    lines = ["| category | cases | found | missed | unexpected |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {c} | {f} | {m} | {u} |" for name, (c, f, m, u) in rows.items()]
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    lines.append(f"| **total** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    return "\n".join(lines)


def run_corpus(where: Path) -> list[Outcome]:
    return [run_case(case, where / re.sub(r"\W+", "-", f"{i}-{case.title}")) for i, case in enumerate(CASES)]


# -- the tests ---------------------------------------------------------------------------------------------------


def test_the_corpus_is_large_and_covers_every_category() -> None:
    by_category = Counter(case.category for case in CASES)
    assert len(CASES) >= 30
    assert set(by_category) == {
        "renamed keys",
        "removed keys",
        "enum values",
        "queue-file typos",
        "shard typos",
        "plugin typos",
        "ahead of the pin",
        "KRM collisions",
        "non-finite numbers",
    }
    assert min(by_category.values()) >= 3, by_category
    for case in CASES:
        expected_places(case)  # every planted line has its expectation and the reverse


def test_every_planted_mistake_is_found_at_its_line_and_nothing_else(tmp_path: Path) -> None:
    outcomes = run_corpus(tmp_path)
    print("\n" + counts_table(outcomes))
    problems = {o.case.title: (o.missed, o.unexpected) for o in outcomes if o.missed or o.unexpected}
    assert problems == {}
    assert sum(o.found for o in outcomes) == sum(len(c.expect) for c in CASES) >= 30


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        results = run_corpus(Path(scratch))
    print(counts_table(results))
    for result in results:
        for said in (*result.missed, *result.unexpected):
            print(f"{result.case.category} / {result.case.title}: {said}")
    sys.exit(1 if any(r.missed or r.unexpected for r in results) else 0)


# -- no false positives: the repository's own examples and what `init` writes -----------------------------------

INIT_VERSIONS = ("v0.16.7", "v0.16.8", "v0.16.9", "v0.17.0", "v0.17.1")


def example_repos(where: Path) -> dict[str, tuple[Path, list[str]]]:
    """Each example as a Git repository, with the extra `check` options it is checked with."""
    repos: dict[str, tuple[Path, list[str]]] = {}
    repos["repo-templates/gitops-repo"] = (template_repo(where, "gitops-repo"), [])
    load_demo_builder().build_repo(where / "demo")
    repos["the demo's pull request"] = (where / "demo", ["--base", "HEAD~1"])
    for version in INIT_VERSIONS:
        target = where / f"init-{version}"
        code, _, err = run_cli(
            [
                "init",
                target,
                "--cluster",
                "prod=addon",
                "--cluster",
                "lab=standalone",
                "--ci",
                "none",
                "--chart-version",
                version,
            ]
        )
        assert code == 0, err
        files = {p.relative_to(target).as_posix(): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()}
        repos[f"init --chart-version {version}"] = (make_repo(where / f"git-{version}", files)[0], [])
    return repos


def template_repo(where: Path, name: str) -> Path:
    folder = ROOT / "repo-templates" / name
    files = {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}
    return make_repo(where / name, files)[0]


def family_findings(repo: Path, options: list[str]) -> list[str]:
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json", *options])
    assert code in (0, 2), err
    return [
        f"{f['rule']} {f['location']['file']}:{f['location']['line']} {f['message']}"
        for c in json.loads(out)["clusters"]
        for f in c["findings"]
        if f["rule"] in FAMILIES
    ]


def test_the_examples_and_init_raise_none_of_these_rules(tmp_path: Path) -> None:
    fired = {name: family_findings(repo, options) for name, (repo, options) in example_repos(tmp_path).items()}
    assert len(fired) == 2 + len(INIT_VERSIONS)
    assert {name: found for name, found in fired.items() if found} == {}


def test_the_function_charts_example_raises_none_of_these_rules(tmp_path: Path) -> None:
    """Its workloads are rendered with `helm template`: the real Helm, skipped where it is not built yet."""
    try:
        helm = tool_path("helm")
    except ToolMissing as missing:
        pytest.skip(str(missing))
    assert family_findings(template_repo(tmp_path, "function-charts"), ["--helm", str(helm)]) == []


def test_the_template_against_the_demos_clusters_raises_none(tmp_path: Path) -> None:
    """The live side of the families (KRM's takeover, NVCA-G-014's gate) and KAI-D-010, which KRM's objects
    explain: the template diffed against each of the demo's cluster snapshots."""
    repo = template_repo(tmp_path, "gitops-repo")
    snapshots = sorted((DEMO / "snapshots").glob("*.yaml"))
    assert snapshots
    for snap in snapshots:
        code, out, err = run_cli(["diff", "--repo", repo, "--cluster", snap.stem, "--snapshot", snap, "-o", "json"])
        assert code in (0, 2), err
        assert [f["rule"] for f in json.loads(out)["findings"] if f["rule"] in FAMILIES | {"KAI-D-010"}] == [], (
            snap.name
        )
