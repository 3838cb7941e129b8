"""plansim: the plansim simulator from Python, through libplansim (ctypes).

Each function runs one command of the plansim program on keyword
arguments, its flags (docs/python.md, docs/api.md):

    import plansim
    r = plansim.simulate(model="llama3-8b", cluster="dgx-h100", nodes=1, tp=2)
    r["step_time_s"]

A keyword is a flag without its "--", "_" for "-" (micro_batch_size=2 is
--micro-batch-size 2); True is the flag alone, a list its values joined by
commas (a sweep's axis: tp=[2, 4, 8]), None the default. The answers are
the program's JSON, parsed: simulate and run return its report (a dict),
collective its table, sweep the ranked plans that fit (a list of dicts,
the best first), as a pandas DataFrame when pandas is installed (frame=
fixes the type). A bad input, no plan that fits or a cancelled sweep raises
plansim.Error with the program's message and exit status.

The library is found, in order: $PLANSIM_LIBRARY (a path); the build
tree's src/.libs beside this folder's parent (python/plansim in the source
tree), or beside this folder (the build tree's link to it, `plansim` at
its top); libdir.txt beside this file (written by make install); the
system's libplansim.so.0.
"""

import ctypes
import json
import os

__all__ = ["Error", "Cancel", "simulate", "sweep", "run", "collective", "version"]


class Error(Exception):
    """A call the program would end with a non-zero exit status: `status`
    (2 bad input, 3 no plan fits, 1 an output not written, 130
    cancelled), `message` (its error line, without "plansim: ") and `log`
    (all it would write to standard error)."""

    def __init__(self, status, message, log):
        super().__init__(message)
        self.status = status
        self.message = message
        self.log = log


def _library_paths():
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("PLANSIM_LIBRARY"):
        yield os.environ["PLANSIM_LIBRARY"]
    yield os.path.join(here, os.pardir, os.pardir, "src", ".libs", "libplansim.so")
    # the build tree's link to this folder: its parent taken by name, not
    # through the link (which leads to the source tree)
    yield os.path.normpath(os.path.join(here, os.pardir, "src", ".libs", "libplansim.so"))
    try:
        with open(os.path.join(here, "libdir.txt"), encoding="utf-8") as f:
            yield os.path.join(f.read().strip(), "libplansim.so.0")
    except OSError:
        pass
    yield "libplansim.so.0"


def _load():
    tried = []
    for path in _library_paths():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        out = ctypes.POINTER(ctypes.c_char_p)
        for name in ("plansim_simulate", "plansim_run", "plansim_collective"):
            getattr(lib, name).argtypes = [ctypes.c_char_p, out, out]
            getattr(lib, name).restype = ctypes.c_int
        lib.plansim_sweep.argtypes = [ctypes.c_char_p, ctypes.c_void_p, out, out]
        lib.plansim_sweep.restype = ctypes.c_int
        lib.plansim_free.argtypes = [ctypes.c_char_p]
        lib.plansim_version.restype = ctypes.c_char_p
        lib.plansim_cancel_new.restype = ctypes.c_void_p
        lib.plansim_cancel_request.argtypes = [ctypes.c_void_p]
        lib.plansim_cancel_free.argtypes = [ctypes.c_void_p]
        return lib
    raise ImportError("plansim: libplansim not found; tried " + ", ".join(tried) +
                      " (set PLANSIM_LIBRARY to its path)")


_lib = _load()


def version():
    """The library's version, as plansim --version gives it."""
    return _lib.plansim_version().decode()


class Cancel:
    """A token another thread cancels a sweep with: pass it as
    sweep(..., cancel=token), then token.cancel() from anywhere."""

    def __init__(self):
        self._token = _lib.plansim_cancel_new()
        if not self._token:
            raise MemoryError("plansim: no cancellation token")

    def cancel(self):
        _lib.plansim_cancel_request(self._token)

    def __del__(self):
        # at the interpreter's exit the module's globals may be gone first
        if getattr(self, "_token", None) and _lib is not None:
            _lib.plansim_cancel_free(self._token)
            self._token = None


def _call(command, flags, cancel=None):
    """Runs `command` on `flags` (a dict); returns its output's text, or
    raises Error. The request keeps the keywords' order."""
    request = json.dumps(flags).encode()
    output, log = ctypes.c_char_p(), ctypes.c_char_p()
    if command == "sweep":
        status = _lib.plansim_sweep(request, cancel._token if cancel else None,
                                    ctypes.byref(output), ctypes.byref(log))
    else:
        status = getattr(_lib, "plansim_" + command)(request, ctypes.byref(output),
                                                     ctypes.byref(log))
    text, messages = output.value.decode(), log.value.decode()
    _lib.plansim_free(output)
    _lib.plansim_free(log)
    if status != 0:
        lines = messages.splitlines() or ["plansim: exit status %d" % status]
        message = lines[-1]
        if message.startswith("plansim: "):
            message = message[len("plansim: "):]
        raise Error(status, message, messages)
    return text


def _parsed(text):
    """JSON output as Python values; other formats' text as it is."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def simulate(**flags):
    """One training step's report (`plansim simulate --format json`), a
    dict; format="text" or "csv" returns that text instead."""
    return _parsed(_call("simulate", flags))


def run(**flags):
    """A whole training run's report (`plansim run --format json`; needs
    tokens=...), a dict."""
    return _parsed(_call("run", flags))


def collective(**flags):
    """One collective's table at many sizes (`plansim collective --format
    json`)."""
    return _parsed(_call("collective", flags))


def sweep(cancel=None, frame=None, **flags):
    """The ranked plans that fit (`plansim sweep -o - --format json`), the
    best first, the sweep's CSV columns as keys: a pandas DataFrame when
    pandas is installed, else a list of dicts; frame=False always gives the
    list, frame=True always the DataFrame (pandas must be installed).
    `cancel`: a plansim.Cancel another thread may stop the sweep with."""
    rows = _parsed(_call("sweep", flags, cancel))
    if frame is None:
        try:
            import pandas  # optional
        except ImportError:
            return rows
    elif not frame:
        return rows
    import pandas

    return pandas.DataFrame(rows)
