//===- Diagnostics.cpp - Source-located error reporting -------------------===//

#include "tilec/Frontend/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tilec;

/// At most this many bytes of a source line are echoed under a diagnostic,
/// centred on the caret.
static constexpr size_t kMaxEchoedLine = 200;

/// Prints a diagnostic like SourceMgr::PrintMessage, but echoes the source
/// line with control bytes escaped (`\x01`) and, if it is long, only a
/// window around the caret with `...` on the cut sides.
void DiagEngine::print(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                       const llvm::Twine &msg) {
  llvm::raw_string_ostream os(out);
  if (!loc.isValid()) {
    srcMgr.PrintMessage(os, loc, kind, msg);
    return;
  }
  llvm::SMDiagnostic d = srcMgr.GetMessage(loc, kind, msg);
  os << d.getFilename() << ":" << d.getLineNo() << ":" << d.getColumnNo() + 1
     << ": " << (kind == llvm::SourceMgr::DK_Error ? "error: " : "note: ")
     << d.getMessage() << "\n";
  llvm::StringRef line = d.getLineContents();
  size_t col = std::min<size_t>(std::max(d.getColumnNo(), 0), line.size());
  size_t begin = 0, end = line.size();
  if (line.size() > kMaxEchoedLine) {
    begin = col > kMaxEchoedLine / 2 ? col - kMaxEchoedLine / 2 : 0;
    end = std::min(line.size(), begin + kMaxEchoedLine);
    if (end - begin < kMaxEchoedLine)
      begin = end - kMaxEchoedLine;
  }
  std::string shown = begin > 0 ? "..." : "";
  size_t caret = shown.size();
  for (size_t i = begin; i < end; ++i) {
    unsigned char c = line[i];
    if (c == '\t')
      shown += ' ';
    else if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      shown += "\\x";
      shown += hex[c >> 4];
      shown += hex[c & 15];
    } else
      shown += static_cast<char>(c);
    if (i + 1 == col)
      caret = shown.size();
  }
  if (end < line.size())
    shown += "...";
  os << shown << "\n" << std::string(caret, ' ') << "^\n";
}

void DiagEngine::error(llvm::SMLoc loc, const llvm::Twine &msg) {
  ++numErrors;
  print(loc, llvm::SourceMgr::DK_Error, msg);
}

void DiagEngine::note(llvm::SMLoc loc, const llvm::Twine &msg) {
  print(loc, llvm::SourceMgr::DK_Note, msg);
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
