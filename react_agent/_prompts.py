"""Prompt templates: load, validate and render the files in ``prompts/``.

Every model-facing sentence lives in a template file (``prompts/<lang>/<name>.jinja``), feedback texts
included. A :class:`PromptSet` is the set of templates an agent uses; it is validated when it is built:
a template that lacks a required variable or uses an unknown one raises :class:`ConfigError` naming the
template and the variable.

Built-in sets: ``"ru"`` and ``"en"`` (every template), and ``"ru-compact"`` / ``"en-compact"``, which
overlay a short ``step`` prompt built around few-shot examples on the language's set (for small local
models; see ``docs/local-models.md``).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import uuid
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, cast

import jinja2
from jinja2 import meta, nodes
from jinja2.sandbox import SandboxedEnvironment
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.prompts import BasePromptTemplate

from react_agent.errors import ConfigError

__all__ = ["LANGUAGES", "PROMPT_SETS", "TEMPLATE_VARIABLES", "PromptSet", "PromptSource", "task_language"]

LANGUAGES = ("ru", "en")
"""The languages of the built-in prompts: each has a folder with every template."""

PROMPT_SETS = ("ru", "en", "ru-compact", "en-compact")
"""The built-in prompt set names. ``<lang>-compact`` is the language's set with the templates of the folder
``prompts/<lang>-compact/`` (a short ``step`` prompt that shows the agent's ``examples``) on top."""

_CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


def task_language(text: str) -> str:
    """The prompt language that fits ``text``: ``"ru"`` when it has Cyrillic letters, else ``"en"``."""
    return "ru" if _CYRILLIC.search(text) else "en"


_STEP_VARS = frozenset({"task", "tools", "tool_names", "history", "steps", "tool_specs"})

TEMPLATE_VARIABLES: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    # name: (required, allowed)
    "step": (frozenset({"task", "tools", "history"}), _STEP_VARS | {"examples", "max_parallel_calls"}),
    "native": (frozenset(), frozenset({"task", "max_parallel_calls", "final_tool"})),
    "not_run": (frozenset({"action", "reason"}), frozenset({"action", "action_input", "reason", "limit"})),
    "reflection": (frozenset({"task", "history"}), _STEP_VARS),
    "corrective": (frozenset({"task", "reflection", "history"}), _STEP_VARS | {"reflection", "examples"}),
    "final_answer": (frozenset({"task", "history"}), _STEP_VARS),
    "plan": (frozenset({"task", "tools"}), _STEP_VARS | {"error", "parallel"}),
    "fill_open": (
        frozenset({"task", "tool", "open_fields", "results"}),
        _STEP_VARS | {"tool", "args", "open_fields", "results", "error", "native"},
    ),
    "tools": (frozenset({"tool_specs"}), frozenset({"tool_specs", "with_finish"})),
    "history": (frozenset({"steps"}), frozenset({"steps"})),
    "parse_error": (frozenset({"reason"}), frozenset({"error", "key", "limit", "reason", "text", "tool_names"})),
    "unknown_tool": (frozenset({"action", "tool_names"}), frozenset({"action", "tool_names"})),
    "invalid_arguments": (
        frozenset({"action", "error"}),
        frozenset({"action", "error", "arguments", "action_input"}),
    ),
    "tool_error": (frozenset({"action", "error"}), frozenset({"action", "error", "action_input"})),
    "tool_timeout": (frozenset({"action", "timeout"}), frozenset({"action", "timeout", "action_input"})),
    "approval_denied": (frozenset({"action"}), frozenset({"action", "action_input"})),
    "max_iterations": (frozenset({"last_observation"}), frozenset({"last_observation", "steps"})),
    "example_facts": (frozenset({"values"}), frozenset({"values"})),
    "repeated_call": (frozenset({"action", "observation"}), frozenset({"action", "observation", "action_input"})),
    "repeated_error": (frozenset({"action", "observation"}),
                       frozenset({"action", "observation", "action_input", "failures"})),
    "timeout": (frozenset({"last_observation"}), frozenset({"last_observation", "steps", "seconds"})),
    "truncated": (frozenset({"omitted"}), frozenset({"omitted"})),
    "observation": (frozenset({"observation"}), frozenset({"action", "action_input", "observation", "is_error"})),
    "conversation": (frozenset({"turns", "task"}), frozenset({"turns", "task"})),
    "answer_format": (frozenset({"task", "schema"}), frozenset({"task", "schema"})),
    "invalid_answer": (frozenset({"error"}), frozenset({"error", "schema"})),
}
"""For each template name: the variables it must use and the variables it may use."""

