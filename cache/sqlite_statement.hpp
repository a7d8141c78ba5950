// A prepared SQLite statement that finalizes itself. Values always go through
// bind(), never into the SQL text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kiln::cache {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // The first failure of prepare or bind, SQLITE_OK while none; step() and
  // run() return it instead of running a half-bound statement.
  int rc() const { return rc_; }

  // 1-based, as in SQLite.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);

  int step();  // SQLITE_ROW, SQLITE_DONE or an error code
  // Steps to the end and resets, ready to be bound again; SQLITE_DONE or an error.
  int run();

  std::string text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Runs SQL without parameters (BEGIN, COMMIT, PRAGMA...); SQLITE_DONE or an error.
int execute(sqlite3* db, std::string_view sql);

}  // namespace kiln::cache
