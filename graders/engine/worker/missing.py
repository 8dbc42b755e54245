"""A failing import costs only what uses it: placeholders for the packages the grader lacks.

Learners copy the imports of their notebooks into their files (``import seaborn as sns``, ``from google.colab
import drive``); a package the grading machine lacks made the whole file fail to load, and every exercise of
it scored 0. While a worker's child loads a learner file (:meth:`graders.engine.worker.child.Child.load`),
:class:`MissingPackages` sits last on ``sys.meta_path``: an import that no other finder can satisfy, of a
package the kit does not forbid, gets a placeholder module instead of ``ModuleNotFoundError``. While the file
loads, a placeholder absorbs what the file's top level does with it (``sns.set_theme()``,
``drive.mount("/content/drive")``: each gives another placeholder, is false, iterates as empty); once the
file has loaded, any use of one (a call, an attribute, arithmetic, iteration) raises ``ModuleNotFoundError``
naming the package and the line of the file that imported it, so only the functions that use the package
lose their checks, and their feedback says which line to remove.

The placeholders are the learner's own process's business: nothing in them is trusted, and the grader
learns of them only through the exceptions the learner's functions raise.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

from graders.engine.values.kit_messages import kit_message, kit_text

class MissingPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The last finder while a learner file loads (see the module's docstring). ``forbidden``: top-level names
    that never get a placeholder (the kit's own packages: their refusal stays a refusal); ``learner_file``:
    the path whose line numbers the messages quote."""

    def __init__(self, forbidden: set[str], learner_file: str) -> None:
        self.forbidden = set(forbidden)
        self.learner_file = learner_file
        self.loading = True
        self.made: dict[str, str] = {}  # placeholder module name -> where it was imported ("file.py, line N")

    # -- the finder -------------------------------------------------------
    def find_spec(self, fullname, path=None, target=None):  # noqa: ARG002 - the finder protocol
        if not self.loading or fullname.partition(".")[0] in self.forbidden:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _PlaceholderModule(spec.name, self, self.made.get(spec.name.partition(".")[0]) or self._where())
        self.made[spec.name] = module._where
        return module

    def exec_module(self, module) -> None:
        module.__path__ = []  # a package: ``from google.colab import drive`` finds its submodules here too

    def _where(self) -> str:
        """``<file>, line <n>`` of the learner file's frame that is importing now (the deepest one)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.learner_file:
                return f"{self.learner_file.rsplit('/', 1)[-1]}, line {frame.f_lineno}"
            frame = frame.f_back
        return self.learner_file.rsplit("/", 1)[-1]

    def fail(self, name: str, where: str):
        """The error a placeholder raises once the file has loaded (what it says travels as data:
        :mod:`graders.engine.values.kit_messages`)."""
        kit = kit_message("missing_package", what=f"{name.partition('.')[0]} ({where})")
        error = ModuleNotFoundError(kit_text(kit, "en"), name=name)
        error.kit_said = kit
        return error


class _PlaceholderModule(types.ModuleType):
    """A missing package's module: its attributes are :class:`Placeholder` values (see the module's docstring)."""

    def __init__(self, name: str, finder: MissingPackages, where: str) -> None:
        super().__init__(name)
        self._finder, self._where = finder, where

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        if not self._finder.loading:
            raise self._finder.fail(self.__name__, self._where)
        return Placeholder(f"{self.__name__}.{attribute}", self._finder, self._where)


class Placeholder:
    """A value from a missing package: absorbs what a file's top level does with it while the file loads,
    raises ``ModuleNotFoundError`` on any use afterwards."""

    __slots__ = ("_name", "_finder", "_where")

    def __init__(self, name: str, finder: MissingPackages, where: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_finder", finder)
        object.__setattr__(self, "_where", where)

    def _use(self):
        finder = object.__getattribute__(self, "_finder")
        if not finder.loading:
            raise finder.fail(object.__getattribute__(self, "_name"), object.__getattribute__(self, "_where"))
        return self

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        self._use()
        return Placeholder(f"{object.__getattribute__(self, '_name')}.{attribute}",
                           object.__getattribute__(self, "_finder"), object.__getattribute__(self, "_where"))

    def __setattr__(self, attribute, value) -> None:
        self._use()

    def __call__(self, *args, **kwargs):
        return self._use()

    def __getitem__(self, key):
        return self._use()

    def __setitem__(self, key, value) -> None:
        self._use()

    def __iter__(self):
        self._use()
        return iter(())

    def __len__(self) -> int:
        self._use()
        return 0

    def __bool__(self) -> bool:
        self._use()
        return False

    def __enter__(self):
        return self._use()

    def __exit__(self, *exc) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<missing {object.__getattribute__(self, '_name')}>"

    def __mro_entries__(self, bases):  # ``class Net(missing.Module):`` at the top level: a plain base
        self._use()
        return (object,)


def _operator(name: str):
    def method(self, *args):
        return self._use()
    method.__name__ = name
    return method


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv", "mod",
              "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "lt", "le", "gt", "ge", "and", "or",
              "xor", "rand", "ror", "rxor", "lshift", "rshift", "invert"):
    setattr(Placeholder, f"__{_name}__", _operator(f"__{_name}__"))
