#include "label_framing.h"

namespace lengen {

namespace {
constexpr const char* kLabelsAfterSource = "labels_after_source";
}  // namespace

TaskParameter labels_after_source_parameter() {
  return {kLabelsAfterSource, 0, 0, 1, true,
          "0: a label at every source position, predicted in place (as the reference); 1: the labels "
          "generated after the source (BOS src SEP labels EOS), a delayed copy"};
}

Framing label_framing(const CheckedParams& params) {
  return params.integer(kLabelsAfterSource) != 0 ? Framing::kTargetAfterSource : Framing::kLabelPerPosition;
}

}  // namespace lengen
