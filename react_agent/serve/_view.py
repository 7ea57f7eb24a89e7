"""``react-agent view``: one self-contained HTML file (no network, opens from disk) for a run journal, a
``--trace`` file, a batch results file or an evaluation folder.

Each source is read into the same plain shape (:class:`ViewData`: groups of steps with their status,
duration, tokens and failed checks, plus the variant scores of an evaluation), which one Jinja template
draws; the evaluation chart is inline SVG.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2
from markupsafe import Markup, escape
from pydantic import BaseModel, ConfigDict, Field

from react_agent import ConfigError, JournalError, read_journal
from react_agent.batch import TaskResult, VariantScore, read_results, score_results

__all__ = ["Group", "ViewData", "load_view", "render_view", "write_view"]

Kind = Literal["journal", "trace", "batch", "eval"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Group(_Frozen):
    """One run or task: what was asked, how it ended, what it cost, and its steps."""

    id: str
    task: str = ""
    variant: str = ""
    status: str = ""
    output: str = ""
    error: str | None = None
    seconds: float | None = None
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    steps: list[dict[str, Any]] = Field(default_factory=list)
    failed_checks: list[dict[str, str]] = Field(default_factory=list)
    resumed: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ViewData(_Frozen):
    """What a view shows: the source, its kind, its groups, and (an evaluation) the variants' scores."""

    source: str
    kind: Kind
    groups: list[Group]
    scores: list[VariantScore] = Field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        statuses: dict[str, int] = {}
        for group in self.groups:
            statuses[group.status] = statuses.get(group.status, 0) + 1
        return {"count": len(self.groups), "statuses": statuses,
                "seconds": round(sum(g.seconds or 0.0 for g in self.groups), 3),
                "tokens": sum(g.total_tokens for g in self.groups), "llm_calls": sum(g.llm_calls for g in self.groups)}


# -------------------------------------------------------------------------------------------- reading
def _lines(path: Path) -> list[dict[str, Any]]:
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line (a killed run) or a stray line
        if isinstance(record, dict):
            records.append(record)
    return records


def _step(record: dict[str, Any], index: int) -> dict[str, Any]:
    usage = record.get("usage") or {}
    total = int(usage.get("input_tokens", 0) or 0) + int(usage.get("output_tokens", 0) or 0)
    return {"index": record.get("index", record.get("step", index)), "thought": str(record.get("thought", "")),
            "action": record.get("action"), "action_input": record.get("action_input", {}),
            "observation": str(record.get("observation", "")), "is_error": bool(record.get("is_error")),
            "reflection": record.get("reflection"), "duration_s": float(record.get("duration_s", 0.0) or 0.0),
            "tokens": total, "replayed": bool(record.get("replayed"))}


def _usage(record: dict[str, Any]) -> tuple[int, int]:
    usage = record.get("usage") or {}
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


