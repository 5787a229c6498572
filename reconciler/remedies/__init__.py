"""Remedies: what the tool does about findings (plans, fixes, and reports to a Git host or the cluster)."""
