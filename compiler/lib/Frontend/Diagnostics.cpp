//===- Diagnostics.cpp - Source-located error reporting -------------------===//

#include "tilec/Frontend/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace tilec;

void DiagEngine::error(llvm::SMLoc loc, const llvm::Twine &msg) {
  ++numErrors;
  llvm::raw_string_ostream os(out);
  srcMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, msg);
}

void DiagEngine::note(llvm::SMLoc loc, const llvm::Twine &msg) {
  llvm::raw_string_ostream os(out);
  srcMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, msg);
}

void DiagEngine::error(const llvm::Twine &msg) {
  ++numErrors;
  llvm::raw_string_ostream os(out);
  os << "tilec: error: " << msg << "\n";
}

std::pair<unsigned, unsigned> DiagEngine::lineCol(llvm::SMLoc loc) const {
  if (!loc.isValid())
    return {0, 0};
  return srcMgr.getLineAndColumn(loc);
}

llvm::StringRef DiagEngine::fileName() const {
  return srcMgr.getMemoryBuffer(srcMgr.getMainFileID())->getBufferIdentifier();
}
