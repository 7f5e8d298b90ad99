/*
 * gl: the osmesa backend. The same command stream as the soft backend,
 * executed by Mesa's llvmpipe through a GL context (OSMesa, or surfaceless
 * EGL where Mesa no longer ships OSMesa; provider.h).
 *
 * Contract:
 * - One dedicated GL thread per device owns the context; every GL call is
 *   made there. The queue's workers (or, in SERIAL mode, the calling
 *   thread) hand it jobs: a scene or a mipmap generation is posted and
 *   PARKED, and the GL thread completes the command (kq_complete_result);
 *   a storage read-back is posted and waited for.
 * - The CPU bytes of a storage stay the reference for every CPU operation
 *   (copies, updates, clears, Map). A storage a draw uses gets a GL copy,
 *   its mirror (kg_mirror), uploaded again whenever the storage's CPU write
 *   generation moved. Render targets, depth-stencils and mipmapped
 *   textures the GL thread writes are marked backend_newer, and their
 *   bytes are read back only when the CPU needs them (sync_storage): never
 *   after every draw.
 * - Mirrors live as long as their storage; they are released from any
 *   thread (kres_storage_unref) by posting a job, and after the GL thread
 *   stopped they are simply freed (the context took its objects with it).
 */
#ifndef KILN_GL_H
#define KILN_GL_H

#include "../driver/driver.h"
#include "glapi.h"
#include "provider.h"

typedef enum kg_job_kind { KG_JOB_SCENE, KG_JOB_MIPS, KG_JOB_SYNC, KG_JOB_RELEASE } kg_job_kind;

typedef struct kg_job {
    struct kg_job *next;
    kg_job_kind kind;
    kq_cmd *cmd;           /* SCENE, MIPS */
    kres_storage *st;      /* SYNC */
    struct kg_mirror *mirror; /* RELEASE */
    bool done;             /* SYNC: set by the GL thread */
} kg_job;

struct kg_program;

/* A storage's GL copy: a buffer object, or a 2D array texture holding
 * every mip and slice, with the views draws have used. */
typedef struct kg_view {
    GLenum target;
    kiln_format format;
    uint32_t first_mip, num_mips, first_slice, num_slices;
    GLuint tex;
} kg_view;

typedef struct kg_mirror {
    struct kg_device *dev;   /* reference held */
    kres_storage *st;        /* not a reference: the mirror dies with it */
    bool is_texture;
    GLuint name;
    kiln_format format;
    uint32_t width, height, levels, layers;
    /* The resource's layout: read only while a command holds the resource
     * (every use and read-back happens inside one). */
    const kres_subresource *subs;
    unsigned gen;            /* st->gen when the GL copy was last made equal */
    kg_view *views;
    uint32_t nviews, views_cap;
} kg_mirror;

/* Pixel-stage view slots on GL: texture unit N is view N, sampled with
 * sampler N (KILN_MAX_SAMPLERS of them), so views past the samplers have
 * no GL sampler; the API refuses binding them (kq_backend.srv_slots). */
#define KG_SRV_SLOTS KILN_MAX_SAMPLERS

typedef struct kg_device {
    atomic_uint refs;        /* the device, plus one per mirror */
    const kb_env *env;
    kq_device *q;
    pthread_t thread;
    pthread_mutex_t mu;      /* guards the job list, `stopped`, `ready` */
    pthread_cond_t cv;       /* the GL thread waits for jobs */
    pthread_cond_t done_cv;  /* posters wait for SYNC jobs and start-up */
    kg_job *head, *tail;
    bool stop, stopped, ready;
    kiln_result start_result;
    char start_why[256];
    uint32_t threads;        /* LP_NUM_THREADS asked for (0: llvmpipe's own) */
    /* Owned by the GL thread: */
    kg_gl gl;
    kg_context *ctx;
    GLuint fbo, vao;
    struct kg_program *programs;
    GLuint samplers[KILN_MAX_SAMPLERS];
    GLuint bound_tex[KG_SRV_SLOTS]; /* texture units the last draw bound (0: none) */
    float *cb_scratch;        /* constant data staged for glProgramUniform4fv */
} kg_device;

/* ---- device.c: the GL thread ---- */

/* True on the device's GL thread. */
bool kg_on_thread(const kg_device *d);
/* kres_storage.mirror_release: from whatever thread drops the storage. */
void kg_mirror_release(void *mirror);

/* ---- mirror.c: formats, mirrors, uploads and read-backs (GL thread) ---- */

typedef struct kg_format {
    GLenum internal, format, type;
    uint32_t size;           /* bytes per texel in the CPU layout */
} kg_format;

/* NULL for formats GL cannot hold as a texture here. */
const kg_format *kg_format_of(kiln_format f);

/* The mirror of `st` (a storage of `res`), created and uploaded as needed
 * so that it holds the storage's current bytes. NULL on a GL failure. */
kg_mirror *kg_mirror_get(kg_device *d, const kres_resource *res, kres_storage *st);
/* A texture view of a mirror (cached with it). 0 on a GL failure. */
GLuint kg_mirror_view(kg_device *d, kg_mirror *m, GLenum target, kiln_format format, uint32_t first_mip,
                      uint32_t num_mips, uint32_t first_slice, uint32_t num_slices);
/* After the GL thread wrote the mirror: its bytes are the newer ones. */
void kg_mirror_written(kg_mirror *m);
/* Reads a mirror that holds newer bytes back into its storage. */
void kg_mirror_read_back(kg_device *d, kres_storage *st);
/* Deletes the GL objects of a mirror and frees it. */
void kg_mirror_free(kg_device *d, kg_mirror *m);

/* ---- draw.c: scenes and programs (GL thread) ---- */

kq_exec_result kg_run_scene(kg_device *d, kq_cmd *cmd);
kq_exec_result kg_run_mips(kg_device *d, kq_cmd *cmd);
/* Frees every cached program (before the context goes). */
void kg_programs_free(kg_device *d);

void kg_device_unref(kg_device *d);

#endif
