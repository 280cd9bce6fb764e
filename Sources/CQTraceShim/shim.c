#include "qtrace_shim.h"
