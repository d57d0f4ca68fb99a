// SPDX-License-Identifier: BSD-3-Clause
// Atomic text outputs: temporary file, then rename.
#include "io/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cpreplay/error.hpp"
#include "io/cube_writer.hpp"

namespace cpreplay::io {
namespace {

std::string temporary(const std::string& path) {
  return path + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
}

[[noreturn]] void cannot_write(const std::string& what, const std::string& path, int err) {
  throw UsageError("cannot write " + what + " " + path + ": " +
                   (err > 0 ? std::strerror(err) : "write failed"));
}

}  // namespace

void check_writable(const std::string& path, const std::string& what) {
  const std::string tmp = temporary(path);
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) cannot_write(what, path, errno);
  std::fclose(f);
  std::remove(tmp.c_str());
}

OutputFile::OutputFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)), tmp_path_(temporary(path_)) {
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) cannot_write(what_, path_, errno);
  // Callers hand over chunks of about a megabyte: stdio's buffer would only copy them again.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  pending_slot_ = register_unfinished_file(tmp_path_);
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  std::remove(tmp_path_.c_str());
  unregister_unfinished_file(pending_slot_);
}

void OutputFile::write(const char* data, std::size_t bytes) noexcept {
  if (error_ != 0 || file_ == nullptr || bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) != bytes) error_ = errno != 0 ? errno : -1;
}

void OutputFile::commit() {
  if (committed_) return;
  if (file_ == nullptr) cannot_write(what_, path_, error_);
  errno = 0;
  if (std::fflush(file_) != 0 && error_ == 0) error_ = errno != 0 ? errno : -1;
  const int close_status = std::fclose(file_);
  file_ = nullptr;
  if (close_status != 0 && error_ == 0) error_ = errno != 0 ? errno : -1;
  if (error_ == 0 && std::rename(tmp_path_.c_str(), path_.c_str()) != 0) error_ = errno;
  if (error_ != 0) {
    const int err = error_;
    discard();
    cannot_write(what_, path_, err);
  }
  committed_ = true;
  unregister_unfinished_file(pending_slot_);
}

}  // namespace cpreplay::io
