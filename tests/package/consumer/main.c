/* A minimal program built against an installed kiln, the way a user builds
 * one: only <kiln.h> and the library found through find_package(kiln) or
 * pkg-config. It creates a device and destroys it. */
#include <kiln.h>
#include <stdio.h>

int main(void)
{
    kiln_device *dev = NULL;
    kiln_result r = kiln_device_create(&(kiln_device_desc){0}, &dev);
    if (r != KILN_OK) {
        fprintf(stderr, "kiln consumer: kiln_device_create: %s\n", kiln_result_string(r));
        return 1;
    }
    printf("kiln consumer: kiln %d.%d.%d, %u worker threads\n", KILN_VERSION_MAJOR,
           KILN_VERSION_MINOR, KILN_VERSION_PATCH, kiln_device_num_threads(dev));
    kiln_device_destroy(dev);
    return 0;
}
