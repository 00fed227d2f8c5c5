//! `kcache-bench controller` alone in a binary of its own: `cargo run --profile bench-release -p
//! kcache-bench --example controller_alone -- --kubeconfig F [--namespace N --workers 2 --updates
//! 1000]` takes the same flags and prints the same JSON line.
//!
//! Why it exists: peak RSS counts the binary's code pages a process touches (the kernel maps a
//! file's pages around every page faulted in), and kcache-bench carries every scenario and the
//! embedded test server: about 20 MB of text, where each page the controller runs drags its
//! neighbours, other scenarios' code, in with it. A user's controller binary holds the runtime
//! and its own reconcile. This one is exactly the bench's scenario — the same source file
//! (`src/controller.rs`), client, counting allocator (counting off) on the system allocator,
//! and report — and nothing else, so its peak RSS is what such a controller maps.

#[path = "../src/client.rs"]
mod client;
#[path = "../src/controller.rs"]
mod controller;
#[path = "../src/duration.rs"]
mod duration;
// The bench's global allocator; this binary uses its allocator choice, not its counters.
#[allow(dead_code)]
#[path = "../src/heap.rs"]
mod heap;
#[allow(dead_code)]
#[path = "../src/proc_status.rs"]
mod proc_status;
#[path = "../src/report.rs"]
mod report;
#[path = "../src/storage.rs"]
mod storage;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "controller_alone",
    about = "kcache-bench's controller scenario alone"
)]
struct Cli {
    #[command(flatten)]
    args: controller::Args,
}

fn main() {
    let cli = Cli::parse();
    // The system allocator, as `kcache-bench controller` runs on by default.
    if heap::Allocator::current() != heap::Allocator::System {
        heap::run_on(heap::Allocator::System);
    }
    heap::disable_transparent_huge_pages();
    controller::run(cli.args);
}
