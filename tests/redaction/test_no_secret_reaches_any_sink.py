"""Property: a credential planted in any input the tool reads reaches no output, file, log line, request or
error, for every command and every `-o` format.

Hypothesis draws one fresh token per input and wraps it in a shape the input could carry it in (a URL's
userinfo in its three forms, a secret query parameter, a `Bearer` header, a `NAME=value` pair, a secret
flag, a PEM block, a base64 blob inside a sentence, or a value under a secret-named key). The inputs:

* Git: the Helm values file (under a secret key, as a free value, where KAI-V-001 quotes it, and under
  global.fips and global.fipsMode, whose values `upgrade-plan` quotes: renamed, not acted on), an
  environment file's NVCA gate list (quoted by the gate rules), a Queue file's annotation, a waiver's reason
  and owner (used by `diff`, so quoted in waived_by; unused by `check`, so quoted by KAI-W-002), and the clone
  URL given to `--repo`;
* kubeconfig: the server URL's userinfo and the bearer token (wrapped in white space);
* environment: $KAI_GITOPS_GIT_TOKEN, $GITHUB_TOKEN, $GITLAB_TOKEN, $KAI_GITOPS_OPA_TOKEN and the
  Pushgateway password (which the push uses);
* the cluster (the stand-in API server): an Event message, an NVCFBackend's NGC password and annotation,
  a Queue annotation, the KAI Helm release's values, kai-config's spec (an external Prometheus URL, a value
  under `x-api-key`), the SchedulingShard's spec, a node label;
* the audit log given to `diff --k8s-audit-log`: alice's requests' user agent and the authorizer's reason;
* a snapshot file given to `diff --snapshot` (one not written by kai-gitops): an Event message, kai-config's
  spec, a Queue annotation, a node label;
* `init`'s arguments: a `--cluster NAME=MODE` and a `--chart-version`, both refused with a one-line error;
* service answers: NVCA's /healthz, either its own JSON with the credential in a component error or an
  API-server Status whose message carries it; an OPA server's answer, each violation's message and fix
  carrying it (`diff --opa-url`, with $KAI_GITOPS_OPA_TOKEN as the server's bearer token).

The sinks, per example: stdout and stderr (text or JSON log lines, drawn) of `doctor`, `diff`, `check`,
`reconcile`, `diff --snapshot` (each writing every format at once through `-o FMT=PATH`), `snapshot`, a refused
clone, the two `init` runs and `upgrade-plan` in each of its views; each of those format files; the snapshot
file, the saved plan, the metrics file, the files `init` wrote; every body the Pushgateway received;
every request (path, query, body) the GitHub stand-in received from `diff --report-to github`;
every path and query the API server received; every method and path the OPA server received; every file in
the clone cache. See INPUTS and SINKS for the counts (each example checks every planted token against every
sink).
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from reconciler.outputs import FORMATS
from reconciler.outputs.upgrade_plan_views import PLAN_VIEWS
from tests.support.githost.github import GitHubStandIn
from tests.support.helpers import ROOT, load_demo_builder, make_repo, run_cli
from tests.support.kubeserver import KubeTestServer
from tests.support.kubeserver._snapshot import serve_snapshot
from tests.support.opa_standin import OpaStandin
from tests.support.pushgateway import PushgatewayStandin
from tests.support.tools import require_tool

DEMO = load_demo_builder()
AUDIT_LOG = ROOT / "repo-templates" / "demo" / "audit.log"
WAIVERS = "kai-gitops-waivers.yaml"

# -- credential shapes ---------------------------------------------------------------------------------


def _blob(token: str) -> str:
    return (token * 3)[:44] + "Aa1"


TEXT_SHAPES: dict[str, Callable[[str], str]] = {
    "token-as-user": lambda t: f"https://{t}@registry.example.com/v2",
    "user-password": lambda t: f"https://deploy:{t}@registry.example.com/v2",
    "at-in-password": lambda t: f"https://deploy:p@{t}@registry.example.com/v2",
    "query": lambda t: f"https://api.example.com/v1/pull?private_token={t}&page=2",
    "bearer": lambda t: f"Authorization: Bearer {t}",
    "pair": lambda t: f"NGC_API_KEY={t}",
    "flag": lambda t: f"--client-secret={t}",
    "pem": lambda t: f"-----BEGIN PRIVATE KEY-----\n{t}\n-----END PRIVATE KEY-----",
    "blob-in-sentence": lambda t: f"the cached key {_blob(t)} was rejected",
    "jwt": lambda t: f"the session eyJhbGciOiJIUzI1NiJ9.eyJ{t}.{t[::-1]} expired",
    "gitlab": lambda t: f"clone refused glpat-{t} (revoked)",
    "bearer-pair": lambda t: f"token=Bearer {t} rejected",
}
URL_SHAPES: dict[str, Callable[[str], str]] = {  # a URL's userinfo, with its @
    "token-as-user": lambda t: f"{t}@",
    "user-password": lambda t: f"bot:{t}@",
    "at-in-password": lambda t: f"bot:p@{t}@",
}

tokens = st.text(string.ascii_letters + string.digits, min_size=14, max_size=20).map(lambda s: f"Zq9{s}")


@dataclass
class Planted:
    """One example: every input's text, and the tokens that must not reach any sink."""

    texts: dict[str, str]
    tokens: dict[str, str]
    log_format: str
    healthz_as_status: bool
    bearer_padding: str