PromptSource = Union[str, "os.PathLike[str]", BasePromptTemplate[Any], Mapping[str, str | BasePromptTemplate[Any]]]

class _Environment(SandboxedEnvironment):
    """Jinja's sandbox (a prompt folder may come from a shared repository: its templates cannot reach
    Python internals), looking up ``x.name`` as a dict key first: history entries and tool specs are dicts,
    and jinja's default (attribute first) pays an ``AttributeError`` per lookup."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


_ENV = _Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _template(source: str | nodes.Template) -> jinja2.Template:
    """``_ENV.from_string(source)`` with the environment's globals in a plain dict of the template's own: Jinja
    copies a template's globals into the context of every render, and the ``ChainMap`` that ``from_string``
    makes of them costs three times the rest of rendering a short template (the environment's globals never
    change, so the copy holds the same values)."""
    return _ENV.template_class.from_code(_ENV, _ENV.compile(source), dict(_ENV.globals))


@functools.lru_cache(maxsize=1)
def builtin_root() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "prompts", here.parent / "prompts"):  # wheel, then checkout
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"the built-in prompts folder is missing (looked in {here / 'prompts'})")


@functools.cache
def fewshot_macros(lang: str) -> Any:
    """The macros of ``prompts/fewshot/<lang>.jinja``: the model-facing sentences of generated worked examples
    and of the embedded model's notes (``en``, ``ru``)."""
    path = builtin_root() / "fewshot" / f"{lang}.jinja"
    if path.is_file():
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True,
                                 lstrip_blocks=True)
        return env.from_string(path.read_text(encoding="utf-8")).module
    raise ConfigError(f"the few-shot templates prompts/fewshot/{lang}.jinja are missing")


def _read_folder(folder: Path) -> dict[str, str]:
    """The ``*.jinja`` templates of ``folder`` by name; a file that cannot be read as UTF-8 text (or an entry that
    is not a file) is a :class:`ConfigError` naming it, so a broken folder fails when the agent is built."""
    texts = {}
    for path in sorted(folder.glob("*.jinja")):
        if not path.is_file():
            raise ConfigError(f"prompt template {str(path)!r} is not a file (a folder?); a template is a "
                              "UTF-8 text file <name>.jinja")
        try:
            texts[path.stem] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"prompt template {str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                              "save it as UTF-8") from None
        except OSError as exc:
            raise ConfigError(f"cannot read prompt template {str(path)!r}: {exc.strerror or exc}") from None
    return texts


Template = jinja2.Template | BasePromptTemplate[Any]


def _compile(name: str, source: str | BasePromptTemplate[Any], origin: str) -> tuple[Template, frozenset[str]]:
    if name not in TEMPLATE_VARIABLES:
        known = ", ".join(sorted(TEMPLATE_VARIABLES))
        raise ConfigError(f"unknown template {name!r} in {origin}; known templates: {known}")
    required, allowed = TEMPLATE_VARIABLES[name]
    if not isinstance(source, (str, BasePromptTemplate)):
        raise ConfigError(f"template {name!r} ({origin}) must be jinja text or a LangChain prompt template, "
                          f"got {type(source).__name__}")
    if isinstance(source, BasePromptTemplate):
        used = set(source.input_variables)
        compiled: Template = source
    else:
        try:
            tree = _ENV.parse(source)
            used = meta.find_undeclared_variables(tree)
            compiled = _template(source)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"template {name!r} ({origin}) line {exc.lineno}: {exc.message}") from exc
        _check_tree(name, origin, tree)
        _PLAIN[compiled] = frozenset(v for v in used if _written_as_is(tree, v))
        loop = _loop_of(tree)
        if loop is not None:
            _LOOPS[compiled] = loop
    unknown = sorted(used - allowed)
    if unknown:
        raise ConfigError(
            f"template {name!r} ({origin}) uses unknown variable {unknown[0]!r}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    missing = sorted(required - used)
    if missing:
        raise ConfigError(f"template {name!r} ({origin}) lacks required variable {missing[0]!r}")
    return compiled, frozenset(used)


_LOADING = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from ... import",
            nodes.Extends: "extends"}  # the tags that need a loader; prompts have none
_OPERATORS = (nodes.BinExpr, nodes.UnaryExpr)


