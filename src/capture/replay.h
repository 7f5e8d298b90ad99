/*
 * The replayer's two halves share this header (src/capture: replay_check.c
 * validates a whole capture before anything runs, replay.c runs it; the
 * contract for users is kcap_replay in capture.h). Names carry krp_.
 *
 * Objects are tracked by their capture id in an open-addressing map: in
 * the first pass to check that every record uses live objects of the right
 * type, in the second to translate to the replay device's ids.
 */
#ifndef KILN_CAPTURE_REPLAY_H
#define KILN_CAPTURE_REPLAY_H

#include "capture.h"

#include <pthread.h>
#include <stdbool.h>

#define DEFAULT_MAX_BYTES ((uint64_t)8 << 30)
#define DEFAULT_WAIT_NS (60ull * 1000000000ull)
#define MAX_CONTEXTS 256u
#define MAX_SWAPCHAINS 16u
#define MAX_MAPS 256u
#define FRAME_RING 64u

/* ---- objects: capture id -> replay id, and what the checks need ---- */

enum krp_kind {
    K_ANY,
    K_BUFFER,
    K_TEXTURE,
    K_RTV,
    K_DSV,
    K_SRV,
    K_VS,
    K_PS,
    K_LAYOUT,
    K_RS,
    K_DSS,
    K_BS,
    K_SAMPLER,
    K_TIMELINE,
    K_FENCE,
    K_QUERY,
    K_GS,
    K_RESOURCE /* a buffer or a texture */
};

typedef struct krp_obj {
    uint32_t key; /* capture id; 0: empty */
    bool dead;    /* a tombstone */
    bool shared;  /* a swapchain buffer or a context's timeline: no record destroys it */
    uint8_t kind;
    uint32_t replay; /* the replay device's id */
    /* resources */
    uint32_t width, height, mips, layers, bind;
    kiln_format format;
    uint64_t bytes;
    uint32_t target; /* render-target ordinal + 1, or 0 */
    uint32_t depth;  /* 3D textures: depth of mip 0 (0 or 1 otherwise) */
} krp_obj;

typedef struct krp_objmap {
    krp_obj *v;
    uint32_t cap, used; /* used counts tombstones */
} krp_objmap;

/* ---- the krp_replayer ---- */

typedef struct krp_swapchain {
    uint32_t id;
    kiln_swapchain *sc;
    struct krp_replayer *r;
    pthread_mutex_t mu;
    uint64_t frames[FRAME_RING]; /* the global frame of present k: frames[k % RING] */
    uint64_t presented;
    uint32_t width, height;
    kiln_format format;
} krp_swapchain;

typedef struct krp_map {
    uint32_t res, sub; /* capture ids */
    kiln_mapped_subresource m;
} krp_map;

typedef struct krp_replayer {
    const kcap_replay_desc *d;
    kcap_replay_report *rep;
    const uint8_t *bytes;
    size_t len, first;
    krp_objmap objs;
    uint64_t live_bytes;
    struct {
        uint32_t id;
        kiln_context *ctx;
    } ctxs[MAX_CONTEXTS];
    uint32_t nctx;
    krp_swapchain scs[MAX_SWAPCHAINS];
    bool sc_used[MAX_SWAPCHAINS];
    krp_map maps[MAX_MAPS];
    uint32_t nmaps;
    kiln_device *dev;
    kcap_call device; /* the DEVICE record */
    bool has_presents;
    uint32_t targets; /* render-target textures so far */
    kcap_frame_stats fs;
    double frame_start;
    bool stop;
    size_t offset; /* of the record being checked or run */
    const kcap_call *c;
    pthread_mutex_t image_mu; /* image_fn is called one image at a time */
} krp_replayer;

/* The live entry of capture id `key`, or NULL. */
krp_obj *krp_find(const krp_objmap *m, uint32_t key);
/* A fresh entry for `key` (which must not be live); NULL on out of memory. */
krp_obj *krp_insert(krp_objmap *m, uint32_t key);

double krp_now_ms(void);
/* Stops the replay at the current record with `code` and a message naming
 * the record (the first refusal wins); returns false. */
bool krp_refuse(krp_replayer *r, kiln_result code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int krp_ctx_index(const krp_replayer *r, uint32_t id);
int krp_sc_index(const krp_replayer *r, uint32_t id);
bool krp_add_ctx(krp_replayer *r, uint32_t id);
void krp_remove_ctx(krp_replayer *r, uint32_t id);
uint32_t krp_full_chain(uint32_t w, uint32_t h);
/* The tight layout of subresource `sub` of a buffer or texture entry:
 * `rows` rows of `row_bytes`; false (refused) if `sub` is out of range. */
bool krp_sub_layout(krp_replayer *r, const krp_obj *o, uint32_t sub, uint32_t *row_bytes,
                    uint32_t *rows);
/* Decodes the record at *offset (refusing a damaged one) and advances. */
bool krp_next_record(krp_replayer *r, size_t *offset, kcap_call *c);
/* Pass 1 over the whole capture; fills r->device, r->first and the
 * report's record count. False (with the report's error) if refused. */
bool krp_validate(krp_replayer *r);

#endif
