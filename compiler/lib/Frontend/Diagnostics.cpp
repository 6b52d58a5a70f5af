//===- Diagnostics.cpp - Source-located error reporting -------------------===//

#include "tilec/Frontend/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tilec;

/// At most this many bytes of a source line are echoed under a diagnostic,
/// centred on the caret.
static constexpr size_t kMaxEchoedLine = 200;
/// At most this many characters of a name (a run of letters, digits and
/// underscores) are echoed inside a message; the rest becomes "...".
static constexpr size_t kMaxEchoedName = 64;

/// `msg` with every name (or number) longer than kMaxEchoedName cut to its
/// first kMaxEchoedName characters and "...": the messages quote names from
/// the source, and a megabyte-long token would make a megabyte-long line.
/// Done here, once, rather than in each message.
static std::string shortenNames(llvm::StringRef msg) {
  auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  std::string out;
  out.reserve(std::min<size_t>(msg.size(), 4 * kMaxEchoedLine));
  for (size_t i = 0; i < msg.size();) {
    if (!isNameChar(msg[i])) {
      out += msg[i++];
      continue;
    }
    size_t end = i;
    while (end < msg.size() && isNameChar(msg[end]))
      ++end;
    if (end - i > kMaxEchoedName)
      out += msg.substr(i, kMaxEchoedName).str() + "...";
    else
      out += msg.substr(i, end - i).str();
    i = end;
  }
  return out;
}

/// Prints a diagnostic like SourceMgr::PrintMessage, but echoes the source
/// line with control bytes escaped (`\x01`) and, if it is long, only a
/// window around the caret with `...` on the cut sides.
void DiagEngine::print(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                       const llvm::Twine &msg) {
  llvm::raw_string_ostream os(out);
  std::string text = shortenNames(msg.str());
  if (!loc.isValid()) {
    srcMgr.PrintMessage(os, loc, kind, text);
    return;
  }
  llvm::SMDiagnostic d = srcMgr.GetMessage(loc, kind, text);
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
  os << "tilec: error: " << shortenNames(msg.str()) << "\n";
}

std::pair<unsigned, unsigned> DiagEngine::lineCol(llvm::SMLoc loc) const {
  if (!loc.isValid())
    return {0, 0};
  return srcMgr.getLineAndColumn(loc);
}

llvm::StringRef DiagEngine::fileName() const {
  return srcMgr.getMemoryBuffer(srcMgr.getMainFileID())->getBufferIdentifier();
}

llvm::StringRef DiagEngine::bufferName(llvm::SMLoc loc) const {
  unsigned id = loc.isValid() ? srcMgr.FindBufferContainingLoc(loc) : 0;
  return id ? srcMgr.getMemoryBuffer(id)->getBufferIdentifier() : fileName();
}
