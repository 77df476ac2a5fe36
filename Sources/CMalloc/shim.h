// glibc's allocator statistics and trimming, which Swift's Glibc module does not import.
#include <malloc.h>
#include <stddef.h>

// Bytes free in all of the allocator's arenas. A wrapper, because in Swift `mallinfo2()` names
// the zeroed struct rather than the function of the same name.
static inline size_t cmalloc_free_bytes(void) {
    return mallinfo2().fordblks;
}
