// libbabeltrace2's C API (Debian libbabeltrace2-dev) for QTraceCTF.
#include <babeltrace2/babeltrace.h>
