#include <kiln.h>
#include <stdio.h>

int main(void)
{
    kiln_device *dev;
    if (kiln_device_create(&(kiln_device_desc){0}, &dev) != KILN_OK)
        return 1;
    kiln_context *ctx = kiln_device_immediate_context(dev);

    /* A 64x64 render target, and a STAGING twin the CPU can read. */
    kiln_texture2d_desc td = {.width = 64,
                              .height = 64,
                              .mip_levels = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_RENDER_TARGET};
    kiln_texture target, staging;
    kiln_rtv rtv;
    kiln_create_texture2d(dev, &td, NULL, &target);
    kiln_create_rtv(dev, target, NULL, &rtv);
    td.usage = KILN_USAGE_STAGING;
    td.bind_flags = 0;
    td.cpu_access = KILN_CPU_ACCESS_READ;
    kiln_create_texture2d(dev, &td, NULL, &staging);

    /* Both calls return at once; worker threads execute them in order. */
    kiln_resource src = kiln_texture_resource(target);
    kiln_resource dst = kiln_texture_resource(staging);
    kiln_clear_rtv(ctx, rtv, (float[4]){1.0f, 0.5f, 0.0f, 1.0f});
    kiln_copy_resource(ctx, dst, src);

    /* Map waits only for the queued work that writes `staging`. */
    kiln_mapped_subresource m;
    int ok = 0;
    if (kiln_map(ctx, dst, 0, KILN_MAP_READ, 0, &m) == KILN_OK) {
        const uint8_t *px = (const uint8_t *)m.data + 10 * m.row_pitch + 20 * 4;
        printf("pixel (20, 10) = %u %u %u %u\n", px[0], px[1], px[2], px[3]);
        ok = px[0] == 255 && px[1] == 128 && px[2] == 0 && px[3] == 255;
        kiln_unmap(ctx, dst, 0);
    }

    kiln_destroy_rtv(dev, rtv);
    kiln_destroy_texture(dev, staging);
    kiln_destroy_texture(dev, target);
    kiln_device_destroy(dev);
    return ok ? 0 : 1;
}
