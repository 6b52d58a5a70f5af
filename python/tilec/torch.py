"""tilec kernels as torch operators: `tilec.torch.op(kernel, name=...)`
registers a torch.library custom op (define + a CUDA implementation that
launches the kernel, and a fake implementation for shapes), so the kernel
works under torch.compile(fullgraph=True) and inside torch.cuda.graph
capture. The operator mutates the parameters the kernel writes (from the
compiler: kernel.signature["writes"]) and returns nothing, as the kernel
does."""
import torch as _torch

from . import _FLOAT_TYPES

_libraries = {}


def _schema_type(p, mutated, alias):
    if p["tensor"]:
        return f"Tensor({alias}!)" if mutated else "Tensor"
    return "float" if p["dtype"] in _FLOAT_TYPES else "int"


def op(kernel, name=None, namespace="tilec", mutates=None):
    """Registers `kernel` (a tilec.Kernel) as torch.ops.<namespace>.<name>
    (name: the kernel's) and returns that operator. `mutates`: the names of
    the parameters it writes (default: what the compiler found)."""
    name = name or kernel.name
    params = kernel.params
    mutates = list(kernel.writes if mutates is None else mutates)
    names = [p["name"] for p in params]
    for m in mutates:
        if m not in names:
            raise ValueError(f"kernel '{kernel.name}' has no parameter '{m}' "
                             f"(it has {', '.join(names)})")
        if not params[names.index(m)]["tensor"]:
            raise ValueError(f"kernel '{kernel.name}': '{m}' is a scalar; only tensors "
                             "can be written")
    args = []
    for i, p in enumerate(params):
        alias = chr(ord("a") + len([a for a in args if "!" in a]))
        args.append(f"{_schema_type(p, p['name'] in mutates, alias)} {p['name']}")
    schema = f"{name}({', '.join(args)}) -> ()"
    lib = _libraries.get(namespace)
    if lib is None:
        try:
            lib = _torch.library.Library(namespace, "FRAGMENT")
        except ValueError:  # torch < 2: a namespace is defined once, with DEF
            lib = _torch.library.Library(namespace, "DEF")
        _libraries[namespace] = lib
    lib.define(schema)

    def launch(*a):
        kernel(*a)

    def fake(*a):  # shapes: nothing is returned, the outputs are given
        return None

    lib.impl(name, launch, "CUDA")
    lib.impl(name, launch, "CPU")  # the interpreter, on CPU tensors
    register_fake = getattr(_torch.library, "register_fake", None)
    if register_fake is not None:
        register_fake(f"{namespace}::{name}", fake, lib=lib)
    else:
        lib.impl(name, fake, "Meta")
    return getattr(getattr(_torch.ops, namespace), name)