INPUTS = (
    "git.values.secret-key",
    "git.values.free-value",
    "git.values.quoted",
    "git.values.renamed",
    "git.values.reinterpreted",
    "git.env.gate",
    "git.queue.annotation",
    "git.clone-url",
    "git.waiver.reason",
    "git.waiver.owner",
    "kubeconfig.server-userinfo",
    "kubeconfig.token",
    "env.KAI_GITOPS_GIT_TOKEN",
    "env.GITHUB_TOKEN",
    "env.GITLAB_TOKEN",
    "env.KAI_GITOPS_OPA_TOKEN",
    "env.KAI_GITOPS_PUSHGATEWAY_PASSWORD",
    "cluster.event.message",
    "cluster.backend.ngc-password",
    "cluster.backend.annotation",
    "cluster.queue.annotation",
    "cluster.release.values",
    "cluster.kai-config.spec",
    "cluster.kai-config.secret-key",
    "cluster.shard.spec",
    "cluster.node.label",
    "service.healthz",
    "service.opa",
    "audit.user-agent",
    "audit.reason",
    "snapshot-file.event.message",
    "snapshot-file.kai-config.spec",
    "snapshot-file.queue.annotation",
    "snapshot-file.node.label",
    "init.cluster",
    "init.chart-version",
)
_RAW = {
    "git.values.secret-key",
    "kubeconfig.token",
    "cluster.backend.ngc-password",
    "env.KAI_GITOPS_GIT_TOKEN",
    "env.GITHUB_TOKEN",
    "env.GITLAB_TOKEN",
    "env.KAI_GITOPS_OPA_TOKEN",
    "env.KAI_GITOPS_PUSHGATEWAY_PASSWORD",
    "cluster.kai-config.secret-key",
}


@st.composite
def planted(draw: st.DrawFn) -> Planted:
    texts, secrets = {}, {}
    for index, name in enumerate(INPUTS):
        token = f"{draw(tokens)}K{index:02d}"  # distinct per input, so a leak names its input
        if name in _RAW:  # carried by where it is (a secret key, a credential field): the token itself
            text = token
        elif name in ("git.clone-url", "kubeconfig.server-userinfo"):
            text = URL_SHAPES[draw(st.sampled_from(sorted(URL_SHAPES)))](token)
        else:
            text = TEXT_SHAPES[draw(st.sampled_from(sorted(TEXT_SHAPES)))](token)
        texts[name], secrets[name] = text, token
    return Planted(
        texts,
        secrets,
        draw(st.sampled_from(["text", "json"])),
        draw(st.booleans()),
        draw(st.sampled_from(["", "\n", "\r\n", " ", "\t"])),
    )


