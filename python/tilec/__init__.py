"""tilec from Python: compile tile programs and run their kernels.

    import numpy as np, tilec
    lib = tilec.load("examples/saxpy.tile")
    x = np.arange(1000, dtype=np.float32); y = np.ones(1000, np.float32)
    lib.saxpy(2.0, x, y)            # numpy arrays: the CPU reference interpreter
    lib.saxpy(2.0, x, y, BLOCK=256) # compile-time parameters as keywords

    import torch
    x = torch.randn(1 << 20, device="cuda"); y = torch.zeros_like(x)
    lib.saxpy(2.0, x, y)            # CUDA tensors: launched on the GPU, on
                                    # torch's current stream of their device
    run = lib.saxpy.bind(2.0, x, y) # the arguments checked and packed once
    run()                           # for hot loops

numpy arrays and CPU tensors run on the CPU reference interpreter (any
strides); CUDA tensors (any strides, rank <= 4) launch on their device. The
package is pure Python over the C API (libtilec.so) through ctypes.
"""
import contextlib
import ctypes
import json
import numbers
import os
import struct
import sys

from ._capi import (_ARG_FLOAT, _ARG_FORMAT, _ARG_INT, _ARG_TENSOR, _FLOAT_TYPES, ArgumentError,
                    CompileError, ToolError, _HostArg, _json_call, _lib, _options, _ParamInfo,
                    _raise_error, _take_string)
from . import _capi

__all__ = ["CompileError", "ArgumentError", "ToolError", "compile", "load", "Program",
           "Kernel", "Launcher", "cache", "device_output", "testing"]

# --- numpy arrays ------------------------------------------------------------

_NUMPY_TO_TILE = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8",
                  "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                  "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1"}


