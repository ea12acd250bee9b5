#include "lengen/allocator.h"

#include <malloc.h>

namespace lengen {

void configure_allocator() {
  constexpr int kBytes = 1 << 30;
  mallopt(M_TRIM_THRESHOLD, kBytes);
  mallopt(M_MMAP_THRESHOLD, kBytes);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace lengen
