"""Run the real test API server on its own until SIGTERM or SIGINT::

    python -m tests.support.envtest --kubeconfig-out .cache/envtest.kubeconfig

Writes an admin kubeconfig (TLS client certificate, CA data) to the file, then prints exactly one line,
``ready <server-url>``, on stdout. On SIGTERM/SIGINT it stops kube-apiserver and etcd and removes its data
dir. Progress and errors go to stderr; exit 1 if the server cannot start (e.g. the tools are not built).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from tests.support.tools import ToolMissing

from ._server import EnvTest, EnvTestError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.envtest", description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig-out", required=True, type=Path, help="admin kubeconfig file to write")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    cluster = EnvTest()
    try:
        cluster.start()
    except (EnvTestError, ToolMissing) as error:
        print(f"envtest: cannot start: {error}", file=sys.stderr)
        return 1
    try:
        cluster.write_kubeconfig(args.kubeconfig_out)
        print(
            f"envtest: ready in {cluster.startup['total']:.1f}s (API server ready after "
            f"{cluster.startup['apiserver_ready']:.1f}s, CRDs {cluster.startup['crds']:.1f}s); "
            f"data in {cluster.data_dir}",
            file=sys.stderr,
            flush=True,
        )
        print(f"ready {cluster.url}", flush=True)
        while not stop.wait(1):
            pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
