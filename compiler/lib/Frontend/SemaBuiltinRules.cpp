//===- SemaBuiltinRules.cpp - the type rules of the builtins -------------===//
//
// One function per rule of Builtins.def (and the elementwise math of
// UnaryMath.def): argument counts, operand checks and the result type.
// SemaBuiltins.cpp dispatches to them; irregular accesses (gather,
// scatter, atomics) and combiners are checked there.
//
//===----------------------------------------------------------------------===//

#include "SemaChecker.h"

#include "llvm/Support/ErrorHandling.h"

#include <limits>

using namespace tilec;
using namespace tilec::sema;

/// load, store.
bool Checker::checkMemory(Expr &e) {
  const std::string &f = e.name;
  bool isLoad = f == "load";
  if (!checkArgCount(e, isLoad ? 2 : 3, isLoad ? 4 : 3))
    return false;
  if (!requireView(e))
    return false;
  Expr &view = *e.args[0];
  unsigned rank = view.type.rank;
  Expr &idx = *e.args[1];
  if (isLoad && e.args.size() == 2) {
    // load(x, [i, j]): the element x[i, j] as a scalar (0 outside x).
    if (idx.kind != Expr::Kind::List)
      return error(idx.loc, "the element indices must be a list, e.g. [i] or [i, j]");
    if (idx.args.size() != rank)
      return error(idx.loc, "'" + view.name + "' has rank " + std::to_string(rank) +
                                ", so an element load needs " + std::to_string(rank) +
                                " ind" + (rank == 1 ? "ex" : "ices") + ", got " +
                                std::to_string(idx.args.size()));
    for (auto &i : idx.args)
      if (!requireIntScalar(*i, "an element index"))
        return false;
    e.type = SemaType::scalar(view.type.elem);
    return true;
  }
  if (idx.kind != Expr::Kind::List)
    return error(idx.loc, "the tile indices must be a list, e.g. [i] or [i, j]");
  if (idx.args.size() != rank)
    return error(idx.loc, "'" + view.name + "' has rank " +
                              std::to_string(rank) + ", so " + f + " needs " +
                              std::to_string(rank) + " tile ind" +
                              (rank == 1 ? "ex" : "ices") + ", got " +
                              std::to_string(idx.args.size()));
  for (auto &i : idx.args)
    if (!requireIntScalar(*i, "a tile index"))
      return false;
  if (!isLoad) {
    Expr &val = *e.args[2];
    if (!requireValue(val, "the stored value"))
      return false;
    if (!val.type.isTile())
      return error(val.loc, "store needs a tile, got the scalar " +
                                val.type.str());
    if (val.type.shape.size() != rank)
      return error(val.loc, "cannot store " + val.type.str() + " into " +
                                view.type.str() + ": the ranks differ");
    if (val.type.elem != view.type.elem)
      return error(val.loc, "cannot store " + val.type.str() + " into " +
                                view.type.str() + "; convert with cast<" +
                                scalarTypeName(view.type.elem) + ">(...)");
    e.type.kind = SemaType::Kind::Void;
    return true;
  }
  Expr &shape = *e.args[2];
  if (shape.kind != Expr::Kind::List)
    return error(shape.loc, "the tile shape must be a list, e.g. [BLOCK]");
  if (shape.args.size() != rank)
    return error(shape.loc, "'" + view.name + "' has rank " +
                                std::to_string(rank) + ", so the tile shape needs " +
                                std::to_string(rank) + " size" +
                                (rank == 1 ? "" : "s") + ", got " +
                                std::to_string(shape.args.size()));
  std::vector<int64_t> dims;
  if (!checkShapeList(shape, dims))
    return false;
  if (e.args.size() == 4) {
    Expr &pad = *e.args[3];
    if (!requireValue(pad, "the padding value"))
      return false;
    if (!pad.type.weak || !pad.type.isScalar() ||
        (pad.kind != Expr::Kind::IntLit && pad.kind != Expr::Kind::FloatLit &&
         !(pad.kind == Expr::Kind::Unary && pad.args[0]->type.weak)))
      return error(pad.loc, "the padding value must be a number literal");
    if (isFloatType(pad.type.elem) && !isFloatType(view.type.elem))
      return error(pad.loc, "a float padding value cannot pad " + view.type.str());
  }
  e.type = SemaType::tile(view.type.elem, dims);
  return true;
}

