"""Builds the real ping-pong benchmark (pingpong_test.go) as a test binary, for the scripts here
that run it (realstep.py, realsched.py)."""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def build(go, work, script):
    """Compiles pingpong_test.go with the Go command `go` into work/pp.test and returns its path;
    exits naming `script` if `go` is not an executable."""
    if not os.access(go, os.X_OK):
        sys.exit("%s: --go: %s is not an executable Go command" % (script, go))
    shutil.copy(os.path.join(here, "pingpong_test.go"), work)
    with open(os.path.join(work, "go.mod"), "w") as f:
        f.write("module pingpong\n\ngo 1.21\n")
    env = dict(os.environ, GOCACHE=os.path.join(work, "cache"), GOFLAGS="")
    subprocess.run([go, "test", "-c", "-o", "pp.test", "."], cwd=work, env=env, check=True)
    return os.path.join(work, "pp.test")
