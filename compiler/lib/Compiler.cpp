//===- Compiler.cpp - The embeddable compiler API -------------------------===//
//
// source -> parse -> Sema (per kernel, with -D) -> MLIRGen -> verify ->
// tile-to-llvm pipeline -> LLVM IR -> PTX. Each stage can be the last one
// (`EmitKind`). Errors from any stage end up in `CompileResult::diagnostics`;
// MLIR diagnostics are captured with their `.tile` source locations.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"
#include "tilec/Cache.h"

#include "llvm/Support/raw_ostream.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"
#include "tilec/Frontend/MLIRGen.h"
#include "tilec/Frontend/Parser.h"
#include "tilec/Frontend/Sema.h"
#include "tilec/Pipeline.h"
#include "tilec/Stack.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include <mutex>
#include <map>
#include <functional>
#include <future>
#include <thread>
#include <optional>
#include <set>

using namespace tilec;


static CompileResult compileOnThisStack(std::string_view source,
                                        const CompileOptions &options);

CompileResult tilec::compile(std::string_view source,
                             const CompileOptions &options) {
  // On a stack of known size: the caller's thread may have a small one.
  CompileResult result;
  runOnCompilerStack([&] { result = compileOnThisStack(source, options); });
  return result;
}

static CompileResult compileOnThisStack(std::string_view source,
                                        const CompileOptions &options) {
  CompileResult result;
  llvm::SourceMgr srcMgr;
  srcMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(source.data(), source.size()), options.fileName),
      llvm::SMLoc());
  DiagEngine diags(srcMgr);
  auto finish = [&]() {
    result.diagnostics = diags.text();
    result.ok = !diags.hadError();
    return result;
  };

  if (options.arch != "sm_90a" && options.arch != "sm_80" &&
      options.arch != "sm_90") {
    diags.error("unsupported --arch '" + options.arch +
                "'; use sm_80, sm_90 or sm_90a");
    return finish();
  }
  if (options.optLevel > 3) {
    diags.error("optimization level must be 0 to 3");
    return finish();
  }
  if (options.numWarps > 32 || (options.numWarps & (options.numWarps - 1))) {
    diags.error("--num-warps must be a power of two from 1 to 32");
    return finish();
  }
  if (options.minBlocksPerSM > 32) {
    diags.error("--min-blocks-per-sm must be 0 to 32 (an SM holds at most 32 blocks)");
    return finish();
  }

  std::unique_ptr<ModuleDecl> ast = parseModule(diags);
  if (!ast)
    return finish();
  if (options.emit == EmitKind::AST) {
    llvm::raw_string_ostream os(result.output);
    dumpAST(*ast, diags, os);
    return finish();
  }

  // Check every selected kernel.
  std::vector<KernelInstance> instances;
  std::set<std::string> usedDefines;
  std::set<std::string> seen;
  bool foundKernel = options.kernel.empty();
  for (auto &k : ast->kernels) {
    if (!seen.insert(k->name).second) {
      diags.error(k->loc, "kernel '" + k->name + "' is defined twice");
      return finish();
    }
    if (!options.kernel.empty() && k->name != options.kernel)
      continue;
    foundKernel = true;
    KernelInstance inst;
    if (!checkKernel(*k, options.defines, diags, inst, usedDefines, options.arch))
      return finish();
    instances.push_back(std::move(inst));
  }
  if (!foundKernel) {
    diags.error("no kernel named '" + options.kernel + "' in " + options.fileName);
    return finish();
  }
  for (auto &[name, value] : options.defines)
    if (!usedDefines.count(name)) {
      diags.error("-D " + name + "=" + value +
                  ": no compiled kernel has a compile-time parameter '" + name + "'");
      return finish();
    }

  mlir::DialectRegistry registry;
  registerTilecDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  // Any MLIR diagnostic past Sema is a compiler bug or an unsupported
  // construct; report it at its source location like every other error.
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
      return mlir::success();
    llvm::SMLoc loc;
    // The first source position in the location (a fused, named or
    // call-site location holds one inside). A constant hoisted by a fold has
    // none: errors about such ops are emitted at a user's position
    // (tile::emitUserError).
    // Positions in the built-in helpers' source ("<prelude>") are not the
    // user's file: only one in it is shown.
    if (mlir::FileLineColLoc fl = tilec::tile::sourcePosition(d.getLocation())) {
      unsigned line = fl.getLine(), col = fl.getColumn();
      if (line > 0 && line <= srcMgr.getMemoryBuffer(1)->getBuffer().count('\n') + 1) {
        loc = srcMgr.FindLocForLineAndColumn(1, line, col);
      }
    }
    if (loc.isValid())
      diags.error(loc, d.str());
    else
      diags.error(d.str());
    result.internalError = true;
    return mlir::success();
  });

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::FileLineColLoc::get(&ctx, options.fileName, 1, 1));
  for (const KernelInstance &inst : instances)
    genKernel(*module, inst, diags);
  if (mlir::failed(mlir::verify(*module))) {
    diags.error("internal error: generated tile IR does not verify");
    result.internalError = true;
    return finish();
  }
  if (options.emit == EmitKind::Tile) {
    llvm::raw_string_ostream os(result.output);
    module->print(os);
    for (auto &inst : instances)
      result.kernels.push_back(inst.signature);
    return finish();
  }

  mlir::PassManager pm(&ctx);
  PipelineOptions pipelineOptions;
  pipelineOptions.numWarps = options.numWarps;
  pipelineOptions.minBlocksPerSM = options.minBlocksPerSM;
  pipelineOptions.arch = options.arch;
  buildTileToLLVMPipeline(pm, pipelineOptions);
  // The module is verified once, after the whole pipeline, not after each
  // of its passes: on a matmul's unrolled epilogue the per-pass checks
  // were about a twentieth of the compile (tile-opt and the lit tests
  // still verify after every pass).
  pm.enableVerifier(false);
  if (timePassesRequested())
    pm.enableTiming();
  if (mlir::failed(pm.run(*module)) || mlir::failed(mlir::verify(*module))) {
    if (!diags.hadError())
      diags.error("internal error: lowering failed");
    result.internalError = true;
    return finish();
  }
  for (KernelInstance &inst : instances) {
    auto fn = module->lookupSymbol(inst.signature.name);
    if (auto warps = fn ? fn->getAttrOfType<mlir::IntegerAttr>(tile::kNumWarpsAttrName)
                        : mlir::IntegerAttr())
      inst.signature.numThreads = 32 * warps.getInt();
    if (auto smem = fn ? fn->getAttrOfType<mlir::IntegerAttr>(tile::kSharedBytesAttrName)
                       : mlir::IntegerAttr())
      inst.signature.sharedBytes = static_cast<unsigned>(smem.getInt());
    if (auto tma = fn ? fn->getAttrOfType<mlir::ArrayAttr>(tile::kTmaAttrName) : mlir::ArrayAttr())
      for (mlir::Attribute a : tma) {
        auto v = mlir::cast<mlir::DenseI64ArrayAttr>(a).asArrayRef();
        inst.signature.tma.push_back(TmaOperand{unsigned(v[0]), unsigned(v[1]), unsigned(v[2])});
      }
    if (auto cluster = fn ? fn->getAttrOfType<mlir::IntegerAttr>(tile::kClusterAttrName)
                          : mlir::IntegerAttr())
      inst.signature.cluster = unsigned(cluster.getInt());
    result.kernels.push_back(inst.signature);
  }

  std::string error, llvmIR;
  if (!emitPTX(*module, options.arch, options.optLevel, result.ptx,
               options.emit == EmitKind::LLVM ? &llvmIR : nullptr, error)) {
    diags.error(error);
    result.internalError = true;
    return finish();
  }
  result.output = options.emit == EmitKind::LLVM ? llvmIR : result.ptx;
  return finish();
}

