"""A shared drive (``list_files``, ``read_file``, ``create_folder``, ``move_file``, ``delete_file``,
``share_file``); paths are absolute, ``/`` separated, ``/`` being the drive's root."""

from __future__ import annotations

import re
from typing import Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, suite_tool

NAME = "files"

Access = Literal["view", "edit"]
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class ListFiles(BaseModel):
    folder: str = "/"


class ReadFile(BaseModel):
    path: str = Field(min_length=1)


class CreateFolder(BaseModel):
    path: str = Field(min_length=1)


class MoveFile(BaseModel):
    source: str = Field(min_length=1)
    destination: str = Field(min_length=1)


class DeleteFile(BaseModel):
    path: str = Field(min_length=1)


class ShareFile(BaseModel):
    path: str = Field(min_length=1)
    email: str = Field(min_length=3)
    access: Access = "view"


def absolute(path: str) -> str:
    """``path`` as an absolute drive path: a leading ``/``, no trailing one, no empty parts."""
    parts = [p for p in path.strip().split("/") if p]
    return "/" + "/".join(parts)


def _folders(store: Store) -> set[str]:
    folders = {absolute(f) for f in store.table("folders")}
    for path in store.table("files"):
        parts = absolute(path).split("/")[1:-1]
        folders.update("/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return folders | {"/"}


def _file(store: Store, path: str) -> str:
    wanted = absolute(path)
    for name in store.table("files"):
        if absolute(name) == wanted:
            return str(name)
    raise SuiteToolError(store, "file_unknown", path=path)


def list_files(store: Store, folder: str = "/") -> list[str]:
    where = absolute(folder)
    if where not in _folders(store):
        raise SuiteToolError(store, "folder_unknown", path=folder)
    prefix = where.rstrip("/") + "/"
    entries = {prefix + absolute(p)[len(prefix):].split("/")[0] for p in [*store.table("files"), *_folders(store)]
               if absolute(p).startswith(prefix) and absolute(p) != where}
    return sorted(entries)


def read_file(store: Store, path: str) -> str:
    return str(store.table("files")[_file(store, path)])


def create_folder(store: Store, path: str) -> dict[str, str]:
    where = absolute(path)
    if where in _folders(store):
        raise SuiteToolError(store, "folder_exists", path=path)
    store.table("folders").append(where)
    return {"created": where}


def move_file(store: Store, source: str, destination: str) -> dict[str, str]:
    name = _file(store, source)
    target = absolute(destination)
    if target in _folders(store):
        target = target.rstrip("/") + "/" + absolute(name).rsplit("/", 1)[-1]
    files = store.table("files")
    files[target] = files.pop(name)
    return {"moved": absolute(name), "to": target}


def delete_file(store: Store, path: str) -> dict[str, str]:
    name = _file(store, path)
    del store.table("files")[name]
    return {"deleted": absolute(name)}


def share_file(store: Store, path: str, email: str, access: str = "view") -> dict[str, str]:
    name = _file(store, path)
    if not _EMAIL.match(email):
        raise SuiteToolError(store, "email_invalid", email=email)
    share = {"path": absolute(name), "email": email, "access": access}
    store.table("shares").append(share)
    return share


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "list_files", list_files, ListFiles),
        suite_tool(store, "read_file", read_file, ReadFile),
        suite_tool(store, "create_folder", create_folder, CreateFolder),
        suite_tool(store, "move_file", move_file, MoveFile),
        suite_tool(store, "delete_file", delete_file, DeleteFile),
        suite_tool(store, "share_file", share_file, ShareFile),
    ]
