#ifndef BACKEND_WAL_BUFFER_H
#define BACKEND_WAL_BUFFER_H

// A SQLite VFS over the default one that gathers the writes of a database's write-ahead
// log into one buffer and hands them to the kernel when SQLite syncs the log (at each
// commit under synchronous=FULL), in pwrites of up to 124 KiB, instead of two pwrites per
// page (a frame's 24-byte header, then the page). See wal_buffer.c for the rules that keep it exact.

// Registers the VFS as the process's default (once; later calls do nothing). Files of
// databases not named by backend_wal_buffer_enable pass straight through.
// Returns SQLITE_OK or SQLite's error.
int backend_wal_buffer_register(void);

// Gathers the log writes of the database at `database_path` (as given to sqlite3_open)
// made on threads that said so (below), whose commits must run with synchronous=FULL:
// only then does SQLite sync its log before a commit becomes visible to other
// connections. Call before opening the database.
// Registers the VFS first. Returns SQLITE_OK or SQLite's error.
int backend_wal_buffer_enable(const char *database_path);

// Whether the log writes of this thread wait in the buffer (of enabled databases only):
// set only on a thread whose every write transaction commits with synchronous=FULL.
void backend_wal_buffer_gather_on_this_thread(int gather);

// Says the write transaction this thread ran has ended (`committed`: 1, or 0 for rolled
// back), while the thread still holds the connection: what a rolled-back transaction
// left in the buffer is dropped (after a commit under FULL the buffer is already empty;
// were it not, it is written). Returns SQLITE_OK or the write's error.
int backend_wal_buffer_transaction_ended(int committed);

// How many log writes and flushes the buffered logs of this process have made, for tests.
void backend_wal_buffer_counts(long long *writes_gathered, long long *flushes);

#endif
