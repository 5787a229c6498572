package kai_gitops.tests.components

import data.kai_gitops.rules.components
import data.kai_gitops.testdata

# KAI-C-001
test_c001_ready_pods_pass if {
	count(components.kai_c_001.violations) == 0 with input as testdata.live_ok
}

test_c001_unready_pod_fails if {
	facts := data.kai_gitops.testdata.with_live({"kai_pods": [{"name": "binder-0", "ready": false, "phase": "Pending"}]})
	some v in components.kai_c_001.violations with input as facts
	v.subject == {"apiVersion": "v1", "kind": "Pod", "namespace": "kai-scheduler", "name": "binder-0"}
}

test_c001_no_pods_fails if {
	count(components.kai_c_001.violations) == 1 with input as data.kai_gitops.testdata.with_live({"kai_pods": []})
}