// The driver compiles through the cache; the cache itself only stores and
// finds results (it does not call the compiler).
std::shared_ptr<const CompileResult>
tilec::compileCached(std::string_view source, const CompileOptions &options,
                     CompileCache &cache) {
  using Result = std::shared_ptr<const CompileResult>;
  bool cacheable = options.emit == EmitKind::PTX;
  // TILEC_CACHE_TRACE=1: one line per lookup on stderr (tests, debugging).
  static const bool trace = [] {
    const char *t = std::getenv("TILEC_CACHE_TRACE");
    return t && *t && std::string_view(t) != "0";
  }();
  if (!cacheable)
    return std::make_shared<CompileResult>(compile(source, options));
  std::string key = cacheKey(source, options);
  // Single flight: threads that miss the same key while it compiles wait
  // for that one compilation instead of repeating it. The lookup happens
  // under the table's lock, so a compilation that finishes (stored, then
  // out of the table) cannot be missed in between.
  std::promise<Result> promise;
  std::shared_future<Result> pending;
  {
    std::lock_guard<std::mutex> lock(cache.flightMutex);
    auto it = cache.flights.find(key);
    if (it != cache.flights.end()) {
      pending = it->second;
    } else if (Result hit = cache.lookup(key)) {
      if (trace)
        llvm::errs() << "tilec: cache hit " << key << "\n";
      return hit;
    } else {
      cache.flights.emplace(key, promise.get_future().share());
    }
  }
  if (pending.valid()) { // waited for outside the lock
    if (trace)
      llvm::errs() << "tilec: cache wait " << key << "\n";
    return pending.get();
  }
  if (trace)
    llvm::errs() << "tilec: cache miss " << key << "\n";
  // compile() reports failures in its result, but memory can run out: the
  // waiters then get the exception, and the key leaves the table either way.
  auto leave = [&] {
    std::lock_guard<std::mutex> lock(cache.flightMutex);
    cache.flights.erase(key);
  };
  Result result;
  try {
    result = std::make_shared<CompileResult>(compile(source, options));
    if (result->ok)
      cache.store(key, result);
  } catch (...) {
    promise.set_exception(std::current_exception());
    leave();
    throw;
  }
  promise.set_value(result);
  leave();
  return result;
}

