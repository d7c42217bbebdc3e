// The whole public API.
#pragma once

#include "recur/dtype.h"
#include "recur/error.h"
#include "recur/export.h"
#include "recur/model_metadata.h"
#include "recur/profile.h"
#include "recur/session.h"
#include "recur/tensor.h"
#include "recur/version.h"
