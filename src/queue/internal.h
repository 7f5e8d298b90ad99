/* Scheduler internals shared by the queue's files; all take q->mu held. */
#ifndef KILN_QUEUE_INTERNAL_H
#define KILN_QUEUE_INTERNAL_H

#include "queue.h"

void kq_grant(kq_device *q, kq_lock *lock);
void kq_append(kq_lock *lock, kq_node *n);
/* Removes a waiting node and grants what it was holding back. */
void kq_unlink(kq_device *q, kq_lock *lock, kq_node *n);
/* Releases a granted node and grants what waits behind it. */
void kq_release(kq_device *q, kq_node *n);
/* Waits for some command to complete (SERIAL: runs one). Returns
 * KILN_E_WOULD_DEADLOCK when nothing but the caller could make progress. */
kiln_result kq_wait_progress(kq_device *q, kq_context *c);
void kq_drain_serial(kq_device *q);
void kq_complete_locked(kq_device *q, kq_cmd *cmd);
void kq_fire_records_locked(kq_context *c);
void kq_schedule_locked(kq_device *q, kq_cmd *cmd);
void kq_enter_flight_locked(kq_context *c, kq_cmd *cmd);
void kq_defer_locked(kq_context *c, kq_cmd *cmd);
/* Does a command held behind a server wait use this resource? */
bool kq_deferred_uses(const kq_context *c, const kres_resource *res);

kiln_result kq_transfer_init(kq_transfer *t, const kb_env *env, uint32_t size);
void kq_transfer_fini(kq_transfer *t, const kb_env *env);
void kq_unmap_all(kq_context *c);

#endif
