// SPDX-License-Identifier: BSD-3-Clause
// Atomic text outputs: temporary file, then rename.
#include "io/output_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

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

struct OutputFile::Gzip {
  z_stream stream{};
  std::vector<unsigned char> out = std::vector<unsigned char>(std::size_t{1} << 18);
  bool open = false;
  ~Gzip() {
    if (open) deflateEnd(&stream);
  }
};

bool is_gzip_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

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
  if (is_gzip_path(path_)) {
    gzip_ = std::make_unique<Gzip>();
    // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
    if (deflateInit2(&gzip_->stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      discard();
      throw UsageError("cannot write " + what_ + " " + path_ + ": zlib: cannot start gzip");
    }
    gzip_->open = true;
  }
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

void OutputFile::put(const char* data, std::size_t bytes) noexcept {
  if (error_ != 0 || file_ == nullptr || bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) != bytes) error_ = errno != 0 ? errno : -1;
}

void OutputFile::deflate_some(const char* data, std::size_t bytes, int flush) noexcept {
  z_stream& z = gzip_->stream;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(bytes);
  int status = Z_OK;
  do {
    z.next_out = gzip_->out.data();
    z.avail_out = static_cast<uInt>(gzip_->out.size());
    status = deflate(&z, flush);
    if (status == Z_STREAM_ERROR) {
      if (error_ == 0) error_ = -1;
      return;
    }
    put(reinterpret_cast<const char*>(gzip_->out.data()), gzip_->out.size() - z.avail_out);
  } while (z.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
}

void OutputFile::write(const char* data, std::size_t bytes) noexcept {
  if (error_ != 0 || file_ == nullptr || bytes == 0) return;
  if (!gzip_) return put(data, bytes);
  // zlib takes at most 4 GB per call (uInt).
  constexpr std::size_t kStep = std::size_t{1} << 30;
  for (std::size_t at = 0; at < bytes && error_ == 0; at += kStep)
    deflate_some(data + at, std::min(kStep, bytes - at), Z_NO_FLUSH);
}

void OutputFile::commit() {
  if (committed_) return;
  if (file_ == nullptr) cannot_write(what_, path_, error_);
  if (gzip_ && error_ == 0) deflate_some(nullptr, 0, Z_FINISH);
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
