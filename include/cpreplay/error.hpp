// SPDX-License-Identifier: BSD-3-Clause
// The error hierarchy: library code throws these, only tools/ turns them into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace cpreplay {

/// Base of every cpreplay error. what() is one line meant for the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The trace is missing, unreadable or inconsistent (names the file, rank and event).
class TraceError : public Error {
 public:
  using Error::Error;
};

/// The recorded communication cannot be re-enacted (unmatched message, broken collective).
class ReplayError : public Error {
 public:
  using Error::Error;
};

/// The user asked for something impossible (bad option, wrong rank count, unwritable output).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// The trace is incomplete in a way `--partial` can work around (a rank stopped mid-run).
class IncompleteTraceError : public TraceError {
 public:
  using TraceError::TraceError;
};

}  // namespace cpreplay
