#ifndef CKEYWARD_SQLITE_H
#define CKEYWARD_SQLITE_H

// The few SQLite C functions Keyward's statement connection calls (Storage/SQLiteStatementConnection.swift),
// declared against the SQLite that sqlite-nio compiles in under its own prefix. Keyward must not link a second
// SQLite: two copies in one process do not share their POSIX lock bookkeeping and can corrupt the database
// (sqlite.org/howtocorrupt.html §2.2). The declarations are SQLite's stable C API; a sqlite-nio release that
// renamed the prefix would fail the link, never at run time.

#include <stdint.h>

typedef struct keyward_sqlite3 keyward_sqlite3;
typedef struct keyward_sqlite3_stmt keyward_sqlite3_stmt;

#define KEYWARD_SQLITE_OK 0
#define KEYWARD_SQLITE_ROW 100
#define KEYWARD_SQLITE_DONE 101
#define KEYWARD_SQLITE_INTEGER 1
#define KEYWARD_SQLITE_FLOAT 2
#define KEYWARD_SQLITE_TEXT 3
#define KEYWARD_SQLITE_BLOB 4
#define KEYWARD_SQLITE_NULL 5
#define KEYWARD_SQLITE_OPEN_READWRITE 0x00000002
#define KEYWARD_SQLITE_OPEN_CREATE 0x00000004
#define KEYWARD_SQLITE_OPEN_NOMUTEX 0x00008000
#define KEYWARD_SQLITE_OPEN_EXRESCODE 0x02000000
#define KEYWARD_SQLITE_PREPARE_PERSISTENT 0x01
#define KEYWARD_SQLITE_STMTSTATUS_REPREPARE 5

int sqlite_nio_sqlite3_initialize(void);
int sqlite_nio_sqlite3_open_v2(const char *filename, keyward_sqlite3 **db, int flags, const char *vfs);
int sqlite_nio_sqlite3_close_v2(keyward_sqlite3 *db);
int sqlite_nio_sqlite3_busy_timeout(keyward_sqlite3 *db, int milliseconds);
int sqlite_nio_sqlite3_extended_errcode(keyward_sqlite3 *db);
const char *sqlite_nio_sqlite3_errmsg(keyward_sqlite3 *db);

int sqlite_nio_sqlite3_prepare_v3(keyward_sqlite3 *db, const char *sql, int bytes, unsigned int flags,
                                  keyward_sqlite3_stmt **statement, const char **tail);
int sqlite_nio_sqlite3_step(keyward_sqlite3_stmt *statement);
int sqlite_nio_sqlite3_reset(keyward_sqlite3_stmt *statement);
int sqlite_nio_sqlite3_clear_bindings(keyward_sqlite3_stmt *statement);
int sqlite_nio_sqlite3_finalize(keyward_sqlite3_stmt *statement);

int sqlite_nio_sqlite3_bind_int64(keyward_sqlite3_stmt *statement, int index, int64_t value);
int sqlite_nio_sqlite3_bind_double(keyward_sqlite3_stmt *statement, int index, double value);
int sqlite_nio_sqlite3_bind_null(keyward_sqlite3_stmt *statement, int index);
int sqlite_nio_sqlite3_stmt_status(keyward_sqlite3_stmt *statement, int counter, int reset);
int keyward_sqlite_keep_plans(keyward_sqlite3 *db);
int keyward_sqlite_bind_text(keyward_sqlite3_stmt *statement, int index, const char *text, int bytes);
int keyward_sqlite_bind_blob(keyward_sqlite3_stmt *statement, int index, const void *bytes, int count);

int sqlite_nio_sqlite3_column_count(keyward_sqlite3_stmt *statement);
const char *sqlite_nio_sqlite3_column_name(keyward_sqlite3_stmt *statement, int column);
int sqlite_nio_sqlite3_column_type(keyward_sqlite3_stmt *statement, int column);
int64_t sqlite_nio_sqlite3_column_int64(keyward_sqlite3_stmt *statement, int column);
double sqlite_nio_sqlite3_column_double(keyward_sqlite3_stmt *statement, int column);
const unsigned char *sqlite_nio_sqlite3_column_text(keyward_sqlite3_stmt *statement, int column);
const void *sqlite_nio_sqlite3_column_blob(keyward_sqlite3_stmt *statement, int column);
int sqlite_nio_sqlite3_column_bytes(keyward_sqlite3_stmt *statement, int column);

#endif
