/* Test-only hooks (see test_hooks.h). */
#include "test_hooks.h"
#include "api.h"

struct kiln_test_gate {
    kq_gate g;
};

kiln_result kiln_test_gate_create(kiln_device *dev, kiln_test_gate **out)
{
    if (!dev || !out)
        return KILN_E_INVALID_ARG;
    kiln_test_gate *t = kb_calloc(&dev->env, sizeof *t);
    if (!t)
        return KILN_E_OUT_OF_MEMORY;
    t->g.dev = &dev->queue;
    t->g.env = dev->env;
    *out = t;
    return KILN_OK;
}

static kiln_result queue_test_cmd(kiln_context *ctx, kq_op op, kiln_test_gate *gate,
                                  const kiln_resource *resources, const int *writes, uint32_t count,
                                  const char *api)
{
    if (!ctx || (op == KQ_OP_TEST_GATE && !gate) || (count && (!resources || !writes)) ||
        count > KQ_MAX_ACCESS)
        return KILN_E_INVALID_ARG;
    kiln_device *dev = ctx->dev;
    kres_resource *res[KQ_MAX_ACCESS];
    kiln_result r = KILN_OK;
    uint32_t got = 0;
    for (; got < count; got++) {
        res[got] = ka_get_resource(dev, resources[got].id, KRES_TYPE_BUFFER, KRES_TYPE_TEXTURE2D, api,
                                   "resource", &r);
        if (!res[got])
            break;
    }
    kq_cmd *cmd = NULL;
    if (r == KILN_OK)
        r = kq_begin(&ctx->q, api, &cmd);
    if (r == KILN_OK) {
        if (gate) {
            pthread_mutex_lock(&ctx->q.dev->dom->mu);
            gate->g.holds++;
            pthread_mutex_unlock(&ctx->q.dev->dom->mu);
        }
        cmd->op = (uint16_t)op;
        cmd->u.gate.gate = gate ? &gate->g : NULL;        for (uint32_t i = 0; i < count; i++)
            kq_access(cmd, res[i], writes[i] ? KQ_WRITE : KQ_READ);
        kq_submit(&ctx->q, cmd);
    }
    for (uint32_t i = 0; i < got; i++)
        kres_unref(&res[i]->base);
    return r;
}

kiln_result kiln_test_hold(kiln_context *ctx, kiln_test_gate *gate, const kiln_resource *resources,
                           const int *writes, uint32_t count)
{
    return queue_test_cmd(ctx, KQ_OP_TEST_GATE, gate, resources, writes, count, "kiln_test_hold");
}

kiln_result kiln_test_fail(kiln_context *ctx, const kiln_resource *resources, const int *writes,
                           uint32_t count)
{
    return queue_test_cmd(ctx, KQ_OP_TEST_FAIL, NULL, resources, writes, count, "kiln_test_fail");
}

void kiln_test_gate_wait_entered(kiln_test_gate *gate, uint32_t count)
{
    kq_device *q = gate->g.dev;
    pthread_mutex_lock(&q->dom->mu);
    while (gate->g.entered < count) {
        q->dom->waiters++;
        pthread_cond_wait(&q->dom->cv, &q->dom->mu);
        q->dom->waiters--;
    }
    ks_unlock(q->dom);
}

uint32_t kiln_test_gate_entered(kiln_test_gate *gate)
{
    kq_device *q = gate->g.dev;
    pthread_mutex_lock(&q->dom->mu);
    uint32_t n = gate->g.entered;
    ks_unlock(q->dom);
    return n;
}

void kiln_test_gate_open(kiln_test_gate *gate)
{
    kq_gate_open(&gate->g);
}

void kiln_test_gate_destroy(kiln_test_gate *gate)
{
    if (!gate)
        return;
    /* Queued holds may still name the gate: the last to complete frees it.
     * Everything happens in one locked section, and nothing here touches
     * the gate or the device after it (another thread may destroy the
     * device as soon as the held commands complete). */
    kq_device *q = gate->g.dev;
    pthread_mutex_lock(&q->dom->mu);
    gate->g.destroyed = true;
    gate->g.open = true;
    kq_cmd *list = gate->g.parked;
    gate->g.parked = NULL;
    bool free_now = gate->g.holds == 0;
    kb_env env = gate->g.env;
    pthread_mutex_unlock(&q->dom->mu);
    if (free_now)
        kb_free(&env, gate, sizeof *gate);
    while (list) {
        kq_cmd *next = list->next;
        kq_complete(list);
        list = next;
    }
}
