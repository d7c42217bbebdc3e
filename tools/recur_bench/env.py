"""The machine, CPU, GPU, commit and date that a result file records."""
import datetime
import os
import platform
import socket
import subprocess


def _sh(cmd, cwd=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              cwd=cwd).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_info():
    info = {"model": platform.processor() or "unknown", "logical_cpus": os.cpu_count() or 0}
    for line in _sh(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Model name":
            info["model"] = value
        elif key == "Thread(s) per core":
            info["threads_per_core"] = value
        elif key == "Core(s) per socket":
            info["cores_per_socket"] = value
        elif key == "Flags":
            info["avx512f"] = "avx512f" in value.split()
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return info


def gpu_info():
    """The GPUs nvidia-smi lists, or {"present": False, "reason": ...}."""
    out = _sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
               "--format=csv,noheader"])
    gpus = [dict(zip(("name", "driver", "memory"), [x.strip() for x in l.split(",")]))
            for l in out.splitlines() if l.strip()]
    if gpus:
        return {"present": True, "gpus": gpus}
    return {"present": False, "reason": "nvidia-smi lists no GPU on this machine"}


def git_commit(root):
    rev = _sh(["git", "rev-parse", "--short=12", "HEAD"], cwd=root).strip()
    if not rev:
        try:  # a GPU bundle records the commit it was built from
            with open(os.path.join(root, ".gpu-bundle", "COMMIT")) as f:
                return f.read().strip()[:12] + " (bundle)"
        except OSError:
            return "unknown"
    dirty = _sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root).strip()
    return rev + ("+dirty" if dirty else "")


def load_avg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def now():
    return datetime.datetime.now().astimezone()


def machine(root):
    return {"hostname": socket.gethostname(), "os": platform.platform(),
            "python": platform.python_version(), "cpu": cpu_info(), "gpu": gpu_info(),
            "commit": git_commit(root), "date": now().isoformat(timespec="seconds"),
            "load_avg": load_avg()}


def short_machine(m):
    """'Intel Xeon ... (2 CPUs), host' for titles."""
    cpu = m["cpu"]["model"]
    for junk in ("(R)", "(TM)", " CPU", " Processor"):
        cpu = cpu.replace(junk, "")
    cpu = " ".join(cpu.split())
    s = "%s, %d CPUs" % (cpu, m["cpu"]["logical_cpus"])
    if m["gpu"].get("present"):
        s += ", " + m["gpu"]["gpus"][0]["name"]
    return s
