/* The X11 target: a window shown with XPutImage, or XShmPutImage when the
 * MIT-SHM extension is there and the server is local. Closing the window
 * is reported through poll_closed, never by a crash: the window manager's
 * close request (WM_DELETE_WINDOW) is handled, and frames presented after
 * it are dropped quietly. */
#include "winsys.h"

#ifdef KILN_HAVE_X11

#include <X11/Xlib.h>
#include <pthread.h>
#include <X11/Xutil.h>
#include <string.h>
#ifdef KILN_HAVE_XSHM
#include <X11/extensions/XShm.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#endif

typedef struct x11_winsys {
    kw_winsys base;
    const kb_env *env;
    Display *dpy;
    Window win;
    GC gc;
    Atom wm_delete;
    Visual *visual;
    int depth;
    bool closed;
    bool shm_ok;
    uint32_t win_w, win_h;
} x11_winsys;

typedef struct x11_target {
    XImage *img;
    uint32_t w, h;
    bool shm;
#ifdef KILN_HAVE_XSHM
    XShmSegmentInfo info;
#endif
    uint8_t *own; /* pixels when not shared memory */
} x11_target;

/* X errors on kiln's own connections (a window destroyed under us, a
 * shared-memory attach the server refuses) must fail the operation, not
 * the process; errors on the application's connections go to whatever
 * handler it had. Xlib's error handler is process-wide, so kiln chains
 * onto it once and keeps the list of its own displays. */
static pthread_mutex_t handler_mu = PTHREAD_MUTEX_INITIALIZER;
static int (*app_handler)(Display *, XErrorEvent *);
static bool handler_installed;
#define MAX_OWN 64
static Display *own[MAX_OWN];

static int chained_handler(Display *d, XErrorEvent *e)
{
    pthread_mutex_lock(&handler_mu);
    bool mine = false;
    for (int i = 0; i < MAX_OWN && !mine; i++)
        mine = own[i] == d;
    int (*next)(Display *, XErrorEvent *) = app_handler;
    pthread_mutex_unlock(&handler_mu);
    if (mine)
        return 0;
    return next ? next(d, e) : 0;
}

static bool register_display(Display *d)
{
    pthread_mutex_lock(&handler_mu);
    if (!handler_installed) {
        app_handler = XSetErrorHandler(chained_handler);
        handler_installed = true;
    }
    bool ok = false;
    for (int i = 0; i < MAX_OWN && !ok; i++)
        if (!own[i]) {
            own[i] = d;
            ok = true;
        }
    pthread_mutex_unlock(&handler_mu);
    return ok;
}

static void unregister_display(Display *d)
{
    pthread_mutex_lock(&handler_mu);
    for (int i = 0; i < MAX_OWN; i++)
        if (own[i] == d)
            own[i] = NULL;
    pthread_mutex_unlock(&handler_mu);
}

static kiln_result x_create(kw_winsys *ws, uint32_t w, uint32_t h, uint32_t *stride, kw_target **out)
{
    x11_winsys *x = (x11_winsys *)ws;
    x11_target *t = kb_calloc(x->env, sizeof *t);
    if (!t)
        return KILN_E_OUT_OF_MEMORY;
    t->w = w;
    t->h = h;
    if (!x->closed && (w != x->win_w || h != x->win_h)) {
        XResizeWindow(x->dpy, x->win, w, h); /* the swapchain was resized */
        x->win_w = w;
        x->win_h = h;
    }
#ifdef KILN_HAVE_XSHM
    if (x->shm_ok) {
        t->img = XShmCreateImage(x->dpy, x->visual, (unsigned)x->depth, ZPixmap, NULL, &t->info, w, h);
        if (t->img) {
            t->info.shmid = shmget(IPC_PRIVATE, (size_t)t->img->bytes_per_line * h, IPC_CREAT | 0600);
            if (t->info.shmid >= 0) {
                t->info.shmaddr = t->img->data = shmat(t->info.shmid, NULL, 0);
                t->info.readOnly = False;
                if (t->info.shmaddr != (char *)-1 && XShmAttach(x->dpy, &t->info)) {
                    XSync(x->dpy, False);
                    shmctl(t->info.shmid, IPC_RMID, NULL); /* freed when both detach */
                    t->shm = true;
                } else {
                    if (t->info.shmaddr != (char *)-1)
                        shmdt(t->info.shmaddr);
                    shmctl(t->info.shmid, IPC_RMID, NULL);
                }
            }
            if (!t->shm) {
                t->img->data = NULL;
                XDestroyImage(t->img);
                t->img = NULL;
            }
        }
    }
#endif
    if (!t->shm) {
        t->own = kb_calloc(x->env, (size_t)w * h * 4);
        if (!t->own) {
            kb_free(x->env, t, sizeof *t);
            return KILN_E_OUT_OF_MEMORY;
        }
        t->img = XCreateImage(x->dpy, x->visual, (unsigned)x->depth, ZPixmap, 0, (char *)t->own, w, h, 32, (int)w * 4);
        if (!t->img) {
            kb_free(x->env, t->own, (size_t)w * h * 4);
            kb_free(x->env, t, sizeof *t);
            return KILN_E_INVALID_CALL;
        }
    }
    *stride = (uint32_t)t->img->bytes_per_line;
    *out = (kw_target *)t;
    return KILN_OK;
}

static void *x_map(kw_winsys *ws, kw_target *dt)
{
    (void)ws;
    return ((x11_target *)dt)->img->data;
}

static void x_unmap(kw_winsys *ws, kw_target *dt)
{
    (void)ws;
    (void)dt;
}

