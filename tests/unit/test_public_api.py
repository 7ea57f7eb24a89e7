"""The public API is pinned: exact names, each documented, and importing the package has no side effects.

A change to ``__all__`` is a change to the public API: update the pinned list here, docs/api.md (which
tests/docs/test_docs.py compares with ``__all__``) and the changelog together.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import react_agent
import react_agent.loop
import react_agent.testing

PACKAGE_DIR = Path(react_agent.__file__).resolve().parent

PUBLIC = sorted([
    "FINISH",
    "AgentAction",
    "AgentConfig",
    "AgentNode",
    "AgentResult",
    "AgentStep",
    "AgentTool",
    "BaseAgent",
    "ConfigError",
    "ConfigurableAgent",
    "Conversation",
    "Example",
    "JournalError",
    "JournalMismatchError",
    "ModelCallError",
    "OutputParseError",
    "Plan",
    "PlanAndExecuteAgent",
    "PlanConfig",
    "PlanResult",
    "PlanState",
    "PlanStep",
    "PromptSet",
    "ReactAgent",
    "ReactAgentError",
    "ReflectionAgent",
    "ReflectionConfig",
    "ReflectionState",
    "RetryPolicy",
    "RunError",
    "RunState",
    "Usage",
    "answer_schema",
    "examples_for_tools",
    "is_transient",
    "parse_actions",
    "parse_response",
    "read_journal",
])

TESTING = sorted(["FunctionChatModel", "RecordedCall", "ScriptExhaustedError", "ScriptedChatModel"])

LOOP = sorted(["Effect", "Loop", "ModelCall", "ModelCallError", "ModelReply", "Outcome", "RunState", "StepDone",
               "StepDraft", "ToolCall", "ToolCalls", "completed_step", "message_text", "message_usage", "task_of"])

DECOMPOSE = sorted(["VERBS", "arun_decomposed", "combine_results", "run_decomposed", "run_subtasks", "split_task"])

SERVE = sorted(["check_binding", "create_app", "serve", "write_view"])

MODULES = {"react_agent": PUBLIC, "react_agent.loop": LOOP, "react_agent.testing": TESTING,
           "react_agent.decompose": DECOMPOSE, "react_agent.serve": SERVE}
NAMES = [(module, name) for module, names in MODULES.items() for name in names]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_all_is_pinned(module: str) -> None:
    """__all__ is exactly the pinned list of public names, without duplicates."""
    exported = importlib.import_module(module).__all__
    assert len(exported) == len(set(exported))
    assert sorted(exported) == MODULES[module]


def _attribute_docstring(name: str) -> str | None:
    """The string literal right after a module-level ``name = ...`` in the package's sources."""
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, following in itertools.pairwise(body):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) and (
                    isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                return following.value.value
    return None


def _own_docstring(obj: Any, name: str) -> str | None:
    if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
        doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if doc and inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
            return None  # the signature dataclasses write when a class has no docstring
        return doc
    return _attribute_docstring(name)


@pytest.mark.parametrize(("module", "name"), NAMES, ids=[f"{m}.{n}" for m, n in NAMES])
def test_public_name_is_importable_and_documented(module: str, name: str) -> None:
    """Each public name imports from its module and has a docstring of its own."""
    obj = getattr(importlib.import_module(module), name)
    doc = _own_docstring(obj, name)
    assert doc and doc.strip(), f"{module}.{name} has no docstring"


_IMPORT_PROBE = textwrap.dedent("""
    import json, logging, os, sys, threading

    PACKAGE = sys.argv[1]
    reads = []
    environ_type = type(os.environ)
    real_getitem = environ_type.__getitem__
    SKIP = ("os.py", "_collections_abc.py", "<frozen os>", "<frozen _collections_abc>")

    def getitem(self, key):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.endswith(SKIP):
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename.startswith(PACKAGE):
            reads.append(key)
        return real_getitem(self, key)

    environ_type.__getitem__ = getitem
    threads = threading.active_count()
    import react_agent
    import react_agent.testing
    environ_type.__getitem__ = real_getitem
    package_logger = logging.getLogger("react_agent")
    report = {
        "root_handlers": [repr(h) for h in logging.getLogger().handlers],
        "root_level": logging.getLogger().level,
        "package_handlers": [type(h).__name__ for h in package_logger.handlers],
        "package_level": package_logger.level,
        "env_reads": reads,
        "new_threads": threading.active_count() - threads,
    }
    sys.stderr.write("REPORT" + json.dumps(report))
""")


@pytest.fixture(scope="module")
def import_probe() -> tuple[str, dict[str, Any], str]:
    proc = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, str(PACKAGE_DIR)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, _, report = proc.stderr.rpartition("REPORT")
    return proc.stdout, json.loads(report), before


def test_import_prints_nothing(import_probe: tuple[str, dict[str, Any], str]) -> None:
    """Importing react_agent writes nothing to stdout or stderr."""
    stdout, _, stderr = import_probe
    assert stdout == "" and stderr == ""


def test_import_configures_no_logging(import_probe: tuple[str, dict[str, Any], str]) -> None:
    """Importing react_agent adds no handler and sets no level: logging is the application's to configure."""
    _, report, _ = import_probe
    assert report["root_handlers"] == [] and report["root_level"] == 30  # WARNING, the default
    assert set(report["package_handlers"]) <= {"NullHandler"}
    assert report["package_level"] == 0  # NOTSET


def test_import_reads_no_environment(import_probe: tuple[str, dict[str, Any], str]) -> None:
    """No module of react_agent reads an environment variable while being imported."""
    _, report, _ = import_probe
    assert report["env_reads"] == []


def test_import_starts_no_thread(import_probe: tuple[str, dict[str, Any], str]) -> None:
    """Importing react_agent starts no background thread."""
    _, report, _ = import_probe
    assert report["new_threads"] == 0
