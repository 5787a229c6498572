"""Run the test API server on its own, serving a snapshot, until killed (SIGTERM/SIGINT)::

    python -m tests.support.kubeserver --snapshot repo-templates/demo/snapshots/prod-addon.yaml \\
        --kubeconfig-out .cache/demo-kubeconfig [--context prod] [--static-healthz]

Writes a kubeconfig whose context points at the server, then prints ``ready <url>`` on stdout. NVCA's
``/healthz`` follows the served Queues (see _snapshot.py) unless ``--static-healthz`` keeps the snapshot's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from ._server import KubeTestServer
from ._snapshot import read_items, serve_snapshot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.kubeserver", description=__doc__.split("\n")[0])
    parser.add_argument("--snapshot", required=True, type=Path, help="snapshot file (Kubernetes List, YAML or JSON)")
    parser.add_argument("--kubeconfig-out", required=True, type=Path, help="kubeconfig file to write")
    parser.add_argument("--context", default="prod", help="context name in the kubeconfig (default: prod)")
    parser.add_argument("--static-healthz", action="store_true", help="serve the snapshot's /healthz as saved")
    args = parser.parse_args(argv)
    items = read_items(args.snapshot)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with KubeTestServer() as server:
        serve_snapshot(server, items, nvca_from_queues=not args.static_healthz)
        write_kubeconfig(args.kubeconfig_out, args.context, server.url)
        print(f"ready {server.url}", flush=True)
        stop.wait()
    return 0


def write_kubeconfig(path: Path, context: str, url: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "clusters": [{"name": context, "cluster": {"server": url}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": "demo"}}],
        "users": [{"name": "demo", "user": {"token": "demo-token"}}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(config))  # JSON is YAML: the client reads it as a kubeconfig
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
