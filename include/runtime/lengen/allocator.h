#pragma once

namespace lengen {

// Keeps freed memory in the process instead of returning it to the OS after every step:
// glibc's default trimming can cost up to 2x step time for small models.
void configure_allocator();

}  // namespace lengen
