"""A small Kustomize renderer for the tests: `render(dir)` is `kustomize build dir` for what deploy/ uses.

Why our own: a clean CI machine may have no kustomize binary (PyPI has none; we fetch no binaries), yet
every overlay must be rendered and validated. Where `kubectl kustomize` is installed,
tests/deploy/test_deploy_manifests.py renders each overlay with it too and requires the same objects, so this
renderer is checked against the real one on every machine that has it.

Implemented, with Kustomize's semantics and order (resources, then components, then the
kustomization's own transformers: patches, labels, images):

* `resources`: YAML files (multi-document) and directories holding a kustomization (rendered first);
* `components`: directories holding a `kind: Component`; their resources join, their transformers run
  over everything accumulated so far;
* `patches` with `path` or inline `patch` and a `target` selecting by group, version, kind, name and
  namespace; the patch must be a JSON 6902 operation list (add, remove, replace, test; `-` appends,
  `~1`/`~0` escapes);
* `labels` with `pairs` (metadata.labels only: `includeSelectors`/`includeTemplates` true are refused);
* `images` with `name`, `newName`, `newTag`, `digest`, on containers and initContainers of pod
  templates (CronJob, Job, Deployment, StatefulSet, DaemonSet, Pod).

Not implemented (an unknown field is an error, never silently ignored): strategic-merge patches,
`namespace`, name prefixes/suffixes, generators, replacements, Helm charts, remote resources, the load
restrictor, and Kustomize's output order (objects come in accumulation order; compare by identity).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_KNOWN = {"apiVersion", "kind", "resources", "components", "patches", "labels", "images"}


class KustomizeError(Exception):
    pass


def render(directory: Path) -> list[Obj]:
    """The objects `kustomize build directory` would print (in accumulation order)."""
    return _build(Path(directory), want_kind="Kustomization")


def identity(obj: Obj) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return obj["apiVersion"], obj["kind"], meta.get("namespace") or "", meta["name"]


def _kustomization(directory: Path) -> tuple[Path, Obj]:
    for name in _FILES:
        if (directory / name).is_file():
            doc = yaml.safe_load((directory / name).read_text()) or {}
            unknown = set(doc) - _KNOWN
            if unknown:
                raise KustomizeError(f"{directory / name}: fields this renderer does not implement: {sorted(unknown)}")
            return directory / name, doc
    raise KustomizeError(f"{directory}: no kustomization file")


def _build(directory: Path, *, want_kind: str) -> list[Obj]:
    path, doc = _kustomization(directory)
    kind = doc.get("kind", "Kustomization")
    if kind != want_kind:
        raise KustomizeError(f"{path}: kind {kind}, expected {want_kind}")
    objects: list[Obj] = []
    for entry in doc.get("resources") or []:
        objects += _resource(directory / entry)
    _check_unique(objects, path)
    for entry in doc.get("components") or []:
        objects = _component(directory / entry, objects)
    return _transform(directory, doc, objects)


def _component(directory: Path, objects: list[Obj]) -> list[Obj]:
    path, doc = _kustomization(directory)
    if doc.get("kind") != "Component":
        raise KustomizeError(f"{path}: a component must be kind Component")
    if doc.get("components"):
        raise KustomizeError(f"{path}: nested components are not implemented")
    joined = objects + [o for entry in doc.get("resources") or [] for o in _resource(directory / entry)]
    _check_unique(joined, path)
    return _transform(directory, doc, joined)


def _resource(target: Path) -> list[Obj]:
    if target.is_dir():
        return _build(target, want_kind="Kustomization")
    if not target.is_file():
        raise KustomizeError(f"{target}: resource does not exist")
    return [d for d in yaml.safe_load_all(target.read_text()) if d]


def _check_unique(objects: list[Obj], where: Path) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for obj in objects:
        key = identity(obj)
        if key in seen:
            raise KustomizeError(f"{where}: may not add resource with an already registered id: {key}")
        seen.add(key)


def _transform(directory: Path, doc: Obj, objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    for patch in doc.get("patches") or []:
        _patch(directory, patch, objects)
    for label in doc.get("labels") or []:
        if label.get("includeSelectors") or label.get("includeTemplates"):
            raise KustomizeError(f"{directory}: labels with includeSelectors/includeTemplates are not implemented")
        for obj in objects:
            obj.setdefault("metadata", {}).setdefault("labels", {}).update(label["pairs"])
    for image in doc.get("images") or []:
        for obj in objects:
            for container in _containers(obj):
                _retag(container, image)
    return objects


# -- patches ---------------------------------------------------------------------------------------


def _patch(directory: Path, entry: Obj, objects: list[Obj]) -> None:
    text = (directory / entry["path"]).read_text() if "path" in entry else entry["patch"]
    ops = yaml.safe_load(text)
    if not isinstance(ops, list):
        raise KustomizeError(f"{directory}: strategic-merge patches are not implemented (use JSON 6902)")
    matched = [o for o in objects if _selected(o, entry.get("target") or {})]
    if not matched:
        raise KustomizeError(f"{directory}: patch target {entry.get('target')} matches no resource")
    for obj in matched:
        for op in ops:
            _apply_op(obj, op)


def _selected(obj: Obj, target: Obj) -> bool:
    group, _, version = obj["apiVersion"].rpartition("/")
    meta = obj.get("metadata") or {}
    wanted = {
        "group": group,
        "version": version,
        "kind": obj["kind"],
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
    }
    unknown = set(target) - set(wanted)
    if unknown:
        raise KustomizeError(f"patch target fields not implemented: {sorted(unknown)}")
    return all(wanted[k] == v for k, v in target.items())


def _pointer(path: str) -> list[str]:
    if not path.startswith("/"):
        raise KustomizeError(f"JSON pointer {path!r} must start with /")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _apply_op(obj: Obj, op: Obj) -> None:
    *parents, last = _pointer(op["path"])
    node: Any = obj
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    kind = op["op"]
    if kind == "test":
        current = node[int(last)] if isinstance(node, list) else node[last]
        if current != op["value"]:
            raise KustomizeError(f"test failed at {op['path']}")
    elif kind == "add" and isinstance(node, list):
        node.insert(len(node) if last == "-" else int(last), copy.deepcopy(op["value"]))
    elif kind in ("add", "replace"):
        if isinstance(node, list):
            node[int(last)] = copy.deepcopy(op["value"])
        else:
            if kind == "replace" and last not in node:
                raise KustomizeError(f"replace of missing {op['path']}")
            node[last] = copy.deepcopy(op["value"])
    elif kind == "remove":
        del node[int(last) if isinstance(node, list) else last]
    else:
        raise KustomizeError(f"JSON 6902 op {kind!r} is not implemented")


# -- images ----------------------------------------------------------------------------------------


def _pod_spec(obj: Obj) -> Obj | None:
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec")
    if kind in ("Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        return (spec.get("template") or {}).get("spec")
    return None


def _containers(obj: Obj) -> list[Obj]:
    spec = _pod_spec(obj) or {}
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def _retag(container: Obj, image: Obj) -> None:
    ref = str(container.get("image", ""))
    name, tag = _split_image(ref)
    if name != image["name"]:
        return
    name = image.get("newName", name)
    if image.get("digest"):
        container["image"] = f"{name}@{image['digest']}"
    else:
        container["image"] = name + (f":{image['newTag']}" if "newTag" in image else tag)


def _split_image(ref: str) -> tuple[str, str]:
    """('registry/name', ':tag' or '@digest' or '') -- a colon after the last slash starts the tag."""
    if "@" in ref:
        name, digest = ref.split("@", 1)
        return name, f"@{digest}"
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon:]
    return ref, ""
