/* Queries (D3D10): EVENT, OCCLUSION, TIMESTAMP, TIMESTAMP_DISJOINT,
 * PIPELINE_STATISTICS, OCCLUSION_PREDICATE, SO_STATISTICS,
 * SO_OVERFLOW_PREDICATE; and predication.
 *
 * Three mechanisms, by type (docs/queries.md):
 * - EVENT and TIMESTAMP_DISJOINT: end marks a point on the context's own
 *   timeline; the result is known when every command before it completed.
 * - TIMESTAMP: the same point, with a hook that reads the clock when it is
 *   reached.
 * - Counting types: the query owns an internal buffer resource holding a
 *   kq_query_data. Begin and end are commands that write it, scenes that
 *   count into it write it, predicated commands read it: the lock lists
 *   order them, and nothing else waits for them. */
#include "../capture/capture.h"
#include "api.h"

#include <string.h>
#include <time.h>

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)
#define DEV_PREAMBLE()                                                                             \
    if (!dev)                                                                                      \
    return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL")
#define CTX_PREAMBLE()                                                                             \
    if (!ctx)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,             \
                       "context is NULL");                                                         \
    kiln_device *dev = ctx->dev

typedef struct ka_query {
    kres_object base; /* KRES_TYPE_QUERY */
    ks_domain *dom;
    kiln_query_type type;
    kres_resource *res; /* counting types: its storage is a kq_query_data */
    /* Guarded by dom->mu: */
    kiln_context *active;      /* between begin and end: the context */
    bool ended;                /* ended at least once, and not begun since */
    uint64_t ends;             /* ends issued */
    uint32_t predicate_uses;   /* contexts that have it as their predicate */
    ks_fence *fence;           /* EVENT, TIMESTAMP_DISJOINT: the last end's point */
    uint64_t stamp, stamp_end; /* TIMESTAMP: the clock, and the end it belongs to */
} ka_query;

static bool so_type(kiln_query_type t)
{
    return t == KILN_QUERY_SO_STATISTICS || t == KILN_QUERY_SO_OVERFLOW_PREDICATE;
}

static bool counting(kiln_query_type t)
{
    return t == KILN_QUERY_OCCLUSION || t == KILN_QUERY_OCCLUSION_PREDICATE ||
           t == KILN_QUERY_PIPELINE_STATISTICS || so_type(t);
}

static bool has_begin(kiln_query_type t)
{
    return t != KILN_QUERY_EVENT && t != KILN_QUERY_TIMESTAMP;
}

static uint32_t data_size(kiln_query_type t)
{
    switch (t) {
    case KILN_QUERY_OCCLUSION:
    case KILN_QUERY_TIMESTAMP:
        return sizeof(uint64_t);
    case KILN_QUERY_TIMESTAMP_DISJOINT:
        return sizeof(kiln_query_data_timestamp_disjoint);
    case KILN_QUERY_PIPELINE_STATISTICS:
        return sizeof(kiln_query_data_pipeline_statistics);
    case KILN_QUERY_SO_STATISTICS:
        return sizeof(kiln_query_data_so_statistics);
    default: /* EVENT, OCCLUSION_PREDICATE, SO_OVERFLOW_PREDICATE */
        return sizeof(uint32_t);
    }
}

static kq_query_data *query_data(const ka_query *q)
{
    return (kq_query_data *)(void *)q->res->current->data; /* never renamed */
}

static void query_destroy(kres_object *obj)
{
    ka_query *q = (ka_query *)obj;
    ks_domain *d = q->dom;
    if (q->fence)
        kres_unref(&q->fence->base);
    if (q->res)
        kres_unref(&q->res->base);
    kb_free(&d->env, q, sizeof *q);
    ks_domain_unref(d);
}

