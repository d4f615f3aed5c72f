#!/usr/bin/env python3
"""Runs a command and fails unless it exits with exactly the given code.

    expect_exit.py CODE -- CMD [ARGS...]

The command's stdout and stderr are passed through. A command killed by a
signal (a crash, an assertion) has a negative code and always fails, as does
any other code than CODE; `not` from LLVM would accept both. A command still
running after TIMEOUT_S seconds is killed and fails too, so that a hang fails
the test instead of stalling the whole run.
"""

import subprocess
import sys

TIMEOUT_S = 60


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: expect_exit.py CODE -- CMD [ARGS...]\n")
        return 2
    want = int(args[0])
    cmd = args[2:]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        sys.stdout.buffer.write(e.stdout or b"")
        sys.stderr.buffer.write(e.stderr or b"")
        sys.stderr.write("expect_exit.py: '%s' did not finish in %d s\n"
                         % (" ".join(cmd), TIMEOUT_S))
        return 1
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    if proc.returncode != want:
        how = ("was killed by signal %d" % -proc.returncode
               if proc.returncode < 0 else
               "exited with %d" % proc.returncode)
        sys.stderr.write("expect_exit.py: '%s' %s, expected exit code %d\n"
                         % (" ".join(cmd), how, want))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
