from reconciler.cli import run

run()