static kiln_result create_query(kiln_device *dev, kiln_query_type type, kiln_query *out)
{
    static const char api[] = "kiln_create_query";
    if (out)
        out->id = 0;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_query is NULL");
    if ((unsigned)type >= KILN_QUERY_TYPE_COUNT)
        return FAIL(KILN_E_INVALID_ARG, QUERY_TYPE, "query type %d", (int)type);
    if (so_type(type) && !(dev->queue.backend->caps & KQ_BACKEND_STREAM_OUTPUT))
        return FAIL(KILN_E_UNSUPPORTED, QUERY_NO_STREAM_OUTPUT, "the %s backend has no stream output (query type %d)",
                    dev->queue.backend->name, (int)type);
    if (counting(type) && !(dev->queue.backend->caps & KQ_BACKEND_QUERIES))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE,
                    "the %s backend does not count occlusion or pipeline statistics",
                    dev->queue.backend->name);
    ka_query *q = kb_calloc(&dev->env, sizeof *q);
    if (!q)
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "query");
    if (counting(type)) {
        kres_layout_desc d = {.type = KRES_TYPE_BUFFER,
                              .usage = KILN_USAGE_DEFAULT,
                              .width = sizeof(kq_query_data),
                              .height = 1,
                              .mip_levels = 1,
                              .array_size = 1};
        if (kres_resource_create(&dev->dom->env, &d, &q->res) != KILN_OK) {
            kb_free(&dev->env, q, sizeof *q);
            return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "query");
        }
        /* Nothing can use the storage yet: set before any command. */
        ((kq_query_data *)(void *)q->res->current->data)->so_predicate =
            type == KILN_QUERY_SO_OVERFLOW_PREDICATE;
    }
    q->base.type = KRES_TYPE_QUERY;
    q->base.env = &dev->dom->env;
    q->base.destroy = query_destroy;
    atomic_init(&q->base.refs, 1);
    ks_domain_ref(dev->dom);
    q->dom = dev->dom;
    q->type = type;
    kiln_result r;
    uint32_t id = kres_handles_add(&dev->handles, &q->base, &r);
    if (!id) {
        kres_unref(&q->base);
        return kb_fail(&dev->env, r,
                       r == KILN_E_OUT_OF_MEMORY ? KILN_LOG_OUT_OF_MEMORY
                                                 : KILN_LOG_HANDLE_TABLE_FULL,
                       api, "adding a handle");
    }
    out->id = id;
    return KILN_OK;
}

kiln_result kiln_create_query(kiln_device *dev, kiln_query_type type, kiln_query *out)
{
    kiln_result r = create_query(dev, type, out);
    if (dev && dev->capture)
        kcap_create_query(dev, type, out ? *out : (kiln_query){0}, r);
    return r;
}

static kiln_result destroy_query(kiln_device *dev, kiln_query query)
{
    static const char api[] = "kiln_destroy_query";
    DEV_PREAMBLE();
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o =
        kres_handles_remove(&dev->handles, query.id, KRES_TYPE_QUERY, KRES_TYPE_QUERY, &lid);
    if (!o)
        return ka_handle_fail(dev, api, "query", lid);
    kres_unref(o); /* a context it is active on or predicates keeps it */
    return KILN_OK;
}

kiln_result kiln_destroy_query(kiln_device *dev, kiln_query q)
{
    kiln_result r = destroy_query(dev, q);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_QUERY, q.id, r);
    return r;
}

static ka_query *get_query(kiln_device *dev, uint32_t id, const char *api, kiln_result *r)
{
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_get(&dev->handles, id, KRES_TYPE_QUERY, KRES_TYPE_QUERY, &lid);
    *r = o ? KILN_OK : ka_handle_fail(dev, api, "query", lid);
    return (ka_query *)o;
}

/* ---- the commands that begin and end a counting query ---- */

static void begin_exec(kq_cmd *cmd)
{
    kq_query_data *d = (kq_query_data *)(void *)cmd->acc[0].st->data;
    memset(d->acc, 0, sizeof d->acc);
}

static void end_exec(kq_cmd *cmd)
{
    kq_query_data *d = (kq_query_data *)(void *)cmd->acc[0].st->data;
    /* D3D10: an occlusion predicate is true when a sample passed, an
     * overflow predicate when a primitive did not fit. */
    d->passed = d->so_predicate ? d->acc[KQ_Q_SO_NEEDED] > d->acc[KQ_Q_SO_WRITTEN] : d->acc[KQ_Q_SAMPLES] != 0;
    ks_domain *dom = cmd->ctx->dev->dom;
    pthread_mutex_lock(&dom->mu); /* get_data reads the result under it */
    if (cmd->u.call.value > d->done_gen) { /* (ends run in call order; kept monotonic) */
        memcpy(d->result, d->acc, sizeof d->result);
        d->done_gen = cmd->u.call.value;
    }
    pthread_mutex_unlock(&dom->mu);
}

static kiln_result queue_call(kiln_context *ctx, const char *api, ka_query *q, void (*fn)(kq_cmd *),
                              uint64_t value)
{
    kq_cmd *cmd;
    kiln_result r = kq_begin(&ctx->q, api, &cmd);
    if (r != KILN_OK)
        return kb_fail(&ctx->dev->env, r, KILN_LOG_WOULD_DEADLOCK, api,
                       "the command ring is full of commands waiting for a resource this thread "
                       "keeps mapped");
    cmd->op = KQ_OP_CALL;
    cmd->u.call.fn = fn;
    cmd->u.call.value = value;
    kq_access(cmd, q->res, KQ_WRITE);
    kq_submit(&ctx->q, cmd);
    /* Handed over now, not with the context's next batch: another
     * context's get_data, predicate or begin on this query must find it in
     * the query's lock list in call order. */
    kq_flush(&ctx->q);
    return KILN_OK;
}

