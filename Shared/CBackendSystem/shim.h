#ifndef CBACKENDSYSTEM_SHIM_H
#define CBACKENDSYSTEM_SHIM_H
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// The calling thread's kernel id (glibc's gettid() is not visible to Swift everywhere).
static inline pid_t backend_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Lowers (or raises) the calling thread's scheduling priority.
static inline int backend_set_thread_niceness(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)backend_gettid(), niceness);
}
#endif
