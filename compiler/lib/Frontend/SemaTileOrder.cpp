//===- SemaTileOrder.cpp - @launch(persistent, group_rows, pair_tiles) ----===//
//
// The order in which a kernel's programs cover its grid, chosen at launch
// (`@launch(group_rows = G)`), and persistence (`@launch(persistent = 1)`):
// one program per resident slot, each looping over the grid's programs.
// Both are a rewrite of the kernel's syntax tree before it is checked, so
// the rest of the compiler (the general mma pipeline for a loop around the
// mma loop, the interpreter) sees what a user would have written by hand,
// as examples/matmul.tile's matmul_persistent does:
//
//   kernel k(...) grid(GX, GY) { body }
//
// with persistent = 1 and group_rows = G becomes
//
//   kernel k(...) grid(min(GX * GY, resident_programs())) {
//     let $p0 = cast<i64>(block_id(0)); let $np = cast<i64>(num_blocks(0));
//     let $gx = cast<i64>(GX); let $gy = cast<i64>(GY);
//     for $p in $p0 .. $gx * $gy step $np {
//       <$p's place in grouped order (group_rows = 0: dimension 0 first):
//        $bid0, $bid1>
//       body, with block_id(d) -> $bid<d>, num_blocks(d) -> $nb<d>
//     }
//   }
//
// With pair_tiles = 1 the loop runs over the program's pairs of consecutive
// grid programs (2 ($p0 + i $np) and the next: the grid has one program per
// pair), so that a grid whose programs pair a long tile with a short one
// (causal attention's query blocks n - 1 - i and i) gives every program the
// same work:
//
//     for $k in 0 .. $count { let $p = 2 ($p0 + ($k / 2) $np) + $k % 2; ... }
//
// With cluster = 2 (persistent kernels only) the programs run in clusters
// of two, program 2c + r (r = 0, 1), and loop over pairs of rows of tiles:
//
//     for $q in c .. cdiv(GX, 2) * GY step num_blocks(0) / 2 {
//       <$q's place in grouped order over cdiv(GX, 2) x GY, G / 2 rows:
//        $pb0, $bid1>; let $bid0 = 2 $pb0 + r; body }
//
// on a grid of 2 min(cdiv(GX, 2) * GY, resident_programs() / 2), so that
// the two programs of a cluster always take tiles of the same column, whose
// tiles of b they load once for both (TMA multicast, tile-stage-shared).
//
// With cluster = 2 and group_rows = G but persistent = 0, the launch's pair
// c = block_id(0) / 2 of column block_id(1) is placed in grouped order over
// cdiv(GX, 2) x GY pairs (G / 2 pair rows), and program 2c + r takes row
// 2 $pb0 + r of it, on a grid of 2 cdiv(GX, 2) x GY, so that the two
// programs of a cluster share a column (and b's tiles) in grouped order.
//
// and with persistent = 0 (and group_rows > 0) the body is kept in place,
// behind the grouped place of the launch's linear program number. Grouped
// order: the programs walk bands of G values of grid dimension 0 (the rows
// of output tiles of a matmul), column by column inside a band, so that the
// programs running at once share the rows of A and the columns of B they
// read in L2.
//
//===----------------------------------------------------------------------===//

#include "SemaChecker.h"

using namespace tilec;
using namespace tilec::sema;

namespace {
/// Builds the rewrite's syntax, located at `loc` (the kernel's name).
struct Build {
  llvm::SMLoc loc;

  ExprPtr name(const std::string &n) const {
    auto e = std::make_unique<Expr>(Expr::Kind::Name, loc);
    e->name = n;
    return e;
  }
  ExprPtr lit(int64_t v) const {
    auto e = std::make_unique<Expr>(Expr::Kind::IntLit, loc);
    e->intValue = v;
    return e;
  }
  ExprPtr bin(Expr::Op op, ExprPtr a, ExprPtr b) const {
    auto e = std::make_unique<Expr>(Expr::Kind::Binary, loc);
    e->op = op;
    e->height = std::max(a->height, b->height) + 1;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }
  ExprPtr call(const std::string &f, std::vector<ExprPtr> args) const {
    auto e = std::make_unique<Expr>(Expr::Kind::Call, loc);
    e->name = f;
    for (auto &a : args)
      e->height = std::max(e->height, a->height + 1);
    e->args = std::move(args);
    return e;
  }
  ExprPtr call(const std::string &f, ExprPtr a) const {
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    return call(f, std::move(args));
  }
  ExprPtr call(const std::string &f, ExprPtr a, ExprPtr b) const {
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return call(f, std::move(args));
  }
  ExprPtr cast(ScalarType t, ExprPtr a) const {
    ExprPtr e = call("cast", std::move(a));
    e->typeArg = std::make_unique<TypeExpr>();
    e->typeArg->kind = TypeExpr::Kind::Scalar;
    e->typeArg->loc = loc;
    e->typeArg->scalar = t;
    return e;
  }
  ExprPtr programId(const char *f, int64_t d) const {
    return cast(ScalarType::I64, call(f, lit(d)));
  }
  StmtPtr let(const std::string &n, ExprPtr v) const {
    auto s = std::make_unique<Stmt>(Stmt::Kind::Let, loc);
    s->name = n;
    s->nameLoc = loc;
    s->value = std::move(v);
    return s;
  }