/* ---- begin ---- */

static kiln_result query_begin(kiln_context *ctx, kiln_query query)
{
    static const char api[] = "kiln_query_begin";
    CTX_PREAMBLE();
    kiln_result r;
    ka_query *q = get_query(dev, query.id, api, &r);
    if (!q)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    if (!has_begin(q->type))
        r = FAIL(KILN_E_INVALID_CALL, QUERY_TYPE, "EVENT and TIMESTAMP queries have no begin");
    else if (q->active)
        r = FAIL(KILN_E_INVALID_CALL, QUERY_ACTIVE, "the query is active%s: end it first",
                 q->active == ctx ? "" : " on another context");
    else if (q->predicate_uses)
        r = FAIL(KILN_E_INVALID_CALL, QUERY_IS_PREDICATE, "the query is set as a predicate");
    else if (ctx->nactive == KILN_MAX_ACTIVE_QUERIES)
        r = FAIL(KILN_E_UNSUPPORTED, QUERY_TOO_MANY_ACTIVE, "%d queries are active already",
                 KILN_MAX_ACTIVE_QUERIES);
    bool was_ended = q->ended, claimed = r == KILN_OK;
    if (claimed) { /* with the checks: a racing begin sees it */
        q->active = ctx;
        q->ended = false;
    }
    pthread_mutex_unlock(&dev->dom->mu);
    /* The scene gathered so far counts into the queries active before. */
    if (r == KILN_OK)
        r = ka_flush_scene(ctx, api);
    if (r == KILN_OK && counting(q->type))
        r = queue_call(ctx, api, q, begin_exec, 0);
    if (r != KILN_OK) {
        pthread_mutex_lock(&dev->dom->mu);
        if (claimed) { /* given back: nothing changed */
            q->active = NULL;
            q->ended = was_ended;
        }
        pthread_mutex_unlock(&dev->dom->mu);
        kres_unref(&q->base);
        return r;
    }
    ctx->active[ctx->nactive++] = q; /* takes the lookup's reference */
    return KILN_OK;
}

kiln_result kiln_query_begin(kiln_context *ctx, kiln_query query)
{
    kiln_result r = query_begin(ctx, query);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_QUERY_BEGIN, query.id, r);
    return r;
}

/* ---- end ---- */

static void stamp_hook(kres_object *obj, uint64_t end)
{
    ka_query *q = (ka_query *)obj;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (end > q->stamp_end) { /* an older end of another context fired late */
        q->stamp = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        q->stamp_end = end;
    }
}

/* EVENT, TIMESTAMP, TIMESTAMP_DISJOINT: a point at the end of the stream. */
static kiln_result end_point(kiln_context *ctx, const char *api, ka_query *q)
{
    kiln_device *dev = ctx->dev;
    uint64_t value = 0;
    ks_fence *f = NULL, *old = NULL;
    pthread_mutex_lock(&dev->dom->mu);
    uint64_t end = q->ends + 1;
    kiln_result r = q->type == KILN_QUERY_TIMESTAMP
                        ? ka_mark_locked(ctx, &value, stamp_hook, &q->base, end)
                        : ka_mark_locked(ctx, &value, NULL, NULL, 0);
    if (r == KILN_OK && q->type != KILN_QUERY_TIMESTAMP) {
        ks_point *p = ks_point_create_locked(ctx->q.tl, value);
        r = p ? ks_fence_create_locked(dev->dom, &p, 1, &f) : KILN_E_OUT_OF_MEMORY;
        if (p)
            ks_point_unref_locked(p);
    }
    if (r == KILN_OK) {
        old = q->fence;
        q->fence = f;
        q->ends = end;
        q->ended = true;
        q->active = NULL;
    }
    ks_unlock(dev->dom);
    if (old)
        kres_unref(&old->base);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "query end");
    return KILN_OK;
}

