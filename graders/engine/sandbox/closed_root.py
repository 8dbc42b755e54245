"""The closed root: a minimal file tree becomes a worker child's ``/`` (step 2 of :func:`graders.engine.sandbox.confine.confine`).

:func:`readable_roots` is the allow-list learner code may read (never "the kit minus a deny list");
:func:`enter_closed_root` binds it read-only and the scratch folder read-write under an empty folder,
keeping each mount's locked flags, and pivots into it, in the child's own mount namespace.
"""

from __future__ import annotations

import ctypes
import os
import site
import sys
import sysconfig
from pathlib import Path

from graders.engine.sandbox.libc import libc as _libc


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 0x20, 0x1000, 0x4000, 0x400, 0x800, 1 << 21
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine if hasattr(os, "uname") else "", 155)
SYSTEM_READ_ONLY = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share/zoneinfo",
                    "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
                    "/dev/urandom", "/dev/random", "/dev/zero",
                    # the CPU's description: math libraries size their kernels by it (other numbers without it)
                    "/proc/cpuinfo", "/sys/devices/system/cpu")
SYSTEM_READ_WRITE = ("/dev/null",)


def readable_roots(closed: list[str]) -> list[str]:
    """What learner code may read (and map as code): an allow-list, never "the kit minus a deny list".

    The interpreter's standard library (with ``lib-dynload``), its site-packages (the venv's and, where the
    venv sees them, the base interpreter's), its shared library (``libpython``, where it has one), and the system
    libraries and files of :data:`SYSTEM_READ_ONLY`; a ``closed`` hierarchy inside one of them (the kit's
    own packages, when the kit is installed into site-packages) is cut out, its siblings opened up one
    by one. The kit checkout, earlier output folders, ``/tmp`` and the home folder are not on the list,
    whatever the import path says: the child's given modules and learner files are copied into its
    scratch folder, and everything else it runs was imported before it was confined.
    """
    closed_real = [os.path.realpath(p) for p in closed]
    paths = sysconfig.get_paths()
    candidates = [paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    candidates += [os.path.join(paths.get("stdlib", ""), "lib-dynload"), *site.getsitepackages()]
    roots: list[str] = []
    library = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
    if os.path.isfile(library):  # libpython, for a shared-library build (the file alone)
        roots.append(os.path.realpath(library))
    for candidate in dict.fromkeys(os.path.realpath(p) for p in candidates if p and os.path.isdir(p)):
        roots += _open_up(candidate, closed_real, depth=0)
    for path in SYSTEM_READ_ONLY:
        if os.path.exists(path):
            roots += _open_up(os.path.realpath(path), closed_real, depth=0)
    roots += import_roots(closed_real)
    return sorted(dict.fromkeys(roots))


def import_roots(closed_real: list[str]) -> list[str]:
    """The import-path folders that hold a package this interpreter has imported, wherever they are.

    A layered environment reaches packages through more than the interpreter's own site-packages (a
    ``.pth`` path to another venv's, an editable install elsewhere): a preloaded package's lazily
    imported parts (``numpy.random``) must stay readable. For each imported top-level module, the
    ``sys.path`` entry that holds it is allowed whole (its sibling ``.libs`` folders too) unless a closed
    path lies inside it (the kit checkout on ``PYTHONPATH``): then only that package's own folder, and
    never a package inside a closed path (the kit's own ``graders``).
    """
    entries = sorted({os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}, key=len, reverse=True)
    found: list[str] = []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) if "." not in name else None
        if not isinstance(where, str) or not os.path.isabs(where):
            continue
        place = os.path.realpath(os.path.dirname(where) if getattr(module, "__path__", None) else where)
        if any(_under(place, c) for c in closed_real):
            continue
        holder = next((e for e in entries if _under(place, e)), None)
        if holder is None:
            continue  # not from the import path (the standard library's frozen modules, say)
        if any(_under(holder, c) or _under(c, holder) for c in closed_real):
            found.append(place)
        else:
            found.append(holder)
    return list(dict.fromkeys(found))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _open_up(path: str, forbidden: list[str], depth: int) -> list[str]:
    if any(_under(path, f) for f in forbidden):
        return []
    if not any(_under(f, path) for f in forbidden):
        return [path]
    if depth > 6:
        return []
    try:
        children = sorted(os.listdir(path))
    except OSError:
        return []
    found: list[str] = []
    for child in children:
        full = os.path.join(path, child)
        if os.path.islink(full):
            full = os.path.realpath(full)
        found += _open_up(full, forbidden, depth + 1)
    return found


