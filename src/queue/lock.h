/*
 * queue/lock: the per-storage lock list of seed 002 (ResourceLock /
 * CommandLock), as a leaf data structure so resources can embed it.
 *
 * Every kq_lock is guarded by the device scheduler mutex (kq_device.mu).
 * A lock list is a FIFO of waiting nodes plus counts of granted holders.
 * Grant rule (kq_lock_grant): take nodes from the head while compatible:
 * a reader is granted when no writer holds; a writer when nobody holds.
 * Because a command appends all its nodes at once under the mutex, the
 * order of any two commands is the same in every list they share, so
 * RAW/WAR/WAW order is kept and no cycle (deadlock) can form.
 */
#ifndef KILN_QUEUE_LOCK_H
#define KILN_QUEUE_LOCK_H

#include <stdint.h>

struct kq_cmd;
struct kres_storage;
struct kres_resource;

enum { KQ_READ = 1, KQ_WRITE = 2 };
enum { KQ_NODE_IDLE = 0, KQ_NODE_WAITING, KQ_NODE_GRANTED };

typedef struct kq_node {
    struct kq_node *next;        /* next waiting node of the same lock */
    struct kq_cmd *cmd;          /* owning command; NULL for a CPU map */
    struct kres_resource *res;   /* the resource (ref held while queued) */
    struct kres_storage *st;     /* its storage at submit time (ref held) */
    uint8_t mode;                /* KQ_READ or KQ_WRITE */
    uint8_t state;               /* KQ_NODE_* */
    uint8_t retired;             /* an open scene's: `st` was renamed and
                                    counts in the scene's retired bytes */
} kq_node;

typedef struct kq_lock {
    kq_node *head, *tail; /* waiting nodes, submission order */
    uint32_t readers;     /* granted readers */
    uint32_t writers;     /* granted writers (0 or 1; a NO_OVERWRITE map may
                             hold alongside readers) */
} kq_lock;

#endif
