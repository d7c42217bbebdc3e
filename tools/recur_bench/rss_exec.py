"""Runs a command and reports its peak resident memory on stderr (recur-bench's launcher).

  python3 -S -E rss_exec.py CMD ARGS...

Linux keeps a process's peak RSS across exec, and a child forked (or vforked) from the
benchmark's own Python inherits that Python's footprint as its starting peak. This small
launcher, itself only a few MiB, forks and execs the command, waits for it with wait4, and
appends "recur-bench-maxrss-kib: N" to stderr; its exit status is the command's (128+signal
when the command was killed). Kept to the os and sys modules so that it starts small.
"""
import os
import sys


def main():
    if len(sys.argv) < 2:
        os.write(2, b"usage: rss_exec.py CMD ARGS...\n")
        os._exit(2)
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        except OSError as e:
            os.write(2, ("cannot run %s: %s\n" % (sys.argv[1], e)).encode())
        os._exit(127)
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    os.write(2, ("\nrecur-bench-maxrss-kib: %d\n" % usage.ru_maxrss).encode())
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


main()
