//===- Link.cpp - Shared and static libraries, in-process ------------------===//
//
// kiln needs no external toolchain for its own outputs: shared libraries
// are linked by lld as a library, static libraries written by LLVM's
// archive writer (deterministic: zero timestamps, uids and modes).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"

#include "lld/Common/Driver.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

using namespace mlir;

namespace kiln {

LogicalResult linkSharedLibrary(StringRef objectBytes, StringRef runtimeArchive,
                                StringRef path, std::string &error) {
  llvm::SmallString<128> objPath;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kiln-model", "o", fd, objPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << objectBytes;
  }
  std::string out = path.str(), obj = objPath.str().str();
  std::string soname = llvm::sys::path::filename(path).str();
  std::vector<const char *> args = {
      "ld.lld",   "-shared",         "-o",        out.c_str(),
      "-soname",  soname.c_str(),    "-z",        "noexecstack",
      "-z",       "relro",           "-z",        "now",
      "--hash-style=gnu", "--build-id=none", "--eh-frame-hdr", obj.c_str()};
  // Archive members are taken only for symbols the model leaves undefined.
  // The runtime's worker threads run code of this library for the life of
  // the process: it must stay mapped after dlclose.
  std::string runtime = runtimeArchive.str();
  if (!runtime.empty()) {
    args.push_back(runtime.c_str());
    args.push_back("-z");
    args.push_back("nodelete");
  }
  std::string messages;
  llvm::raw_string_ostream errs(messages);
  lld::Result result =
      lld::lldMain(args, llvm::nulls(), errs, {{lld::Gnu, &lld::elf::link}});
  llvm::sys::fs::remove(objPath);
  if (result.retCode != 0) {
    error = "linking '" + out + "' failed: " + messages;
    return failure();
  }
  return success();
}

LogicalResult writeStaticLibrary(StringRef objectBytes, StringRef objectName,
                                 StringRef runtimeArchive, StringRef path,
                                 std::string &error) {
  std::vector<llvm::NewArchiveMember> members;
  members.emplace_back(llvm::MemoryBufferRef(objectBytes, objectName));
  std::unique_ptr<llvm::MemoryBuffer> runtimeBuffer;
  std::unique_ptr<llvm::object::Archive> runtime;
  if (!runtimeArchive.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(runtimeArchive);
    if (!buffer) {
      error = "cannot read the runtime library '" + runtimeArchive.str() +
              "': " + buffer.getError().message();
      return failure();
    }
    runtimeBuffer = std::move(*buffer);
    auto archive = llvm::object::Archive::create(runtimeBuffer->getMemBufferRef());
    if (!archive) {
      error = "cannot read the runtime library: " + llvm::toString(archive.takeError());
      return failure();
    }
    runtime = std::move(*archive);
    llvm::Error err = llvm::Error::success();
    for (const llvm::object::Archive::Child &child : runtime->children(err)) {
      auto member = llvm::NewArchiveMember::getOldMember(child, /*Deterministic=*/true);
      if (!member) {
        error = llvm::toString(member.takeError());
        return failure();
      }
      members.push_back(std::move(*member));
    }
    if (err) {
      error = llvm::toString(std::move(err));
      return failure();
    }
  }
  if (llvm::Error err = llvm::writeArchive(
          path, members, llvm::SymtabWritingMode::NormalSymtab,
          llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false)) {
    error = "writing '" + path.str() + "' failed: " + llvm::toString(std::move(err));
    return failure();
  }
  return success();
}

} // namespace kiln
