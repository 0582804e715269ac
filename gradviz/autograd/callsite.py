"""Whose code is running: the one place that decides whether a frame is gradviz's own.

A frame is gradviz's when its file is inside the gradviz package; every other frame is the
user's (their file, a library they called). A host, such as the inspector's runner, declares
its files with `register_host(path)`: its frames are gradviz's, and the frames outside the
innermost host frame (whatever called the host: the command line, click) are not the user's
either. The library a file runs on instead of the core (torch, under `--backend torch`) is
declared with `register_library(prefix)`: its frames are passed over as gradviz's are. So are
Python's standard library's: a tensor made inside `copy.deepcopy` (nn.TransformerEncoder
copying its layer) was made by the user's line that called it, and copy's frames name nothing.

Decisions are cached per code object, so a walk costs one dict lookup a frame. The caches are
keyed by id(code), not by the code object: a code object's hash is not cached by Python and
covers its constants (a module's holds every function and class body in it), so hashing the
user's `<module>` code took microseconds per lookup, on every op of a file's top level. The
code objects themselves are held in `_held`, so an id is never reused while it is a key.

    >>> from gradviz.autograd import callsite
    >>> callsite.user_site(1)[1] > 0        # this line is the user's
    True
"""

import contextlib
import dis
import os
import sys
import sysconfig
import threading
import traceback

__all__ = ["register_host", "register_library", "is_gradviz_file", "called_by_user",
           "user_frame", "line_at", "site_at", "user_site", "user_stack", "user_stacklevel",
           "maker", "maker_frame", "user_functions", "running_around", "frame_running",
           "call_keywords", "mark", "edit_frame", "called_within", "keeping_sites"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_hosts = ()             # folders (ending in os.sep) and files registered by register_host
_libraries = ()         # file name prefixes registered by register_library
_internal = {}          # id(code) -> True when it is gradviz's
_hosted = {}            # id(code) -> True when it is a host's
_held = {}              # id(code) -> code, for every code object whose id is a key above
_getframe = sys._getframe


def register_host(path):
    """Declare a file, or a folder of files, as a host of the user's code: the frames in it and
    every frame outside it are not the user's.

    >>> register_host(__file__)     # doctest: +SKIP
    """
    global _hosts
    path = os.path.abspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "")
    if path not in _hosts:
        _hosts = _hosts + (path,)
        _internal.clear()
        _hosted.clear()
        _public.clear()
        _held.clear()


def register_library(prefix):
    """Declare the files whose names start with prefix as a library the user's file runs on:
    its frames are never the user's, but unlike a host's they do not end the user's functions
    (a module's forward runs inside torch's Module.__call__).

    >>> register_library(os.path.dirname(os.__file__) + os.sep)     # doctest: +SKIP
    """
    global _libraries
    if prefix not in _libraries:
        _libraries = _libraries + (prefix,)
        _internal.clear()
        _public.clear()


def _is_host_file(filename):
    for h in _hosts:
        if filename == h or (h.endswith(os.sep) and filename.startswith(h)):
            return True
    return False


def is_gradviz_file(filename):
    """True for a file of the gradviz package or of a registered host."""
    return filename.startswith(_PKG_DIR) or _is_host_file(filename)


def _stdlib():
    """(the standard library's folder, the folders of packages installed inside it)."""
    paths = sysconfig.get_paths()
    return (os.path.join(paths["stdlib"], ""),
            tuple({os.path.join(paths[k], "") for k in ("purelib", "platlib")}))


_STDLIB, _SITE_PACKAGES = _stdlib()


def _is_stdlib(filename):
    return filename.startswith("<frozen ") or (filename.startswith(_STDLIB)
                                               and not filename.startswith(_SITE_PACKAGES))


def _inside(code):
    name = code.co_filename
    _held[id(code)] = code
    inside = _internal[id(code)] = is_gradviz_file(name) or name.startswith(_libraries) or \
        _is_stdlib(name)
    return inside


def _is_host(code):
    hosted = _hosted.get(id(code))
    if hosted is None:
        _held[id(code)] = code
        hosted = _hosted[id(code)] = _is_host_file(code.co_filename)
    return hosted


# How many runs read back the sites of the nodes they make (`Node._where`) without a tracer
# installed: the inspector's runner does (a failing node's line). A node finds its user's frame
# only when one may read it, a tracer or such a run: the walk costs about a tenth of a small
# op, which a plain program never reads back.
keep_sites = 0


