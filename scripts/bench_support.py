"""Shared by the `qtrace record` benchmarks that run the fixture (bench-sched.py, bench-cpu.py)."""
import os
import subprocess
import sys
import tempfile


def record_setup(bin_arg, prefix):
    """(qtrace, fixtures, a temporary directory, the environment with the shim) for BIN_DIR
    (default: the release build's), or exits with one line when the binaries are missing."""
    bin_dir = bin_arg or subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
    qtrace, fixtures = os.path.join(bin_dir, "qtrace"), os.path.join(bin_dir, "qtrace-fixtures")
    for path in (qtrace, fixtures):
        if not os.path.exists(path):
            sys.exit(f"bench: {path} missing: run `make build` first")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
    env["QTRACE_SHIM"] = os.path.join(bin_dir, "libqtrace-shim.so")
    return qtrace, fixtures, tempfile.mkdtemp(prefix=prefix), env
