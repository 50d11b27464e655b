"""Writing output files safely: never half-written, never over a user's file without consent."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from mlsched.errors import UsageError


def write_text_atomic(path: str | Path, text: str, *, force: bool = False) -> Path:
    """Write ``text`` to ``path`` with :func:`write_atomic`."""
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)

    return write_atomic(path, write, force=force)


def write_atomic(path: str | Path, write: Callable[[str], None], *, force: bool = False) -> Path:
    """Have ``write`` fill a temporary file beside ``path``, then rename it into place.

    An interrupted write leaves the old file (or nothing) behind, never a truncated one. An
    existing file is replaced only when ``force`` is true. The file gets the permissions a plain
    ``open`` would give it (0666 less the umask), not the temporary file's private 0600. Without
    ``force`` the check is made at start and again at the final step (an exclusive link), so a
    file created meanwhile is kept; a dangling symbolic link counts as existing.
    """
    target = Path(path)
    if os.path.lexists(target) and not force:
        raise _exists(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        if force:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise _exists(target) from None
            os.unlink(tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _exists(target: Path) -> UsageError:
    return UsageError(f"{target}: exists; pass --force (force=True) to overwrite it")


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