def _check_tree(name: str, origin: str, tree: nodes.Template) -> None:
    """Refuse what would fail every render of the template, so that it fails when the agent is built: a tag
    that loads another template (``include``, ``import``, ``from ... import``, ``extends``: a prompt is one
    self-contained text, its environment has no loader) and an operator on constants that always raises
    (``{{ 1 // 0 }}``). The template is not rendered here: a trial render with made-up values could refuse a
    valid template."""
    for node in tree.find_all(tuple(_LOADING)):
        raise ConfigError(f"template {name!r} ({origin}) line {node.lineno}: {{% {_LOADING[type(node)]} %}} is not "
                          "supported: a prompt template cannot load another template; put the text in the template "
                          "itself")
    for expr in tree.find_all(_OPERATORS):
        operands = list(expr.iter_child_nodes())
        if not operands or not all(isinstance(op, nodes.Expr) and _folds(op) for op in operands):
            continue  # not made of constants: its value is known only when rendered
        try:
            expr.as_const()
        except nodes.Impossible as exc:
            cause = exc.__cause__
            if cause is None:
                continue
            raise ConfigError(f"template {name!r} ({origin}) line {expr.lineno}: an expression on constants always "
                              f"fails: {type(cause).__name__}: {cause}") from None


def _folds(expr: nodes.Expr) -> bool:
    """Whether Jinja can compute ``expr`` without rendering (it is made of constants)."""
    try:
        expr.as_const()
    except nodes.Impossible:
        return False
    return True