/// block_id, num_blocks.
bool Checker::checkProgramId(Expr &e) {
  if (!checkArgCount(e, 1, 1))
    return false;
  int64_t d;
  if (!requireConstInt(*e.args[0], "the grid dimension", d))
    return false;
  if (d < 0 || d > 2)
    return error(e.args[0]->loc, "grid dimension must be 0, 1 or 2, got " +
                                     std::to_string(d));
  // @launch(persistent, group_rows): the program's place in the rewritten
  // order (SemaTileOrder.cpp), a name the rewrite bound.
  if (remapIds && d < 2 && (e.name == "block_id" || remapCounts)) {
    e.kind = Expr::Kind::Name;
    e.name = std::string(e.name == "block_id" ? "$bid" : "$nb") + char('0' + d);
    e.args.clear();
    return checkNode(e);
  }
  e.type = SemaType::scalar(ScalarType::I32);
  return true;
}

/// num_sms, resident_programs.
bool Checker::checkDeviceSize(Expr &e) {
  const std::string &f = e.name;
  if (!inGrid)
    return error(e.loc, "'" + f + "()' is known when the kernel is launched: use "
                        "it in grid(...); inside the kernel, num_blocks(0) is the "
                        "grid size");
  if (!checkArgCount(e, 0, 0))
    return false;
  e.type = SemaType::scalar(ScalarType::I64);
  return true;
}

/// arch(): the compile target's SM version (90 on sm_90a, 80 on sm_80), a
/// compile-time integer, so that a parameter's default, a @launch setting
/// or a branch can depend on the target. bits<T>(): the width of a scalar
/// type in bits (32 for f32, 16 for bf16, 1 for i1), so that they can depend
/// on a type parameter too (examples/matmul.tile's @heuristic for f32).
bool Checker::checkTarget(Expr &e) {
  bool bits = e.name == "bits";
  if (bits && !e.typeArg)
    return error(e.loc, "'bits' needs a type: bits<T>() (the width of T in bits)");
  if (!checkArgCount(e, 0, 0))
    return false;
  int64_t value = inst.archVersion;
  if (bits) {
    SemaType t;
    if (!resolveType(*e.typeArg, t, false))
      return false;
    value = bitWidth(t.elem);
  }
  e.type = SemaType::scalar(ScalarType::I32);
  e.constInt = value;
  return true;
}

/// zeros, full.
bool Checker::checkFill(Expr &e) {
  const std::string &f = e.name;
  if (!e.typeArg)
    return error(e.loc, "'" + f + "' needs an element type: " + f + "<f32>([...])");
  if (!checkArgCount(e, f == "zeros" ? 1 : 2, f == "zeros" ? 1 : 2))
    return false;
  SemaType elem;
  if (!resolveType(*e.typeArg, elem, false))
    return false;
  std::vector<int64_t> dims;
  if (!checkShapeList(*e.args[0], dims))
    return false;
  if (f == "full") {
    Expr &v = *e.args[1];
    if (!requireValue(v, "the fill value"))
      return false;
    if (!v.type.isScalar())
      return error(v.loc, "the fill value must be a scalar, got " + v.type.str());
    Unified u = unifyOperands(SemaType::scalar(elem.elem), v.type, "fill a tile with");
    if (!u.error.empty() || u.type.elem != elem.elem)
      return error(v.loc, "cannot fill a tile<" + std::string(scalarTypeName(elem.elem)) +
                              "> with " + describeOperand(v.type) + "; convert with cast<" +
                              scalarTypeName(elem.elem) + ">(...)");
  }
  e.type = SemaType::tile(elem.elem, dims);
  return true;
}

