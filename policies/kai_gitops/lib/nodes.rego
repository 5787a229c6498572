# Live node-label facts, indexed once per evaluation.
package kai_gitops.lib.nodes

import data.kai_gitops.lib.util

nodes := object.get(util.live, "nodes", {})

labelled_true := {n | some n in object.get(nodes, "schedule_true", [])}

# NVCA turns Shared Cluster mode on as soon as one node carries the exact value "true".
shared_mode_on if count(labelled_true) > 0

sample(names) := concat(" ", array.slice(sort([n | some n in names]), 0, 20))

more(names) := sprintf(" (and %d more)", [count(names) - 20]) if count(names) > 20

more(names) := "" if count(names) <= 20
