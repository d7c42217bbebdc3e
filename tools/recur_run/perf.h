// --perf: time the runs of one session, from one thread or several (--concurrency), for a
// number of runs (--repeat) or a time (--duration), and report as text or JSON.
#pragma once

#include <string>

#include "recur/session.h"
#include "tools/recur_run/options.h"

namespace recur::tools {

// Records the process's peak and current resident memory (VmHWM, VmRSS) right after the
// session is created, for --perf --json's load_peak_rss_kib and load_rss_kib.
void note_load_memory();

int run_perf(const Session& session, const Feeds& feeds, double load_ms, const Args& a,
             const std::string& model);

}  // namespace recur::tools
