/*
 * The X11 target on a real X server: the test starts its own Xvfb on a
 * free display number, presents three frames of known, distinct content
 * into a KILN_WINSYS_X11 swapchain, waits idle and reads the window back
 * on its own Xlib connection (XGetImage): every pixel must equal the last
 * frame rendered, for R8G8B8A8 and B8G8R8A8 swapchains. Then it sends the
 * window manager's close request (WM_DELETE_WINDOW) and checks that after
 * further presents stats.window_closed is 1, presents still return KILN_OK,
 * the window is gone and nothing crashed.
 *
 * Exit code 77 (ctest: skipped, see tests/x11.cmake) only when Xvfb cannot
 * run here: the binary is missing or every attempt to start it failed. A
 * build without the X11 target is not skipped: it checks that asking for
 * one fails cleanly.
 */
#define _GNU_SOURCE /* prctl, kill */

#include "harness.h"
#include "present_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef KILN_TEST_HAVE_XLIB
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#endif

#define W 64 /* fits the 320x240 Xvfb screen */
#define H 48

static void step(const char *name)
{
    printf("-- %s\n", name);
    fflush(stdout);
}

/* Pixel (x, y) of frame k as RGBA: a border of the clear color around a
 * pattern that differs per frame (gradients, a checkerboard, xor). */
static const uint8_t CLEAR[3][4] = {{200, 30, 90, 255}, {10, 220, 140, 255}, {250, 250, 5, 255}};

static void frame_rgba(uint32_t k, uint32_t x, uint32_t y, uint8_t rgba[4])
{
    if (x < 4 || y < 4 || x >= W - 4 || y >= H - 4) {
        memcpy(rgba, CLEAR[k % 3], 4);
        return;
    }
    switch (k % 3) {
    case 0: /* gradients */
        rgba[0] = (uint8_t)(x * 4);
        rgba[1] = (uint8_t)(y * 5);
        rgba[2] = (uint8_t)(255 - x * 3);
        break;
    case 1: /* checkerboard of 4x4 cells */
        rgba[0] = ((x / 4 + y / 4) & 1) ? 255 : 0;
        rgba[1] = (uint8_t)(x * y);
        rgba[2] = ((x / 4 + y / 4) & 1) ? 0 : 255;
        break;
    default: /* xor */
        rgba[0] = (uint8_t)((x ^ y) * 9);
        rgba[1] = (uint8_t)(x * 7 + y * 3);
        rgba[2] = (uint8_t)((x * 13) ^ (y * 29));
        break;
    }
    rgba[3] = (uint8_t)(100 + k); /* alpha: ignored by the 24-bit window */
}

/* Clear to the border color, then write the interior with UpdateSubresource. */
static kiln_result render_frame(kiln_context *ctx, kiln_swapchain *sc, kiln_format fmt, uint32_t k)
{
    kiln_texture tex;
    kiln_rtv rtv;
    kiln_result r = kiln_swapchain_get_back_buffer(sc, &tex, &rtv);
    if (r != KILN_OK)
        return r;
    const uint8_t *c = CLEAR[k % 3];
    float color[4] = {c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f};
    if ((r = kiln_clear_rtv(ctx, rtv, color)) != KILN_OK)
        return r;
    static uint8_t texels[W * H * 4];
    for (uint32_t y = 4; y < H - 4; y++)
        for (uint32_t x = 4; x < W - 4; x++) {
            uint8_t rgba[4];
            frame_rgba(k, x, y, rgba);
            pu_to_format(rgba, fmt, texels + 4 * ((y - 4) * (W - 8) + (x - 4)));
        }
    kiln_box box = {4, 4, 0, W - 4, H - 4, 1};
    if ((r = kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, &box, texels, (W - 8) * 4,
                                     0)) != KILN_OK)
        return r;
    return kiln_swapchain_present(sc);
}

#ifdef KILN_TEST_HAVE_XLIB

/* ---- our own Xvfb ---- */

static pid_t g_xvfb;
static char g_xvfb_log[64];

static void stop_xvfb(void)
{
    if (g_xvfb > 0) {
        kill(g_xvfb, SIGTERM);
        waitpid(g_xvfb, NULL, 0);
        g_xvfb = 0;
    }
    if (g_xvfb_log[0])
        unlink(g_xvfb_log);
}

