# gputrace's start-up hook for `gputrace run --pytorch`: switches on PyTorch's NVTX ranges
# (torch.autograd.profiler.emit_nvtx) once the program has imported torch, so that every
# operator is a range on its thread. Runs in the traced Python program, imported by its
# `site` module at start-up because `gputrace run --pytorch` puts this folder first on
# PYTHONPATH; GPUTRACE_PYTORCH says what to do (on, or shapes for record_shapes=True).
# Without the CLI: PYTHONPATH=<this folder> GPUTRACE_PYTORCH=shapes. docs/cli.md, "PyTorch
# operators: --pytorch".
#
# What it keeps to: it never imports torch itself (a finder on sys.meta_path waits for the
# program's own import); it runs any other sitecustomize the program would have run; it
# leaves sys.path as it would have been; it never initializes CUDA (emit_nvtx's own
# torch.cuda.synchronize() is skipped when it is entered); a failure is one line on standard
# error and the program runs on without the ranges.

import os
import sys

_MODES = {"1": False, "on": False, "yes": False, "true": False, "shapes": True}
_OFF = ("", "0", "off", "no", "none", "false")
_entered = []  # the emit_nvtx contexts entered, kept alive for the life of the process


def _warn(what):
    sys.stderr.write("gputrace: --pytorch: %s\n" % what)


class _Cuda:
    """torch.cuda as emit_nvtx's __enter__ sees it: synchronize() does nothing."""

    def __init__(self, cuda):
        self._cuda = cuda

    def synchronize(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return getattr(self._cuda, name)


class _Torch:
    """torch as emit_nvtx's __enter__ sees it: the real one but for torch.cuda."""

    def __init__(self, torch):
        self._torch = torch
        self.cuda = _Cuda(getattr(torch, "cuda", None))

    def __getattr__(self, name):
        return getattr(self._torch, name)


def _without_sync(method, ctx, *args):
    """Run one of emit_nvtx's methods with its own globals but for `torch`, which it sees
    through _Torch: its torch.cuda.synchronize() would initialize CUDA at import time.
    Nothing global is changed, so other threads' synchronize() calls are untouched."""
    import types

    scope = dict(method.__globals__)
    scope["torch"] = _Torch(sys.modules["torch"])
    return types.FunctionType(method.__code__, scope, method.__name__, method.__defaults__,
                              method.__closure__)(ctx, *args)


def _enter(shapes, quiet):
    """Enter emit_nvtx on the calling thread (torch's NVTX profiler state is per thread);
    returns the context, or None."""
    try:
        import torch.autograd.profiler as profiler

        ctx = profiler.emit_nvtx(record_shapes=shapes)
        _without_sync(type(ctx).__enter__, ctx)
        return ctx
    except Exception as e:  # noqa: BLE001 - the program runs on whatever happened
        if not quiet:
            _warn("PyTorch's NVTX ranges could not be switched on: %s" % e)
        return None


class _ThreadExit:
    """Held in a threading.local: dropped, in the thread itself, when the thread ends, when
    it leaves emit_nvtx (else torch warns of a leaked callback handle as the thread's state
    goes)."""

    __slots__ = ("ctx",)

    def __init__(self, ctx):
        self.ctx = ctx

    def __del__(self):
        try:
            _without_sync(type(self.ctx).__exit__, self.ctx, None, None, None)
        except Exception:  # noqa: BLE001 - nothing to tell at a thread's end
            pass


def _cover_threads(shapes):
    """Threads started through `threading` enter emit_nvtx too, before their run(), and
    leave it when they end."""
    import threading

    getprofile = getattr(threading, "getprofile", None)
    previous = getprofile() if getprofile else getattr(threading, "_profile_hook", None)
    held = threading.local()

    def hook(frame, event, arg):
        sys.setprofile(previous)
        ctx = _enter(shapes, True)
        if ctx is not None:
            held.exit = _ThreadExit(ctx)
        if previous is not None:
            return previous(frame, event, arg)
        return None

    threading.setprofile(hook)


def _switch_on(shapes):
    ctx = _enter(shapes, False)
    if ctx is not None:
        _entered.append(ctx)
        _cover_threads(shapes)


class _Loader:
    """torch's own loader, which switches the ranges on once torch's import has run."""

    def __init__(self, loader, shapes):
        self._loader = loader
        self._shapes = shapes

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        spec = getattr(module, "__spec__", None)
        try:
            self._loader.exec_module(module)
        finally:
            # the module keeps the loader it would have had
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = self._loader
            if spec is not None and spec.loader is self:
                spec.loader = self._loader
        _switch_on(self._shapes)


class _Finder:
    """On sys.meta_path until the program imports torch: wraps torch's loader, once."""

    def __init__(self, shapes):
        self._shapes = shapes

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self._shapes)
        return spec


def _same(entry, folder):
    try:
        return os.path.samefile(entry or os.curdir, folder)
    except (OSError, ValueError):
        return False


def _chain(folder):
    """Run the sitecustomize the program would have run without this one, if any."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.origin is None or _same(os.path.dirname(spec.origin), folder):
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _main():
    folder = os.path.dirname(os.path.abspath(__file__))
    mode = os.environ.get("GPUTRACE_PYTORCH", "").strip().lower()
    # this folder leaves sys.path: the program sees the path it would have seen (children
    # still find it through PYTHONPATH)
    sys.path[:] = [p for p in sys.path if not _same(p, folder)]
    if mode not in _OFF:
        if mode not in _MODES:
            _warn("GPUTRACE_PYTORCH=%s is not valid; use on or shapes" % mode)
        elif "torch" in sys.modules:
            _switch_on(_MODES[mode])
        else:
            sys.meta_path.insert(0, _Finder(_MODES[mode]))
    _chain(folder)


_main()