# -- the inputs -----------------------------------------------------------------------------------------


def plant_git(repo: Path, p: Planted) -> None:
    values = repo / "clusters/lab/kai-values.yaml"
    text = values.read_text().replace(
        "placementStrategy: spread", f"placementStrategy: {json.dumps(p.texts['git.values.quoted'])}"
    )
    values.write_text(
        text + "\nglobal:\n" + f"  registryPassword: {json.dumps(p.texts['git.values.secret-key'])}\n"
        f"  mirror: {json.dumps(p.texts['git.values.free-value'])}\n"
        # upgrade-plan v0.14.7 -> v0.17.1 quotes both: 'write global.fipsMode: … instead', '… is not
        # acted on by v0.17.1'
        f"  fips: {json.dumps(p.texts['git.values.renamed'])}\n"
        f"  fipsMode: {json.dumps(p.texts['git.values.reinterpreted'])}\n"
    )
    env = repo / "environments/prod.yaml"
    env.write_text(
        env.read_text().replace(
            'featureGateValues: ["SelfHosted", "LogPosting"]',
            f'featureGateValues: ["SelfHosted", {json.dumps(p.texts["git.env.gate"])}]',
        )
    )
    queues = repo / "clusters/lab/queues.yaml"
    queues.write_text(
        queues.read_text().replace(
            "metadata:\n  name: research\n",
            "metadata:\n  name: research\n  annotations:\n"
            f"    team/notes: {json.dumps(p.texts['git.queue.annotation'])}\n",
            1,
        )
    )
    # used by `diff` (the demo's NVCA-S-012 on gpu-node-2: waived_by quotes both), unused by `check` (KAI-W-002)
    (repo / WAIVERS).write_text(
        "waivers:\n  - rule: NVCA-S-012\n    subject: Node/gpu-node-2\n"
        f"    reason: {json.dumps(p.texts['git.waiver.reason'])}\n"
        f"    owner: {json.dumps(p.texts['git.waiver.owner'])}\n"
        "    expires: 2999-12-31\n"
    )


def cluster_items(p: Planted) -> list[dict[str, Any]]:
    items = DEMO.prod_addon_snapshot()
    for item in items:
        kind, meta = item["kind"], item["metadata"]
        if kind == "Event":
            item["message"] += " " + p.texts["cluster.event.message"]
        elif kind == "Config":
            item["spec"].setdefault("prometheus", {})["externalPrometheusUrl"] = p.texts["cluster.kai-config.spec"]
            item["spec"].setdefault("global", {})["extraEnv"] = {"x-api-key": p.texts["cluster.kai-config.secret-key"]}
        elif kind == "SchedulingShard":
            item["spec"]["notes"] = p.texts["cluster.shard.spec"]
        elif kind == "Node":
            meta.setdefault("labels", {})["team.example.com/notes"] = p.texts["cluster.node.label"]
        elif kind == "NVCFBackend":
            item["spec"]["ngcAuth"] = {"user": "$oauthtoken", "password": p.texts["cluster.backend.ngc-password"]}
            meta["annotations"] = {"nvcf/notes": p.texts["cluster.backend.annotation"]}
        elif kind == "Queue":
            meta["annotations"] = {"team/contact": p.texts["cluster.queue.annotation"]}
        elif kind == "NVCAHealthz" and not p.healthz_as_status:
            item["body"]["Components"]["kai-scheduler-queues"]["Errors"].append(p.texts["service.healthz"])
    live_values = DEMO._canonical_values() | {"global": {"mirror": p.texts["cluster.release.values"]}}
    release = DEMO._release("kai-scheduler", "kai-scheduler", 2, "deployed", "v0.16.7", live_values)
    return [
        release if i["kind"] == "Secret" and i["metadata"]["name"].endswith("kai-scheduler.v2") else i for i in items
    ]