  /// The row of tiles of program 2c + $r of a pair in pair row $pb0:
  /// $bid0 = 2 $pb0 + $r (i32).
  StmtPtr pairedRow() const {
    using Op = Expr::Op;
    return let("$bid0", cast(ScalarType::I32,
                             bin(Op::Add, bin(Op::Mul, lit(2), cast(ScalarType::I64, name("$pb0"))),
                                 name("$r"))));
  }

  /// The lets that place linear program `p` (i64) in grouped order over a
  /// grid of `gx` x `gy` programs, `g` rows at a time: $bid0, $bid1 (i32).
  void groupedPlace(std::vector<StmtPtr> &out, const std::string &p, const std::string &gx,
                    const std::string &gy, int64_t g,
                    const std::string &row = "$bid0") const {
    using Op = Expr::Op;
    out.push_back(let("$band", bin(Op::Mul, lit(g), name(gy))));
    out.push_back(let("$first", bin(Op::Mul, bin(Op::Div, name(p), name("$band")), lit(g))));
    out.push_back(let("$height", call("min", bin(Op::Sub, name(gx), name("$first")), lit(g))));
    out.push_back(let("$inband", bin(Op::Rem, name(p), name("$band"))));
    out.push_back(let(row, cast(ScalarType::I32,
                                    bin(Op::Add, name("$first"),
                                        bin(Op::Rem, name("$inband"), name("$height"))))));
    out.push_back(let("$bid1", cast(ScalarType::I32, bin(Op::Div, name("$inband"),
                                                         name("$height")))));
  }
};

/// The first call of num_sms() or resident_programs() in `e`, if any.
const Expr *deviceQuery(const Expr &e) {
  if (e.kind == Expr::Kind::Call && (e.name == "num_sms" || e.name == "resident_programs"))
    return &e;
  for (const ExprPtr &a : e.args)
    if (const Expr *q = deviceQuery(*a))
      return q;
  return nullptr;
}
} // namespace

