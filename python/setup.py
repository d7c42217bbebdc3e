"""The recur Python package: recur._recur (pybind11) and recur/__init__.py.

Offline, with Debian's setuptools and pybind11-dev (nothing is downloaded):

    python3 -m pip install --no-build-isolation --break-system-packages ./python

The module links the recur library found, in this order:
  1. RECUR_PREFIX=/some/prefix: an installed recur (prefix/include, prefix/lib/librecur.so).
  2. pkg-config recur: an installed recur that pkg-config knows.
  3. The in-tree build folder, RECUR_BUILD_DIR or ../build (tools/build.sh makes it): the
     CMake target _recur is built there (python/CMakeLists.txt holds its link line) and the
     module it makes is packaged as is.
"""
import glob
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def project_version():
    if os.environ.get("RECUR_VERSION"):
        return os.environ["RECUR_VERSION"]
    cmake = os.path.join(ROOT, "CMakeLists.txt")
    if os.path.exists(cmake):
        with open(cmake, encoding="utf-8") as f:
            m = re.search(r"project\(recur\s+VERSION\s+([0-9.]+)", f.read())
        if m:
            return m.group(1)
    try:
        return subprocess.check_output(["pkg-config", "--modversion", "recur"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return "0.0.0"


def pkg_config(*args):
    try:
        out = subprocess.check_output(["pkg-config", *args, "recur"], text=True,
                                      stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split()


def find_library():
    """('installed', Extension keyword arguments) or ('tree', build folder)."""
    common = dict(language="c++", extra_compile_args=["-std=c++20", "-fvisibility=hidden"],
                  define_macros=[("RECUR_VERSION_STRING", '"%s"' % project_version())])
    prefix = os.environ.get("RECUR_PREFIX")
    if prefix:
        lib = os.path.join(prefix, "lib")
        return "installed", dict(common, include_dirs=[os.path.join(prefix, "include")],
                                 library_dirs=[lib], runtime_library_dirs=[lib],
                                 libraries=["recur"])
    cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
    if cflags is not None and libs is not None and not os.environ.get("RECUR_BUILD_DIR"):
        lib_dirs = [f[2:] for f in libs if f.startswith("-L")]
        return "installed", dict(common, extra_compile_args=common["extra_compile_args"] + cflags,
                                 extra_link_args=libs, runtime_library_dirs=lib_dirs)
    build = os.path.abspath(os.environ.get("RECUR_BUILD_DIR", os.path.join(ROOT, "build")))
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        raise SystemExit(
            "setup.py: no recur library found: set RECUR_PREFIX to an installed recur, install "
            "one that pkg-config knows, or configure the in-tree build first (tools/build.sh "
            "makes %s; RECUR_BUILD_DIR names another)" % build)
    return "tree", build


MODE, WHERE = find_library()


class BuildExt(build_ext):
    def build_extension(self, ext):
        if MODE != "tree":
            return super().build_extension(ext)
        # The in-tree module: CMake knows recur's whole link line (its internal archives,
        # oneDNN, protobuf), so it builds the module and this packages it.
        jobs = os.environ.get("RECUR_BUILD_JOBS", "2")
        subprocess.check_call(["cmake", "--build", WHERE, "--target", "_recur", "-j", jobs])
        built = glob.glob(os.path.join(WHERE, "python", "recur", "_recur*.so"))
        if len(built) != 1:
            raise SystemExit("setup.py: the _recur target made %r in %s/python/recur" %
                             (built, WHERE))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


kwargs = WHERE if MODE == "installed" else {}
setup(
    name="recur",
    version=project_version(),
    description="recur: ONNX inference for sequence models, with an onnxruntime-like API",
    packages=["recur"],
    ext_modules=[Extension("recur._recur", [os.path.join("src", "_recur.cc")], **kwargs)],
    cmdclass={"build_ext": BuildExt},
    install_requires=[],  # numpy is needed at run time; Debian's python3-numpy provides it
    python_requires=">=3.8",
    zip_safe=False,
)