def snapshot_input(path: Path, p: Planted) -> Path:
    """A snapshot file from elsewhere (`diff --snapshot`): read as the cluster is, redacted as it is read."""
    items = DEMO.prod_addon_snapshot()
    for item in items:
        kind, meta = item["kind"], item["metadata"]
        if kind == "Event":
            item["message"] += " " + p.texts["snapshot-file.event.message"]
        elif kind == "Config":
            prometheus = item["spec"].setdefault("prometheus", {})
            prometheus["externalPrometheusUrl"] = p.texts["snapshot-file.kai-config.spec"]
        elif kind == "Queue":
            meta["annotations"] = {"team/contact": p.texts["snapshot-file.queue.annotation"]}
        elif kind == "Node":
            meta.setdefault("labels", {})["team.example.com/notes"] = p.texts["snapshot-file.node.label"]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def audit_log(path: Path, p: Planted) -> Path:
    """The demo's audit log, alice's requests carrying the texts in what a client chooses (its user agent) and
    what the API server copies from elsewhere (the authorizer's reason)."""
    lines = []
    for line in AUDIT_LOG.read_text().splitlines():
        event = json.loads(line)
        if event["user"]["username"] == "alice@example.com":
            event["userAgent"] = f"kubectl/v1.34.2 {p.texts['audit.user-agent']}"
            event.setdefault("annotations", {})["authorization.k8s.io/reason"] = p.texts["audit.reason"]
        lines.append(json.dumps(event, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n")
    return path


def kubeconfig(path: Path, url: str, p: Planted) -> Path:
    server = url.replace("://", "://" + p.texts["kubeconfig.server-userinfo"], 1)
    token = f"{p.bearer_padding}{p.texts['kubeconfig.token']}{p.bearer_padding}"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "prod",
                "clusters": [{"name": "prod", "cluster": {"server": server}}],
                "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "ci-bot"}}],
                "users": [{"name": "ci-bot", "user": {"token": token}}],
            }
        )
    )
    return path


def environment(p: Planted, cache: Path) -> dict[str, str]:
    names = [n.removeprefix("env.") for n in INPUTS if n.startswith("env.")]
    return {
        "KAI_GITOPS_CACHE": str(cache),
        "KAI_GITOPS_PUSHGATEWAY_USERNAME": "pusher",
        **{name: p.texts[f"env.{name}"] for name in names},
    }


# -- the runs and their sinks -----------------------------------------------------------------------


@dataclass
class Sinks:
    """Every text the tool produced in one example, by sink name."""

    seen: dict[str, str] = field(default_factory=dict)
    codes: dict[str, int] = field(default_factory=dict)

    def run(self, name: str, args: list[Any], env: dict[str, str], outputs: Path | None = None) -> int:
        formats: list[str] = []
        if outputs is not None:
            outputs.mkdir(parents=True, exist_ok=True)
            formats = ["-o", "text", *(f"--output={fmt}={outputs / fmt}" for fmt in FORMATS if fmt != "text")]
        code, out, err = run_cli([*args, *formats], env=env)
        self.seen[f"{name}.stdout"], self.seen[f"{name}.stderr"] = out, err
        for fmt in FORMATS:
            if outputs is not None and fmt != "text":
                self.file(f"{name}.-o {fmt}", outputs / fmt)
        self.codes[name] = code
        return code

    def file(self, name: str, path: Path) -> None:
        self.seen[name] = path.read_text(errors="replace") if path.is_file() else ""

    def tree(self, name: str, root: Path) -> None:
        self.seen[name] = "\n".join(f.read_text(errors="replace") for f in sorted(root.rglob("*")) if f.is_file())


