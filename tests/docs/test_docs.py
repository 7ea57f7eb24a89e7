"""The documentation does not drift from the code.

Conventions for ``docs/*.md`` and ``README.md``:

- every ```` ```python ```` block must compile (top-level ``await`` is allowed);
- every block is executed **on its own, as a script in a fresh interpreter** (what a reader gets who
  copies it into a file): it imports and defines everything it uses, has no top-level ``await``
  (``asyncio.run`` instead), and runs in a temporary working directory, with ``GIGACHAT_CREDENTIALS`` set
  to a fake value and every connection that is not to the loopback refused — so it must run offline
  (use ``ScriptedChatModel``). (A ``<!-- run -->`` line before a block says the same; it is optional.)
- a block that cannot run so is preceded by ``<!-- no-run: KIND: why -->``, KIND one of
  :data:`NO_RUN_KINDS`, whose pattern the block must match: ``network`` (a service off this machine:
  GigaChat, the OpenAI API), ``server`` (a server that runs until stopped, or one the block expects to be
  running), ``local-model`` (it runs the embedded model: executed by the ``local_model``-marked test
  instead, when the weights are installed), ``package`` (it imports a package no extra of react-agent
  installs, named in backticks in the reason).

The tables that restate the code (template variables, agent options, public names, GigaChat
arguments) are compared with the code, and the site is built with ``mkdocs build --strict``.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import ipaddress
import os
import re
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import react_agent.testing
from react_agent import BaseAgent, ReflectionAgent
from react_agent._prompts import TEMPLATE_VARIABLES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MKDOCS_CONFIG = ROOT / ".ci" / "mkdocs.yml"
RUN_MARKER = "<!-- run -->"
NO_RUN = re.compile(r"^<!-- no-run: (?P<kind>[a-z-]+): (?P<why>\S.{9,}?) -->$")
NO_RUN_KINDS = {
    "network": re.compile(r"GigaChat\(|gigachat:|[\"']openai:|ChatOpenAI\(model=|OPENAI_API_KEY"),
    "server": re.compile(r"\bserve\(|uvicorn|base_url=\"http://127\.0\.0\.1"),
    "local-model": re.compile(r"LocalChatModel\(|make_model\(\"local"),
    "package": re.compile(r"^(?:from|import) \w", re.MULTILINE),  # and see _check_package
}
"""The reasons a docs block may give for not running offline, and what its code must show for each."""
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    marker: str
    """The non-blank line before the block ('' when it is not an HTML comment)."""

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def no_run(self) -> re.Match[str] | None:
        return NO_RUN.match(self.marker)

    @property
    def run(self) -> bool:
        """Executed on its own offline: every block but those marked ``<!-- no-run: ... -->``."""
        return not self.marker.startswith("<!-- no-run")


def _pages() -> list[Path]:
    pages = sorted(DOCS.glob("*.md"))
    readme = ROOT / "README.md"
    return [*pages, readme] if readme.exists() else pages


def _page_name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def python_blocks(path: Path) -> list[Block]:
    """The ```python blocks of a markdown file, with their first line number and run marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    previous = ""
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            if lines[i].strip():
                previous = lines[i].strip()
            i += 1
            continue
        fence, info = opening["fence"], opening["info"].lower()
        body: list[str] = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and not lines[i].strip().strip(fence[0])):
            body.append(lines[i])
            i += 1
        if info in ("python", "py", "python3", "pycon"):
            marker = previous if previous.startswith("<!--") else ""
            blocks.append(Block(_page_name(path), i - len(body), _source(body), marker))
        previous = fence
        i += 1
    return blocks


def _source(body: list[str]) -> str:
    code = textwrap.dedent("\n".join(body))
    if any(line.startswith(">>>") for line in code.splitlines()):  # a doctest-style session
        code = "\n".join(line[4:] for line in code.splitlines() if line.startswith((">>> ", "... ", ">>>")))
    return code + "\n"


def _compile(block: Block) -> Any:
    return compile(block.code, block.label, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


ALL_BLOCKS = [b for page in _pages() for b in python_blocks(page)]
RUN_PAGES = sorted({b.page for b in ALL_BLOCKS if b.run})


def _loopback(host: Any) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A temporary cwd, a fake GigaChat key, and no connection but to the loopback."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family != getattr(socket, "AF_UNIX", None) and not _loopback(address[0]):
            raise OSError(f"a docs example tried to reach the network: {address!r}")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            raise socket.gaierror(f"a docs example tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setenv("GIGACHAT_CREDENTIALS", "fake-credentials-for-the-docs-tests")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "russian_trusted_root_ca.pem").write_text("", encoding="utf-8")  # docs/gigachat.md downloads it


def run_page(page: str) -> dict[str, Any]:
    """Execute the run blocks of ``page`` in order, in one namespace; return the namespace."""
    namespace: dict[str, Any] = {"__name__": "__docs_example__"}
    for block in (b for b in ALL_BLOCKS if b.page == page and b.run):
        code = _compile(block)
        try:
            if code.co_flags & inspect.CO_COROUTINE:
                asyncio.run(eval(code, namespace))
            else:
                exec(code, namespace)
        except Exception as exc:
            raise AssertionError(f"the example at {block.label} failed: {exc!r}") from exc
    return namespace


def table_rows(text: str, header: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def code_names(cell: str) -> list[str]:
    """The `backticked` names of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def section(text: str, heading: str) -> str:
    """The text of the section that starts with the line ``heading``, up to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n")
    nxt = re.search(rf"^{level} ", text[start + len(heading):], re.MULTILINE)
    return text[start: start + len(heading) + nxt.start()] if nxt else text[start:]


# --------------------------------------------------------------------------- examples
@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.label for b in ALL_BLOCKS])
def test_python_block_compiles(block: Block) -> None:
    """Every ```python block of the docs and the README is valid Python."""
    _compile(block)


RUN_BLOCKS = [b for b in ALL_BLOCKS if b.run]

# What every run block gets before its own code, in its own interpreter: no connection but to the loopback.
OFFLINE_PRELUDE = textwrap.dedent("""
    import ipaddress as _ip, socket as _socket

    def _loopback(host):
        if host in (None, "", "localhost"):
            return True
        try:
            return _ip.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return False

    def _guard(real):
        def connect(sock, address):
            if sock.family != getattr(_socket, "AF_UNIX", None) and not _loopback(address[0]):
                raise OSError(f"a docs example tried to reach the network: {address!r}")
            return real(sock, address)
        return connect

    _socket.socket.connect = _guard(_socket.socket.connect)
    _socket.socket.connect_ex = _guard(_socket.socket.connect_ex)
    _real_getaddrinfo = _socket.getaddrinfo

    def _getaddrinfo(host, *args, **kwargs):
        if not _loopback(host):
            raise _socket.gaierror(f"a docs example tried to resolve {host!r}")
        return _real_getaddrinfo(host, *args, **kwargs)

    _socket.getaddrinfo = _getaddrinfo
    del _ip, _guard
