// ALiBi: a bias -m_h * (i - j) on every head, and NAPE: ALiBi on the first heads, NoPE on the rest
// (the heads length scaling touches).
#include "lengen/positions.h"
#include "position_record.h"

namespace lengen {

PositionRecord alibi_position() {
  return {[](const AttentionConfig& config, int64_t heads, int64_t) {
            return PositionSetup{alibi_slopes(heads, config.alibi_slopes), 0};
          },
          {},
          {}};
}

PositionRecord nape_position() {
  return {[](const AttentionConfig& config, int64_t heads, int64_t) {
            const int64_t alibi_heads = nape_alibi_heads(config.alibi_heads, heads);
            // attention_problem() (config_io.h) refuses this for a config; here it guards the copy below.
            TORCH_CHECK(alibi_heads <= heads, "nape: ", alibi_heads, " ALiBi heads of ", heads);
            PositionSetup setup = no_slopes(heads);
            const std::vector<double> alibi = alibi_slopes(alibi_heads, config.alibi_slopes);
            std::copy(alibi.begin(), alibi.end(), setup.slopes.begin());
            setup.first_scaled_head = alibi_heads;
            return setup;
          },
          {},
          {}};
}

}  // namespace lengen