/// range.
bool Checker::checkRange(Expr &e) {
  if (!checkArgCount(e, 1, 1))
    return false;
  int64_t n;
  if (!requireConstInt(*e.args[0], "the length of range", n))
    return false;
  if (n <= 0 || n > 65536)
    return error(e.args[0]->loc, "range needs a length from 1 to 65536, got " +
                                     std::to_string(n));
  e.type = SemaType::tile(ScalarType::I32, {n});
  return true;
}

/// reshape, expand_dims.
bool Checker::checkReshape(Expr &e) {
  const std::string &f = e.name;
  if (f == "expand_dims") {
    if (!requireTileArg(e, 2, 2))
      return false;
    const SemaType &t = e.args[0]->type;
    int64_t axis;
    if (!requireConstInt(*e.args[1], "the axis", axis))
      return false;
    if (!checkAxis(e.args[1]->loc, axis, int64_t(t.shape.size()) + 1, t))
      return false;
    std::vector<int64_t> dims = t.shape;
    dims.insert(dims.begin() + axis, 1);
    e.type = SemaType::tile(t.elem, dims);
    return true;
  }
  if (!requireTileArg(e, 2, 2))
    return false;
  const SemaType &t = e.args[0]->type;
  std::vector<int64_t> dims;
  if (!checkShapeList(*e.args[1], dims))
    return false;
  int64_t from = 1, to = 1;
  for (int64_t d : t.shape)
    from *= d;
  for (int64_t d : dims)
    to *= d;
  if (from != to)
    return error(e.args[1]->loc, "cannot reshape " + t.str() + " (" + std::to_string(from) +
                                     " elements) into " + std::to_string(to) + " elements");
  e.type = SemaType::tile(t.elem, dims);
  return true;
}

/// narrow(x, dim, start, length): the part of tensor x whose index along
/// dim is start .. start + length - 1, as a view of its own (a tensor of
/// the same rank: loads read zeros past its end, stores skip it), bound by
/// `let` and used by name like a tensor parameter. start and length are
/// run-time integers, clamped to the tensor (start to [0, size], length to
/// what is left), so a part never reaches outside it.
bool Checker::checkNarrow(Expr &e) {
  if (!checkArgCount(e, 4, 4))
    return false;
  if (!letValue)
    return error(e.loc, "narrow(...) makes a view of a tensor: bind it with let (let part = "
                        "narrow(x, 0, start, n);) and use the name");
  letValue = false; // not for its own arguments
  if (!requireView(e))
    return false;
  Expr &view = *e.args[0];
  if (view.kind != Expr::Kind::Name)
    return error(view.loc, "the first argument of 'narrow' must be a tensor by name");
  int64_t dim;
  if (!requireConstInt(*e.args[1], "the dimension of narrow", dim))
    return false;
  if (dim < 0 || dim >= int64_t(view.type.rank))
    return error(e.args[1]->loc, "'" + view.name + "' has rank " +
                                     std::to_string(view.type.rank) + ", so narrow's dimension "
                                     "must be 0 to " + std::to_string(view.type.rank - 1) +
                                     ", got " + std::to_string(dim));
  if (!requireIntScalar(*e.args[2], "the start of narrow") ||
      !requireIntScalar(*e.args[3], "the length of narrow"))
    return false;
  e.type = view.type;
  return true;
}