""")


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=[b.label for b in RUN_BLOCKS])
def test_marked_block_runs_alone_as_a_script(block: Block, tmp_path: Path) -> None:
    """Each block not marked no-run runs on its own in a fresh interpreter, offline: copied into a file, it
    works."""
    assert not _compile(block).co_flags & inspect.CO_COROUTINE, \
        f"{block.label} uses top-level await: a script cannot; wrap it in asyncio.run(main())"
    script = tmp_path / "example.py"
    script.write_text(OFFLINE_PRELUDE + "\n" + block.code, encoding="utf-8")
    (tmp_path / "russian_trusted_root_ca.pem").write_text("", encoding="utf-8")  # docs/gigachat.md downloads it
    env = {**os.environ, "GIGACHAT_CREDENTIALS": "fake-credentials-for-the-docs-tests",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"the example at {block.label} failed:\n{done.stderr[-3000:]}"


SKIPPED_BLOCKS = [b for b in ALL_BLOCKS if not b.run]


@pytest.mark.parametrize("block", SKIPPED_BLOCKS, ids=[b.label for b in SKIPPED_BLOCKS])
def test_a_block_that_does_not_run_says_why(block: Block) -> None:
    """``<!-- no-run: KIND: why -->``: a known KIND whose pattern the code matches, and a reason in words."""
    marker = block.no_run
    assert marker is not None, (f"{block.label}: write the marker as <!-- no-run: KIND: why --> with KIND one of "
                                f"{', '.join(NO_RUN_KINDS)}, got {block.marker!r}")
    kind = marker["kind"]
    assert kind in NO_RUN_KINDS, f"{block.label}: unknown no-run kind {kind!r} (known: {', '.join(NO_RUN_KINDS)})"
    assert NO_RUN_KINDS[kind].search(block.code), (
        f"{block.label} is marked no-run {kind!r} but its code shows no {kind}: make it run offline "
        "(ScriptedChatModel), or give the right kind")
    if kind == "package":
        _check_package(block, marker["why"])


def _check_package(block: Block, why: str) -> None:
    """A ``package`` block names in its reason a module it imports that no extra of react-agent installs."""
    named = re.findall(r"`([\w.-]+)`", why)
    assert named, f"{block.label}: name the package in backticks in the no-run reason"
    imported = set(re.findall(r"^(?:from|import) (\w+)", block.code, re.MULTILINE))
    declared = (ROOT / "pyproject.toml").read_text(encoding="utf-8").lower()
    for name in named:
        assert name.replace("-", "_") in imported, f"{block.label}: the block does not import {name}"
        assert f'"{name.replace("_", "-").lower()}' not in declared, (
            f"{block.label}: {name} is installed by an extra of react-agent: the block can run")


@pytest.mark.parametrize("marker", ["<!-- no-run -->", "<!-- no-run: slow -->", "<!-- no-run: gpu: needs a GPU -->",
                                    "<!-- no-run: network: -->", "<!-- no-run: package: needs `langchain_openai` -->",
                                    "<!-- no-run: package: needs another package -->"])
def test_a_malformed_or_unknown_no_run_marker_is_refused(marker: str) -> None:
    block = Block("page.md", 1, 'llm = GigaChat(model="GigaChat-2-Max")\n', marker)
    assert not block.run
    with pytest.raises(AssertionError):
        test_a_block_that_does_not_run_says_why(block)


def test_an_unmarked_block_runs_and_a_marked_one_needs_its_kind() -> None:
    assert Block("page.md", 1, "x = 1\n", "").run and Block("page.md", 1, "x = 1\n", RUN_MARKER).run
    with pytest.raises(AssertionError, match="shows no server"):
        test_a_block_that_does_not_run_says_why(Block("page.md", 1, "x = 1\n", "<!-- no-run: server: waits "
                                                                                 "for requests -->"))


LOCAL_MODEL_BLOCKS = [b for b in SKIPPED_BLOCKS if b.no_run is not None and b.no_run["kind"] == "local-model"]


@pytest.mark.local_model
@pytest.mark.parametrize("block", LOCAL_MODEL_BLOCKS, ids=[b.label for b in LOCAL_MODEL_BLOCKS])
def test_local_model_block_runs_alone_as_a_script(block: Block, tmp_path: Path) -> None:
    """The blocks that run the embedded model run too, on their own, when its weights are installed."""
    from react_agent.models.local._weights import weights_installed

    if importlib.util.find_spec("llama_cpp") is None or not weights_installed():
        pytest.skip("the local extra is not installed (react-agent setup-local)")
    test_marked_block_runs_alone_as_a_script(block, tmp_path)


def test_core_pages_have_runnable_examples() -> None:
    """The pages that teach the API keep at least one executed example each."""
    for page in ("index.md", "quickstart.md", "prompts.md", "subclassing.md", "gigachat.md"):
        assert f"docs/{page}" in RUN_PAGES, f"docs/{page} has no block that runs"


@pytest.mark.usefixtures("offline")
def test_gigachat_example_builds_without_network() -> None:
    """The GigaChat page's example builds a real GigaChat client and agent from a fake key, calling nothing."""
    from langchain_gigachat import GigaChat

    namespace = run_page("docs/gigachat.md")
    llm, agent = namespace["llm"], namespace["agent"]
    assert isinstance(llm, GigaChat)
    assert agent.llm is llm
    assert llm.model in ("GigaChat-2", "GigaChat-2-Pro", "GigaChat-2-Max")
    assert llm.scope in ("GIGACHAT_API_PERS", "GIGACHAT_API_B2B", "GIGACHAT_API_CORP")
    assert llm.ca_bundle_file and llm.verify_ssl_certs is not False