static bool x_poll(kw_winsys *ws)
{
    x11_winsys *x = (x11_winsys *)ws;
    while (!x->closed && XPending(x->dpy)) {
        XEvent ev;
        XNextEvent(x->dpy, &ev);
        if (ev.type == ClientMessage && (Atom)ev.xclient.data.l[0] == x->wm_delete) {
            x->closed = true;
            XDestroyWindow(x->dpy, x->win);
            XSync(x->dpy, False);
        } else if (ev.type == DestroyNotify && ev.xdestroywindow.window == x->win) {
            x->closed = true;
        }
    }
    return x->closed;
}

static kiln_result x_display(kw_winsys *ws, kw_target *dt, uint64_t frame)
{
    (void)frame;
    x11_winsys *x = (x11_winsys *)ws;
    x11_target *t = (x11_target *)dt;
    if (x_poll(ws))
        return KILN_E_DEVICE_LOST; /* closed: the frame is dropped */
#ifdef KILN_HAVE_XSHM
    if (t->shm) {
        XShmPutImage(x->dpy, x->win, x->gc, t->img, 0, 0, 0, 0, t->w, t->h, False);
        XSync(x->dpy, False); /* the image is read before the buffer is reused */
        return KILN_OK;
    }
#endif
    XPutImage(x->dpy, x->win, x->gc, t->img, 0, 0, 0, 0, t->w, t->h);
    XSync(x->dpy, False);
    return KILN_OK;
}

static void x_destroy_target(kw_winsys *ws, kw_target *dt)
{
    x11_winsys *x = (x11_winsys *)ws;
    x11_target *t = (x11_target *)dt;
#ifdef KILN_HAVE_XSHM
    if (t->shm) {
        XShmDetach(x->dpy, &t->info);
        XSync(x->dpy, False);
        shmdt(t->info.shmaddr);
        t->img->data = NULL;
        XDestroyImage(t->img);
        kb_free(x->env, t, sizeof *t);
        return;
    }
#endif
    t->img->data = NULL; /* ours, not Xlib's */
    XDestroyImage(t->img);
    kb_free(x->env, t->own, (size_t)t->w * t->h * 4);
    kb_free(x->env, t, sizeof *t);
}

static void x_destroy(kw_winsys *ws)
{
    x11_winsys *x = (x11_winsys *)ws;
    if (!x->closed)
        XDestroyWindow(x->dpy, x->win);
    XFreeGC(x->dpy, x->gc);
    XSync(x->dpy, False);
    unregister_display(x->dpy);
    XCloseDisplay(x->dpy);
    kb_free(x->env, x, sizeof *x);
}

kiln_result kw_x11_create(const kb_env *env, const char *display, const char *title, uint32_t w,
                          uint32_t h, kw_winsys **out)
{
    *out = NULL;
    Display *dpy = XOpenDisplay(display);
    if (!dpy)
        return KILN_E_INVALID_CALL;
    if (!register_display(dpy)) {
        XCloseDisplay(dpy);
        return KILN_E_UNSUPPORTED; /* more than MAX_OWN X11 swapchains */
    }
    int screen = DefaultScreen(dpy);
    XVisualInfo vi;
    if (!XMatchVisualInfo(dpy, screen, 24, TrueColor, &vi) || vi.red_mask != 0xff0000 ||
        vi.blue_mask != 0xff) {
        unregister_display(dpy);
        XCloseDisplay(dpy);
        return KILN_E_UNSUPPORTED; /* kiln writes 32-bit BGRX pixels */
    }
    x11_winsys *x = kb_calloc(env, sizeof *x);
    if (!x) {
        unregister_display(dpy);
        XCloseDisplay(dpy);
        return KILN_E_OUT_OF_MEMORY;
    }
    x->win_w = w;
    x->win_h = h;
    x->env = env;
    x->dpy = dpy;
    x->visual = vi.visual;
    x->depth = vi.depth;
    XSetWindowAttributes attr = {0};
    attr.colormap = XCreateColormap(dpy, RootWindow(dpy, screen), vi.visual, AllocNone);
    attr.event_mask = StructureNotifyMask | ExposureMask;
    x->win = XCreateWindow(dpy, RootWindow(dpy, screen), 0, 0, w, h, 0, vi.depth, InputOutput, vi.visual,
                           CWColormap | CWEventMask | CWBorderPixel, &attr);
    XStoreName(dpy, x->win, title ? title : "kiln");
    x->wm_delete = XInternAtom(dpy, "WM_DELETE_WINDOW", False);
    XSetWMProtocols(dpy, x->win, &x->wm_delete, 1);
    x->gc = XCreateGC(dpy, x->win, 0, NULL);
    XMapWindow(dpy, x->win);
    XSync(dpy, False);
#ifdef KILN_HAVE_XSHM
    /* Shared memory only with a local server (":N" or "unix:N"). */
    const char *name = DisplayString(dpy);
    x->shm_ok = XShmQueryExtension(dpy) != 0 && name && (name[0] == ':' || strncmp(name, "unix:", 5) == 0);
#endif
    x->base = (kw_winsys){KILN_FORMAT_B8G8R8A8_UNORM, x_create, x_map, x_unmap, x_display, x_destroy_target, x_poll, x_destroy};
    *out = &x->base;
    return KILN_OK;
}

int kiln_winsys_x11_available(void)
{
    return 1;
}

#else

kiln_result kw_x11_create(const kb_env *env, const char *display, const char *title, uint32_t w,
                          uint32_t h, kw_winsys **out)
{
    (void)env;
    (void)display;
    (void)title;
    (void)w;
    (void)h;
    *out = NULL;
    return KILN_E_UNSUPPORTED;
}

int kiln_winsys_x11_available(void)
{
    return 0;
}

#endif