/// slice.
bool Checker::checkSlice(Expr &e) {
  if (!requireTileArg(e, 3, 3))
    return false;
  const SemaType &t = e.args[0]->type;
  std::vector<int64_t> starts, sizes;
  if (e.args[1]->kind != Expr::Kind::List)
    return error(e.args[1]->loc, "the starts must be a list of compile-time integers, e.g. [0, 8]");
  for (auto &x : e.args[1]->args) {
    int64_t v;
    if (!requireConstInt(*x, "a start", v))
      return false;
    starts.push_back(v);
  }
  if (!checkShapeList(*e.args[2], sizes))
    return false;
  if (starts.size() != t.shape.size() || sizes.size() != t.shape.size())
    return error(e.loc, "'slice' of " + t.str() + " needs " + std::to_string(t.shape.size()) +
                            " starts and " + std::to_string(t.shape.size()) + " sizes");
  for (size_t d = 0; d < starts.size(); ++d)
    if (starts[d] < 0 || starts[d] + sizes[d] > t.shape[d])
      return error(e.args[1]->args[d]->loc,
                   "the slice [" + std::to_string(starts[d]) + ", " +
                       std::to_string(starts[d] + sizes[d]) + ") of dimension " +
                       std::to_string(d) + " is outside " + t.str());
  e.permutation = starts; // the offsets
  e.type = SemaType::tile(t.elem, sizes);
  return true;
}

/// broadcast.
bool Checker::checkBroadcast(Expr &e) {
  if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument"))
    return false;
  const SemaType &t = e.args[0]->type;
  std::vector<int64_t> dims;
  if (!checkShapeList(*e.args[1], dims))
    return false;
  if (t.isTile()) {
    std::optional<std::vector<int64_t>> s = broadcastShapes(t.shape, dims);
    if (t.shape.size() > dims.size() || !s || *s != dims)
      return error(e.args[1]->loc, "cannot broadcast " + t.str() + " to shape " +
                                       shapeText(dims) +
                                       ": aligned from the innermost, each dimension "
                                       "must equal the target's or be 1");
  }
  e.type = SemaType::tile(t.elem, dims);
  return true;
}

/// transpose, permute.
bool Checker::checkPermute(Expr &e) {
  const std::string &f = e.name;
  bool isT = f == "transpose";
  if (!checkArgCount(e, isT ? 1 : 2, isT ? 1 : 2) || !requireValue(*e.args[0], "the argument"))
    return false;
  const SemaType &t = e.args[0]->type;
  if (!t.isTile() || (isT && t.shape.size() != 2))
    return error(e.args[0]->loc, "'" + f + "' needs a " + (isT ? "2-D " : "") + "tile, got " +
                                     describeOperand(t));
  std::vector<int64_t> perm;
  if (isT) {
    perm = {1, 0};
  } else {
    Expr &p = *e.args[1];
    if (p.kind != Expr::Kind::List)
      return error(p.loc, "the permutation must be a list of dimensions, e.g. [1, 0, 2]");
    for (auto &d : p.args) {
      int64_t v;
      if (!requireConstInt(*d, "a dimension", v))
        return false;
      perm.push_back(v);
    }
    std::vector<bool> seen(t.shape.size(), false);
    bool ok = perm.size() == t.shape.size();
    for (int64_t v : perm) {
      ok &= v >= 0 && v < int64_t(t.shape.size()) && !seen[size_t(v)];
      if (ok)
        seen[size_t(v)] = true;
    }
    if (!ok)
      return error(p.loc, "the permutation of a " + std::to_string(t.shape.size()) +
                              "-D tile must name each dimension 0.." +
                              std::to_string(t.shape.size() - 1) + " once");
  }
  std::vector<int64_t> dims;
  for (int64_t v : perm)
    dims.push_back(t.shape[size_t(v)]);
  e.type = SemaType::tile(t.elem, dims);
  e.permutation = perm;
  return true;
}

