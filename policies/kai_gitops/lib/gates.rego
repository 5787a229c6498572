# Feature-gate list semantics of NVCA: `X`/`+X` enable, `-X` disables, disabled wins
# (docs/policies.md#feature-gates).
package kai_gitops.lib.gates

import data.kai_gitops.lib.util

known := {g | some g in data.nvca.feature_gates.known}

known_by_lower := {lower(g): g | some g in known}

dropped_by_operator := {g | some g in data.nvca.feature_gates.dropped_by_operator}

# Exactly as Python (reconciler/model/gates.py) and NVCA read an item: surrounding spaces are stripped,
# a leading "-" disables, and exactly ONE leading sign is removed from the name. So "--X" disables the
# gate named "-X" and "+-X" enables the gate named "-X": both are unknown names, not X.
name(item) := trim_prefix(t, "-") if {
	t := trim_space(item)
	startswith(t, "-")
}

name(item) := trim_prefix(t, "+") if {
	t := trim_space(item)
	not startswith(t, "-")
}

sign(item) := "-" if startswith(trim_space(item), "-")

sign(item) := "+" if not startswith(trim_space(item), "-")

# Normalised signed set: "+X" and "X" are the same item.
signed(items) := {concat("", [s, name(i)]) | some i in items; s := sign_text(i)}

sign_text(item) := "-" if startswith(trim_space(item), "-")

sign_text(item) := "" if not startswith(trim_space(item), "-")

disabled(items) := {name(i) | some i in items; sign(i) == "-"}

enabled(items) := {name(i) | some i in items; sign(i) == "+"} - disabled(items)

without_dropped(items) := {i | some i in signed(items); not name(i) in dropped_by_operator}

fmt_set(s) := sprintf("[%s]", [concat(", ", sort([x | some x in s]))])

# One-line description of the difference between two signed sets, for messages.
fmt_diff(a, b, a_name, b_name) := sprintf("only in %s: %s; only in %s: %s", [a_name, fmt_set(a - b), b_name, fmt_set(b - a)])

on_by_default := {g | some g in data.nvca.feature_gates.on_by_default}

# Whether NVCA runs with gate `name` on, from the effective list it is given (after the add-on stack's
# defaulting): listed enabled, or on by default and not disabled.
runs_on(name) if name in object.get(util.gates, "enabled", [])

runs_on(name) if {
	name in on_by_default
	not name in object.get(util.gates, "disabled", [])
}

# A misspelt item (a known gate in another case) that NVCA ignores, as (item index, item, right spelling,
# whether NVCA still ends up as the item means, what NVCA then runs). Add-on mode appends a stack default unless the user's list
# names it exactly, so `KaiScheduler` there leaves `KAIScheduler` on anyway, and `-KaiScheduler` does not turn it
# off: the harm is in the outcome, not in the spelling.
typos contains [i, item, right, as_meant, outcome(right)] if {
	some i, item in object.get(util.gates, "user", [])
	n := name(item)
	not n in known
	right := known_by_lower[lower(trim_space(n))]
	as_meant := (sign(item) == "+") == runs_on_bool(right)
}

# Gates the add-on stack turns on because an enabled add-on needs them (reconciler/model/gates.py ADDON_GATES).
addon_gates := {"KAIScheduler": "kaiScheduler", "DynamoOperatorSupport": "dynamoOperator"}

needed_by_addon(gate) if {
	data.kai_gitops.lib.util.desired.mode == "addon"
	data.kai_gitops.lib.util.addon(addon_gates[gate])
}

# What to do about a misspelt item, said for a message: write the right spelling, sign kept; but a disabling
# typo of a gate an enabled add-on needs is removed, since `-KAIScheduler` would stop NVCA from using the
# KAI the stack installs (NVCA-G-002), and the stack turns the gate on by itself.
typo_fix(item, right) := sprintf("remove the item: the add-on stack turns %s on for the %s add-on, which needs it (writing %s would turn it off)", [right, addon_gates[right], json.marshal(concat("", ["-", right]))]) if {
	removed_typo(item, right)
}

typo_fix(item, right) := sprintf("write %s", [json.marshal(concat("", [sign_text(item), right]))]) if {
	not removed_typo(item, right)
}

removed_typo(item, right) if {
	sign(item) == "-"
	needed_by_addon(right)
}

runs_on_bool(name) if {
	runs_on(name)
} else := false

# What NVCA then runs, said for a message.
outcome(right) := sprintf("NVCA runs with %s on (%s)", [right, why_on(right)]) if {
	runs_on(right)
} else := sprintf("NVCA runs without %s", [right])

why_on(right) := "the add-on stack appends it itself, as the list does not name it exactly" if {
	right in object.get(util.gates, "effective", [])
	not right in object.get(util.gates, "user", [])
} else := "on by default" if {
	not right in object.get(util.gates, "enabled", [])
} else := "another item enables it"
