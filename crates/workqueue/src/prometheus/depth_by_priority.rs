//! A priority queue's depth per priority (controller-runtime v0.23's `depthWithPriorityMetric`).

use std::collections::HashMap;

use parking_lot::Mutex;
use prometheus::{IntGauge, IntGaugeVec};

use crate::metrics::DepthMetricWithPriority;

/// Distinct priorities a queue's depth reports before they are folded into one series
/// (controller-runtime's `maxRecommendedUniquePriorities`): a bound on the label's cardinality.
const MAX_PRIORITIES: usize = 25;

/// The `priority` label of every priority past [`MAX_PRIORITIES`].
const PRIORITIES_EXCEEDED: &str = "exceeded_cardinality_limit";

/// One queue's depth, a series per priority (the priority as a decimal integer), created at the
/// first item of that priority and kept (at 0 when none is queued), as controller-runtime does.
pub(super) struct DepthByPriority {
    /// Labelled `name` and `priority`.
    depth: IntGaugeVec,
    name: String,
    series: Mutex<Series>,
}

#[derive(Default)]
struct Series {
    by_priority: HashMap<i32, IntGauge>,
    /// Set once more than [`MAX_PRIORITIES`] were seen: every change goes there from then on.
    exceeded: Option<IntGauge>,
}

impl DepthByPriority {
    pub(super) fn new(depth: IntGaugeVec, name: &str) -> Self {
        DepthByPriority {
            depth,
            name: name.to_string(),
            series: Mutex::default(),
        }
    }

    fn with(&self, priority: i32, f: impl FnOnce(&IntGauge)) {
        let mut s = self.series.lock();
        if let Some(g) = &s.exceeded {
            return f(g);
        }
        if let Some(g) = s.by_priority.get(&priority) {
            return f(g);
        }
        let label = if s.by_priority.len() < MAX_PRIORITIES {
            priority.to_string()
        } else {
            PRIORITIES_EXCEEDED.to_string()
        };
        let g = self
            .depth
            .with_label_values(&[self.name.as_str(), label.as_str()]);
        f(&g);
        if label == PRIORITIES_EXCEEDED {
            s.by_priority.clear();
            s.exceeded = Some(g);
        } else {
            s.by_priority.insert(priority, g);
        }
    }
}

impl DepthMetricWithPriority for DepthByPriority {
    fn inc(&self, priority: i32) {
        self.with(priority, IntGauge::inc);
    }
    fn dec(&self, priority: i32) {
        self.with(priority, IntGauge::dec);
    }
}