/// take.
bool Checker::checkTake(Expr &e) {
  if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the tile") ||
      !requireValue(*e.args[1], "the index"))
    return false;
  const SemaType &t = e.args[0]->type, &i = e.args[1]->type;
  if (!t.isTile() || t.shape.size() != 1)
    return error(e.args[0]->loc, "'take' reads from a 1-D tile, got " + describeOperand(t) +
                                     (t.isTile() ? "; reshape it to one dimension first" : ""));
  if (!i.isTile() || !(isSignedIntType(i.elem) || isUnsignedIntType(i.elem)))
    return error(e.args[1]->loc, "the index of 'take' must be an integer tile, got " +
                                     describeOperand(i));
  e.type = SemaType::tile(t.elem, i.shape);
  return true;
}

/// sum, prod, min, max, argmax, argmin over one axis (`axis = d`).
bool Checker::checkReductionOverAxis(Expr &e, Expr &a, size_t k) {
  const std::string &f = e.name;
  bool argKind = f == "argmax" || f == "argmin";
  if (k != e.args.size() - 1 || e.args.size() != 2)
    return error(a.loc, "'" + f + "(tile, axis = d)' takes the tile and the axis");
  int64_t d;
  if (!requireConstInt(a, "the axis", d))
    return false;
  Expr &t = *e.args[0];
  if (!requireValue(t, "the argument"))
    return false;
  if (!t.type.isTile())
    return error(t.loc, "'" + f + "' over an axis needs a tile, got " + describeOperand(t.type));
  int64_t rank = int64_t(t.type.shape.size());
  if (!checkAxis(a.loc, d, rank, t.type))
    return false;
  if (!reducibleElem(t.type.elem))
    return error(t.loc, "reductions of " + t.type.str() + " are not supported yet; cast to f32 or i32");
  e.args.pop_back();
  ScalarType resultElem = argKind ? ScalarType::I32 : t.type.elem;
  if (rank == 1) { // the whole tile
    e.type = SemaType::scalar(resultElem);
    return true;
  }
  std::vector<int64_t> dims = t.type.shape;
  dims.erase(dims.begin() + d);
  e.axis = d;
  e.type = SemaType::tile(resultElem, dims);
  return true;
}

/// sum, prod, min, max, argmax, argmin.
bool Checker::checkReduction(Expr &e) {
  const std::string &f = e.name;
  if ((f == "sum" || f == "min" || f == "max" || f == "prod") && e.args.size() != 2) {
    // One argument: a reduction of the whole tile to a scalar.
    if (e.args.size() != 1)
      return error(e.loc, "'" + f + "' takes a tile (reduction)" +
                              (f == "sum" || f == "prod" ? std::string("")
                                                         : " or two values (elementwise)") +
                              ", got " + std::to_string(e.args.size()) + " arguments");
    if (!requireValue(*e.args[0], "the argument"))
      return false;
    const SemaType &t = e.args[0]->type;
    if (!t.isTile())
      return error(e.args[0]->loc, "'" + f + "' of one argument reduces a tile, got " +
                                       describeOperand(t));
    if (!reducibleElem(t.elem))
      return error(e.args[0]->loc, "reductions of " + t.str() +
                                       " are not supported yet; cast to f32 or i32");
    e.type = SemaType::scalar(t.elem);
    return true;
  }
  if (f == "sum" || f == "prod")
    return error(e.loc, "'" + f + "' reduces one tile; over one axis write " + f +
                            "(t, axis = d)");
  if (f == "argmax" || f == "argmin") {
    if (!requireTileArg(e, 1, 1))
      return false;
    const SemaType &t = e.args[0]->type;
    if (!reducibleElem(t.elem))
      return error(e.args[0]->loc, "'" + f + "' of " + t.str() +
                                       " is not supported yet; cast to f32 or i32");
    e.type = SemaType::scalar(ScalarType::I32);
    return true;
  }
  if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument") ||
      !requireValue(*e.args[1], "the argument"))
    return false;
  Unified u = unifyOperands(e.args[0]->type, e.args[1]->type,
                            f == "min" ? "take the min of" : "take the max of");
  if (!u.error.empty())
    return error(e.loc, u.error);
  if (u.type.elem == ScalarType::I1)
    return error(e.loc, "'" + f + "' needs numbers, not booleans");
  e.type = u.type;
  return true;
}

