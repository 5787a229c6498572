"""Shared helpers of tests/checks/test_function_charts.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import make_repo

ENV = """\
addons:
  kaiScheduler: {enabled: true}
  topologyAwareScheduling: {enabled: true}
  groveOperator: {enabled: true}
  dynamoOperator: {enabled: true}
"""

CONFIG = """\
apiVersion: kai-gitops/v1
clusters:
  - name: gpu
    mode: addon
    kaiChartVersion: v0.16.7
    environmentFile: env.yaml
    sharedCluster: {intent: dedicated}
workloads:
  - name: fn
    clusters: [gpu]
"""

CHART_YAML = "apiVersion: v2\nname: fn\nversion: 0.1.0\n"

# A StatefulSet whose topology sits on its pod template (NVCF-F-002), with templated lines around it.
TEMPLATE_STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-worker
spec:
  replicas: {{ .Values.replicas }}
  podManagementPolicy: Parallel
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
          env:
            - name: HF_TOKEN
              value: s3cr3t-value-never-leaves
"""


def chart_repo(
    tmp_path: Path,
    templates: dict[str, str],
    *,
    values: str = "replicas: 2\ntopology: t\n",
    workload: str = "    chart: charts/fn\n",
) -> Path:
    files = {
        "kai-gitops.yaml": CONFIG + workload,
        "env.yaml": ENV,
        "charts/fn/Chart.yaml": CHART_YAML,
        "charts/fn/values.yaml": values,
    }
    files.update({f"charts/fn/templates/{name}": text for name, text in templates.items()})
    return make_repo(tmp_path, files)[0]
