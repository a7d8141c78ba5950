// The families of kiln_bench's rows, each in its own file, registered in
// the order the table lists them (kiln_bench.cpp), and what main needs of them.
#pragma once

#include "bench/summary_reporter.hpp"

namespace kiln_bench {

void register_cold_compile_rows();     // cold_compile.cpp
void register_warm_start_rows();       // warm_start.cpp
void register_runtime_new_rows();       // runtime_new.cpp
void register_process_rows();          // whole_processes.cpp
void register_bundle_rows();           // bundle_processes.cpp
void register_lookup_and_call_rows();  // lookup_and_call.cpp
// (load_ways.hpp registers the load/ and link/ rows.)

// The first compile of this process, compiler module loaded with it (ms); < 0 before cold_compile ran.
double first_compile_ms();

// The fixtures built on first use, released at the end of main while libkiln's own statics live.
void release_process_fixture();
void release_tiny_fixture();

// The comparisons printed after the table (kiln_bench_summary.cpp).
void print_kiln_bench_summary(const SummaryReporter& rows);

}  // namespace kiln_bench