def enter_closed_root(root: Path, read_only: list[str], read_write: list[str], keep: list[str] = ()) -> bool:
    """Make a minimal file tree this process's ``/``: only ``read_only`` (bound read-only) and ``read_write``.

    Needs the process's own mount namespace and ``CAP_SYS_ADMIN`` in its user namespace (the child has
    both until :func:`drop_capabilities`). A small ``tmpfs`` is mounted on ``root`` (an empty folder);
    each allowed path is bind-mounted at its own path inside it (files onto empty files), the symbolic
    links along the allowed paths and along ``keep`` (the import path as the interpreter spells it) are
    made again, ``/proc`` of the worker's PID namespace is bound too (Landlock narrows it to
    ``/proc/cpuinfo``), then ``pivot_root`` makes the tree ``/`` and the old root is detached. From then
    on the host's named sockets, ``/tmp``, ``/run``, the kit checkout and every earlier output folder do
    not exist for this process: nothing to connect to, read or list. The paths keep their names, so
    ``sys.path`` and the modules already imported stay valid. True when all of it took effect.
    """
    libc = _libc()
    if libc.mount(b"tmpfs", os.fsencode(root), b"tmpfs", ctypes.c_ulong(MS_NOSUID | MS_NODEV),
                  b"size=4m,mode=0755,nr_inodes=8192") != 0:
        return False
    top = str(root)
    bound: list[str] = []

    def visible(path: str) -> bool:
        return any(_under(path, done) for done in bound)

    def bind(source: str, writable: bool) -> bool:
        real = os.path.realpath(source)
        _mirror_links(top, source)
        if visible(real) or not os.path.exists(real):
            return True
        target = top + real
        _mirror_links(top, os.path.dirname(real))
        if os.path.isdir(real):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "ab").close()
        if libc.mount(os.fsencode(real), os.fsencode(target), None, ctypes.c_ulong(MS_BIND | MS_REC), None) != 0:
            return False
        if not writable:
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(real)
            if libc.mount(None, os.fsencode(target), None, ctypes.c_ulong(flags), None) != 0:
                return False
        bound.append(real)
        return True

    try:
        ok = all([bind(path, False) for path in sorted(read_only, key=lambda p: len(os.path.realpath(p)))]
                 + [bind(path, True) for path in read_write] + [bind("/proc", True)])
        for path in keep:
            _mirror_links(top, path)
        old = os.path.join(top, ".old-root")
        os.mkdir(old, 0o700)
        if not ok or libc.syscall(SYS_PIVOT_ROOT, os.fsencode(top), os.fsencode(old)) != 0:
            return False
        os.chdir("/")
        if libc.umount2(b"/.old-root", MNT_DETACH) != 0:
            return False
        os.rmdir("/.old-root")
        # the new root itself read-only: nothing can be created beside the bound paths
        return libc.mount(None, b"/", None, ctypes.c_ulong(MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV),
                          None) == 0
    except OSError:
        return False


def _mirror_links(top: str, path: str) -> None:
    """Make each symbolic link along ``path`` again under ``top`` (``/lib -> usr/lib``, a venv's ``lib64``)."""
    current = "/"
    for part in Path(path).parts[1:]:
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            inside = top + candidate
            if not os.path.lexists(inside):
                os.makedirs(os.path.dirname(inside), exist_ok=True)
                os.symlink(os.readlink(candidate), inside)
            current = os.path.realpath(candidate)
        else:
            current = candidate


def _locked_flags(path: str) -> int:
    """The mount flags of ``path``'s mount that a bind remount must keep (the kernel refuses to drop
    ``nosuid``, ``nodev``, ``noexec`` or the access-time mode of a mount inherited from another namespace)."""
    try:
        found = os.statvfs(path).f_flag
    except OSError:
        return 0
    flags = 0
    for st_flag, ms_flag in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                             (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                             (os.ST_RELATIME, MS_RELATIME)):
        if found & st_flag:
            flags |= ms_flag
    return flags