def test_docs_never_turn_certificate_verification_off() -> None:
    """No example disables TLS verification (the GigaChat page explains trusting the CA instead)."""
    offenders = [b.label for b in ALL_BLOCKS if re.search(r"verify_ssl_certs\s*=\s*False", b.code)]
    assert not offenders


def test_gigachat_table_names_real_arguments() -> None:
    """Every argument in the GigaChat set-up table is a field of langchain_gigachat.GigaChat."""
    from langchain_gigachat import GigaChat

    text = (DOCS / "gigachat.md").read_text(encoding="utf-8")
    documented = [code_names(row[0])[0] for row in table_rows(text, "| argument |")]
    assert documented
    assert [name for name in documented if name not in GigaChat.model_fields] == []


# --------------------------------------------------------------------------- tables restating the code
def test_prompts_table_matches_template_variables() -> None:
    """docs/prompts.md lists exactly the templates of TEMPLATE_VARIABLES with their required/allowed variables."""
    text = (DOCS / "prompts.md").read_text(encoding="utf-8")
    documented = {}
    for row in table_rows(text, "| Template |"):
        name, required, also = code_names(row[0])[0], set(code_names(row[2])), set(code_names(row[3]))
        assert name not in documented, f"{name} listed twice"
        documented[name] = (required, required | also)
        assert not required & also, f"{name}: a variable is listed as both required and also allowed"
    expected = {name: (set(req), set(allowed)) for name, (req, allowed) in TEMPLATE_VARIABLES.items()}
    assert documented == expected


