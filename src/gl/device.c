/* The osmesa backend's device: its GL thread, the jobs handed to it, and
 * the kq_backend vtable. */
#include "gl.h"

#include <stdio.h>
#include <string.h>

static void post(kg_device *d, kg_job *job)
{
    job->next = NULL;
    if (d->tail)
        d->tail->next = job;
    else
        d->head = job;
    d->tail = job;
    pthread_cond_signal(&d->cv);
}

bool kg_on_thread(const kg_device *d) { return pthread_equal(pthread_self(), d->thread); }

void kg_device_unref(kg_device *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    pthread_cond_destroy(&d->done_cv);
    kb_free(d->env, d, sizeof *d);
}

static void run_job(kg_device *d, kg_job *job)
{
    switch (job->kind) {
    case KG_JOB_SCENE:
    case KG_JOB_MIPS: {
        kq_cmd *cmd = job->cmd;
        kq_exec_result r = job->kind == KG_JOB_SCENE ? kg_run_scene(d, cmd) : kg_run_mips(d, cmd);
        kb_free(d->env, job, sizeof *job);
        kq_complete_result(cmd, r);
        break;
    }
    case KG_JOB_SYNC:
        kg_mirror_read_back(d, job->st);
        pthread_mutex_lock(&d->mu);
        job->done = true;
        pthread_cond_broadcast(&d->done_cv);
        pthread_mutex_unlock(&d->mu);
        break;
    case KG_JOB_RELEASE:
        kg_mirror_free(d, job->mirror);
        kb_free(d->env, job, sizeof *job);
        break;
    }
}

static void *gl_thread(void *arg)
{
    kg_device *d = arg;
    if (d->q->trace) /* it completes the scenes: their slices are on its track */
        kt_name_thread(d->q->trace, "gl thread (llvmpipe)", 0);
    kg_context *ctx = NULL;
    kiln_result r = kg_context_create(KG_PROVIDER_AUTO, d->threads, &d->gl, &ctx, d->start_why, sizeof d->start_why);
    if (r == KILN_OK) {
        const kg_gl *gl = &d->gl;
        d->ctx = ctx;
        /* D3D10's conventions without flipping anything: clip-space y up
         * lands in the first rows of memory, depth is [0, 1]. */
        gl->ClipControl(GL_UPPER_LEFT, GL_ZERO_TO_ONE);
        gl->CreateFramebuffers(1, &d->fbo);
        gl->CreateVertexArrays(1, &d->vao);
        gl->BindVertexArray(d->vao);
        gl->CreateSamplers(KILN_MAX_SAMPLERS, d->samplers);
        gl->PixelStorei(GL_UNPACK_ALIGNMENT, 1);
        gl->PixelStorei(GL_PACK_ALIGNMENT, 1);
        if (gl->GetError() != GL_NO_ERROR) {
            snprintf(d->start_why, sizeof d->start_why, "setting up the GL context failed");
            r = KILN_E_UNSUPPORTED;
        }
    }
    pthread_mutex_lock(&d->mu);
    d->start_result = r;
    d->ready = true;
    pthread_cond_broadcast(&d->done_cv);
    while (r == KILN_OK) {
        while (!d->head && !d->stop)
            pthread_cond_wait(&d->cv, &d->mu);
        kg_job *job = d->head;
        if (!job)
            break; /* stop, with nothing left */
        d->head = job->next;
        if (!d->head)
            d->tail = NULL;
        pthread_mutex_unlock(&d->mu);
        run_job(d, job);
        pthread_mutex_lock(&d->mu);
    }
    d->stopped = true;
    pthread_mutex_unlock(&d->mu);
    if (ctx) {
        kg_programs_free(d);
        kg_context_destroy(ctx);
    }
    return NULL;
}

/* ---- the vtable ---- */

static kiln_result gl_create(kq_device *q, uint32_t threads, void **out, char *why, size_t n)
{
    kg_device *d = kb_calloc(q->env, sizeof *d);
    if (!d) {
        snprintf(why, n, "out of memory");
        return KILN_E_OUT_OF_MEMORY;
    }
    atomic_init(&d->refs, 1);
    d->env = q->env;
    d->q = q;
    d->threads = threads;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_cond_init(&d->done_cv, NULL);
    if (pthread_create(&d->thread, NULL, gl_thread, d) != 0) {
        snprintf(why, n, "could not start the GL thread");
        kg_device_unref(d);
        return KILN_E_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&d->mu);
    while (!d->ready)
        pthread_cond_wait(&d->done_cv, &d->mu);
    kiln_result r = d->start_result;
    pthread_mutex_unlock(&d->mu);
    if (r != KILN_OK) {
        pthread_join(d->thread, NULL);
        snprintf(why, n, "%s", d->start_why);
        kg_device_unref(d);
        return r;
    }
    *out = d;
    return KILN_OK;
}

static void gl_destroy(void *data)
{
    kg_device *d = data;
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    kg_device_unref(d);
}

static kq_exec_result post_cmd(kq_device *q, kq_cmd *cmd, kg_job_kind kind)
{
    kg_device *d = q->backend_data;
    kg_job *job = kb_calloc(d->env, sizeof *job);
    if (!job) {
        cmd->fail_reason = "out of memory for the GL thread's job";
        return KQ_EXEC_FAILED;
    }
    job->kind = kind;
    job->cmd = cmd;
    pthread_mutex_lock(&d->mu);
    post(d, job);
    pthread_mutex_unlock(&d->mu);
    return KQ_EXEC_PARKED;
}

static kq_exec_result gl_scene(kq_device *q, kq_cmd *cmd) { return post_cmd(q, cmd, KG_JOB_SCENE); }
static kq_exec_result gl_mips(kq_device *q, kq_cmd *cmd) { return post_cmd(q, cmd, KG_JOB_MIPS); }

static void gl_sync(kq_device *q, kres_storage *st)
{
    kg_device *d = q->backend_data;
    if (kg_on_thread(d)) {
        kg_mirror_read_back(d, st);
        return;
    }
    /* On the stack: the poster waits for it. */
    kg_job job = {.kind = KG_JOB_SYNC, .st = st};
    pthread_mutex_lock(&d->mu);
    post(d, &job);
    while (!job.done)
        pthread_cond_wait(&d->done_cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

void kg_mirror_release(void *p)
{
    kg_mirror *m = p;
    kg_device *d = m->dev;
    kg_job *job = kb_calloc(d->env, sizeof *job);
    pthread_mutex_lock(&d->mu);
    bool live = !d->stopped && !d->stop && job;
    if (live) {
        job->kind = KG_JOB_RELEASE;
        job->mirror = m;
        post(d, job);
    }
    pthread_mutex_unlock(&d->mu);
    if (!live) {
        /* The context is gone (its objects with it), or no memory for a
         * job: the GL names leak into a context that lives on, which is
         * harmless and bounded by the storages' own memory. */
        kb_free(d->env, job, sizeof *job);
        kb_free(d->env, m->views, sizeof(kg_view) * m->views_cap);
        kb_free(d->env, m, sizeof *m);
        kg_device_unref(d);
    }
}

const kq_backend kg_osmesa_backend = {
    .name = "osmesa",
    .caps = KQ_BACKEND_NEEDS_GLSL,
    .srv_slots = KG_SRV_SLOTS,
    .create = gl_create,
    .destroy = gl_destroy,
    .scene = gl_scene,
    .generate_mips = gl_mips,
    .sync_storage = gl_sync,
};