def run_everything(repo: Path, tmp: Path, p: Planted) -> Sinks:
    sinks = Sinks()
    env = environment(p, tmp / "cache") | {"KAI_GITOPS_LOG_FORMAT": p.log_format}
    github = GitHubStandIn(token=p.texts["env.GITHUB_TOKEN"]).start()
    opa = OpaStandin(token=p.texts["env.KAI_GITOPS_OPA_TOKEN"]).start()
    opa.message_suffix = p.texts["service.opa"]
    with (
        KubeTestServer() as server,
        PushgatewayStandin(credentials=("pusher", p.texts["env.KAI_GITOPS_PUSHGATEWAY_PASSWORD"])) as gateway,
    ):
        serve_snapshot(server, cluster_items(p))
        if p.healthz_as_status:
            server.set_healthz(
                503,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "code": 503,
                    "message": f"no endpoints available: {p.texts['service.healthz']}",
                },
            )
        config = kubeconfig(tmp / "kubeconfig", server.url, p)
        live = ["--kubeconfig", config]
        desired = ["--repo", repo, "--worktree"]
        sinks.run("doctor", ["doctor", *live], env, tmp / "doctor")
        sinks.run(
            "diff",
            [
                "diff",
                *desired,
                "--cluster",
                "prod-addon",
                *live,
                "--metrics-file",
                tmp / "metrics.prom",
                "--metrics-push",
                gateway.url,
                "--report-to",
                "github",
                "--git-host",
                "github",
                "--git-host-url",
                github.url,
                "--git-host-repo",
                github.full_name,
                "--opa-url",
                opa.url,
                "--k8s-audit-log",
                audit_log(tmp / "audit.log", p),
            ],
            env,
            tmp / "diff",
        )
        sinks.run("check", ["check", *desired], env, tmp / "check")
        sinks.run(
            "reconcile",
            ["reconcile", *desired, "--cluster", "prod-addon", *live, "--plan-out", tmp / "plan.json"],
            env,
            tmp / "reconcile",
        )
        sinks.run("snapshot", ["snapshot", *live, "-o", tmp / "snapshot.yaml"], env)
        sinks.run(
            "diff --snapshot",
            ["diff", *desired, "--cluster", "prod-addon", "--snapshot", snapshot_input(tmp / "input-snapshot.json", p)],
            env,
            tmp / "diff-snapshot",
        )
        sinks.run("init --cluster", ["init", tmp / "init-a", "--cluster", f"{p.texts['init.cluster']}=addon"], env)
        sinks.run(
            "init --chart-version",
            ["init", tmp / "init-b", "--cluster", "lab=standalone", "--chart-version", p.texts["init.chart-version"]],
            env,
        )
        url = "http://" + p.texts["git.clone-url"] + "127.0.0.1:9/acme/gitops.git"
        sinks.run("clone", ["check", "--repo", url], env)
        for view in PLAN_VIEWS:
            sinks.run(
                f"upgrade-plan -o {view}",
                ["upgrade-plan", *desired, "--cluster", "lab-standalone", "--to", "v0.17.1", "-o", view],
                env,
            )
        sinks.file("snapshot file", tmp / "snapshot.yaml")
        sinks.file("plan file", tmp / "plan.json")
        sinks.file("metrics file", tmp / "metrics.prom")
        sinks.seen["pushgateway bodies"] = "\n".join(push.body.decode() for push in gateway.pushes)
        sinks.seen["api server requests"] = "\n".join(f"{r.path}?{r.query}" for r in server.requests)
        sinks.tree("clone cache", tmp / "cache")
        sinks.tree("init files", tmp / "init-a")
        sinks.tree("init files (chart version)", tmp / "init-b")
    github.stop()
    github.assert_clean()
    opa.stop()
    sinks.seen["opa requests"] = "\n".join(f"{method} {path}" for method, path in opa.requests)
    sinks.codes["opa violations carrying the text"] = opa.carried
    sinks.seen["github requests"] = "\n".join(
        f"{r.method} {r.path}?{r.query}\n{(r.body or b'').decode()}" for r in github.requests
    )
    return sinks


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    DEMO.build_repo(target)
    return target


@pytest.fixture
def pristine(demo: Path) -> Iterator[Path]:
    files = [
        demo / f
        for f in ("clusters/lab/kai-values.yaml", "environments/prod.yaml", "clusters/lab/queues.yaml", WAIVERS)
    ]
    saved = {f: f.read_text() for f in files}
    yield demo
    for f, text in saved.items():
        f.write_text(text)