def _shape_and_strides(value):
    """A tensor's or array's sizes and element strides, or (None, None)."""
    if hasattr(value, "stride") and hasattr(value, "shape"):  # torch
        return tuple(value.shape), tuple(value.stride())
    arr = _as_numpy(value)
    if arr is None:
        return None, None
    return arr.shape, tuple(s // arr.itemsize for s in arr.strides)


def _is_cuda(value):
    return getattr(getattr(value, "device", None), "type", None) == "cuda"


# --- torch CUDA tensors ------------------------------------------------------

_TORCH_TO_TILE = {}   # torch.dtype -> tile element type, filled on first use
_DTYPE_NAMES = {}     # tile element type -> (its C string, kept alive, address)
_current_stream = None


def _torch_tables():
    global _current_stream
    import torch
    for name, tile in (*_NUMPY_TO_TILE.items(), ("bfloat16", "bf16"),
                       ("float8_e4m3fn", "f8e4m3"), ("float8_e5m2", "f8e5m2")):
        if hasattr(torch, name):
            _TORCH_TO_TILE[getattr(torch, name)] = tile
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        _current_stream = raw
    else:  # pragma: no cover
        _current_stream = lambda device: torch.cuda.current_stream(device).cuda_stream


def _dtype_address(tile):
    entry = _DTYPE_NAMES.get(tile)
    if entry is None:
        buf = ctypes.create_string_buffer(tile.encode())
        entry = _DTYPE_NAMES[tile] = (buf, ctypes.addressof(buf))
    return entry[1]


def _as_numpy(value):
    """A numpy array for a numpy array or a CPU torch tensor (sharing
    memory), else None."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return None
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "numpy") and hasattr(value, "device") and not _is_cuda(value):
        return value.numpy()
    return None


class Kernel:
    """One kernel of a compiled program: call it with its arguments."""

    def __init__(self, program, index, name):
        self.program = program
        self.name = name
        lib = _lib()
        handle = program._handle
        self.params = []
        for p in range(lib.tilec_program_kernel_num_params(handle, index)):
            info = _ParamInfo()
            lib.tilec_program_kernel_param(handle, index, p, ctypes.byref(info))
            self.params.append({"name": info.name.decode(), "tensor": bool(info.is_tensor),
                                "dtype": info.dtype.decode(), "rank": info.rank})
        self.grid = [lib.tilec_program_kernel_grid(handle, index, d).decode()
                     for d in range(lib.tilec_program_kernel_grid_dims(handle, index))]
        self._handles = {}  # device -> tilec_kernel*
        self._chosen = {}  # @heuristic: arguments' key -> the chosen variant
        declared = program._declared.get(name, {})
        self.compile_time = [dict(c) for c in declared.get("compile_time", [])]
        for p, d in zip(self.params, declared.get("params", [])):
            p["declared"] = d["type"]
            # A type parameter the program was not compiled with explicitly:
            # inferred from this argument's element type.
            if d["element_is_parameter"] and d["element"] not in program.defines:
                p["infer"] = d["element"]
        self.tune_space = declared.get("tune", [])
        # @heuristic: compile-time parameters chosen per call from the
        # arguments' shapes (those this program does not fix).
        self._index = index
        self.heuristics = [lib.tilec_program_kernel_heuristic(handle, index, i).decode()
                           for i in range(lib.tilec_program_kernel_num_heuristics(handle, index))]
        self.writes = list(declared.get("writes", []))
        self.requires = [dict(r) for r in declared.get("requires", [])]
        self.grid_as_written = declared.get("grid", [])
        # For the fast path of a GPU launch: per parameter (tensor, element
        # type, rank, float scalar, the padding of sizes/strides to 4, the
        # element type's C string), and one struct for the whole array.
        self._specs = [(p["tensor"], p["dtype"], p["rank"],
                        p["dtype"] in _FLOAT_TYPES,
                        (0,) * (4 - p["rank"]) if p["tensor"] and p["rank"] <= 4 else (),
                        _dtype_address(p["dtype"])) for p in self.params]
        self._first_tensor = next((i for i, p in enumerate(self.params) if p["tensor"]), None)
        if any(p["tensor"] and p["rank"] > 4 for p in self.params):
            self._first_tensor = None  # no fast path: _pack names the limit
        self._struct = struct.Struct("=" + _ARG_FORMAT * len(self.params))
        self._nparams = len(self.params)
        self._c_launch = _lib().tilec_launch
        self._fast_pack = self._make_fast_pack()

    @property
    def signature(self):
        """The parameters (name, tensor or scalar, element type and rank as
        compiled, the declared type), which parameters the kernel writes
        (stores, scatters, atomics), the @require preconditions (condition
        and message as written), the compile-time parameters with their
        defaults as written and the values this program fixes, the @tune
        space and the grid clause (as compiled, and as written)."""
        return {"name": self.name, "params": [dict(p) for p in self.params],
                "compile_time": [dict(c, value=self.program.defines.get(c["name"]))
                                 for c in self.compile_time],
                "writes": list(self.writes),
                "requires": [dict(r) for r in self.requires],
                "tune": [dict(t) for t in self.tune_space], "heuristics": list(self.heuristics),
                "grid": list(self.grid),
                "grid_as_written": list(self.grid_as_written)}

    def _inferred(self, args):
        """Type parameters to compile with, inferred from the arguments'
        element types, when they differ from what this program was compiled
        with (T from x.dtype); None when nothing is to infer."""
        found = {}
        for i, (a, p) in enumerate(zip(args, self.params)):
            name = p.get("infer")
            if name is None:
                continue
            dtype = None
            if _is_cuda(a) or _is_cpu_tensor(a):
                if not _TORCH_TO_TILE:
                    _torch_tables()
                dtype = _TORCH_TO_TILE.get(getattr(a, "dtype", None))
            else:
                arr = _as_numpy(a)
                if arr is not None:
                    dtype = _NUMPY_TO_TILE.get(arr.dtype.name)
            if dtype is None:
                continue
            if name in found and found[name][0] != dtype:
                other = found[name][1]
                raise ArgumentError(
                    f"kernel '{self.name}': type parameter {name} is {found[name][0]} from "
                    f"argument {other + 1} ('{self.params[other]['name']}') but {dtype} from "
                    f"argument {i + 1} ('{p['name']}')")
            found.setdefault(name, (dtype, i))
        if all(self.params[i]["dtype"] == d for d, i in found.values()):
            return None
        return {n: d for n, (d, _) in found.items()}

    def _describe(self, p):
        if p["tensor"]:
            return f"a tensor<{p['dtype']}, {p['rank']}>"
        return f"a scalar {p['dtype']}"

    def _count(self, args):
        if len(args) != len(self.params):
            raise ArgumentError(f"kernel '{self.name}' takes {len(self.params)} arguments "
                                f"({', '.join(p['name'] for p in self.params)}), got {len(args)}")

    def _on_gpu(self, args):
        """Whether the call goes to the GPU: its first tensor argument is a
        CUDA tensor."""
        for a, p in zip(args, self.params):
            if p["tensor"]:
                return _is_cuda(a)
        return False

    def with_defines(self, **defines):
        """This kernel compiled alone with more compile-time parameters
        (cached): a define that another kernel of the file cannot take (a
        tile shape its loop form does not allow) does not stop this one."""
        return self.program._kernel_alone(self.name, defines)

    def _chosen_kernel(self, args):
        """The variant this kernel's @heuristic picks for `args`, remembered
        per shapes, strides, dtypes and scalar values (what the expressions
        read): a launch with arguments seen before does not evaluate the
        heuristic again (about 15 us in ctypes, more than a small matmul
        takes on the GPU)."""
        key = []
        for a in args:
            shape = getattr(a, "shape", None)
            if shape is None:
                key.append((type(a), a))
                continue
            stride = getattr(a, "stride", None)
            stride = stride() if callable(stride) else getattr(a, "strides", None)
            key.append((tuple(shape), tuple(stride) if stride is not None else None,
                        getattr(a, "dtype", None)))
        key = tuple(key)
        try:
            chosen = self._chosen.get(key)
        except TypeError:  # an unhashable argument: choose names what is wrong
            return self.with_defines(**self.choose(*args))
        if chosen is None:
            # The heuristic's values for the types inferred from the arguments
            # (T = f32 for f32 tensors), with those types.
            inferred = self._inferred(args)
            base = self.with_defines(**inferred) if inferred else self
            chosen = base.with_defines(**base.choose(*args))
            if len(self._chosen) > 4096:
                self._chosen.clear()
            self._chosen[key] = chosen
        return chosen

    def __call__(self, *args, **defines):
        if defines:
            return self.with_defines(**defines)(*args)
        if self.heuristics:
            return self._chosen_kernel(args)(*args)
        if len(args) == self._nparams and self._first_tensor is not None:
            first = args[self._first_tensor]
            if getattr(first, "is_cuda", False):
                if not _TORCH_TO_TILE:
                    _torch_tables()
                device = first.get_device()
                fast = self._fast_pack(args, device)
                if fast is not None:
                    handle = self._handles.get(device) or self._kernel_on(device)
                    err = self._c_launch(handle, fast, self._nparams, _current_stream(device))
                    if err:
                        _raise_error(err, f"kernel '{self.name}': ")
                    return None
        self._count(args)
        inferred = self._inferred(args)
        if inferred:
            return self.with_defines(**inferred)(*args)
        if self._on_gpu(args):
            packed, device = self._pack(args)
            return self._launch(packed, len(args), device)
        return self._interpret(args)

    def choose(self, *args):
        """The compile-time parameters this kernel's @heuristic picks for
        these arguments ({name: value}; empty when the program fixes them
        all): a call compiles (once, cached) and runs the kernel with them."""
        if not self.heuristics:
            return {}
        self._count(args)
        # The heuristic reads the types the call compiles with (bits<T>()),
        # inferred from the arguments.
        inferred = self._inferred(args)
        if inferred:
            return self.with_defines(**inferred).choose(*args)
        values = []
        for i, (a, p) in enumerate(zip(args, self.params)):
            if not p["tensor"]:
                kind, iv, fv = self._scalar(i, a, p)
                values += (kind, iv, fv) + (0,) * 11
                continue
            shape, strides = _shape_and_strides(a)
            if shape is None or len(shape) != p["rank"] or p["rank"] > 4:
                raise ArgumentError(f"kernel '{self.name}': argument {i + 1} ('{p['name']}') "
                                    f"must be {self._describe(p)}, got {type(a).__name__}")
            pad = (0,) * (4 - len(shape))
            values += (_ARG_TENSOR, 0, 0.0, 0, len(shape), *shape, *pad, *strides, *pad,
                       _dtype_address(p["dtype"]))
        out = (ctypes.c_int64 * len(self.heuristics))()
        _raise_error(_lib().tilec_program_kernel_choose(
            self.program._handle, self._index, self._struct.pack(*values), len(args), out),
            f"kernel '{self.name}': ")
        return dict(zip(self.heuristics, out))

    def _make_fast_pack(self):
        """_fast_pack(args, device): the launch's tilec_arg array as bytes,
        or None for anything that is not plainly right (then _pack finds and
        names the mismatch). Generated per kernel, straight-line code (no
        loop over the parameters), in the layout of _ARG_FORMAT."""
        if self._first_tensor is None:
            return lambda args, device: None
        names = [f"a{i}" for i in range(self._nparams)]
        lines = ["def fast_pack(args, device):",
                 "    try:",
                 f"        {', '.join(names)}{',' if len(names) == 1 else ''} = args"]
        values = []
        for i, (tensor, dtype, rank, is_float, pad, address) in enumerate(self._specs):
            a = names[i]
            if tensor:
                # (device >= 0: the same device is a CUDA one; CPU is -1)
                lines += [f"        s{i} = {a}.shape",
                          f"        if tile_of[{a}.dtype] != {dtype!r} or len(s{i}) != {rank} "
                          f"or {a}.get_device() != device:",
                          "            return None",
                          f"        t{i} = {a}.stride()"]
                sizes = [f"s{i}[{d}]" for d in range(rank)] + ["0"] * (4 - rank)
                strides = [f"t{i}[{d}]" for d in range(rank)] + ["0"] * (4 - rank)
                values += [str(_ARG_TENSOR), "0", "0.0", f"{a}.data_ptr()", str(rank),
                           *sizes, *strides, str(address)]
            elif is_float:
                lines += [f"        if {a}.__class__ is not float and {a}.__class__ is not int:",
                          "            return None"]
                values += [str(_ARG_FLOAT), "0", f"float({a})"] + ["0"] * 11
            else:
                lines += [f"        if {a}.__class__ is not int:", "            return None"]
                values += [str(_ARG_INT), a, "0.0"] + ["0"] * 11
        lines += [f"        return pack({', '.join(values)})",
                  "    except (AttributeError, KeyError, TypeError, IndexError, ValueError,",
                  "            struct.error):",
                  "        return None"]
        scope = {"tile_of": _TORCH_TO_TILE, "pack": self._struct.pack, "struct": struct}
        exec("\n".join(lines), scope)  # noqa: S102  (our own generated code)
        return scope["fast_pack"]

    def bind(self, *args, **defines):
        """A launcher for these arguments, checked and packed once (the grid
        evaluated, TMA descriptors encoded): call it (no arguments) to launch
        again, on the current stream of the tensors' device. The tensors must
        stay alive and where they are."""
        if defines:
            return self.with_defines(**defines).bind(*args)
        if self.heuristics:
            return self._chosen_kernel(args).bind(*args)
        self._count(args)
        inferred = self._inferred(args)
        if inferred:
            return self.with_defines(**inferred).bind(*args)
        if not self._on_gpu(args):
            raise ArgumentError(f"kernel '{self.name}': bind needs CUDA tensors "
                                "(run the interpreter with a plain call)")
        packed, device = self._pack(args)
        plan = ctypes.c_void_p()
        _raise_error(_lib().tilec_launch_plan_create(self._kernel_on(device), packed, len(args),
                                                     ctypes.byref(plan)),
                     f"kernel '{self.name}': ")
        return Launcher(self, plan.value, device, args)

    def tune(self, *args, database=None, **defines):
        """The kernel compiled with the best values of its @tune space for
        these arguments (CUDA tensors; every configuration runs on them, so
        outputs are clobbered): timed on the GPU, or taken from the tuning
        database (the same as `tilec tune`; database=None: $TILEC_TUNING_DB,
        else tuning.db in the cache directory; "": in memory only).
        Parameters outside the @tune space take what the kernel's
        @heuristic chooses for these arguments. The returned kernel's
        `tuned` holds the choice (defines, microseconds, from_database,
        trials, heuristic: the heuristic's values, heuristic_microseconds:
        the plain call's kernel timed beside the trials, -1 if not). A
        kernel without @tune comes back as it is compiled."""
        if defines:
            return self.with_defines(**defines).tune(*args, database=database)
        self._count(args)
        inferred = self._inferred(args)
        if inferred:
            return self.with_defines(**inferred).tune(*args, database=database)
        if not self._on_gpu(args):
            raise ArgumentError(f"kernel '{self.name}': tune needs CUDA tensors")
        packed, device = self._pack(args)
        keep = []
        program = self.program
        o = _options(program.file_name, program.arch, program.defines, keep)
        src = program.source.encode()
        choice = ctypes.c_void_p()
        _raise_error(_lib().tilec_tune(src, len(src), ctypes.byref(o), self.name.encode(), packed,
                                       len(args), device,
                                       None if database is None else database.encode(),
                                       None, ctypes.byref(choice)),
                     f"kernel '{self.name}': ")
        tuned = json.loads(_take_string(choice))
        # The chosen values, for this kernel alone (as tilec_tune compiled
        # it).
        kernel = self.with_defines(**tuned["defines"])
        kernel.tuned = tuned
        return kernel

    def _kernel_on(self, device):
        """The loaded kernel (tilec_kernel*) on `device`, loading the
        program's module there on first use."""
        handle = self._handles.get(device)
        if handle is None:
            handle = self.program._kernel_on(device, self.name)
            self._handles[device] = handle
        return handle

    def _scalar(self, i, a, p):
        """Scalar argument i as (kind, integer, float) for tilec_arg and
        tilec_host_arg; a mismatch is an ArgumentError naming it."""
        where = f"kernel '{self.name}': argument {i + 1} ('{p['name']}')"
        # Python numbers and numpy's scalars (np.float32(2.0), np.int64(5)):
        # numbers.Real; bool and numpy's bool_ are not numbers here.
        if isinstance(a, bool) or not isinstance(a, numbers.Real):
            raise ArgumentError(f"{where} must be {self._describe(p)}, got {type(a).__name__}")
        if p["dtype"] in _FLOAT_TYPES:
            return _ARG_FLOAT, 0, float(a)
        if not isinstance(a, numbers.Integral) and not float(a).is_integer():
            raise ArgumentError(f"{where} must be {self._describe(p)}, got {a}")
        if not -2**63 <= int(a) < 2**63:
            raise ArgumentError(f"{where} = {a} does not fit in 64 bits")
        return _ARG_INT, int(a), 0.0

    def _pack(self, args):
        """The arguments as an array of tilec_arg (bytes, in the layout
        _fast_pack gives), and the device of the tensors; every mismatch is
        an ArgumentError naming the parameter."""
        if not _TORCH_TO_TILE:
            _torch_tables()
        values = []
        device = None
        for i, (a, p) in enumerate(zip(args, self.params)):
            if not p["tensor"]:
                kind, iv, fv = self._scalar(i, a, p)
                values += (kind, iv, fv, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                continue
            where = f"kernel '{self.name}': argument {i + 1} ('{p['name']}')"
            if not _is_cuda(a):
                if hasattr(a, "device") or _as_numpy(a) is not None:
                    raise ArgumentError(f"{where} is on the CPU, but the launch is on the GPU "
                                        "(an earlier tensor is a CUDA tensor): pass all on "
                                        "one device")
                raise ArgumentError(f"{where} must be {self._describe(p)}, got "
                                    f"{type(a).__name__}")
            dev = a.get_device()
            if device is None:
                device = dev
            elif dev != device:
                raise ArgumentError(f"{where} is on cuda:{dev}, the tensors before it on "
                                    f"cuda:{device}")
            dtype = _TORCH_TO_TILE.get(a.dtype)
            rank = a.dim()
            self._check_tensor(where, p, "a tensor", rank, dtype or a.dtype)
            if rank > 4:
                raise ArgumentError(f"{where}: a launch takes tensors of rank 4 at most")
            pad = (0,) * (4 - rank)
            values += (_ARG_TENSOR, 0, 0.0, a.data_ptr(), rank, *a.shape, *pad,
                       *a.stride(), *pad, _dtype_address(dtype))
        return self._struct.pack(*values), device

    def _check_tensor(self, where, p, what, rank, dtype):
        """A tensor argument's rank, then element type, against parameter p
        (`what`: "a tensor" or "an array"; dtype as a tile type name, or the
        foreign type where it has none)."""
        if rank != p["rank"]:
            raise ArgumentError(f"{where} must be {self._describe(p)}, got {what} of rank {rank}")
        if dtype != p["dtype"]:
            raise ArgumentError(f"{where} must be {self._describe(p)}, got {what} of {dtype}")

    def _launch(self, packed, n, device):
        handle = self._handles.get(device) or self._kernel_on(device)
        _raise_error(_lib().tilec_launch(handle, packed, n, _current_stream(device)),
                     f"kernel '{self.name}': ")


    def _interpret(self, args):
        host = (_HostArg * max(len(args), 1))()
        for i, (a, p) in enumerate(zip(args, self.params)):
            where = f"kernel '{self.name}': argument {i + 1} ('{p['name']}')"
            if not p["tensor"]:
                host[i].kind, host[i].i, host[i].f = self._scalar(i, a, p)
                continue
            if _is_cuda(a):
                raise ArgumentError(f"{where} is a CUDA tensor, but an earlier tensor "
                                    "argument is on the CPU: pass all on one device")
            if _is_cpu_tensor(a):
                self._host_tensor(host[i], where, a, p)
                continue
            arr = _as_numpy(a)
            if arr is None:
                raise ArgumentError(f"{where} must be {self._describe(p)}, got {type(a).__name__}")
            self._check_tensor(where, p, "an array", arr.ndim,
                               _NUMPY_TO_TILE.get(arr.dtype.name) or arr.dtype.name)
            if any(s % arr.itemsize for s in arr.strides):
                raise ArgumentError(f"{where}: strides {arr.strides} are not whole elements")
            if not arr.flags.writeable:
                raise ArgumentError(f"{where}: the array is read-only")
            host[i].kind = _ARG_TENSOR
            host[i].data = arr.ctypes.data
            host[i].rank = arr.ndim
            for d in range(arr.ndim):
                host[i].sizes[d] = arr.shape[d]
                host[i].strides[d] = arr.strides[d] // arr.itemsize
        keep = []
        o = _options(self.program.file_name, self.program.arch, self.program.defines, keep)
        src = self.program.source.encode()
        _raise_error(_lib().tilec_interpret(src, len(src), ctypes.byref(o), self.name.encode(),
                                            host, len(args)))

    def _host_tensor(self, host, where, a, p):
        """A CPU torch tensor as a tilec_host_arg (any dtype the kernel takes,
        bf16 included: the interpreter reads the parameter's element type)."""
        if not _TORCH_TO_TILE:
            _torch_tables()
        self._check_tensor(where, p, "a tensor", a.dim(), _TORCH_TO_TILE.get(a.dtype) or a.dtype)
        if a.dim() > 8:
            raise ArgumentError(f"{where}: the interpreter takes tensors of rank 8 at most")
        host.kind = _ARG_TENSOR
        host.data = a.data_ptr()
        host.rank = a.dim()
        for d in range(a.dim()):
            host.sizes[d] = a.shape[d]
            host.strides[d] = a.stride(d)


class Launcher:
    """A prepared launch (Kernel.bind): calling it enqueues the kernel with
    the bound arguments on the current stream of their device."""

    __slots__ = ("kernel", "device", "args", "_plan", "_run", "_stream")

    def __init__(self, kernel, plan, device, args):
        self.kernel, self.device, self.args = kernel, device, args  # args: kept alive
        self._plan, self._run, self._stream = plan, _lib().tilec_launch_plan_run, _current_stream

    def __call__(self):
        err = self._run(self._plan, self._stream(self.device))
        if err:
            _raise_error(err, f"kernel '{self.kernel.name}': ")

    def __del__(self):
        plan = getattr(self, "_plan", None)
        if plan and _capi._lib_handle is not None:
            _capi._lib_handle.tilec_launch_plan_destroy(plan)


class cache:  # noqa: N801  (a namespace: tilec.cache.info(), tilec.cache.clear())
    """The process's compile cache (in process and on disk, the same one as
    the CLI's and the C++ API's; $TILEC_CACHE_DIR, $TILEC_CACHE=0)."""

    @staticmethod
    def info():
        """directory, max_bytes, entries and bytes on disk, and this
        process's memory_hits, disk_hits, misses, corrupt."""
        return _json_call(_lib().tilec_cache_info)

    @staticmethod
    def clear():
        """Removes every disk entry and forgets the in-process ones."""
        _raise_error(_lib().tilec_cache_clear())


def _describe(source, file_name):
    """The kernels of `source` as written (tilec_describe): compile-time
    parameters with their defaults, parameters with their declared types."""
    src = source.encode()
    return _json_call(_lib().tilec_describe, src, len(src), file_name.encode())


class Program:
    """A compiled tile program: its kernels by name (`program.saxpy` or
    `program["saxpy"]`)."""

    def __init__(self, source, file_name="<source>", arch="sm_90a", _kernel=None, **defines):
        self.source, self.file_name, self.arch = source, file_name, arch
        self.defines = {k: str(v) for k, v in defines.items()}
        self._variants = {}
        self._modules = {}  # device -> tilec_module*
        keep = []
        o = _options(file_name, arch, self.defines, keep)
        if _kernel is not None:
            o.kernel = _kernel.encode()
            keep.append(o.kernel)
        handle = ctypes.c_void_p()
        src = source.encode()
        _raise_error(_lib().tilec_compile(src, len(src), ctypes.byref(o), ctypes.byref(handle)))
        self._handle = handle
        lib = _lib()
        self._declared = {k["name"]: k for k in _describe(source, file_name)["kernels"]}
        self.kernels = {}
        for k in range(lib.tilec_program_num_kernels(handle)):
            name = lib.tilec_program_kernel_name(handle, k).decode()
            self.kernels[name] = Kernel(self, k, name)

    @property
    def ptx(self):
        """The PTX of every kernel of the program."""
        size = ctypes.c_size_t()
        text = _lib().tilec_program_ptx(self._handle, ctypes.byref(size))
        return ctypes.string_at(text, size.value).decode()

    def cubin(self, arch=None):
        """The program assembled by ptxas (CUDA toolkit; $TILEC_PTXAS) for
        `arch` (default: the one it was compiled for), as bytes."""
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        _raise_error(_lib().tilec_program_cubin(self._handle,
                                                None if arch is None else arch.encode(),
                                                ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value)

    def header(self, namespace=None):
        """A self-contained C++ header for ahead-of-time use (as `tilec
        -emit=header`): the PTX and one typed launch function per kernel,
        in `namespace` (default: from the file name, saxpy.tile:
        saxpy_kernels); it needs only the tilec runtime library."""
        out = ctypes.c_void_p()
        _raise_error(_lib().tilec_program_header(
            self._handle, None if namespace is None else namespace.encode(),
            os.path.basename(self.file_name).encode(), ctypes.byref(out)))
        return _take_string(out)

    def _kernel_on(self, device, name):
        """tilec_kernel* of `name` in this program's module on `device`
        (loaded once per device; it lives as long as the program)."""
        lib = _lib()
        module = self._modules.get(device)
        if module is None:
            module = ctypes.c_void_p()
            _raise_error(lib.tilec_module_load_device(self._handle, device, ctypes.byref(module)))
            self._modules[device] = module
        kernel = ctypes.c_void_p()
        _raise_error(lib.tilec_module_get_kernel(module, name.encode(), ctypes.byref(kernel)))
        return kernel.value

    def _kernel_alone(self, name, defines):
        """Kernel `name` of a program compiled with only that kernel and
        more compile-time parameters (cached)."""
        merged = dict(self.defines)
        merged.update({k: str(v) for k, v in defines.items()})
        key = (name,) + tuple(sorted(merged.items()))
        if key not in self._variants:
            self._variants[key] = Program(self.source, self.file_name, self.arch,
                                          _kernel=name, **merged)
        return self._variants[key][name]

    def with_defines(self, **defines):
        """The program compiled with more compile-time parameters (cached)."""
        merged = dict(self.defines)
        merged.update({k: str(v) for k, v in defines.items()})
        key = tuple(sorted(merged.items()))
        if key not in self._variants:
            self._variants[key] = Program(self.source, self.file_name, self.arch, **merged)
        return self._variants[key]

    def __getitem__(self, name):
        return self.kernels[name]

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"no kernel named '{name}' (the program has "
                             f"{', '.join(kernels) or 'none'})")

    def __del__(self):
        lib = _capi._lib_handle
        if lib is None:
            return
        for module in self.__dict__.get("_modules", {}).values():
            lib.tilec_module_destroy(module)
        handle = self.__dict__.get("_handle")
        if handle:
            lib.tilec_program_destroy(handle)


def compile(source, *, file_name="<source>", arch="sm_90a", **defines):
    """Compiles `source`; compile-time parameters as keywords (BLOCK=256,
    T="f16"). Raises CompileError with the diagnostic."""
    return Program(source, file_name, arch, **defines)


def load(path, *, arch="sm_90a", **defines):
    """Compiles the .tile file at `path` (diagnostics name the file)."""
    with open(path, encoding="utf-8") as f:
        return Program(f.read(), path, arch, **defines)


def _is_cpu_tensor(value):
    return (getattr(getattr(value, "device", None), "type", None) == "cpu"
            and hasattr(value, "data_ptr") and hasattr(value, "stride"))


@contextlib.contextmanager
def device_output(stream=None):
    """GPU `print` output (device printf) inside this block goes to
    `stream` (default: sys.stdout as it is on exit, e.g. a notebook or
    pytest's capture) instead of the process's file descriptor 1, where the
    CUDA driver writes it at each synchronization. On exit the block's GPU
    work is synchronized (every device torch has initialized); what was
    captured is written even when the block or the synchronization raises
    (a failed device assert), before the exception goes on."""
    import tempfile
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 1)
        try:
            try:
                yield
            finally:
                import torch
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    for d in range(torch.cuda.device_count()):
                        torch.cuda.synchronize(d)
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            capture.seek(0)
            (stream or sys.stdout).write(capture.read().decode("utf-8", "replace"))


from . import testing  # noqa: E402  (needs the names above)