/// reduce, scan.
bool Checker::checkCombine(Expr &e) {
  const std::string &f = e.name;
  bool isScan = f == "scan";
  if (e.args.size() < 2 || e.args.size() > (isScan ? 2u : 3u))
    return error(e.loc, isScan ? std::string("'scan' takes a 1-D tile and a combiner: "
                                             "scan(t, fn(a, b) { return a + b; })")
                               : std::string("'reduce' takes a tile, an optional axis and a "
                                             "combiner: reduce(t, 1, fn(a, b) { return a + "
                                             "b; })"));
  Expr &t = *e.args[0];
  if (!requireValue(t, "the argument"))
    return false;
  if (!t.type.isTile() || (isScan && t.type.shape.size() != 1))
    return error(t.loc, "'" + f + "' needs a " + (isScan ? "1-D " : "") + "tile, got " +
                            describeOperand(t.type));
  std::vector<int64_t> dims;
  if (e.args.size() == 3) {
    int64_t d;
    if (!requireConstInt(*e.args[1], "the axis", d))
      return false;
    int64_t rank = int64_t(t.type.shape.size());
    if (!checkAxis(e.args[1]->loc, d, rank, t.type))
      return false;
    if (rank > 1) {
      e.axis = d;
      dims = t.type.shape;
      dims.erase(dims.begin() + d);
    }
    e.args.erase(e.args.begin() + 1);
  }
  ScalarType elem = t.type.elem;
  if (!checkCombiner(e.args[1], elem, f))
    return false;
  if (isScan)
    e.type = SemaType::tile(elem, e.args[0]->type.shape);
  else
    e.type = e.axis ? SemaType::tile(elem, dims) : SemaType::scalar(elem);
  return true;
}

/// cumsum.
bool Checker::checkCumsum(Expr &e) {
  if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument"))
    return false;
  const SemaType &t = e.args[0]->type;
  if (!t.isTile() || t.shape.size() != 1)
    return error(e.args[0]->loc, "'cumsum' needs a 1-D tile, got " + describeOperand(t) +
                                     (t.isTile() ? "; reshape it to one dimension first" : ""));
  if (!reducibleElem(t.elem))
    return error(e.args[0]->loc, "'cumsum' of " + t.str() +
                                     " is not supported yet; cast to f32 or i32");
  e.type = t;
  e.type.weak = false;
  return true;
}

/// mma.
bool Checker::checkMma(Expr &e) {
  bool named = e.args.size() == 4 && e.args[3]->argName == "tf32";
  if (named ? !requireValues(e, 4, 4, "an argument of 'mma'")
            : !requireValues(e, 3, 3, "an argument of 'mma'"))
    return false;
  if (named) {
    const Expr &t = *e.args[3];
    if (!t.constInt || !t.type.isScalar() || isFloatType(t.type.elem))
      return error(t.loc, "tf32 must be a compile-time true or false");
    e.tf32 = *t.constInt != 0;
  }
  const SemaType &a = e.args[0]->type, &b = e.args[1]->type, &c = e.args[2]->type;
  const char *names[3] = {"a", "b", "the accumulator"};
  for (int k = 0; k < 3; ++k) {
    const SemaType &t = e.args[k]->type;
    if (!t.isTile() || t.shape.size() != 2)
      return error(e.args[k]->loc, std::string("mma needs ") + names[k] +
                                       " to be a 2-D tile, got " + describeOperand(t));
  }
  // f8e4m3 and f8e5m2 mix (wgmma takes either for each operand).
  if (a.elem != b.elem && !(isFloat8Type(a.elem) && isFloat8Type(b.elem)))
    return error(e.loc, "mma needs a and b of one element type, got " + a.str() +
                            " and " + b.str() + "; convert one with cast<...>(...)");
  if (a.elem != ScalarType::F16 && a.elem != ScalarType::BF16 && a.elem != ScalarType::F32 &&
      !isFloat8Type(a.elem))
    return error(e.args[0]->loc,
                 std::string("mma takes f16, bf16, f32, f8e4m3 or f8e5m2 operands, got ") +
                     a.str());
  if (e.tf32 && a.elem != ScalarType::F32)
    return error(e.args[3]->loc, "tf32 = true is for f32 operands; these are " + a.str() +
                                     " (f16 and bf16 always run on the tensor cores)");
  if (a.shape[1] != b.shape[0])
    return error(e.loc, "cannot multiply " + a.str() + " by " + b.str() +
                            ": a has " + std::to_string(a.shape[1]) +
                            " columns but b has " + std::to_string(b.shape[0]) + " rows");
  if (c.elem != ScalarType::F32)
    return error(e.args[2]->loc, "the accumulator of mma must be tile<f32>, got " +
                                     c.str() + "; start it with zeros<f32>([...])");
  if (c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1])
    return error(e.args[2]->loc,
                 "the accumulator " + c.str() + " does not match the product shape " +
                     shapeText({a.shape[0], b.shape[1]}));
  e.type = c;
  e.type.weak = false;
  return true;
}

