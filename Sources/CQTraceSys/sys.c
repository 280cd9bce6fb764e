#include "qtrace_sys.h"
