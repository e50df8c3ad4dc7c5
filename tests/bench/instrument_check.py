#!/usr/bin/env python3
"""Checks that sim/bench/realcounts/instrument.py still applies to the Go toolchain CI installs:
copies that toolchain's runtime sources to a temporary GOROOT, runs instrument.py on it and
expects one counter per event in proc.go and the counters file beside it. Usage:
instrument_check.py SOURCE_DIR GOROOT"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

source_dir, goroot = sys.argv[1], sys.argv[2]
runtime = os.path.join(goroot, "src", "runtime")
if not os.path.isfile(os.path.join(runtime, "proc.go")):
    sys.exit("instrument_check: %s has no src/runtime/proc.go" % goroot)
work = tempfile.mkdtemp()
try:
    dest = os.path.join(work, "src", "runtime")
    os.makedirs(dest)
    shutil.copy(os.path.join(runtime, "proc.go"), dest)
    subprocess.run([sys.executable, os.path.join(source_dir, "sim/bench/realcounts/instrument.py"), work], check=True)
    proc = open(os.path.join(dest, "proc.go")).read()
    found = re.findall(r"atomic\.Xadd64\(&gmpCounters\[(\d+)\], 1\) // gmpsim: (\w+)", proc)
    names = [n for _, n in found]
    expected = ["startm", "wakep_spinning", "wakep_no_p", "usleep3", "runnext_steal", "runnext_cas_fail", "stopm",
                "preemptone", "gopreempt_m"]
    if sorted(names) != sorted(expected):
        sys.exit("instrument_check: counters in proc.go %s, expected one each of %s" % (sorted(names), sorted(expected)))
    counters = open(os.path.join(dest, "gmpcounters.go")).read()
    if "func GmpCounters() []uint64" not in counters:
        sys.exit("instrument_check: gmpcounters.go lacks GmpCounters")
    print("instrument.py applies to %s: %d counters" % (goroot, len(names)))
finally:
    shutil.rmtree(work, ignore_errors=True)
