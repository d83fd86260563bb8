#ifndef CZEROMQ_SHIM_H
#define CZEROMQ_SHIM_H
#include <zmq.h>
// eventfd wakes a socket thread from other threads (Platform's Mailbox).
#include <sys/eventfd.h>
#endif
