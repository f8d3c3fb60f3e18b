"""The compiled kernels' cache is dropped when, and only when, the engine's kernel sources change.

numba checks only the file that defines a kernel, so a kernel inlining another file's kernel would keep
that file's old code after an update of it alone (frl_engine/kernel_cache.py)."""

import subprocess
import sys
from pathlib import Path

from frl_engine.kernel_cache import STAMP_NAME, drop_stale_kernels, kernel_sources_digest

KERNEL = "import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n"


def _package(tmp_path) -> Path:
    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    (package / "kernels.py").write_text(KERNEL)
    (package / "other.py").write_text("VALUE = 1\n")
    return package


def _cached(package: Path, *names: str) -> None:
    for name in names:
        (package / "__pycache__" / name).write_bytes(b"compiled")


def _left(package: Path) -> set:
    return {p.name for p in (package / "__pycache__").iterdir() if p.suffix in (".nbi", ".nbc")}


def test_kernels_cached_against_other_sources_are_dropped_once(tmp_path):
    package = _package(tmp_path)
    _cached(package, "kernels.f-3.py311.nbi", "kernels.f-3.py311.1.nbc", "other.pyc.nbc")
    (package / "__pycache__" / "kernels.cpython-311.pyc").write_bytes(b"bytecode")
    assert drop_stale_kernels(package) is True   # no stamp yet: nothing says what they were compiled from
    assert _left(package) == set()
    assert (package / "__pycache__" / "kernels.cpython-311.pyc").exists()   # only numba's files
    assert (package / "__pycache__" / STAMP_NAME).read_text() == kernel_sources_digest(package)
    # compiled again from these sources: kept on every later import
    _cached(package, "kernels.f-3.py311.nbi", "kernels.f-3.py311.1.nbc")
    assert drop_stale_kernels(package) is False and drop_stale_kernels(package) is False
    assert _left(package) == {"kernels.f-3.py311.nbi", "kernels.f-3.py311.1.nbc"}


def test_a_change_to_a_module_without_kernels_keeps_them_and_one_to_any_kernel_module_drops_them(tmp_path):
    package = _package(tmp_path)
    drop_stale_kernels(package)
    _cached(package, "kernels.f-3.py311.nbi", "kernels.f-3.py311.1.nbc")
    (package / "other.py").write_text("VALUE = 2\n")
    assert drop_stale_kernels(package) is False and len(_left(package)) == 2
    (package / "helpers.py").write_text(KERNEL.replace("x + 1", "x + 2"))   # a kernel module changed or added
    assert drop_stale_kernels(package) is True and _left(package) == set()
    _cached(package, "kernels.f-3.py311.nbi")
    (package / "kernels.py").write_text(KERNEL.replace("x + 1", "x - 1"))
    assert drop_stale_kernels(package) is True and _left(package) == set()


def test_a_cache_that_cannot_be_written_is_left_alone(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "kernels.py").write_text(KERNEL)
    (package / "__pycache__").write_text("not a directory")   # no cache here can be made (even as root)
    assert drop_stale_kernels(package) is False   # no error, nothing deleted
    assert (package / "__pycache__").read_text() == "not a directory"


def test_importing_the_engine_keeps_the_warmed_up_kernels():
    import frl_engine

    package = Path(frl_engine.__file__).parent
    cache = package / "__pycache__"
    assert (cache / STAMP_NAME).read_text() == kernel_sources_digest(package)
    before = sorted(p.name for p in cache.glob("*.nb[ic]"))
    result = subprocess.run([sys.executable, "-c", "import frl_engine"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in cache.glob("*.nb[ic]")) == before and before
