"""Where state comes from: Git (desired), a snapshot file or a live cluster (live)."""
