#!/usr/bin/python3
"""Runs bad-input catalogue cases (tests/badinput/gen_catalogue.py) through recur-run.

  run_case.py --manifest M --recur-run BIN --xfail LIST CASE   one case (what CTest runs)
  run_case.py --manifest M --recur-run BIN --xfail LIST --all  every case, 2 at a time, and
                                                               a table: kind, cases, pass, xfail
  run_case.py --manifest M --recur-run BIN --xfail LIST --check-list
                                                               every listed case exists
  --sanitized: BIN is built with RECUR_SANITIZE (bounded by ASAN_OPTIONS, not RLIMIT_DATA)

A case passes when recur-run ends, within the case's time limit, with the expected exit status,
no signal and no sanitizer report, and its output matches the case's regular expression. A
case listed in the expected-failures list must fail (it is reported XFAIL with why); one that
passes is an error until it is taken off the list, so the list cannot go stale.
"""
# CTest starts this once per case, so it imports only what one case needs (and runs with
# python3 -S): the start-up is most of a case's time.
import json
import os
import re
import resource
import shutil
import subprocess
import sys

SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"ThreadSanitizer|runtime error: ")
# Data (heap and private writable mappings) for one recur-run: a memory bomb that is not
# refused fails fast as an allocation failure instead of taking the machine's memory. Not
# RLIMIT_AS: CUDA reserves far more address space than it uses, and would fail to start.
DATA_LIMIT = 16 << 30


def read_xfail(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as fh:
        for line in fh:
            body, _, why = line.partition("#")
            name = body.strip()
            if name:
                out[name] = why.strip()
    return out


def prepare(case, root):
    """Copies the case into root/case and makes its special files there."""
    work = os.path.join(root, "case")
    if os.path.isdir(case["dir"]):
        shutil.copytree(case["dir"], work, symlinks=True)
    else:
        os.makedirs(work)
    # A file outside the case folder: what traversal and symlink cases try to reach.
    with open(os.path.join(root, "outside.bin"), "wb") as fh:
        fh.write(b"outside the model folder\n" * 4)
    for act in case["special"]:
        if "fifo" in act:
            p = os.path.join(work, act["fifo"])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.mkfifo(p)
        elif "symlink" in act:
            p = os.path.join(work, act["symlink"])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink(act["to"].replace("{root}", root), p)
        elif "mkdir" in act:
            os.makedirs(os.path.join(work, act["mkdir"]), exist_ok=True)
    return work


def limit_child():
    # AddressSanitizer reserves terabytes of shadow memory, which RLIMIT_DATA forbids; a
    # sanitized build is bounded through ASAN_OPTIONS instead (run_one).
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


SANITIZED = False


def threading_id():
    t = sys.modules.get("threading")
    return t.get_ident() if t else 0


def run_one(case, recur_run):
    """(ok, detail, output): whether the case behaved as its manifest entry says."""
    root = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        "recur-badinput-%d-%d" % (os.getpid(), threading_id()))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    try:
        work = prepare(case, root)
        cmd = [os.path.abspath(recur_run)] + case["args"]
        env = dict(os.environ)
        if SANITIZED:
            env["ASAN_OPTIONS"] = ("allocator_may_return_null=1:max_allocation_size_mb=%d:" %
                                   (DATA_LIMIT >> 20)) + env.get("ASAN_OPTIONS", "")
        try:
            p = subprocess.run(cmd, cwd=work, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=case["timeout"], preexec_fn=limit_child, env=env)
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"") + (e.stderr or b"")
            return False, "hang: no exit within %ds" % case["timeout"], out.decode("utf-8",
                                                                                  "replace")
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        if p.returncode < 0:
            return False, "crash: killed by signal %d" % -p.returncode, out
        if SANITIZER.search(out):
            return False, "sanitizer report", out
        if p.returncode != case["exit"]:
            return False, "exit %d, want %d" % (p.returncode, case["exit"]), out
        # recur-run prints its usage after a command-line error: the expected text must be
        # in the message, not found by chance in the option list.
        message = re.split(r"(?m)^usage:", out)[0]
        if not re.search(case["expect"], message):
            return False, "output does not match /%s/" % case["expect"], out
        return True, "exit %d" % p.returncode, out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def judge(case, recur_run, xfail):
    """(status, line): status is PASS, XFAIL, FAIL or XPASS; only PASS and XFAIL are good."""
    ok, detail, out = run_one(case, recur_run)
    name = case["name"]
    if name in xfail:
        if ok:
            return "XPASS", ("%s: passes but is listed in expected_failures.txt (%s); take it "
                             "off the list" % (name, xfail[name]))
        return "XFAIL", "%s: expected failure (%s): %s" % (name, xfail[name], detail)
    if ok:
        last = out.strip().splitlines()[-1] if out.strip() else ""
        return "PASS", "%s: %s: %s" % (name, detail, last[:240])
    return "FAIL", "%s: %s\n--- recur-run %s (in the case's copy)\n%s" % (
        name, detail, " ".join(case["args"]), out[-3000:])