/// The values `e` can take when it is a constant or a `where` of such
/// (nullopt for anything computed from the arguments).
static std::optional<std::set<int64_t>> leafValues(const GridExpr &e) {
  if (e.kind == GridExpr::Kind::Const)
    return std::set<int64_t>{e.value};
  if (e.kind != GridExpr::Kind::Where || e.operands.size() != 3)
    return std::nullopt;
  auto a = leafValues(e.operands[1]), b = leafValues(e.operands[2]);
  if (!a || !b)
    return std::nullopt;
  a->insert(b->begin(), b->end());
  return a;
}

namespace {
/// The combinations of values a kernel's @heuristic can give, found by
/// evaluating every `where` on representative arguments: each expression X
/// that a condition compares with a constant c takes c - 1, c and c + 1
/// (every side of every such comparison), each other condition true and
/// false. Conditions on the same X are thus evaluated together (C.shape[0]
/// <= 16 and C.shape[0] <= 64 cannot differ the wrong way), so combinations
/// no arguments reach are left out. A conjunction of two or more `X == c`
/// (a @tuned row's match) is one point of its tuple of X's: the rows over
/// the same X's exclude one another, so they take one axis (no row, or
/// which row) instead of a boolean each. nullopt where the conditions have
/// too many such points to enumerate.
class ReachableHeuristics {
public:
  explicit ReachableHeuristics(const KernelSignature &sig) : sig(sig) {}