static int in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char buf[1024];
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, name);
        if (access(buf, X_OK) == 0)
            return 1;
        path += n + (end ? 1 : 0);
    }
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void print_xvfb_log(void)
{
    FILE *f = fopen(g_xvfb_log, "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f))
        fprintf(stderr, "    xvfb: %s", line);
    fclose(f);
}

/* Starts Xvfb on a free display; returns our connection to it (its number
 * in *num) or NULL with the reason in `why`. */
static Display *start_xvfb(int *num, char *why, size_t why_len)
{
    if (!in_path("Xvfb")) {
        snprintf(why, why_len, "Xvfb is not installed (Debian: apt-get install xvfb)");
        return NULL;
    }
    snprintf(g_xvfb_log, sizeof g_xvfb_log, "/tmp/kiln-xvfb-%ld.log", (long)getpid());
    int first = 100 + (int)(getpid() % 800);
    int attempts = 0;
    for (int n = first; n < first + 40 && attempts < 5; n++) {
        char lock[64], sock[64], name[16];
        snprintf(lock, sizeof lock, "/tmp/.X%d-lock", n);
        snprintf(sock, sizeof sock, "/tmp/.X11-unix/X%d", n);
        if (access(lock, F_OK) == 0 || access(sock, F_OK) == 0)
            continue; /* in use */
        attempts++;
        snprintf(name, sizeof name, ":%d", n);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(why, why_len, "fork: %s", strerror(errno));
            return NULL;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive the test */
            int fd = open(g_xvfb_log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            int nul = open("/dev/null", O_RDONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            if (nul >= 0)
                dup2(nul, 0);
            execlp("Xvfb", "Xvfb", name, "-screen", "0", "320x240x24", "-nolisten", "tcp",
                   (char *)NULL);
            _exit(127);
        }
        g_xvfb = pid;
        /* Bounded wait for the server: up to ~10 s, or until it exits (the
         * display was taken meanwhile, or Xvfb cannot run). */
        for (int tries = 0; tries < 500; tries++) {
            int status;
            if (waitpid(pid, &status, WNOHANG) == pid) {
                g_xvfb = 0;
                snprintf(why, why_len, "Xvfb %s exited (status %d) before accepting connections",
                         name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                print_xvfb_log();
                break;
            }
            Display *dpy = XOpenDisplay(name);
            if (dpy) {
                *num = n;
                return dpy;
            }
            sleep_ms(20);
        }
        if (g_xvfb) {
            snprintf(why, why_len, "Xvfb %s did not accept connections", name);
            print_xvfb_log();
            stop_xvfb();
        }
    }
    if (!attempts)
        snprintf(why, why_len, "no free display number near :%d", first);
    return NULL;
}

/* ---- reading the window back ---- */

/* The top-level window named `title`, or 0 (no window manager runs, so
 * the swapchain's window is a child of the root). */
static Window find_window(Display *dpy, const char *title)
{
    Window root_ret, parent, *kids = NULL, found = 0;
    unsigned n = 0;
    if (!XQueryTree(dpy, DefaultRootWindow(dpy), &root_ret, &parent, &kids, &n))
        return 0;
    for (unsigned i = 0; i < n && !found; i++) {
        char *name = NULL;
        if (XFetchName(dpy, kids[i], &name) && name) {
            if (!strcmp(name, title))
                found = kids[i];
            XFree(name);
        }
    }
    if (kids)
        XFree(kids);
    return found;
}

/* Pixels of the window that differ from frame k (-1: no image). */
static long window_mismatches(Display *dpy, Window win, uint32_t k, int report)
{
    XImage *img = XGetImage(dpy, win, 0, 0, W, H, AllPlanes, ZPixmap);
    if (!img)
        return -1;
    long bad = 0;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            uint8_t rgba[4];
            frame_rgba(k, x, y, rgba);
            unsigned long want =
                (unsigned long)rgba[0] << 16 | (unsigned long)rgba[1] << 8 | rgba[2];
            unsigned long got = XGetPixel(img, (int)x, (int)y) & 0xffffff;
            if (got != want) {
                if (report && bad < 3)
                    fprintf(stderr, "    (%u,%u): window 0x%06lx, frame 0x%06lx\n", x, y, got,
                            want);
                bad++;
            }
        }
    XDestroyImage(img);
    return bad;
}

static void send_close(Display *dpy, Window win)
{
    XEvent ev;
    memset(&ev, 0, sizeof ev);
    ev.xclient.type = ClientMessage;
    ev.xclient.window = win;
    ev.xclient.message_type = XInternAtom(dpy, "WM_PROTOCOLS", False);
    ev.xclient.format = 32;
    ev.xclient.data.l[0] = (long)XInternAtom(dpy, "WM_DELETE_WINDOW", False);
    ev.xclient.data.l[1] = CurrentTime;
    XSendEvent(dpy, win, False, NoEventMask, &ev);
    XSync(dpy, False);
}

static void test_window(Display *dpy, int num, kiln_format fmt)
{
    char name[80], title[64], disp[16];
    const char *fname = fmt == KILN_FORMAT_B8G8R8A8_UNORM ? "B8G8R8A8" : "R8G8B8A8";
    snprintf(name, sizeof name, "%s swapchain: three frames, window read back", fname);
    step(name);
    snprintf(title, sizeof title, "kiln-test-%s-%ld", fname, (long)getpid());
    snprintf(disp, sizeof disp, ":%d", num);

    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_swapchain_desc d = {0};
    d.width = W;
    d.height = H;
    d.format = fmt;
    d.winsys = KILN_WINSYS_X11;
    d.x11_title = title;
    d.x11_display = disp;
    kiln_swapchain *sc = NULL;
    th_log_reset();
    CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
    CHECK_EQ_INT(th_log_count(), 0);
    if (!sc) {
        kiln_device_destroy(dev);
        return;
    }
    Window win = find_window(dpy, title);
    CHECK(win != 0);
    if (win) {
        XWindowAttributes wa;
        CHECK(XGetWindowAttributes(dpy, win, &wa));
        CHECK_EQ_INT(wa.width, W);
        CHECK_EQ_INT(wa.height, H);
        CHECK_EQ_INT(wa.map_state, IsViewable);
    }

    for (uint32_t k = 0; k < 3; k++)
        CHECK_RESULT(render_frame(ctx, sc, fmt, k), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, 3);
    CHECK_EQ_INT(s.displayed, 3);
    CHECK_EQ_INT(s.display_errors, 0);
    CHECK_EQ_INT(s.window_closed, 0);
    if (win) {
        CHECK_EQ_INT(window_mismatches(dpy, win, 2, 1), 0); /* the last frame, every pixel */
        CHECK(window_mismatches(dpy, win, 1, 0) > 0);       /* ... not an earlier one */
    }

    step("close the window (WM_DELETE_WINDOW), keep presenting");
    if (win)
        send_close(dpy, win);
    /* The target sees the request when it next displays: present until the
     * stats say so (bounded; no clock involved). */
    uint32_t k = 3, rounds = 0;
    do {
        CHECK_RESULT(render_frame(ctx, sc, fmt, k++), KILN_OK);
        CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
        s = pu_stats(sc);
    } while (!s.window_closed && ++rounds < 200);
    CHECK_EQ_INT(s.window_closed, 1);
    for (int i = 0; i < 5; i++)
        CHECK_RESULT(render_frame(ctx, sc, fmt, k++), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.window_closed, 1);
    CHECK_EQ_INT(s.presented, k);
    /* Every frame accounted for: frames after the close are dropped (there
     * is no window to show them in), never counted as displayed. */
    CHECK_EQ_INT(s.displayed + s.display_errors + s.dropped, k);
    CHECK(s.dropped >= 5);
    CHECK_EQ_INT(s.display_errors, 0);
    XSync(dpy, False);
    CHECK(find_window(dpy, title) == 0); /* the window went away */
    /* Resizing and presenting into a closed window is still harmless. */
    CHECK_RESULT(kiln_swapchain_resize(sc, W / 2, H / 2), KILN_OK);
    CHECK_RESULT(pu_render_present(dev, ctx, sc, 1, 1, NULL), KILN_OK);
    kiln_swapchain_destroy(sc);
    kiln_device_destroy(dev);
}

/* A display that cannot be opened fails the create, logged once. */
static void test_bad_display(int num)
{
    step("unreachable display: create fails cleanly");
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    char disp[16];
    snprintf(disp, sizeof disp, ":%d", num + 1000); /* no server there */
    kiln_swapchain_desc d = {0};
    d.width = W;
    d.height = H;
    d.winsys = KILN_WINSYS_X11;
    d.x11_display = disp;
    kiln_swapchain *sc = (kiln_swapchain *)&d;
    th_log_reset();
    kiln_result r = kiln_swapchain_create(ctx, &d, &sc);
    CHECK(r != KILN_OK);
    CHECK(sc == NULL);
    CHECK_EQ_INT(th_log_count(), 1);
    CHECK_EQ_INT(th_log_last(), KILN_LOG_WINSYS_UNAVAILABLE);
    kiln_device_destroy(dev);
}

#endif /* KILN_TEST_HAVE_XLIB */

/* Without the X11 target, asking for it fails with UNSUPPORTED. */
static void test_unavailable(void)
{
    step("this build has no X11 target: create fails with UNSUPPORTED");
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_swapchain_desc d = {0};
    d.width = W;
    d.height = H;
    d.winsys = KILN_WINSYS_X11;
    kiln_swapchain *sc = NULL;
    CHECK_FAILS(kiln_swapchain_create(ctx, &d, &sc), KILN_E_UNSUPPORTED,
                KILN_LOG_WINSYS_UNAVAILABLE);
    CHECK(sc == NULL);
    kiln_device_destroy(dev);
}

int main(void)
{
    if (!kiln_winsys_x11_available()) {
        test_unavailable();
        return th_exit();
    }
#ifdef KILN_TEST_HAVE_XLIB
    XInitThreads(); /* our connection lives beside the display thread's */
    char why[256] = "";
    int num = -1;
    Display *dpy = start_xvfb(&num, why, sizeof why);
    if (!dpy) {
        printf("SKIP: cannot run Xvfb: %s\n", why);
        stop_xvfb();
        return 77;
    }
    atexit(stop_xvfb);
    printf("Xvfb on :%d (pid %ld)\n", num, (long)g_xvfb);
    test_window(dpy, num, KILN_FORMAT_R8G8B8A8_UNORM);
    test_window(dpy, num, KILN_FORMAT_B8G8R8A8_UNORM);
    test_bad_display(num);
    XCloseDisplay(dpy);
    stop_xvfb();
    return th_exit();
#else
    fprintf(stderr, "FAIL: the library has the X11 target but this test was built without Xlib "
                    "(tests/x11.cmake did not find X11)\n");
    return 1;
#endif
}
