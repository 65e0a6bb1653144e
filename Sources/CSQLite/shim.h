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
/* SQLITE_STATIC: SQLite reads the bytes where they are, while the statement runs; the caller keeps
 * them valid until it has stepped, reset and cleared the statement's bindings. */
static inline int blebridge_sqlite3_bind_text_static(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text ? text : "", length, SQLITE_STATIC);
}
static inline int blebridge_sqlite3_bind_blob_static(sqlite3_stmt *stmt, int index, const void *blob, int length) {
    return sqlite3_bind_blob(stmt, index, blob, length, SQLITE_STATIC);
}
/* sqlite3_config is variadic, which Swift cannot call. SQLITE_CONFIG_PAGECACHE with no buffer sets
 * the page cache's initial bulk to 0 pages: each cache then takes its pages one by one instead of
 * one block of 20 pages (87 kB at 4 KiB pages) at its first page (docs/testing.md, "Soak").
 * Only before SQLite is initialised (the first open); SQLITE_MISUSE after. */
static inline int blebridge_sqlite3_config_page_cache_without_bulk(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}
/* SQLITE_CONFIG_MEMSTATUS 0: SQLite stops keeping its allocation statistics, which it updates under
 * a global mutex in every sqlite3_malloc and sqlite3_free (about seven a reading in the outbox,
 * issue 20). sqlite3_memory_used() and sqlite3_memory_highwater() then read 0; the page-cache
 * counters (SQLITE_STATUS_PAGECACHE_*) are kept. Only before SQLite is initialised; SQLITE_MISUSE after. */
static inline int blebridge_sqlite3_config_without_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
