"""The C API (libtilec.so, tilec.h) through ctypes: its structures, the
library's functions with their signatures, and errors as exceptions."""
import ctypes
import json
import os
import struct
import sys


class CompileError(Exception):
    """A compile error: the message is the file:line:col diagnostic with the
    source line and a caret."""


class ArgumentError(TypeError):
    """Arguments that do not match a kernel's parameters (count, kind, rank,
    element type), found before anything runs."""


class ToolError(RuntimeError):
    """An external tool failed (ptxas for a cubin)."""


_ARG_INT, _ARG_FLOAT, _ARG_TENSOR = 0, 1, 2
_FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2")  # scalars passed as double


class _CompileOptions(ctypes.Structure):
    _fields_ = [("file_name", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("kernel", ctypes.c_char_p),
                ("define_names", ctypes.POINTER(ctypes.c_char_p)),
                ("define_values", ctypes.POINTER(ctypes.c_char_p)),
                ("num_defines", ctypes.c_size_t), ("opt_level", ctypes.c_uint),
                ("num_warps", ctypes.c_uint), ("use_cache", ctypes.c_int),
                ("min_blocks_per_sm", ctypes.c_uint)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_tensor", ctypes.c_int),
                ("dtype", ctypes.c_char_p), ("rank", ctypes.c_uint)]


class _Arg(ctypes.Structure):  # tilec_arg
    _fields_ = [("kind", ctypes.c_int), ("i", ctypes.c_int64), ("f", ctypes.c_double),
                ("ptr", ctypes.c_uint64), ("rank", ctypes.c_uint),
                ("sizes", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4),
                ("dtype", ctypes.c_char_p)]


# tilec_arg packed by struct (much faster per call than setting ctypes
# fields): kind, i, f, ptr, rank, sizes[4], strides[4], dtype.
_ARG_FORMAT = "i4xqdQI4x4q4qQ"
assert struct.calcsize("=" + _ARG_FORMAT) == ctypes.sizeof(_Arg)


class _HostArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("i", ctypes.c_int64), ("f", ctypes.c_double),
                ("data", ctypes.c_void_p), ("rank", ctypes.c_uint),
                ("sizes", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8)]


