// Through a root the layers do not have.
#include "train/progress_line.h"
