//! The writer task: pops recorded events in order and takes each through the series cache
//! (`events.k8s.io/v1`) or the correlator (`core/v1`), then the spam filter, then the client.
//! It owns every cache, so none needs a lock.

use std::sync::Arc;

use jiff::Timestamp;
use tokio::sync::{mpsc, watch};
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use crate::client::{EventApi, EventClient};
use crate::correlator::{spam_key, Correlated, Correlator, SpamFilter};
use crate::options::BroadcasterOptions;
use crate::series::{series_patch, Observed, SeriesCache};
use crate::stats::Counters;
use crate::time::{micro_time, seconds_time};
use crate::types::{CoreEvent, Event};
use crate::write::{write_with_retries, Writable};

pub(crate) struct Worker<C> {
    client: C,
    options: BroadcasterOptions,
    counters: Arc<Counters>,
    stop: watch::Receiver<bool>,
    series: SeriesCache,
    spam: SpamFilter,
    correlator: Correlator,
}

enum Step {
    Event(Box<Event>),
    Finish,
    Refresh,
    Stop,
}

impl<C: EventClient> Worker<C> {
    pub(crate) fn new(
        client: C,
        options: BroadcasterOptions,
        counters: Arc<Counters>,
        stop: watch::Receiver<bool>,
    ) -> Self {
        let c = &options.correlator;
        Worker {
            spam: SpamFilter::new(c.cache_size, c.spam_burst, c.spam_refill),
            correlator: Correlator::new(c),
            series: SeriesCache::default(),
            client,
            counters,
            stop,
            options,
        }
    }

    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<Event>) {
        let api = self.discover().await;
        let _ = self.counters.api.set(api);
        let finish = self.options.series_finish;
        let refresh = self.options.series_refresh;
        let mut finish_tick = interval_at(Instant::now() + finish, finish);
        let mut refresh_tick = interval_at(Instant::now() + refresh, refresh);
        finish_tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        refresh_tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut stop = self.stop.clone();
        loop {
            let step = tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => Step::Stop,
                e = rx.recv() => e.map_or(Step::Stop, |e| Step::Event(Box::new(e))),
                _ = finish_tick.tick() => Step::Finish,
                _ = refresh_tick.tick() => Step::Refresh,
            };
            match step {
                Step::Event(e) => self.handle(api, *e).await,
                Step::Finish => self.finish_series().await,
                Step::Refresh => self.write_series(true).await,
                Step::Stop => break,
            }
        }
        rx.close();
        while let Ok(e) = rx.try_recv() {
            self.handle(api, e).await;
        }
        self.write_series(false).await;
    }

    /// client-go's `NewEventBroadcasterAdapter`: `events.k8s.io/v1` when discovery lists it,
    /// else (not served, or discovery failed) `core/v1`.
    async fn discover(&self) -> EventApi {
        match self.client.serves_events_v1().await {
            Ok(true) => EventApi::EventsV1,
            Ok(false) => {
                tracing::info!("events.k8s.io/v1 is not served: writing core/v1 events");
                EventApi::CoreV1
            }
            Err(e) => {
                tracing::warn!(
                    "discovery of events.k8s.io/v1 failed ({e}): writing core/v1 events"
                );
                EventApi::CoreV1
            }
        }
    }

    async fn handle(&mut self, api: EventApi, event: Event) {
        let now = Instant::now();
        let wall = Timestamp::now();
        match api {
            EventApi::EventsV1 => match self.series.observe(event, now, &micro_time(wall)) {
                Observed::Counted => Counters::inc(&self.counters.series_counted),
                Observed::Create(e) => self.write_v1(e, None, now).await,
                Observed::StartSeries(e, patch) => self.write_v1(e, Some(patch), now).await,
            },
            EventApi::CoreV1 => {
                let core = CoreEvent::from_event(&event, seconds_time(wall));
                let name = || format!("{}.{:x}", event.regarding.name, wall.as_nanosecond());
                match self.correlator.correlate(core, now, name) {
                    Correlated::Skip => Counters::inc(&self.counters.filtered),
                    Correlated::Write { event, patch } => {
                        if let Some(w) = self.write(&*event, patch.as_ref()).await {
                            self.correlator.update_state(&w);
                        }
                    }
                }
            }
        }
    }

    /// A new event or a new series passes the spam filter first (a count kept in memory
    /// does not: it is written later by a refresh or the series' end).
    async fn write_v1(&mut self, e: Event, patch: Option<serde_json::Value>, now: Instant) {
        let key = spam_key(&e.reporting_controller, "", &e.regarding);
        if !self.spam.allow(&key, now) {
            Counters::inc(&self.counters.filtered);
            return;
        }
        self.write(&e, patch.as_ref()).await;
    }

    async fn write<E: Writable>(&mut self, e: &E, patch: Option<&serde_json::Value>) -> Option<E> {
        let mut stop = self.stop.clone();
        let r = write_with_retries(&self.client, e, patch, self.options.retry, &mut stop).await;
        match &r {
            Some(_) => Counters::inc(&self.counters.written),
            None => Counters::inc(&self.counters.failed),
        }
        r
    }

    async fn finish_series(&mut self) {
        let ended = self
            .series
            .finish(Instant::now(), self.options.series_finish);
        for e in ended {
            let patch = series_patch(&e);
            self.write(&e, Some(&patch)).await;
        }
    }

    /// Writes every open series (a refresh), or only those whose count moved (at shutdown).
    async fn write_series(&mut self, all: bool) {
        for e in self.series.open_series(all) {
            let patch = series_patch(&e);
            if let Some(w) = self.write(&e, Some(&patch)).await {
                self.series.refreshed(w);
            }
        }
    }
}