class PromptSet:
    """The validated templates of one agent.

    Build with :meth:`load`: a built-in set (``"ru"``, ``"en"``, ``"ru-compact"``, ``"en-compact"``), a
    folder whose ``*.jinja`` files override any subset of the language's templates, a LangChain prompt
    template (replaces ``step``), or a mapping ``{template name: jinja source or LangChain template}``.
    """

    def __init__(self, templates: Mapping[str, Template], *, lang: str,
                 variables: Mapping[str, frozenset[str]] | None = None) -> None:
        missing = sorted(set(TEMPLATE_VARIABLES) - set(templates))
        if missing:
            raise ConfigError(f"prompt set lacks template {missing[0]!r}")
        self._templates = dict(templates)
        self._variables = dict(variables or {})
        self.lang = lang

    @classmethod
    def load(cls, source: PromptSource | PromptSet = "ru", *, lang: str | None = None) -> PromptSet:
        """The validated prompt set of ``source``. Compiled sets are cached per source (a built-in name, a
        folder keyed by its path and its files' modification times, a mapping of jinja texts), so building
        an agent with a prompt set seen before compiles nothing. A prompt set is never changed after it is
        built, so agents may share it."""
        if isinstance(source, PromptSet):
            return source
        key = _cache_key(source, lang)
        if key is not None:
            with _CACHE_LOCK:
                cached = _CACHE.get(key)
            if cached is not None:
                return cached
        built = cls._build(source, lang=lang)
        if key is not None:
            with _CACHE_LOCK:
                if len(_CACHE) >= _CACHE_SIZE:
                    _CACHE.pop(next(iter(_CACHE)))
                _CACHE[key] = built
        return built

    @classmethod
    def builtin_path(cls, name: str = "ru") -> Path:
        """The folder of the built-in prompt set ``name`` (``"ru"``, ``"en"``, ``"ru-compact"``,
        ``"en-compact"``) in the installed package: copy a template from it to start a folder of overrides.
        A compact folder holds only the templates it puts on top of its language's set."""
        if name not in PROMPT_SETS:
            raise ConfigError(f"unknown built-in prompt set {name!r}; choose one of {', '.join(PROMPT_SETS)}")
        return builtin_root() / name

    @classmethod
    def _build(cls, source: PromptSource, *, lang: str | None) -> PromptSet:
        builtin = isinstance(source, str) and source in PROMPT_SETS
        layer: str | None = None  # a built-in variant under the overrides: lang="en-compact"
        if not builtin and lang is not None and lang in PROMPT_SETS and "-" in lang:
            layer, lang = lang, lang.split("-", 1)[0]
        if builtin and "-" in str(source):  # "<lang>-<variant>": the variant's language is its base
            variant_lang = str(source).split("-", 1)[0]
            if lang is not None and lang != variant_lang:
                raise ConfigError(f"prompts={source!r} is a {variant_lang!r} set; lang={lang!r} contradicts it")
            lang = variant_lang
        base = lang or (source if builtin and source in LANGUAGES else "ru")
        if base not in LANGUAGES:
            raise ConfigError(f"unknown prompt language {base!r}; choose one of {', '.join(LANGUAGES)}")
        root = builtin_root() / base
        templates: dict[str, Template] = {}
        variables: dict[str, frozenset[str]] = {}
        for name, text in _read_folder(root).items():
            templates[name], variables[name] = _compile(name, text, str(root / f"{name}.jinja"))
        if layer is not None:
            for name, text in _read_folder(builtin_root() / layer).items():
                templates[name], variables[name] = _compile(name, text, str(builtin_root() / layer / f"{name}.jinja"))
        overrides: Mapping[str, str | BasePromptTemplate[Any]]
        if isinstance(source, BasePromptTemplate):
            overrides, origin = {"step": source}, "LangChain prompt template"
        elif isinstance(source, Mapping):
            overrides, origin = source, "prompts mapping"
        elif builtin and source in LANGUAGES:
            overrides, origin = {}, ""
        elif builtin:
            folder = builtin_root() / str(source)
            overrides, origin = _read_folder(folder), str(folder)
        else:
            folder = Path(os.fspath(source))
            if not folder.is_dir():
                raise ConfigError(
                    f"prompts={source!r} is neither a language or built-in prompt set ({', '.join(PROMPT_SETS)}) "
                    "nor a folder"
                )
            overrides, origin = _read_folder(folder), str(folder)
        for name, override in overrides.items():
            templates[name], variables[name] = _compile(name, override, origin)
        return cls(templates, lang=base, variables=variables)

    def uses(self, name: str, variable: str) -> bool:
        """Whether template ``name`` uses ``variable`` (``True`` when unknown: a set built without
        :meth:`load`)."""
        used = self._variables.get(name)
        return True if used is None else variable in used

    def render(self, name: str, **variables: Any) -> str:
        """Render template ``name`` to text (LangChain templates: their messages' text joined)."""
        template = self._templates[name]
        if isinstance(template, BasePromptTemplate):
            return "\n\n".join(str(m.content) for m in self.messages(name, **variables))
        return _render_jinja(name, template, variables)

    def split(self, name: str, variable: str, variables: Mapping[str, Any]) -> tuple[str, ...] | None:
        """Template ``name`` rendered with ``variables`` and cut where ``variable`` is written: joining the
        parts with any value of ``variable`` (then stripping) gives what :meth:`render` gives for it. So a
        prompt whose other variables stay the same is rendered once. ``None`` when that does not hold: a
        LangChain template, or one that does more with ``variable`` than write it as it is (``{{ x }}``)."""
        template = self._templates[name]
        if isinstance(template, BasePromptTemplate) or variable not in _PLAIN.get(template, ()):
            return None
        return tuple(_render_raw(name, template, {**variables, variable: _SLOT}).split(_SLOT))

    def render_item(self, name: str, item: Any) -> str | None:
        """The text template ``name`` writes for one ``item`` of its loop, when the template is one
        ``{% for x in items %}`` over a variable with only plain text around it and nothing in the loop's
        body but ``x`` and its parts (no ``loop``, no ``set``); ``None`` otherwise. :meth:`join_items` of
        these texts gives what :meth:`render` gives for the whole list, so each item is rendered once."""
        template = self._templates[name]
        loop = None if isinstance(template, BasePromptTemplate) else _LOOPS.get(template)
        if loop is None:
            return None
        return _render_raw(name, loop.item, {loop.target: item}, allowed=loop.names)

    def join_items(self, name: str, texts: list[str]) -> str:
        """What :meth:`render` gives for a non-empty list whose items :meth:`render_item` rendered to ``texts``."""
        loop = _LOOPS[cast(jinja2.Template, self._templates[name])]
        return (loop.head + "".join(texts) + loop.tail).strip()

    def messages(self, name: str, **variables: Any) -> list[BaseMessage]:
        """Render template ``name`` to chat messages (a jinja template gives one human message)."""
        template = self._templates[name]
        if isinstance(template, BasePromptTemplate):
            used = {k: variables[k] for k in template.input_variables}
            return template.format_prompt(**used).to_messages()
        return [HumanMessage(content=_render_jinja(name, template, variables))]


_CACHE: dict[Any, PromptSet] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 64


