#include "cache/sqlite_statement.hpp"

#include "cache/sqlite_library.hpp"

namespace kiln::cache {

Statement::Statement(sqlite3* db, std::string_view sql)
    : rc_(sqlite().sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr)) {
  if (rc_ == SQLITE_OK && stmt_ == nullptr) rc_ = SQLITE_MISUSE;  // SQL of only comments or blanks
}

Statement::~Statement() { sqlite().sqlite3_finalize(stmt_); }  // a no-op on null

Statement& Statement::bind(int index, std::string_view text) {
  if (rc_ == SQLITE_OK) {
    rc_ = sqlite().sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (rc_ == SQLITE_OK) rc_ = sqlite().sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (rc_ == SQLITE_OK) rc_ = sqlite().sqlite3_bind_double(stmt_, index, value);
  return *this;
}

int Statement::step() { return rc_ == SQLITE_OK ? sqlite().sqlite3_step(stmt_) : rc_; }

int Statement::run() {
  int rc = step();
  while (rc == SQLITE_ROW) rc = step();
  if (rc_ == SQLITE_OK) sqlite().sqlite3_reset(stmt_);  // repeats the step's error, already in rc
  return rc;
}

// Lengths from sqlite3_column_bytes: text may hold NUL bytes.
std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite().sqlite3_column_text(stmt_, column));
  if (data == nullptr) return {};  // NULL column, or out of memory
  return std::string(data, static_cast<std::size_t>(sqlite().sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::integer(int column) const { return sqlite().sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite().sqlite3_column_double(stmt_, column); }

int execute(sqlite3* db, std::string_view sql) { return Statement(db, sql).run(); }

}  // namespace kiln::cache