EXAMPLES = 4
REPORTING = ("doctor", "diff", "check", "reconcile", "diff --snapshot")  # each writes every format
SINKS = sorted(
    [
        *(
            f"{run}.{stream}"
            for run in (
                *REPORTING,
                "snapshot",
                "clone",
                "init --cluster",
                "init --chart-version",
                *(f"upgrade-plan -o {view}" for view in PLAN_VIEWS),
            )
            for stream in ("stdout", "stderr")
        ),
        *(f"{run}.-o {fmt}" for run in REPORTING for fmt in FORMATS if fmt != "text"),
        "snapshot file",
        "plan file",
        "metrics file",
        "pushgateway bodies",
        "api server requests",
        "clone cache",
        "github requests",
        "opa requests",
        "init files",
        "init files (chart version)",
    ]
)


# No shrinking: one example is six full runs; a failure prints the planted texts as they are.
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(p=planted())
def test_no_planted_credential_reaches_any_sink(
    pristine: Path, tmp_path_factory: pytest.TempPathFactory, p: Planted
) -> None:
    repo = pristine
    saved = {
        f: f.read_text()
        for f in (
            repo / "clusters/lab/kai-values.yaml",
            repo / "environments/prod.yaml",
            repo / "clusters/lab/queues.yaml",
            repo / WAIVERS,
        )
    }
    try:
        plant_git(repo, p)
        sinks = run_everything(repo, tmp_path_factory.mktemp("example"), p)
    finally:
        for f, text in saved.items():
            f.write_text(text)
    assert sorted(sinks.seen) == SINKS
    leaks = [(input_, sink) for input_, token in p.tokens.items() for sink, text in sinks.seen.items() if token in text]
    assert not leaks, leaks
    # every run did its work (the texts were read, the reports written), so every sink was really checked
    carried = sinks.codes.pop("opa violations carrying the text")
    expected = {
        "doctor": 2,
        "diff": 2,
        "check": 2,
        "reconcile": 2,
        "snapshot": 0,
        "clone": 1,
        "diff --snapshot": 2,
        "init --cluster": 1,
        "init --chart-version": 1,
        **{f"upgrade-plan -o {view}": 2 for view in PLAN_VIEWS},
    }
    assert carried > 0 and sinks.codes == expected, {name: sinks.seen[f"{name}.stderr"][-600:] for name in sinks.codes}
    assert sinks.seen["pushgateway bodies"] and sinks.seen["metrics file"] and "POST" in sinks.seen["github requests"]
    # the planted texts were read: KAI-V-001 quotes the values file, the Event explains the Pending pod
    assert "<redacted>" in sinks.seen["check.-o json"] and "didn't have free GPUs" in sinks.seen["doctor.stdout"]
    # the waiver was used by diff (its reason quoted) and the audit log read (alice named as the writer)
    assert "waived_by" in sinks.seen["diff.-o json"] and "KAI-W-002" in sinks.seen["check.-o json"]
    assert "alice@example.com" in sinks.seen["diff.-o json"]
    # the plan quoted both planted values, redacted ('write global.fipsMode: … instead', '… is not acted on')
    plan = sinks.seen["upgrade-plan -o text.stdout"]
    assert "write global.fipsMode: " in plan and "is not acted on by v0.17.1" in plan and "<redacted>" in plan


def test_the_property_covers_every_input_and_sink() -> None:
    """The counts the property checks per example (printed with -s, for the record)."""
    assert (len(INPUTS), len(SINKS)) == (36, 69)
    assert (len(CHART_INPUTS), len(CHART_SINKS)) == (5, 9)
    print(
        f"inputs planted: {len(INPUTS)}; sinks checked: {len(SINKS)}; pairs per example: "
        f"{len(INPUTS) * len(SINKS)}; examples: {EXAMPLES}"
    )
    print(
        f"function chart inputs: {len(CHART_INPUTS)}; sinks: {len(CHART_SINKS)}; pairs per example: "
        f"{len(CHART_INPUTS) * len(CHART_SINKS)}; examples: {EXAMPLES}"
    )


