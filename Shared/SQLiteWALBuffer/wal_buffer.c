// A SQLite VFS that gathers write-ahead-log writes (see include/wal_buffer.h).
//
// SQLite writes a commit's frames one after the other at increasing offsets of the log,
// each as two writes (its header, then its page), then syncs the log, and only then
// publishes the commit in the shared-memory index that other connections read. So the
// writes of a commit may wait in memory until the sync, provided that:
//   - every write that does not continue the buffer (SQLite rewriting a frame it wrote
//     earlier in the same transaction, or a new log header at offset 0) first flushes
//     the buffer, so writes reach the file in the order SQLite made them;
//   - every other operation on the log file (read, sync, truncate, size, file control,
//     fetch, close) first flushes the buffer, so SQLite never sees the file without
//     what it wrote (reads of frames spilled before the commit, checksums re-read);
//   - the writer syncs the log before each commit is published: synchronous=FULL
//     (under NORMAL, SQLite publishes a commit with no call to the log file after its
//     frames, so frames still in the buffer would be published to readers). So writes
//     wait only when both: the database was named by backend_wal_buffer_enable (the
//     platform names only those it opens with FULL), and the writing thread said it
//     commits with FULL (backend_wal_buffer_gather_on_this_thread: the group-commit
//     writer). Writes made when opening a database (GRDB writes one under NORMAL), by
//     migrations or by any other thread go straight to the file;
//   - a transaction that wrote frames before its commit (pages spilled from the cache)
//     and then rolled back leaves dead frames in the buffer: written later, after the
//     write lock is released, they could land over frames another connection committed
//     meanwhile. The gathering thread says when its transaction ends, still holding the
//     connection (backend_wal_buffer_transaction_ended), and they are dropped. (The
//     platform also turns cache spilling off on such databases' writer.)
// A failed flush is reported by the operation that made it (most often the sync), so a
// commit whose frames could not be written fails as it would have at the write.
#include "wal_buffer.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// WRITE_PIECE: the most unix's xWrite takes in one call is 128 KiB less a byte (it masks
// the length to 17 bits); 31 pages of 4 KiB.
enum { BUFFER_CAPACITY = 1 << 20, WRITE_PIECE = 31 * 4096 };

typedef struct BufferedFile {
    sqlite3_file base;
    sqlite3_file *real;
    unsigned char *buffer;  // made at the first write (readers never write)
    int length;
    sqlite3_int64 start;  // the file offset of buffer[0]
} BufferedFile;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs buffered_vfs;
static sqlite3_io_methods buffered_methods;
static pthread_mutex_t enabled_lock = PTHREAD_MUTEX_INITIALIZER;
static char **enabled_paths;
static int enabled_count, enabled_capacity;
static atomic_llong gathered_writes, flushes;
// Set on the threads whose transactions commit with synchronous=FULL (the platform's
// group-commit writer): only their writes wait in a buffer.
static _Thread_local int thread_gathers;
// The log this thread last gathered into, until its transaction ends
// (backend_wal_buffer_transaction_ended).
static _Thread_local struct BufferedFile *thread_last_gathered;

static sqlite3_file *real_file(sqlite3_file *file) { return ((BufferedFile *)file)->real; }

static int flush(BufferedFile *file) {
    int rc = SQLITE_OK;
    // In pieces the real VFS takes whole: unix's xWrite writes at most 128 KiB less a byte
    // per call (it masks the length to 17 bits).
    for (int done = 0; done < file->length && rc == SQLITE_OK; done += WRITE_PIECE) {
        int piece = file->length - done < WRITE_PIECE ? file->length - done : WRITE_PIECE;
        rc = file->real->pMethods->xWrite(file->real, file->buffer + done, piece, file->start + done);
        atomic_fetch_add(&flushes, 1);
    }
    file->length = 0;
    return rc;
}

static int buffered_write(sqlite3_file *handle, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *file = (BufferedFile *)handle;
    if (thread_gathers && file->buffer == NULL) file->buffer = sqlite3_malloc(BUFFER_CAPACITY);
    if (!thread_gathers || file->buffer == NULL || amount > WRITE_PIECE) {
        // Written now, after what waits.
        int rc = flush(file);
        if (rc != SQLITE_OK) return rc;
        return file->real->pMethods->xWrite(file->real, data, amount, offset);
    }
    if (file->length > 0 && (offset != file->start + file->length || file->length + amount > BUFFER_CAPACITY)) {
        int rc = flush(file);
        if (rc != SQLITE_OK) return rc;
    }
    if (file->length == 0) file->start = offset;
    memcpy(file->buffer + file->length, data, (size_t)amount);
    file->length += amount;
    thread_last_gathered = file;
    atomic_fetch_add(&gathered_writes, 1);
    return SQLITE_OK;
}

