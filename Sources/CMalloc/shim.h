// glibc's malloc_trim, which Swift's Glibc module does not import.
#include <malloc.h>