@contextlib.contextmanager
def keeping_sites():
    """Nodes made inside keep their user's site (`Node._where`) with no tracer installed.

    >>> import gradviz as torch
    >>> with keeping_sites():
    ...     y = torch.ones(1, requires_grad=True) * 2
    >>> y.grad_fn._where[1] > 0
    True
    """
    global keep_sites
    keep_sites += 1
    try:
        yield
    finally:
        keep_sites -= 1


def user_frame(depth):
    """(code object, instruction offset) of the innermost frame outside gradviz, starting
    `depth` frames up (as sys._getframe counts them from user_frame: 1 is its caller); (None, 0)
    when none. `line_at` gives the line: a frame's f_lineno scans the code's line table, which
    cost a tenth of a small op when every node asked for it."""
    try:
        f = _getframe(depth)
    except ValueError:      # fewer frames than depth
        return None, 0
    internal = _internal
    while f is not None:
        code = f.f_code
        inside = internal.get(id(code))
        if inside is None:
            inside = _inside(code)
        if not inside:
            return code, f.f_lasti
        f = f.f_back
    return None, 0


class _Mark(threading.local):
    # This thread's mark (see mark): the code object of the frames it serves, and the user's
    # (code object, instruction offset) that those frames' edits are made by.
    code = None
    site = None


_mark = _Mark()


def mark(code, site):
    """Until the next mark on this thread, an in-place edit counted by a frame running code
    object `code` is made by `site`, the user's (code object, instruction offset), without a
    walk; returns the mark before, (None, None) when none, to be given back by the caller.

    A gradviz loop that runs none of the user's code (an optimizer's update of every
    parameter) marks its caller's frame once, so that its edits, seven frames below the
    user's `optimizer.step()` line, skip the walk there. The mark holds no frame and is this
    thread's only; an edit of any other frame (the user's own, a `__del__` run by the
    collector inside the loop, another thread's) still walks.

    >>> mark(None, None)
    (None, None)
    """
    before = _mark.code, _mark.site
    _mark.code, _mark.site = code, site
    return before


def edit_frame(depth):
    """user_frame(depth) for an in-place edit (1: the caller of edit_frame): this thread's
    mark when the frame `depth` up runs the marked code object."""
    m = _mark
    if m.code is not None and _getframe(depth).f_code is m.code:
        return m.site
    return user_frame(depth + 1)


def line_at(code, offset):
    """The line of the instruction at `offset` in code (a frame's f_lasti): its f_lineno."""
    return site_at(code, offset)[1]


def site_at(code, offset):
    """(filename, line) of the instruction at `offset` in code: one tuple per place, shared by
    every caller (an optimizer's line edits every parameter at every step)."""
    held = _sites.get(id(code))
    if held is None:
        held = _sites[id(code)] = (code, {})
    sites = held[1]
    site = sites.get(offset)
    if site is None:
        line = code.co_firstlineno if offset < 0 else next(
            (n for start, end, n in code.co_lines() if start <= offset < end), None)
        site = sites[offset] = (code.co_filename, line)
    return site


# id(code) -> (code, {offset: (filename, line)}): keyed by id, as the caches above (hashing a
# (code, offset) key hashed the code's constants, on every in-place edit of a file's top level)
_sites = {}


def called_by_user(depth, through=(), past_gradviz=False):
    """Whether the user's code made the call running now: the frame `depth` up (1: the caller
    of called_by_user), past the frames of the files in `through` (and gradviz's own, when
    past_gradviz), is the user's, not gradviz's nor a library's (torch registering its own
    hooks is not the user's file registering one)."""
    f = _getframe(depth)
    while f is not None and (f.f_code.co_filename in through or
                             past_gradviz and is_gradviz_file(f.f_code.co_filename)):
        f = f.f_back
    if f is None:
        return False
    inside = _internal.get(id(f.f_code))
    return not (_inside(f.f_code) if inside is None else inside)


def user_site(depth=1):
    """(filename, line) of the innermost frame outside gradviz, starting `depth` frames up
    (1: the caller of user_site), or None."""
    code, offset = user_frame(depth + 1)
    return None if code is None else site_at(code, offset)


def user_stack():
    """The forward stack for anomaly mode (traceback.FrameSummary list, outer first), without
    gradviz's own frames and without the frames of whatever called a host."""
    stack = traceback.extract_stack()[:-1]
    if _hosts:
        for i in range(len(stack) - 1, -1, -1):
            if _is_host_file(stack[i].filename):
                stack = stack[i + 1:]
                break
    return [fr for fr in stack if not is_gradviz_file(fr.filename)]


