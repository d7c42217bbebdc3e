// --compare-fp32: the same inputs through the session at its reduced CPU precision and through
// an fp32 session, with the error of every output against fp32.
#pragma once

#include <string>

#include "recur/session.h"
#include "tools/recur_run/options.h"

namespace recur::tools {

int run_compare_fp32(const Session& session, const Feeds& feeds, double load_ms, const Args& a,
                     const std::string& model);

}  // namespace recur::tools