/// pow, fma.
bool Checker::checkPowFma(Expr &e) {
  const std::string &f = e.name;
  size_t n = f == "pow" ? 2 : 3;
  if (!requireValues(e, n, n, "an argument"))
    return false;
  SemaType t = e.args[0]->type;
  for (size_t k = 1; k < n; ++k) {
    Unified u = unifyOperands(t, e.args[k]->type, f == "pow" ? "raise" : "fma");
    if (!u.error.empty())
      return error(e.loc, u.error);
    t = u.type;
  }
  if (!isFloatType(t.elem))
    return error(e.loc, "'" + f + "' needs float arguments, got " + describeOperand(t) +
                            "; convert with cast<f32>(...)");
  if (f == "pow" && t.elem == ScalarType::F64)
    return error(e.loc, "'pow' of f64 is not supported yet; compute in f32 with cast<f32>(...)");
  t.weak = false;
  e.type = t;
  return true;
}

/// cdiv.
bool Checker::checkCdiv(Expr &e) {
  if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument") ||
      !requireValue(*e.args[1], "the argument"))
    return false;
  Unified u = unifyOperands(e.args[0]->type, e.args[1]->type, "cdiv");
  if (!u.error.empty())
    return error(e.loc, u.error);
  if (isFloatType(u.type.elem) || u.type.elem == ScalarType::I1)
    return error(e.loc, "'cdiv' needs integers, got " + u.type.str());
  e.type = u.type;
  if (e.args[0]->constInt && e.args[1]->constInt) {
    int64_t b = *e.args[1]->constInt;
    if (b == 0)
      return error(e.loc, "division by zero in a compile-time expression");
    int64_t a = *e.args[0]->constInt;
    // The one quotient that does not fit (and traps on the host).
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
      return error(e.loc, "compile-time integer overflow: cdiv(" + std::to_string(a) +
                              ", -1) does not fit in 64 bits");
    e.constInt = a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
  }
  return true;
}

