"""Shared helpers of tests/deploy/test_deploy_manifests.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

from tests.support.helpers import ROOT
from tests.support.kustomize import render

DEPLOY = ROOT / "deploy"

COMPONENTS = ("opa-sidecar", "cluster-wide-releases", "metrics-push", "audit-log")

K8S_VERSIONS = ("1.29", kubernetes_validate.utils.latest_version())

Obj = dict[str, Any]


def variant_dir(tmp: Path, overlay: str, components: tuple[str, ...]) -> Path:
    """An overlay as is, or a user's kustomization that adds components to it (what the README tells users)."""
    if not components:
        return DEPLOY / "overlays" / overlay
    here = tmp / f"{overlay}+{'+'.join(components)}"
    here.mkdir(parents=True, exist_ok=True)
    rel = Path(os.path.relpath(DEPLOY, here))
    (here / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [str(rel / "overlays" / overlay)],
                "components": [str(rel / "components" / c) for c in components],
            }
        )
    )
    return here


def rendered(tmp: Path, overlay: str, components: tuple[str, ...] = ()) -> list[Obj]:
    return render(variant_dir(tmp, overlay, components))


def by_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def cronjob(objects: list[Obj]) -> Obj:
    (job,) = by_kind(objects, "CronJob")
    return job


def pod_spec(objects: list[Obj]) -> Obj:
    return cronjob(objects)["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def main_container(objects: list[Obj]) -> Obj:
    (container,) = [c for c in pod_spec(objects)["containers"] if c["name"] == "kai-gitops"]
    return container
