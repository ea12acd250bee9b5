#pragma once

namespace lengen {

// Keeps freed memory in the process instead of returning it to the OS after every step:
// glibc's default trimming cost up to 2x step time for small models in a prototype.
void configure_allocator();

}  // namespace lengen
