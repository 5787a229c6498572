# NVCA's own words (docs/policies.md#nvca-health-check), quoted byte for byte so operators can grep for them.
package kai_gitops.lib.nvca

import data.kai_gitops.lib.util

not_installed := "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI Scheduler (see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"

# NVCA acts on the gate list it last rolled out, so the live status counts as much as Git.
kai_gate_live if "KAIScheduler" in live_status_enabled

live_status_enabled := data.kai_gitops.lib.gates.enabled(util.live.gate_hops.status) if {
	is_array(util.live.gate_hops.status)
}

kai_gate_on if data.kai_gitops.lib.util.gate_enabled_in_git("KAIScheduler")

kai_gate_on if kai_gate_live

queue_kind_missing if util.live.queue_kind_served == false

queue_kind_missing if util.live.crds["queues.scheduling.run.ai"] == false

# NVCA-H-001 owns this verdict; the prediction rule skips the same string to avoid a duplicate.
not_installed_reported if {
	kai_gate_on
	queue_kind_missing
}
