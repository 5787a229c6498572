# Feature-gate list semantics of NVCA: `X`/`+X` enable, `-X` disables, disabled wins
# (docs/policies.md#feature-gates).
package kai_gitops.lib.gates

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
