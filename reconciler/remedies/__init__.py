"""Remedies: what the tool does about findings (plans, fixes, and reports to a Git host or the cluster).

The cluster side: plan (typed change set), dry-run, apply, lease, audit.

    plan.py      Plan / Change / FieldChange: typed, hashed, versioned JSON, Terraform-style text
    planner.py   findings + live state -> Plan (pure)
    cluster.py   one cluster connection for reconcile: live read, identity, the writer
    dryrun.py    every change server-side with dryRun=All before anything is written
    apply.py     the only module that writes to a cluster, and only the writes SPEC §8 allows
    lease.py     a coordination.k8s.io/v1 Lease so two reconcilers never apply at once
    audit.py     one JSON line per change

The Git-host side: githost/ (GitHub, GitLab), drift_issue.py, report_to_host.py, publish.py; and gitfix/
(fix pull requests: Git edits spliced into the files, committed, pushed, proposed).
"""
