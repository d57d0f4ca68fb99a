// SPDX-License-Identifier: BSD-3-Clause
// A small JSON reader for tests (expected.json, the --json summary); no external dependency.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cpreplay::testing {

/// A parsed JSON value. Objects keep their keys sorted (std::map).
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object } type = Type::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool has(const std::string& key) const { return object.count(key) != 0; }
  /// Member access; throws std::runtime_error naming the key when absent.
  const Json& operator[](const std::string& key) const;
};

/// Parses text; throws std::runtime_error with the byte offset on malformed input.
Json parse_json(const std::string& text);
/// Reads and parses a file; throws std::runtime_error naming the file.
Json read_json_file(const std::string& path);

}  // namespace cpreplay::testing
