/*
 * winsys: the bridge from a rendered color buffer to something that shows
 * it (seed 003), as a small vtable like Mesa's sw_winsys. A display target
 * is pixel memory the winsys owns; the swapchain maps it, writes a frame
 * into it, unmaps it and asks the winsys to display it.
 *
 * Threads: a kw_winsys and its targets are created, used and destroyed on
 * one thread (the swapchain's display thread); X11 needs that.
 */
#ifndef KILN_WINSYS_H
#define KILN_WINSYS_H

#include "../base/base.h"

typedef struct kw_target kw_target;

typedef struct kw_winsys {
    /* The pixel layout targets hold (R8G8B8A8_UNORM or B8G8R8A8_UNORM):
     * the swapchain converts frames to it while copying. */
    kiln_format native_format;

    /* Creates a display target of w x h pixels; *stride receives its row
     * pitch in bytes. The winsys owns the memory. */
    kiln_result (*dt_create)(struct kw_winsys *ws, uint32_t w, uint32_t h, uint32_t *stride,
                             kw_target **out);
    /* Pixels of the target for writing, valid until dt_unmap. */
    void *(*dt_map)(struct kw_winsys *ws, kw_target *dt);
    void (*dt_unmap)(struct kw_winsys *ws, kw_target *dt);
    /* Shows the target's pixels as frame `frame` (1-based). Returns
     * KILN_OK; KILN_E_DEVICE_LOST when there is nowhere to show it any more
     * (the window was closed: the frame counts as dropped); any other error
     * counts in display_errors and is logged (WINSYS_FAILED). */
    kiln_result (*dt_display)(struct kw_winsys *ws, kw_target *dt, uint64_t frame);
    void (*dt_destroy)(struct kw_winsys *ws, kw_target *dt);
    /* Handles pending window events; true once the user closed the window.
     * NULL for targets without a window. */
    bool (*poll_closed)(struct kw_winsys *ws);
    /* Frees the winsys (its targets are destroyed first). */
    void (*destroy)(struct kw_winsys *ws);
} kw_winsys;

kiln_result kw_null_create(const kb_env *env, kw_winsys **out);
kiln_result kw_memory_create(const kb_env *env, kiln_format format, kiln_frame_fn fn, void *user,
                             kw_winsys **out);
/* `pattern`: printf pattern with one unsigned conversion (frame number). */
kiln_result kw_png_create(const kb_env *env, const char *pattern, kw_winsys **out);
/* KILN_E_UNSUPPORTED when built without X11; KILN_E_INVALID_CALL when the
 * display cannot be opened. */
kiln_result kw_x11_create(const kb_env *env, const char *display, const char *title, uint32_t w,
                          uint32_t h, kw_winsys **out);

/* Memory targets shared by null, memory and png. */
typedef struct kw_mem_target {
    uint32_t w, h, stride;
    uint8_t *pixels;
} kw_mem_target;

#endif
