// NoPE: no position encoding; the causal mask alone tells the order.
#include "position_record.h"

namespace lengen {

PositionRecord nope_position() {
  return {[](const AttentionConfig&, int64_t heads, int64_t) { return no_slopes(heads); }, {}, {}};
}

}  // namespace lengen
