// SPDX-License-Identifier: BSD-3-Clause
// A text output written to a temporary file and renamed into place only when complete.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

namespace cpreplay::io {

/// Throws UsageError ("cannot write <what> <path>: <reason>") if `path` cannot be created; the
/// probe leaves nothing behind. For checking outputs before any analysis.
void check_writable(const std::string& path, const std::string& what);

/// True when `path` names a gzip file (ends in ".gz"): OutputFile compresses it.
bool is_gzip_path(const std::string& path);

/// Writes to `path + ".tmp-<pid>"`, renamed to `path` by commit(). A path ending in ".gz" is
/// written gzip-compressed (zlib's deflate with a gzip wrapper, as gzip -6 writes it). A write error is remembered,
/// not thrown, so rank 0 keeps draining what the other ranks stream to it; commit() reports
/// it. Destroyed without commit(), the temporary file is removed (and a signal that ends the
/// run removes it too, see remove_unfinished_reports).
/// MPI: local (rank 0 only).
class OutputFile {
 public:
  /// Throws UsageError naming `what` and the path when the file cannot be created.
  OutputFile(std::string path, std::string what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const char* data, std::size_t bytes) noexcept;
  void write(const std::string& text) noexcept { write(text.data(), text.size()); }
  /// Flushes, closes and renames; throws UsageError naming the file after any write error.
  void commit();
  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;
  void put(const char* data, std::size_t bytes) noexcept;
  /// Feeds `bytes` to the compressor (flush: Z_NO_FLUSH or Z_FINISH) and writes its output.
  void deflate_some(const char* data, std::size_t bytes, int flush) noexcept;
  struct Gzip;
  std::unique_ptr<Gzip> gzip_;  ///< set for ".gz" paths
  std::string path_;
  std::string what_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  int error_ = 0;  ///< errno of the first failed write, or -1 for an unknown failure
  int pending_slot_ = -1;
  bool committed_ = false;
};

}  // namespace cpreplay::io