class Args:
    manifest = recur_run = xfail = case = ""
    all = check_list = verbose = sanitized = False
    jobs = 2


def parse_args(argv):
    a = Args()
    it = iter(argv)
    for arg in it:
        if arg in ("--manifest", "--recur-run", "--xfail", "--jobs"):
            value = next(it, None)
            if value is None:
                sys.exit("run_case.py: %s needs a value" % arg)
            setattr(a, arg[2:].replace("-", "_"), int(value) if arg == "--jobs" else value)
        elif arg in ("--all", "--check-list", "--verbose", "--sanitized"):
            setattr(a, arg[2:].replace("-", "_"), True)
        elif arg.startswith("-"):
            sys.exit(__doc__)
        else:
            a.case = arg
    if not a.manifest or not a.recur_run or not (a.case or a.all or a.check_list):
        sys.exit(__doc__)
    return a


def main():
    a = parse_args(sys.argv[1:])
    global SANITIZED
    SANITIZED = a.sanitized
    if a.case and not a.all and not a.check_list:
        entry = os.path.join(os.path.dirname(a.manifest), "entries",
                             a.case.replace("/", "__") + ".json")
        if os.path.exists(entry):
            with open(entry) as fh:
                case = json.load(fh)
            status, line = judge(case, a.recur_run, read_xfail(a.xfail))
            print(status + " " + line)
            return 0 if status in ("PASS", "XFAIL") else 1
    with open(a.manifest) as fh:
        cases = json.load(fh)
    xfail = read_xfail(a.xfail)
    names = {c["name"] for c in cases}
    stale = sorted(set(xfail) - names)

    if a.check_list:
        for name in stale:
            print("stale entry in %s: no case '%s'" % (a.xfail, name))
        print("%d entries, %d stale" % (len(xfail), len(stale)))
        return 1 if stale else 0

    if not a.all:
        case = next((c for c in cases if c["name"] == a.case), None)
        if case is None:
            sys.exit("run_case.py: no case '%s' in %s" % (a.case, a.manifest))
        status, line = judge(case, a.recur_run, xfail)
        print(status + " " + line)
        return 0 if status in ("PASS", "XFAIL") else 1

    import threading
    from concurrent.futures import ThreadPoolExecutor
    results = {}
    lock = threading.Lock()

    def work(c):
        r = judge(c, a.recur_run, xfail)
        with lock:
            results[c["name"]] = r
            if a.verbose or r[0] in ("FAIL", "XPASS"):
                print(r[0] + " " + r[1], flush=True)

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        list(ex.map(work, cases))
    table = {}
    for c in cases:
        kind = c["name"].split("/")[0]
        row = table.setdefault(kind, {"cases": 0, "PASS": 0, "XFAIL": 0, "FAIL": 0, "XPASS": 0})
        row["cases"] += 1
        row[results[c["name"]][0]] += 1
    print("\n%-12s %6s %6s %6s %6s" % ("kind", "cases", "pass", "xfail", "bad"))
    tot = {"cases": 0, "PASS": 0, "XFAIL": 0, "bad": 0}
    for kind, r in table.items():
        bad = r["FAIL"] + r["XPASS"]
        print("%-12s %6d %6d %6d %6d" % (kind, r["cases"], r["PASS"], r["XFAIL"], bad))
        for key in ("cases", "PASS", "XFAIL"):
            tot[key] += r[key]
        tot["bad"] += bad
    print("%-12s %6d %6d %6d %6d" % ("total", tot["cases"], tot["PASS"], tot["XFAIL"], tot["bad"]))
    for s in stale:
        print("stale entry in the expected-failures list (no such case): " + s)
    return 0 if tot["bad"] == 0 and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