def _cache_key(source: PromptSource, lang: str | None) -> Any:
    """What identifies a compiled prompt set, or ``None`` when ``source`` cannot be keyed (LangChain templates)."""
    if isinstance(source, str) and source in PROMPT_SETS:
        return ("builtin", source, lang, builtin_root())
    if isinstance(source, Mapping):
        if all(isinstance(k, str) and isinstance(v, str) for k, v in source.items()):
            return ("mapping", tuple(sorted(source.items())), lang)
        return None
    if isinstance(source, (str, os.PathLike)):
        folder = Path(os.fspath(source))
        try:
            files = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.glob("*.jinja")))
        except OSError:
            return None
        return ("folder", str(folder.resolve()), lang, files) if folder.is_dir() else None
    return None


def _render_jinja(name: str, template: jinja2.Template, variables: Mapping[str, Any]) -> str:
    return _render_raw(name, template, variables).strip()


def _render_raw(name: str, template: jinja2.Template, variables: Mapping[str, Any], *,
                allowed: frozenset[str] | None = None) -> str:
    """``template.render(...)`` of the variables template ``name`` may use."""
    if allowed is None:
        _, allowed = TEMPLATE_VARIABLES[name]
    return template.render({key: value for key, value in variables.items() if key in allowed})


_PLAIN: weakref.WeakKeyDictionary[jinja2.Template, frozenset[str]] = weakref.WeakKeyDictionary()
"""For each compiled template: the variables it only ever writes as they are (see :meth:`PromptSet.split`)."""
_LOOPS: weakref.WeakKeyDictionary[jinja2.Template, _Loop] = weakref.WeakKeyDictionary()
"""For each compiled template that is one loop with plain text around it: its parts (see
:meth:`PromptSet.render_item`)."""
_SLOT = f"\x00{uuid.uuid4().hex}\x00"  # never in a prompt: NUL characters and a random part

# constructs that could change, test or re-bind a variable's text on its way out: no split past them
_OPAQUE = (nodes.Macro, nodes.CallBlock, nodes.FilterBlock, nodes.Include, nodes.Import, nodes.FromImport,
           nodes.Extends, nodes.Block, nodes.EvalContextModifier, nodes.With, nodes.Scope, nodes.OverlayScope)


def _written_as_is(tree: nodes.Node, variable: str, parent: nodes.Node | None = None) -> bool:
    """Whether every use of ``variable`` in the template ``tree`` is ``{{ variable }}``: never tested,
    filtered, compared, assigned, looped over or passed on."""
    if isinstance(tree, _OPAQUE):
        return False
    if isinstance(tree, nodes.Name) and tree.name == variable:
        return tree.ctx == "load" and isinstance(parent, nodes.Output)
    return all(_written_as_is(child, variable, tree) for child in tree.iter_child_nodes())


@dataclass(frozen=True)
class _Loop:
    head: str  # the text before the loop
    tail: str  # the text after it
    target: str  # the loop variable
    names: frozenset[str]  # {target}
    item: jinja2.Template  # the loop's body as a template of ``target``


def _loop_of(tree: nodes.Template) -> _Loop | None:
    """The parts of a template that is one ``{% for x in items %}`` (no filter, not recursive) with plain
    text around it and a body that uses nothing but ``x`` (no ``loop``, no ``set``, no macros); else ``None``."""
    fors = [i for i, node in enumerate(tree.body) if isinstance(node, nodes.For)]
    if len(fors) != 1:
        return None
    at = fors[0]
    loop = tree.body[at]
    assert isinstance(loop, nodes.For)
    if (not isinstance(loop.target, nodes.Name) or not isinstance(loop.iter, nodes.Name) or loop.test is not None
            or loop.recursive):
        return None
    head, tail = _plain_text(tree.body[:at]), _plain_text(tree.body[at + 1:])
    body = nodes.Template(loop.body, lineno=1)
    body.set_environment(_ENV)
    if head is None or tail is None or any(True for _ in body.find_all((*_OPAQUE, nodes.Assign, nodes.AssignBlock))):
        return None
    if meta.find_undeclared_variables(body) - {loop.target.name}:  # ``loop``, the list itself, another variable
        return None
    item = _template(body)
    return _Loop(head, tail, loop.target.name, frozenset({loop.target.name}), item)


def _plain_text(body: list[nodes.Node]) -> str | None:
    """The text of template nodes that are only plain text (``None`` when any writes or does more)."""
    parts: list[str] = []
    for node in body:
        if not isinstance(node, nodes.Output) or not all(isinstance(n, nodes.TemplateData) for n in node.nodes):
            return None
        parts.extend(n.data for n in node.nodes)  # type: ignore[attr-defined]
    return "".join(parts)
