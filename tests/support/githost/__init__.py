"""Local stand-ins for the Git hosts (GitHub, GitLab): real HTTP on 127.0.0.1, one per test."""
