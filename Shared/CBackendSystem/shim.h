#ifndef CBACKENDSYSTEM_SHIM_H
#define CBACKENDSYSTEM_SHIM_H
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <spawn.h>
#include <sqlite3.h>
#include <malloc.h>
#include <sys/prctl.h>

// glibc 2.34+: close every descriptor from `from` up in the child of posix_spawn (declared
// by spawn.h only under _GNU_SOURCE, which Swift's Glibc module does not set).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int backend_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// The calling thread's kernel id (glibc's gettid() is not visible to Swift everywhere).
static inline pid_t backend_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Names the calling thread for the kernel (top -H, perf, /proc/<pid>/task/*/comm): at most
// 15 bytes are kept. Foundation on Linux keeps Thread.name in the object only.
static inline int backend_name_this_thread(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }

// Lowers (or raises) the calling thread's scheduling priority.
static inline int backend_set_thread_niceness(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)backend_gettid(), niceness);
}

// Turns off SQLite's memory statistics before its first connection: with them on, every
// allocation SQLite makes takes a process-wide mutex (SQLITE_CONFIG_MEMSTATUS; sqlite3_config
// is variadic, which Swift cannot call). SQLITE_MISUSE once SQLite is initialized.
static inline int backend_sqlite_memstatus_off(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// Keeps the memory of request and reply buffers in the heap for the next request instead
// of mapping and unmapping it every time. Setting either value turns off glibc's sliding
// threshold (which starts at 128 KiB and rises to the size of a freed mapped block), so
// both are set: blocks under `mmap_threshold` come from the heap, and up to
// `trim_threshold` free at the top of a heap is kept. Returns how many were set (0-2).
static inline int backend_malloc_keep_buffers(int mmap_threshold, int trim_threshold) {
    int set = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1;
    return set + (mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1);
}
#endif