def from_journal(records: Sequence[dict[str, Any]]) -> list[Group]:
    """The runs of a journal: one group per run id, in the order they started."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        runs.setdefault(str(record.get("run")), []).append(record)
    groups = []
    for run_id, entries in runs.items():
        header = next((e for e in entries if e.get("type") == "run"), {})
        end = next((e for e in reversed(entries) if e.get("type") == "end"), None)
        steps = [_step(e, n) for n, e in enumerate((e for e in entries if e.get("type") == "step"), 1)]
        times = [float(e["t"]) for e in entries if isinstance(e.get("t"), (int, float))]
        tokens = _usage(end) if end else (sum(s["tokens"] for s in steps), 0)
        groups.append(Group(id=run_id, task=str(header.get("task", "")), status=str(end["status"]) if end else
                            "unfinished", output=str(end.get("output", "")) if end else "",
                            error=end.get("error") if end else None,
                            seconds=round(max(times) - min(times), 3) if len(times) > 1 else None,
                            llm_calls=int(end.get("llm_calls", 0)) if end else 0, input_tokens=tokens[0],
                            output_tokens=tokens[1], steps=steps,
                            resumed=any(e.get("type") == "resume" for e in entries)))
    return groups


def from_trace(records: Sequence[dict[str, Any]]) -> list[Group]:
    """The runs of a ``--trace`` file: its step records and the result record of each run."""
    steps: dict[str, list[dict[str, Any]]] = {}
    groups = []
    for record in records:
        run = str(record.get("run"))
        if record.get("type") == "step":
            steps.setdefault(run, []).append(_step(record, len(steps.get(run, [])) + 1))
        elif record.get("type") == "result":
            tokens = _usage(record)
            groups.append(Group(id=run, task=str(record.get("task", "")), status=str(record.get("status", "")),
                                output=str(record.get("output", "")), error=record.get("error"),
                                seconds=record.get("duration_s"), llm_calls=int(record.get("llm_calls", 0) or 0),
                                input_tokens=tokens[0], output_tokens=tokens[1], steps=steps.pop(run, [])))
    groups += [Group(id=run, status="unfinished", steps=items) for run, items in steps.items()]
    return groups


def _journal_steps(journal_dir: Path | None, result: TaskResult) -> list[dict[str, Any]]:
    """The steps of a batch task from its journal (``<journal_dir>/<id>.jsonl``), if it is there."""
    if journal_dir is None:
        return []
    from react_agent.batch import journal_name

    path = journal_dir / journal_name(result.id)
    if not path.is_file():
        return []
    try:
        records = read_journal(path)
    except JournalError:
        return []
    groups = from_journal(records)
    return groups[-1].steps if groups else []


def from_results(results: Iterable[TaskResult], *, variant: str = "", journal_dir: Path | None = None) -> list[Group]:
    """The tasks of a batch results file (with their steps when the batch's journals are next to it)."""
    return [Group(id=r.id, task=r.task, variant=variant, status=r.status, output=r.output, error=r.error,
                  seconds=r.seconds, llm_calls=r.llm_calls, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
                  resumed=r.resumed, steps=_journal_steps(journal_dir, r),
                  failed_checks=[{"name": c.name, "detail": c.detail} for c in r.checks if not c.passed])
            for r in results]


def _kind_of(records: Sequence[dict[str, Any]]) -> Kind | None:
    types = {r.get("type") for r in records}
    if types & {"run", "model", "tool_start", "end", "resume"}:
        return "journal"
    if types & {"step", "result"} and all(r.get("type") in ("step", "result") for r in records):
        return "trace"
    if all(isinstance(r.get("id"), str) and "status" in r and "task" in r for r in records):
        return "batch"
    return None


def load_view(path: str | os.PathLike[str]) -> ViewData:
    """Read a journal, a trace, a batch results file, an evaluation folder or a folder of journals;
    :class:`ConfigError` for anything else."""
    source = Path(path).expanduser()
    if source.is_dir():
        return _load_folder(source)
    if not source.is_file():
        raise ConfigError(f"{os.fspath(path)!r} does not exist: give a journal, a --trace file, a batch results "
                          f"file or an eval folder")
    records = _lines(source)
    kind = _kind_of(records) if records else None
    if kind == "journal":
        return ViewData(source=str(source), kind=kind, groups=from_journal(records))
    if kind == "trace":
        return ViewData(source=str(source), kind=kind, groups=from_trace(records))
    if kind == "batch":
        journals = Path(f"{source}.journal")
        return ViewData(source=str(source), kind=kind,
                        groups=from_results(read_results(source), journal_dir=journals if journals.is_dir() else None))
    raise ConfigError(f"{str(source)!r} is not a journal, a --trace file or a batch results file (no JSON line of "
                      f"theirs in it)")


def _load_folder(folder: Path) -> ViewData:
    """An eval folder (``<variant>.jsonl`` results), or a folder of journals (``react-agent serve``'s
    ``--journal-dir``, a batch's journals): every run of every journal, oldest first."""
    files = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    journals = [records for records in map(_lines, files) if records and _kind_of(records) == "journal"]
    if files and len(journals) == len(files):
        runs = sorted(journals, key=lambda records: min((float(r.get("t", 0) or 0) for r in records), default=0.0))
        asked = _asked_tasks(folder)
        groups = [group for records in runs for group in from_journal(records)]
        return ViewData(source=str(folder), kind="journal", groups=[
            g.model_copy(update={"task": asked[g.id]}) if g.id in asked else g for g in groups])
    return _load_eval(folder, files)


def _asked_tasks(folder: Path) -> dict[str, str]:
    """The tasks as asked, from the ``<run id>.run.json`` files of a serve folder (a journal keeps a task with
    its conversation composed in)."""
    asked = {}
    for path in folder.glob("*.run.json"):
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            asked[str(meta["id"])] = str(meta["task"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return asked


def _load_eval(folder: Path, variants: list[Path]) -> ViewData:
    if not variants:
        raise ConfigError(f"the folder {str(folder)!r} holds no results (<variant>.jsonl) and no journals: give the "
                          f"--out-dir of `react-agent eval` or a folder of journals")
    groups: list[Group] = []
    scores = []
    for path in variants:
        results = list(read_results(path))
        journals = folder / f"{path.stem}.journal"
        groups += from_results(results, variant=path.stem, journal_dir=journals if journals.is_dir() else None)
        scores.append(score_results(path.stem, results))
    return ViewData(source=str(folder), kind="eval", groups=groups, scores=scores)


# -------------------------------------------------------------------------------------------- drawing
def chart_svg(scores: Sequence[VariantScore], title: str) -> str:
    """Success rates with their 95 % intervals as an inline SVG bar chart."""
    width, height, left, bottom, top = max(320, 110 * len(scores) + 80), 240, 50, 40, 20
    plot = height - bottom - top
    bar = 60
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img"><title>{_escape(title)}</title>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot}" stroke="#999"/>',
             f'<line x1="{left}" y1="{top + plot}" x2="{width - 10}" y2="{top + plot}" stroke="#999"/>']
    for tick in (0, 50, 100):
        y = top + plot * (1 - tick / 100)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{tick}%</text>')
    for number, score in enumerate(scores):
        x = left + 20 + number * 110
        y = top + plot * (1 - score.rate)
        low, high = top + plot * (1 - score.low), top + plot * (1 - score.high)
        middle = x + bar / 2
        parts += [f'<rect class="bar" x="{x}" y="{y:.1f}" width="{bar}" height="{top + plot - y:.1f}" fill="#4c72b0">'
                  f'<title>{_escape(score.variant)}: {100 * score.rate:.0f}%</title></rect>',
                  f'<line x1="{middle}" y1="{low:.1f}" x2="{middle}" y2="{high:.1f}" stroke="#222"/>',
                  f'<line x1="{middle - 8}" y1="{high:.1f}" x2="{middle + 8}" y2="{high:.1f}" stroke="#222"/>',
                  f'<line x1="{middle - 8}" y1="{low:.1f}" x2="{middle + 8}" y2="{low:.1f}" stroke="#222"/>',
                  f'<text x="{middle}" y="{y - 6:.1f}" text-anchor="middle" font-size="12">'
                  f'{100 * score.rate:.0f}%</text>',
                  f'<text x="{middle}" y="{top + plot + 16}" text-anchor="middle" font-size="12">'
                  f'{_escape(score.variant)}</text>']
    parts.append("</svg>")
    return "".join(parts)


def _escape(text: str) -> str:
    return str(escape(text))


def labels(lang: str) -> dict[str, str]:
    data = json.loads((resources.files("react_agent.serve") / "static" / "labels.json").read_text(encoding="utf-8"))
    if lang not in data:
        raise ConfigError(f"lang must be one of {', '.join(sorted(data))}, got {lang!r}")
    return dict(data[lang])


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def render_view(data: ViewData, *, lang: str = "en") -> str:
    """The HTML page of ``data``: one file, its style inline, no script needed, nothing fetched."""
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                     lstrip_blocks=True)
    environment.filters["as_text"] = _as_text
    folder = resources.files("react_agent.serve") / "static"
    template = environment.from_string((folder / "view.html.jinja").read_text(encoding="utf-8"))
    words = labels(lang)
    chart = Markup(chart_svg(data.scores, words["chart"])) if data.scores else ""
    return template.render(data=data, totals=data.totals(), t=words, lang=lang, chart=chart,
                           style=(folder / "view.css").read_text(encoding="utf-8"))


def write_view(source: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *,
               lang: str = "en") -> Path:
    """Write the view of ``source`` (a journal, trace, batch results file or eval folder) to ``out``
    (default: ``<source>.html``, or ``<folder>/index.html`` for a folder); returns the path written."""
    data = load_view(source)
    target = Path(out).expanduser() if out is not None else (
        Path(source) / "index.html" if Path(source).is_dir() else Path(f"{source}.html"))
    if not target.parent.is_dir():
        raise ConfigError(f"the folder of {str(target)!r} does not exist")
    target.write_text(render_view(data, lang=lang), encoding="utf-8")
    return target
