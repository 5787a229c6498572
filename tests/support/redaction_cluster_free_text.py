"""Shared helpers of tests/redaction/test_cluster_free_text.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import copy
from typing import Any

from tests.support.helpers import load_demo_builder

DEMO = load_demo_builder()

# one distinct secret per place, each in a shape the redactor knows
EVENT_URL, EVENT_BEARER = "EvUrlSecret0001", "eyJhbGciOi.EvBearerSecret0002"

NGC_PASSWORD, BACKEND_KEY = "NgcPasswordSecret0003", "BackendApiKeySecret0004"

HEALTHZ_TOKEN, QUEUE_TOKEN = "glpat-HealthzSecret0005", "QueueAnnotationSecret0006"

BLOB = "Zq9BlobInsideASentence0007abcdefghijklmnopqrstuvwxyz"

# `name: value` pairs quoted in free text: JSON, YAML, a header
EVENT_JSON, NOTE_YAML, HEALTHZ_HEADER = "EvJsonSecret0008", "NoteYamlSecret0009", "HdrSecret0010"

SECRETS = [
    EVENT_URL,
    EVENT_BEARER,
    NGC_PASSWORD,
    BACKEND_KEY,
    HEALTHZ_TOKEN,
    QUEUE_TOKEN,
    BLOB,
    EVENT_JSON,
    NOTE_YAML,
    HEALTHZ_HEADER,
]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def planted_items() -> list[dict[str, Any]]:
    items = copy.deepcopy(DEMO.prod_addon_snapshot())
    for item in items:
        kind, meta = item["kind"], item["metadata"]
        if kind == "Event":
            item["message"] += (
                f" pulling from https://{EVENT_URL}@registry.example.com failed with "
                f"Authorization: Bearer {EVENT_BEARER}; cached key {BLOB} rejected; "
                f'body {{"user":"svc","password":"{EVENT_JSON}"}}'
            )
        if kind == "NVCFBackend":
            item["spec"]["ngcAuth"] = {"user": "$oauthtoken", "password": NGC_PASSWORD}
            meta["annotations"] = {
                "nvcf/notes": f"debug with ?apikey={BACKEND_KEY}",
                "nvcf/howto": f'login with "token: {NOTE_YAML}"',
                LAST_APPLIED: f'{{"spec":{{"ngcAuth":{{"password":"{NGC_PASSWORD}"}}}}}}',
            }
        if kind == "Queue":
            meta["annotations"] = {"team/contact": f"https://ops:{QUEUE_TOKEN}@chat.example.com/hook"}
        if kind == "NVCAHealthz":
            errors = item["body"]["Components"]["kai-scheduler-queues"]["Errors"]
            errors.append(f"token refresh failed: NGC_API_KEY={HEALTHZ_TOKEN} (key {BLOB})")
            errors.append(f"upstream refused X-Api-Key: {HEALTHZ_HEADER}")
    return items
