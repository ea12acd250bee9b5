// Upward: scoring is above model.
#include "lengen/metrics.h"