static kiln_result query_end(kiln_context *ctx, kiln_query query)
{
    static const char api[] = "kiln_query_end";
    CTX_PREAMBLE();
    kiln_result r;
    ka_query *q = get_query(dev, query.id, api, &r);
    if (!q)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    if (q->predicate_uses)
        r = FAIL(KILN_E_INVALID_CALL, QUERY_IS_PREDICATE, "the query is set as a predicate");
    else if (has_begin(q->type) && q->active != ctx)
        r = FAIL(KILN_E_INVALID_CALL, QUERY_NOT_ACTIVE, "end without a begin%s",
                 q->active ? " on this context" : "");
    pthread_mutex_unlock(&dev->dom->mu);
    if (r == KILN_OK)
        r = ka_flush_scene(ctx, api); /* its draws count before the end */
    if (r == KILN_OK && !counting(q->type)) {
        r = end_point(ctx, api, q);
    } else if (r == KILN_OK) {
        uint64_t end = q->ends + 1; /* only this context changes it now */
        r = queue_call(ctx, api, q, end_exec, end);
        if (r == KILN_OK) {
            pthread_mutex_lock(&dev->dom->mu);
            q->ends = end;
            q->ended = true;
            q->active = NULL;
            pthread_mutex_unlock(&dev->dom->mu);
        }
    }
    if (r == KILN_OK && has_begin(q->type)) { /* no longer active here */
        uint32_t i = 0;
        while (ctx->active[i] != q)
            i++;
        ctx->active[i] = ctx->active[--ctx->nactive];
        kres_unref(&q->base); /* the context's reference */
    }
    kres_unref(&q->base);
    return r;
}

kiln_result kiln_query_end(kiln_context *ctx, kiln_query query)
{
    struct kcap_writer *w =
        ctx && ctx->dev->capture ? kcap_lock_context(ctx, "kiln_query_end") : NULL;
    kiln_result r = query_end(ctx, query);
    if (w)
        kcap_query_end(w, ctx, query, r);
    return r;
}

/* ---- get_data ---- */

static kiln_result query_get_data(kiln_context *ctx, kiln_query query, void *data, uint32_t size,
                                  uint32_t flags)
{
    static const char api[] = "kiln_query_get_data";
    CTX_PREAMBLE();
    if (flags & ~(uint32_t)KILN_GET_DATA_DO_NOT_FLUSH)
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "flags 0x%x", flags);
    kiln_result r;
    ka_query *q = get_query(dev, query.id, api, &r);
    if (!q)
        return r;
    uint32_t want = data_size(q->type);
    if ((data && size != want) || (!data && size != 0)) {
        kres_unref(&q->base);
        return FAIL(KILN_E_INVALID_ARG, DATA_SIZE, "size %u (expected %u with data, 0 without)",
                    size, want);
    }
    union {
        uint32_t u32;
        uint64_t u64;
        kiln_query_data_timestamp_disjoint disjoint;
        kiln_query_data_pipeline_statistics stats;
        kiln_query_data_so_statistics so;
    } out;
    memset(&out, 0, sizeof out);
    bool ended, known = false;
    r = KILN_OK;
    pthread_mutex_lock(&dev->dom->mu);
    ended = q->ended;
    if (ended && q->fence) { /* EVENT, TIMESTAMP_DISJOINT */
        ks_state s = ks_fence_state_locked(q->fence);
        known = s != KS_ACTIVE;
        r = s == KS_ERROR ? KILN_E_COMMAND_FAILED : KILN_OK;
        if (q->type == KILN_QUERY_EVENT)
            out.u32 = s == KS_SIGNALED;
        else
            out.disjoint.frequency = 1000000000ull;
    } else if (ended && q->type == KILN_QUERY_TIMESTAMP) {
        known = q->stamp_end == q->ends;
        out.u64 = q->stamp;
    } else if (ended) {
        const kq_query_data *d = query_data(q);
        known = d->done_gen == q->ends;
        if (q->type == KILN_QUERY_OCCLUSION)
            out.u64 = d->result[KQ_Q_SAMPLES];
        else if (q->type == KILN_QUERY_OCCLUSION_PREDICATE)
            out.u32 = d->result[KQ_Q_SAMPLES] != 0;
        else if (q->type == KILN_QUERY_SO_OVERFLOW_PREDICATE)
            out.u32 = d->result[KQ_Q_SO_NEEDED] > d->result[KQ_Q_SO_WRITTEN];
        else if (q->type == KILN_QUERY_SO_STATISTICS)
            out.so = (kiln_query_data_so_statistics){d->result[KQ_Q_SO_WRITTEN], d->result[KQ_Q_SO_NEEDED]};
        else
            memcpy(&out.stats, d->result, sizeof out.stats); /* KQ_Q_* follow its layout */
    }
    pthread_mutex_unlock(&dev->dom->mu);
    kres_unref(&q->base);
    if (!ended)
        return FAIL(KILN_E_INVALID_CALL, QUERY_NOT_ENDED, "get_data before end");
    if (!known) {
        if (!(flags & KILN_GET_DATA_DO_NOT_FLUSH))
            kiln_flush(ctx);
        return KILN_E_WAS_STILL_DRAWING;
    }
    if (data)
        memcpy(data, &out, want);
    return r;
}

