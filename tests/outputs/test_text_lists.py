"""The text output cuts a long list in a message to its first items and a count; machine formats keep all."""

from __future__ import annotations

import json
from dataclasses import replace

from reconciler.outputs import render
from reconciler.outputs.text_format import elide_lists
from tests.support.outputs_shared import sample_report

GATES = [
    "SelfHosted",
    "LogPosting",
    "DynamicGPUDiscovery",
    "InfraResourceOverhead",
    "EnforceHelmFunctionResourceLimits",
    "EnforceContainerFunctionResourceLimits",
    "EnforceHelmTaskResourceLimits",
    "EnforceContainerTaskResourceLimits",
    "BYOObservability",
    "KAIScheduler",
    "DynamoOperatorSupport",
]


def test_a_long_list_keeps_three_items_and_counts_the_rest() -> None:
    text = f"the live gates {json.dumps(GATES, separators=(',', ':'))} replace Git's {json.dumps(GATES[:4])}"
    assert elide_lists(text) == (
        'the live gates ["SelfHosted","LogPosting","DynamicGPUDiscovery", … and 8 more] '
        f"replace Git's {json.dumps(GATES[:4])}"
    )  # four items read at a glance


def test_a_list_a_little_longer_than_kept_and_text_without_lists_stay_whole() -> None:
    for text in ('gates ["a","b","c","d","e"] only', 'a "quoted" word [1, 2, 3, 4, 5, 6, 7]', 'x ["a\\"]", "b"]'):
        assert elide_lists(text) == text


def test_text_elides_a_message_list_while_json_and_sarif_keep_every_item() -> None:
    report = sample_report()
    prod = report.clusters[0]
    node = next(f for f in prod.findings if f.rule_id == "NVCA-S-012")
    gates = replace(node, message=f"gates {json.dumps(GATES, separators=(',', ':'))} differ")
    report.clusters[0] = replace(prod, findings=[*prod.findings, gates])
    assert '"DynamicGPUDiscovery", … and 8 more] differ' in render(report, "text")
    for fmt in ("json", "sarif"):
        assert '\\"DynamoOperatorSupport\\"' in render(report, fmt), fmt