bool Checker::rewriteTileOrder() {
  if (!inst.persistent && inst.groupRows == 0)
    return true;
  const char *setting = inst.persistent ? "persistent = 1" : "group_rows";
  // Clusters of two take pairs of tiles (below); pair_tiles's order would
  // split a pair.
  if (inst.cluster > 1 && inst.pairTiles)
    return error(kernel.loc, std::string("kernel '") + kernel.name +
                                 "': @launch(pair_tiles) and cluster = 2 cannot be combined: "
                                 "the two programs of a cluster must be neighbours along grid "
                                 "dimension 0 (persistent = 1 or group_rows with cluster = 2 "
                                 "is supported)");
  if (kernel.grid.size() > (inst.persistent ? 2u : 3u))
    return error(kernel.grid.back()->loc,
                 std::string("@launch(") + setting + ") needs a grid of at most " +
                     (inst.persistent ? "two" : "three") + " dimensions");
  Build b{kernel.loc};
  using Op = Expr::Op;
  std::vector<StmtPtr> body;
  // Persistent kernels and clusters in grouped order compute the grid's
  // programs in the kernel too.
  if (inst.persistent || inst.cluster > 1)
    for (const ExprPtr &g : kernel.grid)
      if (const Expr *q = deviceQuery(*g))
        return error(q->loc, "'" + q->name + "()' in the grid of a " +
                                 (inst.persistent ? "persistent kernel"
                                                  : "kernel in clusters in grouped order") +
                                 ": its programs are counted inside the kernel, where the "
                                 "device is not known; write the grid as the tiles to cover");
  auto gridDim = [&](size_t d) {
    return d < kernel.grid.size() ? b.cast(ScalarType::I64, cloneExpr(*kernel.grid[d]))
                                  : b.lit(1);
  };
  if (!inst.persistent && inst.cluster > 1) {
    // Grouped order in clusters of two: the launch's programs 2c + r (r =
    // 0, 1) of grid column block_id(1) form pair c; pairs are placed in
    // grouped order over cdiv(GX, 2) x GY (group_rows / 2 pair rows), and
    // program 2c + r takes row 2 $pb0 + r of its pair's column, so the two
    // load the same tiles of b (TMA multicast, tile-stage-shared). The grid
    // has an even x (2 cdiv(GX, 2)), so that every program has its partner;
    // with an odd GX the last pairs' second tile lies past the grid (its
    // loads read zeros, its stores write nothing). num_blocks(0) and (1) in
    // the body give GX and GY.
    remapCounts = true;
    inst.paddedGrid = true;
    body.push_back(b.let("$gx", gridDim(0)));
    body.push_back(b.let("$gy", gridDim(1)));
    body.push_back(b.let("$nb0", b.cast(ScalarType::I32, b.name("$gx"))));
    body.push_back(b.let("$nb1", b.cast(ScalarType::I32, b.name("$gy"))));
    body.push_back(b.let("$r", b.bin(Op::Rem, b.programId("block_id", 0), b.lit(2))));
    body.push_back(b.let("$gx2", b.call("cdiv", b.name("$gx"), b.lit(2))));
    body.push_back(b.let("$q", b.bin(Op::Add, b.bin(Op::Div, b.programId("block_id", 0), b.lit(2)),
                                     b.bin(Op::Mul, b.programId("block_id", 1), b.name("$gx2")))));
    b.groupedPlace(body, "$q", "$gx2", "$gy", std::max<int64_t>(1, inst.groupRows / 2), "$pb0");
    body.push_back(b.pairedRow());
    remapFrom = body.size();
    for (StmtPtr &s : kernel.body)
      body.push_back(std::move(s));
    kernel.body = std::move(body);
    ExprPtr x = kernel.grid.empty() ? b.lit(1) : std::move(kernel.grid[0]);
    ExprPtr even = b.bin(Op::Mul, b.lit(2), b.call("cdiv", std::move(x), b.lit(2)));
    if (kernel.grid.empty())
      kernel.grid.push_back(std::move(even));
    else
      kernel.grid[0] = std::move(even);
    return true;
  }
  if (!inst.persistent) {
    // The launch's linear program number within grid dimensions 0 and 1.
    body.push_back(b.let("$gx", b.programId("num_blocks", 0)));
    body.push_back(b.let("$gy", b.programId("num_blocks", 1)));
    body.push_back(b.let("$p", b.bin(Op::Add, b.programId("block_id", 0),
                                     b.bin(Op::Mul, b.programId("block_id", 1), b.name("$gx")))));
    b.groupedPlace(body, "$p", "$gx", "$gy", inst.groupRows);
    remapFrom = body.size();
    for (StmtPtr &s : kernel.body)
      body.push_back(std::move(s));
    kernel.body = std::move(body);
    return true;
  }
  remapCounts = true;
  body.push_back(b.let("$p0", b.programId("block_id", 0)));
  body.push_back(b.let("$np", b.programId("num_blocks", 0)));
  body.push_back(b.let("$gx", gridDim(0)));
  body.push_back(b.let("$gy", gridDim(1)));
  body.push_back(b.let("$nb0", b.cast(ScalarType::I32, b.name("$gx"))));
  body.push_back(b.let("$nb1", b.cast(ScalarType::I32, b.name("$gy"))));
  if (inst.pairTiles) {
    // Pairs of consecutive programs: pair $p0 + i * $np is programs 2 (...)
    // and 2 (...) + 1; the last pair of all holds one program when their
    // number is odd. The launch has at most as many programs as pairs, so
    // every program has at least one.
    body.push_back(b.let("$total", b.bin(Op::Mul, b.name("$gx"), b.name("$gy"))));
    body.push_back(b.let("$mine", b.call("cdiv", b.bin(Op::Sub, b.call("cdiv", b.name("$total"),
                                                                           b.lit(2)),
                                                         b.name("$p0")),
                                           b.name("$np"))));
    ExprPtr lastPair = b.bin(Op::Mul, b.lit(2),
                             b.bin(Op::Add, b.name("$p0"),
                                   b.bin(Op::Mul, b.bin(Op::Sub, b.name("$mine"), b.lit(1)),
                                         b.name("$np"))));
    body.push_back(b.let(
        "$count", b.bin(Op::Add, b.bin(Op::Mul, b.lit(2), b.bin(Op::Sub, b.name("$mine"), b.lit(1))),
                        b.call("min", b.lit(2), b.bin(Op::Sub, b.name("$total"),
                                                      std::move(lastPair))))));
  }
  bool paired = inst.cluster > 1;
  if (paired) {
    // Clusters of two: program 2c + r (r = 0, 1) of cluster c takes row r
    // of pair $q = c, c + $nc, ... of the grid's rows of tiles: tiles
    // (2 $pb0 + r, $bid1), which share $bid1 and so the tiles of b that
    // the pair multicasts. With an odd number of rows the last pairs'
    // second tile lies past the grid: its loads read zeros and its stores
    // write nothing (every access is bounds-checked).
    body.push_back(b.let("$r", b.bin(Op::Rem, b.name("$p0"), b.lit(2))));
    body.push_back(b.let("$c", b.bin(Op::Div, b.name("$p0"), b.lit(2))));
    body.push_back(b.let("$nc", b.bin(Op::Div, b.name("$np"), b.lit(2))));
    body.push_back(b.let("$gx2", b.call("cdiv", b.name("$gx"), b.lit(2))));
  }
  remapFrom = body.size();
  auto loop = std::make_unique<Stmt>(Stmt::Kind::For, kernel.loc);
  loop->nameLoc = kernel.loc;
  if (paired) {
    loop->name = "$q";
    loop->lower = b.name("$c");
    loop->upper = b.bin(Op::Mul, b.name("$gx2"), b.name("$gy"));
    loop->step = b.name("$nc");
  } else if (!inst.pairTiles) {
    loop->name = "$p";
    loop->lower = b.name("$p0");
    loop->upper = b.bin(Op::Mul, b.name("$gx"), b.name("$gy"));
    loop->step = b.name("$np");
  } else {
    loop->name = "$k";
    loop->lower = b.lit(0);
    loop->upper = b.name("$count");
    loop->step = b.lit(1);
    loop->body.push_back(b.let(
        "$p", b.bin(Op::Add,
                    b.bin(Op::Mul, b.lit(2),
                          b.bin(Op::Add, b.name("$p0"),
                                b.bin(Op::Mul, b.bin(Op::Div, b.name("$k"), b.lit(2)),
                                      b.name("$np")))),
                    b.bin(Op::Rem, b.name("$k"), b.lit(2)))));
  }
  // The place of tile $p (or of pair $q over rows of pairs: row $pb0).
  const std::string p = paired ? "$q" : "$p", gx = paired ? "$gx2" : "$gx",
                    row = paired ? "$pb0" : "$bid0";
  if (inst.groupRows) {
    b.groupedPlace(loop->body, p, gx, "$gy",
                   paired ? std::max<int64_t>(1, inst.groupRows / 2) : inst.groupRows, row);
  } else { // the launch order: dimension 0 first
    loop->body.push_back(b.let(row, b.cast(ScalarType::I32,
                                           b.bin(Op::Rem, b.name(p), b.name(gx)))));
    loop->body.push_back(b.let("$bid1", b.cast(ScalarType::I32,
                                               b.bin(Op::Div, b.name(p), b.name(gx)))));
  }
  if (paired)
    loop->body.push_back(b.pairedRow());
  for (StmtPtr &s : kernel.body)
    loop->body.push_back(std::move(s));
  body.push_back(std::move(loop));
  kernel.body = std::move(body);
  // One program per resident slot, no more than there are programs (in
  // pairs: whole clusters, 2 min(pairs of tiles, resident programs / 2)).
  ExprPtr programs = kernel.grid.empty() ? b.lit(1) : cloneExpr(*kernel.grid[0]);
  if (paired)
    programs = b.call("cdiv", std::move(programs), b.lit(2));
  if (kernel.grid.size() > 1)
    programs = b.bin(Op::Mul, std::move(programs), cloneExpr(*kernel.grid[1]));
  if (inst.pairTiles)
    programs = b.call("cdiv", std::move(programs), b.lit(2));
  ExprPtr resident = b.call("resident_programs", std::vector<ExprPtr>{});
  std::vector<ExprPtr> grid;
  if (paired)
    grid.push_back(b.bin(Op::Mul, b.lit(2),
                         b.call("min", std::move(programs),
                                b.call("max", b.lit(1),
                                       b.bin(Op::Div, std::move(resident), b.lit(2))))));
  else
    grid.push_back(b.call("min", std::move(programs), std::move(resident)));
  kernel.grid = std::move(grid);
  return true;
}