kiln_result kiln_query_get_data(kiln_context *ctx, kiln_query query, void *data, uint32_t size,
                                uint32_t flags)
{
    kiln_result r = query_get_data(ctx, query, data, size, flags);
    if (ctx && ctx->dev->capture)
        kcap_query_get_data(ctx, query, data, flags, r);
    return r;
}

/* ---- predication ---- */

static kiln_result set_predication(kiln_context *ctx, kiln_query query, int value)
{
    static const char api[] = "kiln_set_predication";
    CTX_PREAMBLE();
    kiln_result r = KILN_OK;
    ka_query *q = NULL;
    if (query.id) {
        if (!(q = get_query(dev, query.id, api, &r)))
            return r;
        pthread_mutex_lock(&dev->dom->mu);
        if (q->type != KILN_QUERY_OCCLUSION_PREDICATE && q->type != KILN_QUERY_SO_OVERFLOW_PREDICATE)
            r = FAIL(KILN_E_INVALID_ARG, PREDICATE_TYPE, "query type %d", (int)q->type);
        else if (!q->ended)
            r = FAIL(KILN_E_INVALID_CALL, PREDICATE_NOT_ISSUED, "the query was %s",
                     q->active ? "begun and not ended" : "never ended");
        else /* claimed with the checks: a racing begin sees it */
            q->predicate_uses++;
        pthread_mutex_unlock(&dev->dom->mu);
    }
    if (r == KILN_OK) {
        r = ka_flush_scene(ctx, api); /* the scene so far keeps its predicate */
        if (r != KILN_OK && q) {
            pthread_mutex_lock(&dev->dom->mu);
            q->predicate_uses--;
            pthread_mutex_unlock(&dev->dom->mu);
        }
    }
    if (r != KILN_OK) {
        if (q)
            kres_unref(&q->base);
        return r;
    }
    ka_query *old = ctx->pred;
    pthread_mutex_lock(&dev->dom->mu);
    if (old)
        old->predicate_uses--;
    pthread_mutex_unlock(&dev->dom->mu);
    ctx->pred = q; /* takes the lookup's reference */
    ctx->pred_value = value != 0;
    if (old)
        kres_unref(&old->base);
    return KILN_OK;
}

kiln_result kiln_set_predication(kiln_context *ctx, kiln_query query, int value)
{
    kiln_result r = set_predication(ctx, query, value);
    if (ctx && ctx->dev->capture)
        kcap_set_predication(ctx, query, value, r);
    return r;
}

/* ---- what the rest of src/api asks ---- */

bool ka_scene_queries(kiln_context *ctx, kd_scene *s)
{
    for (uint32_t i = 0; i < ctx->nactive; i++) {
        kres_resource *res = ctx->active[i]->res;
        if (!res) /* TIMESTAMP_DISJOINT: counts nothing */
            continue;
        if (!kd_scene_use(s, res, res->current, KQ_WRITE))
            return false;
        s->queries[s->nqueries++] = res;
    }
    if (ctx->pred) {
        kres_resource *res = ctx->pred->res;
        if (!kd_scene_use(s, res, res->current, KQ_READ))
            return false;
        s->pred_res = res;
        s->pred_value = ctx->pred_value;
    }
    return true;
}

void ka_predicate(kiln_context *ctx, kq_cmd *cmd)
{
    if (!ctx->pred)
        return;
    kq_access(cmd, ctx->pred->res, KQ_READ);
    cmd->pred_res = ctx->pred->res;
    cmd->pred_value = (uint8_t)ctx->pred_value;
}

void ka_queries_fini(kiln_context *ctx)
{
    ks_domain *d = ctx->dev->dom;
    pthread_mutex_lock(&d->mu);
    for (uint32_t i = 0; i < ctx->nactive; i++)
        ctx->active[i]->active = NULL;
    if (ctx->pred)
        ctx->pred->predicate_uses--;
    pthread_mutex_unlock(&d->mu);
    for (uint32_t i = 0; i < ctx->nactive; i++)
        kres_unref(&ctx->active[i]->base);
    ctx->nactive = 0;
    if (ctx->pred)
        kres_unref(&ctx->pred->base);
    ctx->pred = NULL;
}
