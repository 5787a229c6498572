# Helm commands the rules print as fixes, each written once.
package kai_gitops.lib.helm

import data.kai_gitops.lib.util

kai_chart_ref := "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"

# Git's own commands when the facts carry Git (the values file it keeps, or the stack workflow in add-on mode): the
# differ prints the same upgrade for KAI-D-003/KAI-D-004. Without Git, a placeholder values file.
install_kai_cmd := util.desired.kai_install_command if {
	is_string(util.desired.kai_install_command)
} else := sprintf(
	"helm install kai-scheduler %s --namespace kai-scheduler --create-namespace --version %s -f values.yaml",
	[kai_chart_ref, util.kai_version_or_placeholder],
)

upgrade_kai_cmd := util.desired.kai_upgrade_command if {
	is_string(util.desired.kai_upgrade_command)
} else := sprintf(
	"helm upgrade kai-scheduler %s --namespace kai-scheduler --version %s -f values.yaml",
	[kai_chart_ref, util.kai_version_or_placeholder],
)

# Every release of the KAI chart whatever its name (helm list's chart column is <chart>-<version>).
list_kai_releases_cmd := "helm list -A --all -o json | jq -r '.[] | select(.chart | startswith(\"kai-scheduler-\")) | \"\\(.namespace)/\\(.name) \\(.chart) \\(.status)\"'"

helm_history_cmd(name, ns) := sprintf("helm history %s --namespace %s", [name, ns])

helm_uninstall_cmd(name, ns) := sprintf("helm uninstall %s --namespace %s", [name, ns])
