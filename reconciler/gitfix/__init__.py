"""Fix pull requests: Git edits for findings, spliced into the files byte for byte, committed, pushed, proposed."""
