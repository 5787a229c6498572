"""The fix half of the loop: plan (typed change set), dry-run, apply, lease, audit; and where reports go.

    plan.py      Plan / Change / FieldChange: typed, hashed, versioned JSON, Terraform-style text
    planner.py   findings + live state -> Plan (pure)
    cluster.py   one cluster connection for reconcile: live read, identity, the writer
    dryrun.py    every change server-side with dryRun=All before anything is written
    apply.py     the only module that writes to a cluster ...
    allowed_writes.py  ... and only the writes SPEC §8 allows, checked before each request
    lease.py     a coordination.k8s.io/v1 Lease so two reconcilers never apply at once
    audit.py     one JSON line per change
    publish.py   --report-to TARGET dispatch (PublishRequest, TARGETS)
    githost/     the Git host interface over GitHub (PyGithub) and GitLab (python-gitlab)
    drift_issue.py, report_to_host.py   one drift issue per cluster in the Git host, kept current
    gitfix/      fix pull requests: Git edits spliced into the files byte for byte, committed, pushed, proposed
"""
