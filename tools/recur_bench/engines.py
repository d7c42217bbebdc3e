"""The engines recur-bench times, each in child processes: recur's providers through
`recur-run --perf --json`, ONNX Runtime (CPU) through onnxruntime-node (tools/bench/ort_perf.js)
or, where there is no Node, the Python onnxruntime module, and PyTorch on a GPU machine.

Every block is one child process: its peak resident memory comes from os.wait4, its session
load time from the child's own report."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import workload

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = workload.ROOT
ORT_VERSION = "1.30.0"
ORT_JS = os.path.join(ROOT, "tools", "bench", "ort_perf.js")

# recur's providers in default priority order (runtime/engine/session/provider_factory.h), and
# how to get each into a build.
RECUR_PROVIDERS = ["cudnn", "cuda-generic", "onednn", "reference"]
_BUILD_FLAG = {"cudnn": "-DRECUR_WITH_CUDA=ON", "cuda-generic": "-DRECUR_WITH_CUDA=ON",
               "onednn": "-DRECUR_WITH_ONEDNN=ON"}
GPU_PROVIDERS = {"cudnn", "cuda-generic"}


class ChildResult:
    def __init__(self, rc, out, err, maxrss_mb, wall_s):
        self.rc, self.out, self.err, self.maxrss_mb, self.wall_s = rc, out, err, maxrss_mb, wall_s

    def error_text(self, limit=600):
        text = (self.err or self.out or "").strip()
        # A JavaScript or Python stack says where the driver failed, not why: keep the message.
        lines = [l for l in text.splitlines() if not l.startswith("    at ")]
        if "Traceback (most recent call last):" in text and lines:
            lines = [lines[-1]]
        text = "\n".join(lines).strip()
        if self.rc < 0:
            text = ("killed by signal %d. " % -self.rc) + text
        return text[-limit:] if len(text) > limit else text


RSS_EXEC = os.path.join(HERE, "rss_exec.py")
_RSS_TAG = "recur-bench-maxrss-kib:"


def run_child(cmd, env=None, timeout=None):
    """Runs cmd through rss_exec.py; returns its exit status, output and peak RSS (MiB).

    The launcher's own small footprint, not this Python's, is the floor of the peak it reports
    (see rss_exec.py). On a timeout the whole process group is killed."""
    with tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen([sys.executable, "-S", "-E", RSS_EXEC] + list(cmd),
                                 stdout=subprocess.PIPE, stderr=err, env=env,
                                 start_new_session=True)
        except OSError as e:
            return ChildResult(127, "", str(e), 0.0, 0.0)
        timed_out = []

        def kill():
            timed_out.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        out = p.stdout.read()
        p.stdout.close()
        p.wait()
        if timer:
            timer.cancel()
        wall = time.monotonic() - t0
        err.seek(0)
        errtext = err.read().decode(errors="replace")
    maxrss_kib = 0
    kept = []
    for line in errtext.splitlines():
        if line.startswith(_RSS_TAG):
            maxrss_kib = int(line[len(_RSS_TAG):].strip() or 0)
        else:
            kept.append(line)
    errtext = "\n".join(kept).strip()
    rc = p.returncode
    if rc > 128:
        rc = -(rc - 128)  # killed by a signal, as subprocess reports it
    if timed_out:
        errtext = "timed out after %d s. %s" % (timeout, errtext)
        rc = rc or -9
    return ChildResult(rc, out.decode(errors="replace"), errtext, maxrss_kib / 1024.0, wall)


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the output")


class Engine:
    family = "peer"
    device = "cpu"

    def __init__(self, name):
        self.name = name
        self.available = False
        self.reason = ""
        self.version = ""

    def describe(self):
        return "available" + (" (%s)" % self.version if self.version else "") if \
            self.available else "unavailable (%s)" % self.reason

    def check(self, work):
        """None when this engine can run `work`, else why not."""
        return None

    def command(self, work, threads, warmup, repeat, mode=None):
        raise NotImplementedError

    def tunes(self):
        """Whether a "tune" block times candidates in its first run (so that run is no sample)."""
        return False

    def env(self):
        return None

    def parse(self, out):
        r = last_json(out)
        hwm = r.get("load_peak_rss_kib")
        return {"load_ms": float(r["load_ms"]), "samples_ms": [float(x) for x in r["samples_ms"]],
                "assigned": r.get("assigned"),
                "load_peak_rss_mib": hwm / 1024.0 if hwm is not None and hwm >= 0 else None}


# --- recur ----------------------------------------------------------------------------------

def list_recur_providers(recur_run, env):
    """{name: (available, reason)} from `recur-run --list-providers`, or raises BenchError."""
    try:
        p = subprocess.run([recur_run, "--list-providers"], capture_output=True, text=True,
                           env=env, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise workload.BenchError("cannot run %s: %s" % (recur_run, e)) from None
    if p.returncode != 0:
        raise workload.BenchError("%s --list-providers failed: %s" % (
            recur_run, (p.stderr or p.stdout).strip()[-400:]))
    out = {}
    for line in p.stdout.splitlines():
        name, _, rest = line.partition(":")
        rest = rest.strip()
        if not name or not rest:
            continue
        if rest.startswith("available"):
            out[name.strip()] = (True, "")
        else:
            reason = rest[len("unavailable"):].strip()
            if reason.startswith("(") and reason.endswith(")"):
                reason = reason[1:-1]
            out[name.strip()] = (False, reason or "unavailable")
    return out


# The providers whose nodes take SessionOptions::cpu_precision (recur-run --precision).
PRECISION_PROVIDERS = ("onednn",)


class RecurEngine(Engine):
    family = "recur"

    def __init__(self, provider, recur_run, env, built, precision="fp32"):
        # A reduced CPU precision is an engine of its own, e.g. "onednn@bf16", timed beside fp32.
        super().__init__(provider if precision == "fp32" else "%s@%s" % (provider, precision))
        self.provider = provider
        self.precision = precision
        self.recur_run = recur_run
        self._env = env
        self.device = "gpu" if provider in GPU_PROVIDERS else "cpu"
        # The provider first, then the providers after it in the default priority order that
        # this build can run: what a user who puts this provider first gets (the nodes it
        # declines run on the next one).
        after = RECUR_PROVIDERS[RECUR_PROVIDERS.index(provider) + 1:] if \
            provider in RECUR_PROVIDERS else ["reference"]
        self.chain = [provider] + [p for p in after if built.get(p, (False, ""))[0]]
        self.built = provider in built
        if provider in built:
            self.available, self.reason = built[provider]
        else:
            self.reason = "not in this build: configure with %s" % _BUILD_FLAG.get(
                provider, "the provider enabled")
        self._plans = {}
        self.tuning_cache = None  # a file of this recur-bench run's own (cli.py sets it)

    def env(self):
        return self._env

    def plan(self, work):
        if work.model not in self._plans:
            self._plans[work.model] = workload.recur_plan(self.recur_run, work.model, self.chain,
                                                          self._env)
        return self._plans[work.model]

    def check(self, work):
        plan, err = self.plan(work)
        if plan is None:
            return err
        counts = workload.node_counts(plan)
        if counts.get(self.provider, 0) == 0:
            why = []
            for a in plan["assignment"]:
                for d in a["declined"]:
                    if d["provider"] == self.provider:
                        why.append("node '%s' (%s): %s" % (a["node"], a["op"], d["reason"]))
            return "%s takes no node of this model%s" % (
                self.provider, (": " + "; ".join(why[:3])) if why else "")
        return None

    def nodes_summary(self, work):
        plan, _ = self.plan(work)
        if not plan:
            return ""
        counts = workload.node_counts(plan)
        total = sum(counts.values())
        if counts.get(self.provider, 0) == total:
            return "%d/%d" % (total, total)
        return ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1]))

    def tunes(self):
        """Whether a "tune" block times candidates in its first run (so that run is no sample)."""
        return bool(self.tuning_cache) and self.provider == "onednn"

    def command(self, work, threads, warmup, repeat, mode=None):
        cmd = [self.recur_run, work.model, "--perf", "--json", "--providers",
               ",".join(self.chain), "--threads", str(threads), "--warmup", str(warmup),
               "--repeat", str(repeat)]
        if self.precision != "fp32":
            cmd += ["--precision", self.precision]
        # The oneDNN RNN kernel's tuning cache (docs/tuning-cache.md): "cold" loads with none
        # (the untuned rule), "warm" with the file a "tune" block filled (onednn.tune=1).
        if self.tunes():
            if mode == "tune":
                cmd += ["--tuning-cache", self.tuning_cache, "--set", "onednn.tune=1"]
            elif mode == "warm":
                cmd += ["--tuning-cache", self.tuning_cache]
            else:
                cmd += ["--tuning-cache", "off"]
        for k, (name, _, _) in enumerate(work.inputs):
            cmd += ["--input", "%s=%s" % (name, os.path.join(work.feeds_dir, "input_%d.npy" % k))]
        return cmd


# --- ONNX Runtime ---------------------------------------------------------------------------

def _ort_node_installed(ort_dir):
    pkg = os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")
    try:
        with open(pkg) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def _install_ort_node(ort_dir):
    """npm install --ignore-scripts onnxruntime-node (docs/benchmarking.md); None or the error."""
    os.makedirs(ort_dir, exist_ok=True)
    try:
        if not os.path.exists(os.path.join(ort_dir, "package.json")):
            subprocess.run(["npm", "init", "-y"], cwd=ort_dir, check=True, capture_output=True,
                           text=True, timeout=300)
        # --ignore-scripts skips a download that cannot work here; the CPU library ships
        # inside the package.
        subprocess.run(["npm", "install", "--ignore-scripts", "onnxruntime-node@" + ORT_VERSION],
                       cwd=ort_dir, check=True, capture_output=True, text=True, timeout=900)
    except subprocess.CalledProcessError as e:
        return "npm install failed: " + (e.stderr or e.stdout or "").strip()[-300:]
    except (OSError, subprocess.SubprocessError) as e:
        return "npm install failed: %s" % e
    return None


class OrtNodeEngine(Engine):
    def __init__(self, ort_dir, install, dry_run, say):
        super().__init__("onnxruntime")
        self.driver = "node"
        self.node_path = os.path.join(ort_dir, "node_modules")
        if not shutil.which("node"):
            self.reason = "no node on PATH (onnxruntime-node needs Node.js)"
            return
        if not os.path.exists(ORT_JS):
            self.reason = "the driver %s is missing" % ORT_JS
            return
        have = _ort_node_installed(ort_dir)
        if have != ORT_VERSION:
            if dry_run:
                self.reason = ("onnxruntime-node %s is not installed in %s (a run installs it "
                               "with npm)" % (ORT_VERSION, ort_dir)) if install and \
                    shutil.which("npm") else ("onnxruntime-node %s is not installed in %s" % (
                        ORT_VERSION, ort_dir))
                return
            if not install:
                self.reason = "onnxruntime-node %s is not installed in %s and --no-install " \
                              "was given" % (ORT_VERSION, ort_dir)
                return
            if not shutil.which("npm"):
                self.reason = "onnxruntime-node is not installed in %s and there is no npm" % (
                    ort_dir)
                return
            say("installing onnxruntime-node@%s into %s (npm install --ignore-scripts)" % (
                ORT_VERSION, ort_dir))
            err = _install_ort_node(ort_dir)
            if err:
                self.reason = err
                return
        p = subprocess.run(["node", "-e", "require('onnxruntime-node')"], capture_output=True,
                           text=True, env=self.env(), timeout=120)
        if p.returncode != 0:
            self.reason = "onnxruntime-node does not load: " + p.stderr.strip()[-300:]
            return
        self.available = True
        self.version = "onnxruntime-node %s, CPU" % ORT_VERSION

    def env(self):
        return dict(os.environ, NODE_PATH=self.node_path)

    def check(self, work):
        return _ort_feed_check(work)

    def command(self, work, threads, warmup, repeat, mode=None):
        return ["node", ORT_JS, work.model, work.feeds_dir, str(threads), str(warmup),
                str(repeat)]


def _ort_feed_check(work):
    try:
        with open(os.path.join(work.feeds_dir, "feeds.json")) as f:
            feeds = json.load(f)
    except (OSError, ValueError, TypeError):
        return None
    bad = [f["name"] + " " + f["type"] for f in feeds if "file" not in f]
    if bad:
        return "the ONNX Runtime driver takes float32/float64/int32/int64 inputs, not " + \
            ", ".join(bad)
    return None


class OrtPythonEngine(Engine):
    """The Python onnxruntime module (the GPU machine has it but no Node)."""

    def __init__(self, python, why_not_node):
        super().__init__("onnxruntime")
        self.driver = "python"
        self.python = python
        try:
            p = subprocess.run([python, "-c", "import onnxruntime as o; print(o.__version__)"],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            self.reason = "%s; and %s cannot run (%s)" % (why_not_node, python, e)
            return
        if p.returncode != 0:
            self.reason = "%s; and no Python onnxruntime module for %s" % (why_not_node, python)
            return
        self.available = True
        self.version = "Python onnxruntime %s, CPU (%s)" % (p.stdout.strip(), why_not_node)

    def check(self, work):
        return _ort_feed_check(work)

    def command(self, work, threads, warmup, repeat, mode=None):
        return [self.python, os.path.join(HERE, "ort_py_perf.py"), work.model, work.feeds_dir,
                str(threads), str(warmup), str(repeat)]


# --- PyTorch --------------------------------------------------------------------------------

class TorchEngine(Engine):
    def __init__(self, python, device):
        super().__init__("pytorch")
        self.python = python
        self.torch_device = device
        self.device = "gpu" if device == "cuda" else "cpu"
        code = ("import torch; c = torch.cuda.is_available(); print(torch.__version__, int(c), "
                "torch.cuda.get_device_name(0) if c else '')")
        try:
            p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as e:
            self.reason = "cannot run %s: %s" % (python, e)
            return
        if p.returncode != 0:
            self.reason = "no torch module for %s" % python
            return
        parts = p.stdout.strip().split(" ", 2)
        version, has_cuda = parts[0], parts[1] == "1"
        gpu = parts[2] if len(parts) > 2 else ""
        if device == "cuda" and not has_cuda:
            self.reason = ("torch %s sees no CUDA device; PyTorch is a peer on GPU machines "
                           "(--torch-device cpu runs it on the CPU)" % version)
            return
        self.available = True
        self.version = "torch %s on %s" % (version, gpu if device == "cuda" else "the CPU")

    def check(self, work):
        sys.path.insert(0, HERE)
        try:
            import torch_perf
        finally:
            sys.path.pop(0)
        return torch_perf.why_not(work.model)

    def command(self, work, threads, warmup, repeat, mode=None):
        return [self.python, os.path.join(HERE, "torch_perf.py"), work.model, work.feeds_dir,
                self.torch_device, str(threads), str(warmup), str(repeat)]
