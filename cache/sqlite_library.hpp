// SQLite, opened with dlopen the first time the index is: a warm process
// never opens the index (its hits go to the journal), so it never maps
// libsqlite3 (~0.15 ms of every process start where this was measured).
// sqlite3.h gives the types, constants and signatures; nothing links SQLite.
#pragma once

#include <sqlite3.h>

#include "base/failure.hpp"

namespace kiln::cache {

// Every SQLite function the cache calls.
#define KILN_SQLITE_FUNCTIONS(X)                                                                              \
  X(sqlite3_open_v2) X(sqlite3_close) X(sqlite3_errmsg) X(sqlite3_extended_errcode) X(sqlite3_busy_timeout)  \
  X(sqlite3_get_autocommit) X(sqlite3_prepare_v2) X(sqlite3_finalize) X(sqlite3_bind_text)                   \
  X(sqlite3_bind_int64) X(sqlite3_bind_double) X(sqlite3_step) X(sqlite3_reset) X(sqlite3_column_text)       \
  X(sqlite3_column_bytes) X(sqlite3_column_int64) X(sqlite3_column_double)

struct SqliteLibrary {
#define KILN_SQLITE_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_SQLITE_FUNCTIONS(KILN_SQLITE_MEMBER)
#undef KILN_SQLITE_MEMBER
};

// Loads libsqlite3.so.0 on the first call (thread-safe; never unloaded).
// Fails (Kind::unsupported, saying why) when it cannot be loaded or lacks a
// function; every later call gives the same answer.
[[nodiscard]] base::Result<const SqliteLibrary*> load_sqlite();

// The library, once load_sqlite() succeeded (the Index checks that before
// anything else runs a statement).
const SqliteLibrary& sqlite();

}  // namespace kiln::cache
