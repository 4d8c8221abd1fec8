#include "CKeywardSQLite.h"

// SQLITE_TRANSIENT (SQLite copies the value before the call returns) is the pointer -1, which Swift cannot spell as
// a destructor argument; these two pass it.
typedef void (*keyward_sqlite_destructor)(void *);
int sqlite_nio_sqlite3_bind_text(keyward_sqlite3_stmt *, int, const char *, int, keyward_sqlite_destructor);
int sqlite_nio_sqlite3_bind_blob(keyward_sqlite3_stmt *, int, const void *, int, keyward_sqlite_destructor);

int keyward_sqlite_bind_text(keyward_sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite_nio_sqlite3_bind_text(statement, index, text, bytes, (keyward_sqlite_destructor)-1);
}

int keyward_sqlite_bind_blob(keyward_sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite_nio_sqlite3_bind_blob(statement, index, bytes, count, (keyward_sqlite_destructor)-1);
}

int sqlite_nio_sqlite3_db_config(keyward_sqlite3 *, int op, ...);

// SQLITE_DBCONFIG_ENABLE_QPSG (1007), which is variadic and so cannot be called from Swift: see
// SQLiteStatementConnection.open for why.
int keyward_sqlite_keep_plans(keyward_sqlite3 *db) {
    return sqlite_nio_sqlite3_db_config(db, 1007, 1, (int *)0);
}
