"""Rule metadata of the CRD-schema check of KAI manifests kept in Git (reconciler/checks/manifest_schema.py)."""

from __future__ import annotations

from reconciler.findings.finding import Severity
from reconciler.findings.rules import RuleMeta, Scope

_SOURCE = "KAI CRD openAPIV3Schema of the pinned version (docs/policies.md#kai-manifests-against-their-crd-schema)"

MANIFEST_FIELD_UNKNOWN = RuleMeta(
    "KAI-V-020",
    "KAI manifest field is known to its CRD",
    Severity.ERROR,
    Scope.STATIC,
    "The API server prunes a field its CRD schema does not name, without a word: a misspelt parentQueue makes a "
    "queue top-level, a misspelt quota leaves it at 0, and the object is created as if the line were not there.",
    "Correct the field's spelling (the message suggests the closest field the CRD names) or delete it.",
    _SOURCE,
)
MANIFEST_VALUE_INVALID = RuleMeta(
    "KAI-V-021",
    "KAI manifest value is valid for its CRD",
    Severity.ERROR,
    Scope.STATIC,
    "A value of the wrong type, outside the field's enum or range, or a required field left out makes the API "
    "server refuse the object: the apply fails at deploy time instead of at review.",
    "Write the value the message names (type, one of the allowed values, within the range).",
    _SOURCE,
)
MANIFEST_AHEAD_OF_VERSION = RuleMeta(
    "KAI-V-022",
    "KAI manifest uses only what the pinned KAI version serves",
    Severity.ERROR,
    Scope.STATIC,
    "A field or value that a later KAI release adds (minMember: 0 from v0.16.9 and v0.17.1, a new enum value) is "
    "pruned or refused by the CRDs of the pinned release: the manifest is written for a KAI the cluster does not "
    "run.",
    "Pin a KAI version that serves it (the message names them), or leave the field or value out until then.",
    _SOURCE,
)

MANIFEST_SCHEMA_RULES = (MANIFEST_FIELD_UNKNOWN, MANIFEST_VALUE_INVALID, MANIFEST_AHEAD_OF_VERSION)