def test_prompts_page_describes_every_variable() -> None:
    """Every variable a template may use is described in docs/prompts.md's variable table."""
    text = (DOCS / "prompts.md").read_text(encoding="utf-8")
    described = {name for row in table_rows(text, "| Variable |") for name in code_names(row[0])}
    used = set().union(*(allowed for _, allowed in TEMPLATE_VARIABLES.values()))
    assert used - described == set()
    assert described - used == set()


def _keyword_options(cls: type) -> dict[str, Any]:
    """The agent's options: the fields of its config class, with their defaults."""
    fields = cls.Config.model_fields  # type: ignore[attr-defined]
    return {n: f.get_default(call_default_factory=True) for n, f in fields.items()}


def test_options_table_matches_base_agent() -> None:
    """docs/concepts.md's options table lists exactly BaseAgent's options (AgentConfig), with their defaults."""
    text = (DOCS / "concepts.md").read_text(encoding="utf-8")
    rows = table_rows(section(text, "## Options"), "| option |")
    options = _keyword_options(BaseAgent)
    assert [code_names(r[0])[0] for r in rows] == list(options)
    for row in rows:
        name, default = code_names(row[0])[0], row[1]
        literal = re.fullmatch(r"`([^`]*)`", default)
        if literal and not literal.group(1).endswith(")"):
            assert ast.literal_eval(literal.group(1)) == options[name], f"default of {name}"


def test_reflection_options_are_documented() -> None:
    """Every option ReflectionAgent adds is named on the concepts page."""
    text = (DOCS / "concepts.md").read_text(encoding="utf-8")
    extra = set(_keyword_options(ReflectionAgent)) - set(_keyword_options(BaseAgent)) - {"options"}
    assert extra
    assert [name for name in sorted(extra) if f"`{name}`" not in text] == []


def _api_section(module: str) -> list[str]:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    rows = table_rows(section(text, f"## `{module}`"), "| Name |")
    return [code_names(row[0])[0] for row in rows]


@pytest.mark.parametrize("module", ["react_agent", "react_agent.loop", "react_agent.mcp", "react_agent.batch",
                                    "react_agent.testing", "react_agent.models", "react_agent.serve",
                                    "react_agent.demo"])
def test_api_page_lists_exactly_the_public_names(module: str) -> None:
    """docs/api.md lists each public module's __all__, no more and no less."""
    listed = _api_section(module)
    assert len(listed) == len(set(listed)), "a name is listed twice"
    assert sorted(listed) == sorted(importlib.import_module(module).__all__)


def test_api_page_lists_the_scripted_model() -> None:
    """The scripted test model is part of the documented API."""
    assert "ScriptedChatModel" in _api_section("react_agent.testing")
    assert "ScriptedChatModel" in react_agent.testing.__all__


# --------------------------------------------------------------------------- the site
def test_nav_lists_every_page() -> None:
    """Every docs/*.md page is in the mkdocs nav, and every nav entry exists."""
    config = MKDOCS_CONFIG.read_text(encoding="utf-8")
    nav = re.findall(r"^\s+- [^:]+: (\S+\.md)\s*$", config.split("\nnav:", 1)[1], re.MULTILINE)
    assert sorted(nav) == sorted(p.name for p in DOCS.glob("*.md"))


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs-material is not installed (pip install -e '.[dev]')",
)
def test_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds: no broken link, anchor or nav entry."""
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(MKDOCS_CONFIG), "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # not -q: in quiet mode mkdocs does not count the warnings and --strict passes anyway
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_local_model_fields_table_matches_local_chat_model() -> None:
    """docs/local-models.md's field table lists exactly LocalChatModel's own options, with their defaults."""
    from react_agent.models import LocalChatModel

    text = (DOCS / "local-models.md").read_text(encoding="utf-8")
    rows = table_rows(section(text, "## Bringing your own GGUF"), "| field |")
    declared = vars(LocalChatModel).get("__annotations__", {})
    own = {name for name in LocalChatModel.model_fields if name in declared}  # declared (or redeclared) here
    assert {"model", "n_threads", "verbose", "prompt_cache_dir", "techniques"} <= own
    names = [code_names(r[0])[0] for r in rows]
    assert len(names) == len(set(names)) and set(names) == set(own)
    for row in rows:
        name = code_names(row[0])[0]
        assert ast.literal_eval(code_names(row[1])[0]) == LocalChatModel.model_fields[name].default, name


def test_local_model_techniques_are_each_described_in_the_decoding_section() -> None:
    """The "How the embedded model decodes" section names every technique of the pipeline."""
    from react_agent.models import LocalChatModel

    text = section((DOCS / "local-models.md").read_text(encoding="utf-8"), "## How the embedded model decodes")
    assert all(f"`{name}`" in text for name in LocalChatModel.model_fields["techniques"].default)


