#include "lengen/evaluation.h"

// Sideways, through a relative path to an internal header.
#include "../train/training_run.h"