# -- function charts: their values, their templates, what helm renders ------------------------------------------

CHART_INPUTS = (
    "chart.values.secret-key",
    "chart.values.free-value",
    "chart.values.topology",
    "chart.template.literal",
    "chart.template.comment",
)
CHART_CONFIG = """\
apiVersion: kai-gitops/v1
clusters:
  - name: gpu
    mode: addon
    kaiChartVersion: v0.16.7
    environmentFile: env.yaml
workloads:
  - name: fn
    clusters: [gpu]
    chart: charts/fn
"""
CHART_ENV = "addons:\n  kaiScheduler: {enabled: true}\n  topologyAwareScheduling: {enabled: true}\n"
# A StatefulSet whose topology sits on its pod template: NVCF-F-002, whose finding quotes the annotation.
CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-worker
  annotations:
    team/notes: {{ .Values.note | quote }}
    team/literal: LITERAL
spec:
  replicas: 2
  serviceName: {{ .Release.Name }}
  selector:
    matchLabels: {app: w}
  template:
    metadata:
      labels: {app: w}
      annotations:
        kai.scheduler/topology: {{ .Values.topology | quote }}
    spec:
      containers:
        - name: w
          image: busybox
          # COMMENT
          env:
            - name: DB_PASSWORD
              value: {{ .Values.registryPassword | quote }}
"""
CHART_SINKS = sorted(
    [*(f"check.{stream}" for stream in ("stdout", "stderr")), *(f"check.-o {fmt}" for fmt in FORMATS if fmt != "text")]
)


@st.composite
def chart_planted(draw: st.DrawFn) -> Planted:
    texts, secrets = {}, {}
    for index, name in enumerate(CHART_INPUTS):
        token = f"{draw(tokens)}C{index:02d}"
        texts[name] = (
            token
            if name == "chart.values.secret-key"
            else TEXT_SHAPES[draw(st.sampled_from(sorted(TEXT_SHAPES)))](token)
        )
        secrets[name] = token
    return Planted(texts, secrets, draw(st.sampled_from(["text", "json"])), False, "")


def chart_files(p: Planted) -> dict[str, str]:
    values = "".join(
        f"{key}: {json.dumps(p.texts[name])}\n"
        for key, name in (
            ("registryPassword", "chart.values.secret-key"),
            ("note", "chart.values.free-value"),
            ("topology", "chart.values.topology"),
        )
    )
    template = CHART_TEMPLATE.replace("LITERAL", json.dumps(p.texts["chart.template.literal"])).replace(
        "COMMENT", p.texts["chart.template.comment"].replace("\n", " ")
    )
    return {
        "kai-gitops.yaml": CHART_CONFIG,
        "env.yaml": CHART_ENV,
        "charts/fn/Chart.yaml": "apiVersion: v2\nname: fn\nversion: 0.1.0\n",
        "charts/fn/values.yaml": values,
        "charts/fn/templates/sts.yaml": template,
    }


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(p=chart_planted())
def test_no_planted_credential_of_a_function_chart_reaches_any_sink(
    tmp_path_factory: pytest.TempPathFactory, p: Planted
) -> None:
    """`check` renders the chart with the real helm (skipped without it, failed under CI=true)."""
    require_tool("helm")
    repo, _ = make_repo(tmp_path_factory.mktemp("chart"), chart_files(p))
    sinks = Sinks()
    outputs = tmp_path_factory.mktemp("chart-out")
    code = sinks.run("check", ["check", "--repo", repo], {"KAI_GITOPS_LOG_FORMAT": p.log_format}, outputs)
    assert sorted(sinks.seen) == CHART_SINKS
    leaks = [(input_, sink) for input_, token in p.tokens.items() for sink, text in sinks.seen.items() if token in text]
    assert not leaks, leaks
    assert code == 2 and "NVCF-F-002" in sinks.seen["check.-o json"], sinks.seen["check.stderr"][-600:]
