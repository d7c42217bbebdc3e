#include "recur/version.h"

namespace recur {

const char* version() { return RECUR_VERSION_STRING; }

}  // namespace recur
