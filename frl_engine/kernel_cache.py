"""Drop the compiled kernels' on-disk cache when the engine's kernel sources change.

numba caches each compiled kernel (``cache=True``) in ``frl_engine/__pycache__`` and checks only the
source file that defines it.  A kernel that calls or inlines a kernel of another file (the sampler's
list moves inline :func:`frl_engine.bits.capture_counts_from`) keeps its old machine code when only that
other file changes.  After ``git pull`` on an editable install (how ``make run`` installs) the engine would
then run old code in some kernels and new code in others, silently.  So on import the package hashes the
source of every module that defines kernels and, when the hash differs from the one stored next to the
cache, deletes the cached kernels: they are compiled again on first use (``python -m frl_engine.warmup``
does that at install).  Nothing else is touched; a read-only install (where numba caches elsewhere and
an upgrade rewrites every file) is left alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

STAMP_NAME = "frl_kernels.sha256"
_KERNEL_MARK = b"numba.njit"


def kernel_sources_digest(package_dir: Path) -> str:
    """SHA-256 of the sources of the modules in ``package_dir`` that define compiled kernels, in name order."""
    digest = hashlib.sha256()
    for path in sorted(Path(package_dir).glob("*.py")):
        source = path.read_bytes()
        if _KERNEL_MARK in source:
            digest.update(path.name.encode() + b"\0" + source + b"\0")
    return digest.hexdigest()


def drop_stale_kernels(package_dir: Path | None = None) -> bool:
    """Delete ``package_dir/__pycache__``'s cached kernels (``*.nbi``, ``*.nbc``) if the kernel sources changed
    since they were stamped, and stamp the current sources.  Returns True when kernels were deleted."""
    package_dir = Path(__file__).resolve().parent if package_dir is None else Path(package_dir)
    cache = package_dir / "__pycache__"
    stamp = cache / STAMP_NAME
    try:
        digest = kernel_sources_digest(package_dir)
        if stamp.exists() and stamp.read_text() == digest:
            return False
        stale = [*cache.glob("*.nbi"), *cache.glob("*.nbc")] if cache.is_dir() else []
        for path in stale:
            path.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
        return bool(stale)
    except OSError:   # a read-only install: numba caches elsewhere, and an upgrade rewrites every file
        return False