def _library_path():
    env = os.environ.get("TILEC_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    try:  # installed by cmake --install: the library's place in the prefix
        from ._install import LIBRARY
        return os.path.normpath(os.path.join(here, LIBRARY))
    except ImportError:
        pass
    for candidate in (os.path.join(here, "libtilec.so"),
                      os.path.join(here, "..", "..", "build", "lib", "libtilec.so")):
        if os.path.exists(candidate):
            return candidate
    return "libtilec.so"  # the loader's search path


_lib_handle = None


def _lib():
    global _lib_handle
    if _lib_handle is None:
        lib = ctypes.CDLL(_library_path())
        err = ctypes.c_void_p
        lib.tilec_error_message.restype = ctypes.c_char_p
        lib.tilec_error_message.argtypes = [err]
        lib.tilec_error_destroy.argtypes = [err]
        lib.tilec_compile_options_init.argtypes = [ctypes.POINTER(_CompileOptions)]
        lib.tilec_compile.restype = err
        lib.tilec_compile.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(_CompileOptions),
                                      ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_program_destroy.argtypes = [ctypes.c_void_p]
        lib.tilec_program_num_kernels.restype = ctypes.c_size_t
        lib.tilec_program_num_kernels.argtypes = [ctypes.c_void_p]
        lib.tilec_program_kernel_name.restype = ctypes.c_char_p
        lib.tilec_program_kernel_name.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.tilec_program_kernel_num_params.restype = ctypes.c_size_t
        lib.tilec_program_kernel_num_params.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.tilec_program_kernel_param.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                   ctypes.c_size_t, ctypes.POINTER(_ParamInfo)]
        lib.tilec_program_kernel_grid_dims.restype = ctypes.c_uint
        lib.tilec_program_kernel_grid_dims.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.tilec_program_kernel_grid.restype = ctypes.c_char_p
        lib.tilec_program_kernel_grid.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                  ctypes.c_uint]
        lib.tilec_c_api_version.restype = ctypes.c_int
        if lib.tilec_c_api_version() < 5:
            raise ImportError(f"{_library_path()} has C API version "
                              f"{lib.tilec_c_api_version()}; this package needs 5")
        lib.tilec_program_kernel_num_heuristics.restype = ctypes.c_size_t
        lib.tilec_program_kernel_num_heuristics.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.tilec_program_kernel_heuristic.restype = ctypes.c_char_p
        lib.tilec_program_kernel_heuristic.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                       ctypes.c_size_t]
        lib.tilec_program_kernel_choose.restype = err
        lib.tilec_program_kernel_choose.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                    ctypes.c_char_p, ctypes.c_size_t,
                                                    ctypes.POINTER(ctypes.c_int64)]
        lib.tilec_error_get_kind.restype = ctypes.c_int
        lib.tilec_error_get_kind.argtypes = [err]
        lib.tilec_program_ptx.restype = ctypes.c_void_p
        lib.tilec_program_ptx.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        lib.tilec_program_cubin.restype = err
        lib.tilec_program_cubin.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                            ctypes.POINTER(ctypes.c_void_p),
                                            ctypes.POINTER(ctypes.c_size_t)]
        lib.tilec_program_header.restype = err
        lib.tilec_program_header.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_tune.restype = err
        lib.tilec_tune.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(_CompileOptions), ctypes.c_char_p,
                                   ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                   ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_set_print_callback.argtypes = [_PRINT_CALLBACK, ctypes.c_void_p]
        lib.tilec_set_print_callback(_print_to_stdout, None)
        lib.tilec_module_load_device.restype = err
        lib.tilec_module_load_device.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                 ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_module_destroy.argtypes = [ctypes.c_void_p]
        lib.tilec_module_get_kernel.restype = err
        lib.tilec_module_get_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_describe.restype = err
        lib.tilec_describe.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_string_destroy.argtypes = [ctypes.c_void_p]
        lib.tilec_cache_info.restype = err
        lib.tilec_cache_info.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_cache_clear.restype = err
        lib.tilec_cache_clear.argtypes = []
        lib.tilec_launch_plan_create.restype = err
        lib.tilec_launch_plan_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_size_t,
                                                 ctypes.POINTER(ctypes.c_void_p)]
        lib.tilec_launch_plan_run.restype = err
        lib.tilec_launch_plan_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.tilec_launch_plan_destroy.argtypes = [ctypes.c_void_p]
        lib.tilec_launch.restype = err
        lib.tilec_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                     ctypes.c_void_p]
        lib.tilec_interpret.restype = err
        lib.tilec_interpret.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.POINTER(_CompileOptions), ctypes.c_char_p,
                                        ctypes.POINTER(_HostArg), ctypes.c_size_t]
        _lib_handle = lib
    return _lib_handle


def _take_error(err):
    """The message of a tilec_error* (destroyed), or None."""
    if not err:
        return None
    lib = _lib()
    message = lib.tilec_error_message(err).decode("utf-8", "replace")
    lib.tilec_error_destroy(err)
    return message


# tilec_error_kind -> the exception raised for it.
_ERROR_TYPES = {1: CompileError, 2: ArgumentError, 3: RuntimeError, 4: ToolError,
                5: RuntimeError}


def _raise_error(err, prefix=""):
    """Raises the exception for a tilec_error* (destroyed); nothing for NULL."""
    if not err:
        return
    kind = _lib().tilec_error_get_kind(err)
    message = _take_error(err)
    raise _ERROR_TYPES.get(kind, RuntimeError)(prefix + message)


# `print` in interpreted kernels goes to Python's sys.stdout (whatever it is
# at the time: pytest's capture, a notebook, a redirect).
_PRINT_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


@_PRINT_CALLBACK
def _print_to_stdout(text, size, user):
    sys.stdout.write(ctypes.string_at(text, size).decode("utf-8", "replace"))


def _options(file_name, arch, defines, keep):
    o = _CompileOptions()
    _lib().tilec_compile_options_init(ctypes.byref(o))
    o.file_name = file_name.encode()
    o.arch = arch.encode()
    names = [str(k).encode() for k in defines]
    values = [str(v).encode() for v in defines.values()]
    if names:
        o.define_names = (ctypes.c_char_p * len(names))(*names)
        o.define_values = (ctypes.c_char_p * len(values))(*values)
        o.num_defines = len(names)
    keep.append((names, values, o))  # keep the buffers alive while used
    return o




def _take_string(out):
    """The text of a C string from the library (freed)."""
    try:
        return ctypes.string_at(out.value).decode()
    finally:
        _lib().tilec_string_destroy(out)


def _json_call(fn, *args):
    """The JSON value that fn(*args, &out) gives; its error raised."""
    out = ctypes.c_void_p()
    _raise_error(fn(*args, ctypes.byref(out)))
    return json.loads(_take_string(out))
