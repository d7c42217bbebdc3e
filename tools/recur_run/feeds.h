// The inputs of a MODEL.onnx run: from --input files, or random (--random-inputs) in the
// shapes --shape and --dim ask for.
#pragma once

#include "recur/session.h"
#include "tools/recur_run/options.h"

namespace recur::tools {

// Throws recur::Error for a missing input, an unreadable file, or a --shape or --dim name
// the model does not have (the message lists the names it has).
Feeds model_feeds(const Session& session, const Args& a);

}  // namespace recur::tools