def running_around(frame):
    """The ids of frame's callers: the frames still running around it (frame itself is not
    one of them)."""
    running = set()
    f = frame.f_back
    while f is not None:
        running.add(id(f))
        f = f.f_back
    return running


def frame_running(code, depth):
    """The frame `depth` up (1: the caller of frame_running), or the one that called it, that
    runs code object `code`; None when neither does."""
    f = _getframe(depth)
    for _ in range(2):
        if f is None or f.f_code is code:
            return f
        f = f.f_back
    return None


def called_within(depth, code, between, outer, limit=5):
    """Whether the frame `depth` up (1: the caller of called_within) runs code object `code`
    and was called, through at most `limit` frames each running a code object whose id is in
    `between`, by frame `outer` (a frame of this thread, still running)."""
    f = _getframe(depth)
    if f.f_code is not code:
        return False
    for _ in range(limit):
        f = f.f_back
        if f is outer:
            return True
        if f is None or id(f.f_code) not in between:
            return False
    return False


def user_stacklevel():
    """The `stacklevel` for warnings.warn, called right where gradviz warns, that names the
    user's innermost frame as the warning's origin (as torch's warnings do)."""
    f = _getframe(1)
    level = 1
    while f is not None and (_internal.get(id(f.f_code)) or _inside(f.f_code)):
        f = f.f_back
        level += 1
    return level


def maker(depth, marker=None):
    """What is making something, starting `depth` frames up (1: the caller of maker): (the
    innermost gradviz function with a public name, (filename, line) of the user's code, the
    user's frame, the outermost gradviz frame running code object `marker` on the way, or
    None). With no user frame: (function, None, None, None)."""
    func, f, found = maker_frame(depth + 1, marker)
    if f is None:
        return func, None, None, None
    return func, (f.f_code.co_filename, f.f_lineno), f, found


def maker_frame(depth, marker=None):
    """maker's (function, the user's frame or None, the frame running `marker` or None); the
    frame's line is left to whoever needs it (`line_at(f.f_code, f.f_lasti)`, later)."""
    f = _getframe(depth)
    func = found = None
    public = _public
    while f is not None:
        code = f.f_code
        name = public.get(id(code))     # False: the user's; "": gradviz's, private; else its name
        if name is None:
            name = _public_name(code)
        if name is False:
            break
        if func is None and name:
            func = name
        if code is marker:
            found = f
        f = f.f_back
    return func, f, found


_public = {}            # id(code) -> False (the user's), "" (gradviz's, private) or its name


def _public_name(code):
    inside = _internal.get(id(code))
    if inside is None:
        inside = _inside(code)
    name = code.co_name
    name = _public[id(code)] = False if not inside else "" if name.startswith("_") else name
    return name


def user_functions(frame, stop=()):
    """The user's function frames from `frame` outwards ([] for gradviz's own), innermost
    first, up to a host frame or a frame whose id is in `stop`; module-level code and
    comprehensions (`<module>`, `<listcomp>`) are not functions and are passed over."""
    chain = []
    f = frame
    while f is not None and not _is_host(f.f_code):
        if id(f) in stop:
            break
        code = f.f_code
        inside = _internal.get(id(code))
        if inside is None:
            inside = _inside(code)
        if not inside and not code.co_name.startswith("<"):
            chain.append(f)
        f = f.f_back
    return chain


def call_keywords(depth):
    """The names passed by keyword in the call that the frame `depth` levels up is making
    (1: the caller of the function calling this one), read off its bytecode: the KW_NAMES
    before the call, or the names CALL_KW takes; () when none or unknown (`f(**d)`). For a
    function written in Python that words torch's parser error, which gives no position for an
    argument passed by keyword: read only once a call has failed."""
    frame = _getframe(depth + 1)
    code = frame.f_code
    before = [ins for ins in dis.get_instructions(code) if ins.offset <= frame.f_lasti]
    call = before.pop()     # the call being made
    while before and before[-1].opname == "PRECALL":
        before.pop()
    if not before:
        return ()
    last = before[-1]
    if call.opname == "CALL_KW" and type(last.argval) is tuple:
        return last.argval                  # Python 3.13
    return code.co_consts[last.arg] if last.opname == "KW_NAMES" else ()
