"""torch.save and torch.load in PyTorch's own file format, so that files go both ways.

A file is what torch 2.13 writes: a zip archive (entries stored, data aligned to 64 bytes) with
`<name>/data.pkl`, a protocol-2 pickle whose tensors are `torch._utils._rebuild_tensor_v2`
calls over persistent storages `('storage', torch.FloatStorage, key, 'cpu', numel)`, and each
storage's bytes in `<name>/data/<key>`, little-endian. The pickle names torch's globals
(`torch._utils`, `torch.FloatStorage`, `torch.float32`, `torch.Size`, `torch.device`), which
gradviz writes without importing torch and maps back to its own objects on load. So a
state_dict saved by gradviz loads in PyTorch and the other way round.

`torch.load` unpickles with `weights_only=True` by default, as torch 2.6+ does: only tensors,
Parameters, containers, primitives, dtypes, Size, device and globals allowed through
`add_safe_globals` are accepted; anything else gets torch's "Weights only load failed" error.

Each tensor is saved with a storage of its own (the values in row-major order); torch keeps
views of one storage sharing it. The values, dtype, shape and requires_grad are the same. On
load, tensors over one storage share its memory, as in torch: an in-place edit of one shows
in the others (they are not views of each other: `_base` is None, as torch's).

>>> import io, gradviz as torch
>>> buf = io.BytesIO()
>>> torch.save({"w": torch.ones(2, requires_grad=True)}, buf)
>>> _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([1., 1.], requires_grad=True)}
"""

import collections
import contextlib
import io
import os
import pickle
import zipfile

import numpy as np

from . import _dtype
from ._tensor import Size, Tensor, _make, device

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_ALIGNMENT = 64
_HINT = "run with --backend torch to use PyTorch"

# torch's storage class for each dtype (the second field of a persistent storage id).
_STORAGE = {"float16": "HalfStorage", "float32": "FloatStorage", "float64": "DoubleStorage",
            "int8": "CharStorage", "int16": "ShortStorage", "int32": "IntStorage",
            "int64": "LongStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
_STORAGE_DTYPE = {v: k for k, v in _STORAGE.items()}

_UNSAFE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
           "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set "
           "to `False` will likely succeed, but it can result in arbitrary code execution. Do it "
           "only if you got the file from a trusted source.")
_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default "
         "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")

_safe_globals = []


def _not_implemented(what):
    return NotImplementedError(f"gradviz: {what} is not implemented by gradviz's core; {_HINT}")


# ----- save ------------------------------------------------------------------------------------

