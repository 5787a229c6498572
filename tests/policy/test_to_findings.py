"""Policy results become Findings with severity, title, location and the operator's command."""

from __future__ import annotations

from reconciler.checks.policy import make_engine
from reconciler.checks.policy.to_findings import results_to_findings
from reconciler.core.refs import Location
from reconciler.findings.finding import Action, Kind, Severity
from tests.support.policy_shared import example


def test_results_become_findings(shipped) -> None:
    calls = []

    def locate(doc: str, path: tuple) -> Location | None:
        calls.append((doc, path))
        return Location(f"{doc}.yaml", 7, 3, path)

    results = make_engine(shipped).evaluate(example("facts-static-standalone.json"))
    found = results_to_findings(results, "gpu-a", locate)
    assert len(found) == len(results)
    typo = next(f for f in found if f.rule_id == "NVCA-G-005")
    assert typo.kind is Kind.VIOLATION and typo.severity is Severity.ERROR and typo.cluster == "gpu-a"
    assert typo.title == shipped.rules["NVCA-G-005"].title
    assert typo.location == Location("nvca_values.yaml", 7, 3, ("selfManaged", "featureGateValues", 1))
    assert typo.fix.action is Action.NONE and typo.fix.description == shipped.rules["NVCA-G-005"].remediation
    assert typo.fix.command is None
    assert ("kai_values", ()) in calls  # a document-level finding (KAI-V-004) still points at its file


def test_live_findings_carry_the_command(shipped) -> None:
    results = make_engine(shipped).evaluate(example("facts-live.json"))
    found = results_to_findings(results, "prod-addon", lambda doc, path: None)
    upgrade = next(f for f in found if f.rule_id == "KAI-R-012")
    assert upgrade.location is None
    assert upgrade.fix.command.startswith("helm upgrade kai-scheduler oci://ghcr.io/kai-scheduler/")
    assert str(upgrade.subject) == "HelmRelease/kai-scheduler/kai-scheduler"
    assert upgrade.to_dict()["fix"]["command"] == upgrade.fix.command
