/*
 * Test-only hooks. Not part of the public API (not installed); tests
 * include this from the source tree and link the static library.
 *
 * A gate is a switch the test controls. kiln_test_hold queues a command that
 * takes its resources like any other command (reads or writes, in queue
 * order) and, once they are granted, does not complete until the gate
 * opens. It occupies no worker thread while it waits, so other commands
 * keep running. Lets a test prove what waits for what without timing.
 */
#ifndef KILN_TEST_HOOKS_H
#define KILN_TEST_HOOKS_H

#include "kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_test_gate kiln_test_gate;

KILN_API kiln_result kiln_test_gate_create(kiln_device *device, kiln_test_gate **out_gate);
/* Queues the holding command. writes[i] != 0: resource i is written. */
KILN_API kiln_result kiln_test_hold(kiln_context *ctx, kiln_test_gate *gate,
                                    const kiln_resource *resources, const int *writes,
                                    uint32_t count);
/* Queues a command that takes its resources like any other and then fails
 * while executing (as a draw that cannot get memory for its bins would):
 * the failure is reported through the log callback (COMMAND_FAILED) and
 * errors the context's next completion point. */
KILN_API kiln_result kiln_test_fail(kiln_context *ctx, const kiln_resource *resources,
                                    const int *writes, uint32_t count);
/* Blocks until at least `count` holding commands have been granted their
 * resources (reached the gate). */
KILN_API void kiln_test_gate_wait_entered(kiln_test_gate *gate, uint32_t count);
/* Number of holding commands that have reached the gate so far. */
KILN_API uint32_t kiln_test_gate_entered(kiln_test_gate *gate);
/* Opens the gate: held commands complete, and later ones pass at once. */
KILN_API void kiln_test_gate_open(kiln_test_gate *gate);
/* Opens the gate if needed and frees it. */
KILN_API void kiln_test_gate_destroy(kiln_test_gate *gate);

#ifdef __cplusplus
}
#endif

#endif