class _Global:
    """A global of torch's written into the pickle by name (gradviz never imports torch)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):     # pickle's save_reduce asks for a callable
        raise TypeError(f"{self.module}.{self.name} is only a name in a pickle")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")
_SIZE = _Global("torch", "Size")
_DEVICE = _Global("torch", "device")


class _Storage:
    """One tensor's values, saved as `<name>/data/<key>`."""

    def __init__(self, key, array):
        self.key, self.array = key, array


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, which lets torch's globals be written by name; tensors become
    torch's `_rebuild_tensor_v2` calls and their storages persistent ids, as torch writes them."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    def _save_dtype(self, obj):
        self._save_global_name(_Global("torch", obj.name))

    dispatch[_Global] = _save_global_name
    dispatch[_dtype.dtype] = _save_dtype

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return _SIZE, (tuple(obj),)
        if isinstance(obj, device):
            return _DEVICE, (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        from .nn.modules import Parameter
        if isinstance(t, Parameter):
            return _REBUILD_PARAMETER, (t.detach(), t.requires_grad, collections.OrderedDict())
        if type(t) is not Tensor:
            raise _not_implemented(f"torch.save of a Tensor subclass ({type(t).__name__})")
        array = np.asarray(t._data)
        if not array.flags.c_contiguous:
            array = array.copy(order="C")      # (np.ascontiguousarray makes 0-d 1-d)
        storage = _Storage(str(len(self.storages)), array)
        self.storages.append(storage)
        shape = tuple(array.shape)
        stride = tuple(s // array.itemsize for s in array.strides) if array.size else \
            _contiguous_strides(shape)
        return _REBUILD_TENSOR, (storage, 0, shape, stride, t.requires_grad,
                                 collections.OrderedDict())

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            kind = _Global("torch", _STORAGE[_dtype.from_numpy_dtype(obj.array.dtype).name])
            return ("storage", kind, obj.key, "cpu", obj.array.size)
        return None


def _contiguous_strides(shape):
    strides, n = [], 1
    for s in reversed(shape):
        strides.append(n)
        n *= max(s, 1)
    return tuple(reversed(strides))


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save obj (tensors, state_dicts, containers of them) to a path or a binary file object,
    in PyTorch's zip format: `torch.save(model.state_dict(), "model.pt")`."""
    if pickle_module is not pickle:
        raise _not_implemented("torch.save(pickle_module=...) other than pickle")
    if not _use_new_zipfile_serialization:
        raise _not_implemented("torch.save(_use_new_zipfile_serialization=False) (the legacy "
                               "format)")
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", data.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGNMENT).encode())]
    if not _disable_byteorder_record:
        records.append(("byteorder", b"little"))
    records += [(f"data/{s.key}", s.array.astype(s.array.dtype.newbyteorder("<")).tobytes())
                for s in pickler.storages]
    records += [("version", b"3\n"),
                (".data/serialization_id", str(int.from_bytes(os.urandom(16), "little"))
                 .zfill(40).encode())]
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as out:
            _write_zip(out, name, records)
    elif hasattr(f, "write"):
        _write_zip(f, "archive", records)
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")


def _write_zip(out, name, records):
    # Written through a buffer so that offsets are known (the file may not be seekable).
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for record, payload in records:
            info = zipfile.ZipInfo(f"{name}/{record}", date_time=(1980, 1, 1, 0, 0, 0))
            # torch aligns every record's data to 64 bytes with a padding extra field ('FB')
            header = 30 + len(info.filename.encode("utf-8"))
            pad = -(buf.tell() + header + 4) % _ALIGNMENT
            info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
            zf.writestr(info, payload)
    out.write(buf.getvalue())


# ----- load ------------------------------------------------------------------------------------

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    array, itemsize = storage, storage.itemsize
    # over the storage's memory, not a copy: tensors saved over one storage share it; one
    # whose elements overlap (a saved expand) is read-only, so that writing to it is refused
    # as torch refuses it
    overlapping = any(st == 0 and n > 1 for n, st in zip(size, stride))
    t = _make(np.lib.stride_tricks.as_strided(
        array[storage_offset:], shape=tuple(size), strides=tuple(s * itemsize for s in stride),
        writeable=not overlapping))
    # torch rebuilds a tensor with set_() on its storage, an in-place edit: a loaded tensor
    # (and a Parameter made of it) has _version 1
    t._version_counter().v += 1
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.modules import Parameter
    param = Parameter(data, requires_grad)
    param._version_counter().v = data._version       # torch's Parameter shares data's counter
    return param


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    for key, value in (state or {}).items():
        setattr(param, key, value)
    return param


class _StorageKind:
    def __init__(self, dtype):
        self.dtype = dtype


def _torch_globals():
    """torch's global names a weights-only file may hold, as gradviz's objects."""
    names = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
             ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
             ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
             ("torch", "Size"): Size, ("torch", "device"): device,
             ("collections", "OrderedDict"): collections.OrderedDict,
             ("collections", "Counter"): collections.Counter,
             ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
             ("builtins", "bytearray"): bytearray, ("builtins", "complex"): complex,
             ("builtins", "slice"): slice, ("builtins", "range"): range}
    for storage, dtype_name in _STORAGE_DTYPE.items():
        names[("torch", storage)] = _StorageKind(getattr(_dtype, dtype_name.replace(
            "bool", "bool_")))
    for dtype_name in _STORAGE:
        names[("torch", dtype_name)] = getattr(_dtype, dtype_name.replace("bool", "bool_"))
    return names


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix, weights_only):
        super().__init__(file)
        self.zf, self.prefix, self.weights_only = zf, prefix, weights_only
        self.known = _torch_globals()
        self.storages = {}

    def find_class(self, module, name):
        found = self.known.get((module, name))
        if found is not None:
            return found
        for g in _safe_globals:
            if (getattr(g, "__module__", None), getattr(g, "__qualname__", None)) == (module, name):
                return g
        if self.weights_only:
            raise pickle.UnpicklingError(_weights_only_message(module, name))
        if module == "torch" or module.startswith("torch."):
            raise _not_implemented(f"torch.load of a file holding {module}.{name}")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, storage_type, key, location, numel = pid
        if kind != "storage" or not isinstance(storage_type, _StorageKind):
            raise _not_implemented(f"torch.load of a {kind} record other than a typed storage")
        if key not in self.storages:
            raw = self.zf.read(f"{self.prefix}data/{key}")
            le = storage_type.dtype.np.newbyteorder("<")
            self.storages[key] = np.frombuffer(raw, dtype=le, count=numel).astype(
                storage_type.dtype.np)
        return self.storages[key]


def _weights_only_message(module, name):
    qual = f"{module}.{name}"
    return ("Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the "
            f"checkpoint\033[0m. \n\t(1) {_UNSAFE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL "
            f"{qual} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{qual}])` or the "
            f"`torch.serialization.safe_globals([{qual}])` context manager to allowlist this "
            f"global if you trust this class/function." + _DOCS)


def _check_map_location(map_location):
    if map_location is None:
        return
    if isinstance(map_location, (str, device)):
        where = device(map_location)
        if where.type == "cpu":
            return
        if where.type == "cuda":
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "torch.cuda.is_available() is False. If you are running on a "
                               "CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
    raise _not_implemented(f"torch.load(map_location={map_location!r})")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what torch.save wrote (by gradviz or by PyTorch), weights-only by default:
    `model.load_state_dict(torch.load("model.pt"))`."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module is not None and pickle_module is not pickle:
        raise _not_implemented("torch.load(pickle_module=...) other than pickle")
    if mmap:
        raise _not_implemented("torch.load(mmap=True)")
    if pickle_load_args:
        raise _not_implemented(f"torch.load({next(iter(pickle_load_args))}=...)")
    _check_map_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as src:
            raw = src.read()
    else:
        raw = f.read()
    if raw.startswith(b"\x80"):
        raise _not_implemented("torch.load of a file in PyTorch's legacy (pre-1.6) format")
    if not raw.startswith(b"PK"):
        raise pickle.UnpicklingError(f"invalid load key, {raw[:1].decode('latin-1')!r}.")
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        names = zf.namelist()
        prefix = names[0].split("/", 1)[0] + "/" if names else ""
        if f"{prefix}data.pkl" not in names:
            raise _not_implemented("torch.load of a TorchScript archive (torch.jit.save)")
        unpickler = _Unpickler(io.BytesIO(zf.read(f"{prefix}data.pkl")), zf, prefix,
                               weights_only)
        return unpickler.load()


# ----- weights_only allowlist (torch.serialization) -------------------------------------------

def add_safe_globals(safe_globals):
    """Allow these classes/functions in a weights_only load."""
    _safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """add_safe_globals for the duration of a with block."""
    before = list(_safe_globals)
    _safe_globals.extend(safe_globals)
    try:
        yield
    finally:
        _safe_globals[:] = before