  std::optional<std::set<std::vector<int64_t>>> combos() {
    // The points: each compared expression's constants, each other
    // condition as itself.
    std::map<std::string, std::set<int64_t>> variables;
    std::set<std::string> opaque;
    for (const Heuristic &h : sig.heuristics)
      (void)atoms(
          h.value, false,
          [&](const GridExpr &x, std::optional<int64_t> c) {
            if (c)
              variables[key(x)].insert(*c);
            else
              opaque.insert(key(x));
            return x;
          },
          [&](const std::string &over, const std::vector<int64_t> &values) {
            tuples[over].insert(values);
            return GridExpr();
          });
    std::vector<std::pair<std::string, std::vector<int64_t>>> axes;
    for (auto &[key, points] : variables) {
      std::set<int64_t> values;
      for (int64_t c : points)
        for (int64_t d : {-1, 0, 1})
          values.insert(c + d);
      axes.emplace_back(key, std::vector<int64_t>(values.begin(), values.end()));
    }
    for (const std::string &key : opaque)
      axes.emplace_back(key, std::vector<int64_t>{0, 1});
    // A tuple axis: 0 (no tuple matches), or 1 + the index of the one that does.
    for (auto &[over, values] : tuples) {
      std::vector<int64_t> which(values.size() + 1);
      for (size_t i = 0; i < which.size(); ++i)
        which[i] = int64_t(i);
      axes.emplace_back("tuple " + over, which);
    }
    size_t total = 1;
    for (auto &axis : axes)
      if ((total *= axis.second.size()) > 100000)
        return std::nullopt;
    // Each point: the heuristics with every atom replaced by its value,
    // evaluated as the runtime evaluates them.
    std::set<std::vector<int64_t>> result;
    std::map<std::string, int64_t> assignment;
    std::vector<size_t> at(axes.size(), 0);
    for (size_t n = 0; n < total; ++n) {
      for (size_t i = 0; i < axes.size(); ++i)
        assignment[axes[i].first] = axes[i].second[at[i]];
      std::vector<int64_t> combo;
      for (const Heuristic &h : sig.heuristics) {
        std::optional<int64_t> v = evaluateConstant(atoms(
            h.value, false,
            [&](const GridExpr &x, std::optional<int64_t>) {
              return GridExpr::constant(assignment.at(key(x)));
            },
            [&](const std::string &over, const std::vector<int64_t> &values) {
              const std::set<std::vector<int64_t>> &all = tuples.at(over);
              int64_t index = 1 + std::distance(all.begin(), all.find(values));
              return GridExpr::constant(assignment.at("tuple " + over) == index);
            }));
        if (!v)
          return std::nullopt;
        combo.push_back(*v);
      }
      result.insert(combo);
      for (size_t i = 0; i < axes.size() && ++at[i] == axes[i].second.size(); ++i)
        at[i] = 0;
    }
    return result;
  }

private:
  std::string key(const GridExpr &e) const { return e.str(sig.params); }
  /// Whether `e` is a conjunction of two or more `X == c`; `over` gets the
  /// X's (sorted, joined) and `values` their constants in that order.
  bool tuple(const GridExpr &e, std::string &over, std::vector<int64_t> &values) const {
    using K = GridExpr::Kind;
    std::map<std::string, int64_t> eqs;
    std::function<bool(const GridExpr &)> walk = [&](const GridExpr &x) {
      if (x.kind == K::And) {
        for (const GridExpr &o : x.operands)
          if (!walk(o))
            return false;
        return true;
      }
      if (x.kind != K::Eq || x.operands.size() != 2 || x.operands[1].kind != K::Const ||
          x.operands[0].kind == K::Const)
        return false;
      return eqs.emplace(key(x.operands[0]), x.operands[1].value).second;
    };
    if (e.kind != K::And || !walk(e) || eqs.size() < 2)
      return false;
    over.clear();
    values.clear();
    for (auto &[x, c] : eqs) {
      over += (over.empty() ? "" : ", ") + x;
      values.push_back(c);
    }
    return true;
  }
  /// `e` with each atom of its `where` conditions replaced by `fn(atom, c)`:
  /// in a comparison with a constant c, the other side (c given); any other
  /// condition that is not `&&` / `||`, whole (c nullopt); a tuple
  /// condition (above) by `tupleFn(over, values)`.
  template <typename Fn, typename TupleFn>
  GridExpr atoms(const GridExpr &e, bool inCondition, Fn &&fn, TupleFn &&tupleFn) const {
    using K = GridExpr::Kind;
    GridExpr r = e;
    if (e.kind == K::Where && e.operands.size() == 3 && !inCondition) {
      for (size_t i = 0; i < 3; ++i)
        r.operands[i] = atoms(e.operands[i], i == 0, fn, tupleFn);
      return r;
    }
    if (!inCondition || e.kind == K::Const)
      return r;
    std::string over;
    std::vector<int64_t> values;
    if (tuple(e, over, values))
      return tupleFn(over, values);
    if (e.kind == K::And || e.kind == K::Or) {
      for (GridExpr &o : r.operands)
        o = atoms(o, true, fn, tupleFn);
      return r;
    }
    bool comparison = e.kind == K::Lt || e.kind == K::Le || e.kind == K::Gt ||
                      e.kind == K::Ge || e.kind == K::Eq || e.kind == K::Ne;
    if (comparison && e.operands.size() == 2)
      for (size_t side = 0; side < 2; ++side)
        if (e.operands[1 - side].kind == K::Const && e.operands[side].kind != K::Const) {
          r.operands[side] = fn(e.operands[side], e.operands[1 - side].value);
          return r;
        }
    return fn(e, std::nullopt);
  }