/// where.
bool Checker::checkWhere(Expr &e) {
  if (!requireValues(e, 3, 3, "an argument of 'where'"))
    return false;
  const SemaType &c = e.args[0]->type;
  if (c.elem != ScalarType::I1)
    return error(e.args[0]->loc, "the condition of 'where' must be a boolean "
                                 "(a comparison), got " + c.str());
  Unified u = unifyOperands(e.args[1]->type, e.args[2]->type, "select between");
  if (!u.error.empty())
    return error(e.loc, u.error);
  // The condition broadcasts with the values like a binary operator's
  // operands (numpy rules).
  if (c.isTile() && u.type.isTile() && c.shape != u.type.shape) {
    std::optional<std::vector<int64_t>> s = broadcastShapes(c.shape, u.type.shape);
    if (!s)
      return error(e.loc, "the condition " + c.str() + " and the values " +
                              u.type.str() + " of 'where' do not broadcast to one shape");
    u.type.shape = *s;
  }
  if (c.isTile() && !u.type.isTile()) {
    u.type.kind = SemaType::Kind::Tile;
    u.type.shape = c.shape;
    u.type.weak = false;
  }
  e.type = u.type;
  if (e.args[0]->constInt && e.args[1]->constInt && e.args[2]->constInt &&
      !isFloatType(u.type.elem))
    e.constInt = *e.args[0]->constInt ? *e.args[1]->constInt : *e.args[2]->constInt;
  return true;
}

/// cast.
bool Checker::checkCast(Expr &e) {
  if (!e.typeArg)
    return error(e.loc, "'cast' needs a target type: cast<f16>(x)");
  if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument of 'cast'"))
    return false;
  SemaType target;
  if (!resolveType(*e.typeArg, target, false))
    return false;
  e.type = e.args[0]->type;
  e.type.elem = target.elem;
  e.type.weak = false;
  return true;
}

/// print, assert.
bool Checker::checkDebug(Expr &e) {
  const std::string &f = e.name;
  bool isPrint = f == "print";
  if (e.args.empty() || (!isPrint && e.args.size() != 2))
    return error(e.loc, isPrint ? std::string("'print' takes a text and values: print(\"x =\", x)")
                                : std::string("'assert' takes a condition and a message: "
                                              "assert(i < n, \"i out of range\")"));
  Expr &text = *e.args[isPrint ? 0 : 1];
  if (text.kind != Expr::Kind::StringLit)
    return error(text.loc, std::string("the ") + (isPrint ? "text of 'print'" : "message of 'assert'") +
                               " must be a string literal");
  if (text.name.find('%') != std::string::npos)
    return error(text.loc, "the text may not contain '%'; values are formatted by their type");
  e.elementShape.clear();
  for (size_t k = isPrint ? 1 : 0; k < (isPrint ? e.args.size() : 1); ++k) {
    Expr &v = *e.args[k];
    if (!requireValue(v, isPrint ? "a printed value" : "the condition"))
      return false;
    if (!isPrint && v.type.elem != ScalarType::I1)
      return error(v.loc, "the condition of 'assert' must be a boolean (a comparison), got " +
                              describeOperand(v.type));
    if (!joinElementShape(e, v, "values'"))
      return false;
  }
  if (isPrint && e.args.size() > 9)
    return error(e.args[9]->loc, "'print' takes at most 8 values");
  e.type.kind = SemaType::Kind::Void;
  return true;
}

/// The elementwise math of UnaryMath.def.
bool Checker::checkUnaryMath(Expr &e) {
  const std::string &f = e.name;
  if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument"))
    return false;
  SemaType t = e.args[0]->type;
  if (isFloat8Type(t.elem))
    return error(e.args[0]->loc, "'" + f + "' of " + t.str() + ": " + float8Rule(t.elem));
  if (f != "abs" && !isFloatType(t.elem))
    return error(e.args[0]->loc, "'" + f + "' needs a float argument, got " +
                                     describeOperand(t) + "; convert with cast<f32>(...)");
  if (t.elem == ScalarType::F64 && !unaryMathSupportsF64(f))
    return error(e.loc, "'" + f + "' of f64 is not supported yet; compute in "
                        "f32 with cast<f32>(...)");
  if (f == "abs" && (t.elem == ScalarType::I1 || isUnsignedIntType(t.elem)))
    return error(e.args[0]->loc, "'abs' needs a signed number, got " + t.str());
  if (t.weak) // exp(1.0) is an f32 computation
    t.weak = false;
  e.type = t;
  return true;
}