static int buffered_close(sqlite3_file *handle) {
    BufferedFile *file = (BufferedFile *)handle;
    if (thread_last_gathered == file) thread_last_gathered = NULL;
    int flushed = flush(file);
    int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    sqlite3_free(file->buffer);
    file->buffer = NULL;
    return flushed != SQLITE_OK ? flushed : rc;
}

// The operations that see the file: the buffer goes first.
#define FLUSH_FIRST(handle)                                  \
    do {                                                     \
        int flushed = flush((BufferedFile *)(handle));       \
        if (flushed != SQLITE_OK) return flushed;            \
    } while (0)

static int buffered_read(sqlite3_file *handle, void *data, int amount, sqlite3_int64 offset) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xRead(real_file(handle), data, amount, offset);
}
static int buffered_truncate(sqlite3_file *handle, sqlite3_int64 size) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xTruncate(real_file(handle), size);
}
static int buffered_sync(sqlite3_file *handle, int flags) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xSync(real_file(handle), flags);
}
static int buffered_file_size(sqlite3_file *handle, sqlite3_int64 *size) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xFileSize(real_file(handle), size);
}
static int buffered_file_control(sqlite3_file *handle, int op, void *argument) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xFileControl(real_file(handle), op, argument);
}
static int buffered_fetch(sqlite3_file *handle, sqlite3_int64 offset, int amount, void **pointer) {
    FLUSH_FIRST(handle);
    return real_file(handle)->pMethods->xFetch(real_file(handle), offset, amount, pointer);
}

// The rest passes through.
static int buffered_lock(sqlite3_file *handle, int level) { return real_file(handle)->pMethods->xLock(real_file(handle), level); }
static int buffered_unlock(sqlite3_file *handle, int level) { return real_file(handle)->pMethods->xUnlock(real_file(handle), level); }
static int buffered_check_reserved_lock(sqlite3_file *handle, int *out) {
    return real_file(handle)->pMethods->xCheckReservedLock(real_file(handle), out);
}
static int buffered_sector_size(sqlite3_file *handle) { return real_file(handle)->pMethods->xSectorSize(real_file(handle)); }
static int buffered_device_characteristics(sqlite3_file *handle) {
    return real_file(handle)->pMethods->xDeviceCharacteristics(real_file(handle));
}
static int buffered_shm_map(sqlite3_file *handle, int region, int size, int extend, void volatile **pointer) {
    return real_file(handle)->pMethods->xShmMap(real_file(handle), region, size, extend, pointer);
}
static int buffered_shm_lock(sqlite3_file *handle, int offset, int n, int flags) {
    return real_file(handle)->pMethods->xShmLock(real_file(handle), offset, n, flags);
}
static void buffered_shm_barrier(sqlite3_file *handle) { real_file(handle)->pMethods->xShmBarrier(real_file(handle)); }
static int buffered_shm_unmap(sqlite3_file *handle, int delete_flag) {
    return real_file(handle)->pMethods->xShmUnmap(real_file(handle), delete_flag);
}
static int buffered_unfetch(sqlite3_file *handle, sqlite3_int64 offset, void *pointer) {
    return real_file(handle)->pMethods->xUnfetch(real_file(handle), offset, pointer);
}

// Whether `wal_path` is the log of a database named by backend_wal_buffer_enable.
static int is_enabled_log(const char *wal_path) {
    size_t length = strlen(wal_path);
    if (length < 4 || strcmp(wal_path + length - 4, "-wal") != 0) return 0;
    int found = 0;
    pthread_mutex_lock(&enabled_lock);
    for (int index = 0; index < enabled_count && !found; index++) {
        found = strlen(enabled_paths[index]) == length - 4 && strncmp(enabled_paths[index], wal_path, length - 4) == 0;
    }
    pthread_mutex_unlock(&enabled_lock);
    return found;
}

static int buffered_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *handle, int flags, int *out_flags) {
    (void)vfs;
    if (!(flags & SQLITE_OPEN_WAL) || name == NULL || !is_enabled_log(name)) {
        // Every other file is the real VFS's own, opened in place: nothing in between.
        return real_vfs->xOpen(real_vfs, name, handle, flags, out_flags);
    }
    BufferedFile *file = (BufferedFile *)handle;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)&file[1];
    int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        file->base.pMethods = NULL;
        return rc;
    }
    // The methods forwarded include shared memory and fetching (version 3): a log file
    // opened otherwise is opened again in place, unbuffered.
    if (file->real->pMethods->iVersion < 3) {
        file->real->pMethods->xClose(file->real);
        memset(handle, 0, (size_t)buffered_vfs.szOsFile);
        return real_vfs->xOpen(real_vfs, name, handle, flags, out_flags);
    }
    file->base.pMethods = &buffered_methods;
    return SQLITE_OK;
}

