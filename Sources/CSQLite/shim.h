#ifndef BLEBRIDGE_CSQLITE_SHIM_H
#define BLEBRIDGE_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import. */
static inline int blebridge_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}
static inline int blebridge_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *blob, int length) {
    return sqlite3_bind_blob(stmt, index, blob, length, SQLITE_TRANSIENT);
}
#endif