  const KernelSignature &sig;
  /// The tuples of constants each set of X's is compared with.
  std::map<std::string, std::set<std::vector<int64_t>>> tuples;
};
} // namespace

std::vector<HeuristicVariant>
tilec::compileHeuristicVariants(std::string_view source, const CompileOptions &options,
                                const CompileResult &result, bool useCache) {
  // At most kMaxVariants compiled variants, of a cross product of at most
  // kMaxCombinations before the unreachable ones are left out.
  constexpr size_t kMaxVariants = 64, kMaxCombinations = 4096;
  std::vector<HeuristicVariant> variants;
  for (const KernelSignature &sig : result.kernels) {
    if (sig.heuristics.empty())
      continue;
    // The cross product of each parameter's possible values.
    std::vector<std::vector<std::pair<std::string, int64_t>>> combos = {{}};
    bool enumerable = true;
    for (const Heuristic &h : sig.heuristics) {
      std::optional<std::set<int64_t>> values = leafValues(h.value);
      if (!values) {
        enumerable = false;
        break;
      }
      std::vector<std::vector<std::pair<std::string, int64_t>>> next;
      for (const auto &combo : combos)
        for (int64_t v : *values) {
          next.push_back(combo);
          next.back().emplace_back(h.param, v);
        }
      combos = std::move(next);
      if (combos.size() > kMaxCombinations) {
        enumerable = false;
        break;
      }
    }
    if (!enumerable)
      continue;
    // Only the combinations some arguments reach.
    if (auto reachable = ReachableHeuristics(sig).combos()) {
      llvm::erase_if(combos, [&](const std::vector<std::pair<std::string, int64_t>> &combo) {
        std::vector<int64_t> values;
        for (const auto &[name, v] : combo)
          values.push_back(v);
        return !reachable->count(values);
      });
    }
    if (combos.size() > kMaxVariants)
      continue;
    // Compiled on the host's cores, as many at once as it has.
    size_t width = std::max(1u, std::thread::hardware_concurrency());
    for (size_t first = 0; first < combos.size(); first += width) {
      std::vector<std::future<CompileResult>> compiles;
      for (size_t i = first; i < std::min(combos.size(), first + width); ++i) {
        CompileOptions o = options;
        o.kernel = sig.name;
        o.emit = EmitKind::PTX;
        for (const auto &[name, value] : combos[i])
          o.defines[name] = std::to_string(value);
        // Through the compile cache where the caller uses it: a header
        // made again, or the same variant launched from Python or C,
        // compiles it once.
        compiles.push_back(std::async(std::launch::async, [o, source, useCache] {
          return useCache ? *compileCached(source, o) : compile(source, o);
        }));
      }
      for (size_t i = first; i < std::min(combos.size(), first + width); ++i) {
        CompileResult r = compiles[i - first].get();
        if (r.ok)
          variants.push_back({sig.name, combos[i], std::move(r)});
      }
    }
  }
  return variants;
}
