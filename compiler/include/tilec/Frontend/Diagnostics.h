//===- Diagnostics.h - Source-located error reporting ------------*- C++ -*-===//
//
// All frontend errors go through DiagEngine, which formats them the way the
// user sees them everywhere: `file:line:col: error: message`, then the source
// line and a caret under the column. The text is collected in a string so
// that the embedding API can return it; `tilec` prints it. Whatever a
// message quotes from the source is bounded here: a name or number longer
// than 64 characters is cut to 64 and "...", and the echoed line is a window
// of 200 bytes around the caret with control bytes escaped.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_DIAGNOSTICS_H
#define TILEC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <utility>

namespace tilec {

class DiagEngine {
public:
  /// `srcMgr` must hold the main buffer (id 1).
  explicit DiagEngine(llvm::SourceMgr &srcMgr) : srcMgr(srcMgr) {}

  void error(llvm::SMLoc loc, const llvm::Twine &msg);
  void note(llvm::SMLoc loc, const llvm::Twine &msg);
  /// An error with no source position (e.g. a bad `-D` option).
  void error(const llvm::Twine &msg);

  bool hadError() const { return numErrors > 0; }
  unsigned errorCount() const { return numErrors; }
  const std::string &text() const { return out; }
  llvm::SourceMgr &sourceMgr() { return srcMgr; }
  /// 1-based line and column of `loc`.
  std::pair<unsigned, unsigned> lineCol(llvm::SMLoc loc) const;
  llvm::StringRef fileName() const;
  /// The name of the buffer `loc` lies in (the main file's where invalid).
  llvm::StringRef bufferName(llvm::SMLoc loc) const;

private:
  void print(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
             const llvm::Twine &msg);

  llvm::SourceMgr &srcMgr;
  std::string out;
  unsigned numErrors = 0;
};

} // namespace tilec

#endif // TILEC_FRONTEND_DIAGNOSTICS_H