// The VFS's own calls go to the real one.
static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return real_vfs->xDelete(real_vfs, name, sync_dir);
}
static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}
static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, out);
}
static void *vfs_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xDlOpen(real_vfs, name);
}
static void vfs_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    real_vfs->xDlError(real_vfs, size, out);
}
static void (*vfs_dl_sym(sqlite3_vfs *vfs, void *library, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, library, symbol);
}
static void vfs_dl_close(sqlite3_vfs *vfs, void *library) {
    (void)vfs;
    real_vfs->xDlClose(real_vfs, library);
}
static int vfs_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, size, out);
}
static int vfs_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return real_vfs->xSleep(real_vfs, microseconds);
}
static int vfs_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return real_vfs->xCurrentTime(real_vfs, out);
}
static int vfs_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xGetLastError(real_vfs, size, out);
}
static int vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_OK;

static void register_once(void) {
    real_vfs = sqlite3_vfs_find(NULL);
    if (real_vfs == NULL) {
        register_result = SQLITE_ERROR;
        return;
    }
    buffered_methods = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = buffered_close,
        .xRead = buffered_read,
        .xWrite = buffered_write,
        .xTruncate = buffered_truncate,
        .xSync = buffered_sync,
        .xFileSize = buffered_file_size,
        .xLock = buffered_lock,
        .xUnlock = buffered_unlock,
        .xCheckReservedLock = buffered_check_reserved_lock,
        .xFileControl = buffered_file_control,
        .xSectorSize = buffered_sector_size,
        .xDeviceCharacteristics = buffered_device_characteristics,
        .xShmMap = buffered_shm_map,
        .xShmLock = buffered_shm_lock,
        .xShmBarrier = buffered_shm_barrier,
        .xShmUnmap = buffered_shm_unmap,
        .xFetch = buffered_fetch,
        .xUnfetch = buffered_unfetch,
    };
    buffered_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(BufferedFile) + real_vfs->szOsFile,
        .mxPathname = real_vfs->mxPathname,
        .zName = "backend-wal-buffer",
        .xOpen = buffered_open,
        .xDelete = vfs_delete,
        .xAccess = vfs_access,
        .xFullPathname = vfs_full_pathname,
        .xDlOpen = vfs_dl_open,
        .xDlError = vfs_dl_error,
        .xDlSym = vfs_dl_sym,
        .xDlClose = vfs_dl_close,
        .xRandomness = vfs_randomness,
        .xSleep = vfs_sleep,
        .xCurrentTime = vfs_current_time,
        .xGetLastError = vfs_get_last_error,
        .xCurrentTimeInt64 = vfs_current_time_int64,
    };
    register_result = sqlite3_vfs_register(&buffered_vfs, 1);
}

int backend_wal_buffer_register(void) {
    pthread_once(&registered, register_once);
    return register_result;
}

int backend_wal_buffer_enable(const char *database_path) {
    int rc = backend_wal_buffer_register();
    if (rc != SQLITE_OK) return rc;
    // As SQLite will name its log: the full path (the real VFS's), then "-wal".
    char *full = sqlite3_malloc(real_vfs->mxPathname + 1);
    if (full == NULL) return SQLITE_NOMEM;
    rc = real_vfs->xFullPathname(real_vfs, database_path, real_vfs->mxPathname + 1, full);
    if (rc != SQLITE_OK) {
        sqlite3_free(full);
        return rc;
    }
    pthread_mutex_lock(&enabled_lock);
    int known = 0;
    for (int index = 0; index < enabled_count && !known; index++) known = strcmp(enabled_paths[index], full) == 0;
    if (!known && enabled_count == enabled_capacity) {
        int capacity = enabled_capacity == 0 ? 8 : enabled_capacity * 2;
        char **grown = sqlite3_realloc(enabled_paths, capacity * (int)sizeof(char *));
        if (grown == NULL) {
            rc = SQLITE_NOMEM;
        } else {
            enabled_paths = grown;
            enabled_capacity = capacity;
        }
    }
    if (!known && rc == SQLITE_OK) {
        enabled_paths[enabled_count++] = full;
        full = NULL;
    }
    pthread_mutex_unlock(&enabled_lock);
    sqlite3_free(full);
    return rc;
}

void backend_wal_buffer_gather_on_this_thread(int gather) { thread_gathers = gather; }

int backend_wal_buffer_transaction_ended(int committed) {
    BufferedFile *file = thread_last_gathered;
    thread_last_gathered = NULL;
    if (file == NULL || file->length == 0) return SQLITE_OK;
    if (committed) return flush(file);
    // Frames of a transaction rolled back after its pages spilled: dead (the log's next
    // frames go over them). Written later, they could land over frames another
    // connection committed meanwhile, so they are dropped.
    file->length = 0;
    return SQLITE_OK;
}

void backend_wal_buffer_counts(long long *writes_gathered, long long *flush_count) {
    *writes_gathered = atomic_load(&gathered_writes);
    *flush_count = atomic_load(&flushes);
}
