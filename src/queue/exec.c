/* The executor: what each queued command does when all its resources are
 * granted. Runs on a worker (or, in SERIAL mode, on the calling thread),
 * without the scheduler mutex. Draws and mipmap generation go to the
 * device's backend through its vtable; the byte operations run here on the
 * storages' CPU bytes, made current first when a backend holds newer ones,
 * and every storage they write gets a new generation. */
#include "queue.h"
#include "internal.h"

/* The byte operations below touch their storages on the CPU. */
static void cpu_begin(kq_cmd *cmd)
{
    const kq_backend *b = cmd->ctx->dev->backend;
    if (!b->sync_storage)
        return;
    for (uint32_t i = 0; i < cmd->naccess; i++)
        if (atomic_load_explicit(&cmd->acc[i].st->backend_newer, memory_order_acquire))
            b->sync_storage(cmd->ctx->dev, cmd->acc[i].st);
}

static void cpu_end(kq_cmd *cmd)
{
    for (uint32_t i = 0; i < cmd->naccess; i++)
        if (cmd->acc[i].mode == KQ_WRITE)
            atomic_fetch_add_explicit(&cmd->acc[i].st->gen, 1, memory_order_release);
}

static kq_exec_result run_cpu(kq_cmd *cmd);

/* Predication: whether the predicate's last end gives the value that
 * skips this command. The query's storage is read under the command's
 * read grant, after every write (end) queued before it. */
static bool predicated_off(const kq_cmd *cmd)
{
    for (uint32_t i = 0; i < cmd->naccess; i++)
        if (cmd->acc[i].res == cmd->pred_res) {
            const kq_query_data *d = (const kq_query_data *)(const void *)cmd->acc[i].st->data;
            return (d->passed != 0) == (cmd->pred_value != 0);
        }
    return false;
}

kq_exec_result kq_execute(kq_cmd *cmd)
{
    if (cmd->pred_res && predicated_off(cmd))
        return KQ_EXEC_DONE;
    switch ((kq_op)cmd->op) {
    case KQ_OP_SCENE:
        return cmd->ctx->dev->backend->scene(cmd->ctx->dev, cmd);
    case KQ_OP_GENERATE_MIPS:
        return cmd->ctx->dev->backend->generate_mips(cmd->ctx->dev, cmd);
    case KQ_OP_CLEAR:
    case KQ_OP_UPDATE:
    case KQ_OP_COPY_REGION:
    case KQ_OP_COPY_RESOURCE:
    case KQ_OP_RESOLVE: {
        cpu_begin(cmd);
        kq_exec_result r = run_cpu(cmd);
        cpu_end(cmd);
        return r;
    }
    default:
        return run_cpu(cmd);
    }
}

static kq_exec_result run_cpu(kq_cmd *cmd)
{
    kq_node *a = &cmd->acc[0];
    switch ((kq_op)cmd->op) {
    case KQ_OP_NOP:
    case KQ_OP_WAIT: /* never scheduled */
        break;
    case KQ_OP_CLEAR:
        kres_fill(a->res, a->st, cmd->u.clear.first_mip, cmd->u.clear.num_mips,
                  cmd->u.clear.first_slice, cmd->u.clear.num_slices, cmd->u.clear.texel,
                  cmd->u.clear.mask);
        break;
    case KQ_OP_UPDATE:
        kres_write_box(a->res, a->st, cmd->u.update.sub, &cmd->u.update.box,
                       cmd->ctx->ring.base + cmd->u.update.ring_offset, cmd->u.update.pitch);
        break;
    case KQ_OP_COPY_REGION: {
        /* acc[0] is the destination; the source is acc[1], or acc[0] again
         * when both are one resource (merged into one write). */
        kq_node *s = cmd->naccess > 1 && cmd->acc[1].res != cmd->pred_res ? &cmd->acc[1] : a;
        kres_copy_region(a->res, a->st, cmd->u.copy.dst_sub, cmd->u.copy.dst_x,
                         cmd->u.copy.dst_y, cmd->u.copy.dst_z, s->res, s->st, cmd->u.copy.src_sub,
                         &cmd->u.copy.box);
        break;
    }
    case KQ_OP_COPY_RESOURCE:
        kres_copy_all(a->res, a->st, cmd->acc[1].res, cmd->acc[1].st);
        break;
    case KQ_OP_RESOLVE:
        kres_resolve(a->res, a->st, cmd->u.copy.dst_sub, cmd->acc[1].res, cmd->acc[1].st, cmd->u.copy.src_sub);
        break;
    case KQ_OP_SCENE:
    case KQ_OP_GENERATE_MIPS: /* kq_execute hands these to the backend */
        break;
    case KQ_OP_CALL:
        cmd->u.call.fn(cmd);
        break;
    case KQ_OP_TEST_FAIL:
        cmd->fail_reason = "injected failure (test hook)";
        return KQ_EXEC_FAILED;
    case KQ_OP_TEST_GATE: {
        kq_gate *g = cmd->u.gate.gate;
        kq_device *q = g->dev;
        pthread_mutex_lock(&q->dom->mu);
        g->entered++;
        bool open = g->open;
        if (!open) {
            cmd->next = g->parked;
            g->parked = cmd;
        }
        if (q->dom->waiters)
            pthread_cond_broadcast(&q->dom->cv);
        ks_unlock(q->dom);
        return open ? KQ_EXEC_DONE : KQ_EXEC_PARKED;
    }
    }
    return KQ_EXEC_DONE;
}

void kq_gate_hold_done(kq_gate *g)
{
    if (--g->holds == 0 && g->destroyed)
        kb_free(&g->env, g, sizeof *g);
}

void kq_gate_open(kq_gate *g)
{
    kq_device *q = g->dev;
    pthread_mutex_lock(&q->dom->mu);
    g->open = true;
    kq_cmd *list = g->parked;
    g->parked = NULL;
    ks_unlock(q->dom);
    while (list) {
        kq_cmd *next = list->next;
        kq_complete(list);
        list = next;
    }
}
