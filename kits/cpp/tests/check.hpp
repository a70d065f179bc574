// check.hpp: the few test macros the kit's tests use (no framework needed).
//
//   CHECK(cond)             records a failure, with file and line, when cond is false
//   CHECK_MSG(cond, text)   the same, saying `text` too
//   CHECK_THROWS(expr)      records a failure unless expr throws json::Error
//
// A test program calls its test functions, then `return check_summary();`.
#pragma once

#include <iostream>
#include <string>

#include "json.hpp"

inline int g_checks = 0;
inline int g_failures = 0;

inline void check(bool ok, const std::string& what, const char* file, int line) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::cerr << file << ":" << line << ": FAILED: " << what << "\n";
  }
}

// Prints the tally; the program's exit status: 0 when every check passed.
inline int check_summary() {
  std::cout << g_checks << " checks, " << g_failures << " failed\n";
  return g_failures == 0 ? 0 : 1;
}

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)
#define CHECK_MSG(cond, msg) check((cond), std::string(#cond) + " [" + (msg) + "]", __FILE__, __LINE__)
#define CHECK_THROWS(expr)                               \
  do {                                                   \
    bool threw_ = false;                                 \
    try {                                                \
      (void)(expr);                                      \
    } catch (const json::Error&) {                       \
      threw_ = true;                                     \
    }                                                    \
    check(threw_, "throws: " #expr, __FILE__, __LINE__); \
  } while (0)
