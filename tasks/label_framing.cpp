#include "label_framing.h"

namespace lengen {

namespace {
constexpr const char* kLabelsAfterSource = "labels_after_source";
}  // namespace

TaskParameter labels_after_source_parameter() {
  return {kLabelsAfterSource,
          0,
          0,
          1,
          true,
          "0: a label at every source position, predicted in place (as the reference); 1: the labels "
          "generated after the source (BOS src SEP labels EOS), a delayed copy"};
}

LabelTask::LabelTask(std::string name, const CheckedParams& params)
    : name_(std::move(name)),
      params_(params.values()),
      framing_(params.integer(kLabelsAfterSource) != 0 ? Framing::kTargetAfterSource
                                                       : Framing::kLabelPerPosition) {}

}  // namespace lengen
