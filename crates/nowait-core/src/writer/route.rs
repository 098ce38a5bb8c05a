//! A sink's target filter on the writer thread (`Sink::filter`): the
//! record's target, resolved once per call site, against the sink's
//! directives, re-read from the logger's [`Routes`] after every change.

use std::sync::Arc;

use crate::event::callsite::SiteCache;
use crate::event::Event;
use crate::filter::routes::{self, Routes};
use crate::filter::Filter;
use crate::record::{kind, Record};

/// One sink's view of its filter.
pub(crate) struct Route {
    routes: Arc<Routes>,
    index: usize,
    /// The generation `filter` is of.
    seen: u64,
    filter: Option<Arc<Filter>>,
    sites: SiteCache,
}

impl Route {
    pub(crate) fn new(routes: Arc<Routes>, index: usize) -> Route {
        let seen = routes::generation();
        let filter = routes.filter(index);
        Route {
            routes,
            index,
            seen,
            filter,
            sites: SiteCache::default(),
        }
    }

    /// Whether the sink's filter lets `record` through (its level is the
    /// caller's). One load when nothing changed and the sink has no
    /// filter.
    #[inline]
    pub(crate) fn takes(&mut self, record: &Record<'_>) -> bool {
        let now = routes::generation();
        if now != self.seen {
            self.seen = now;
            self.filter = self.routes.filter(self.index);
        }
        let Some(filter) = &self.filter else {
            return true;
        };
        if record.kind() != kind::EVENT {
            return filter.enabled("", record.level());
        }
        let Some(event) = Event::parse(record.payload()) else {
            return filter.enabled("", record.level());
        };
        match event.site().and_then(|k| self.sites.get(k.get())) {
            Some(site) => filter.enabled(site.target(), record.level()),
            None => filter.enabled(event.target().unwrap_or(""), record.level()),
        }
    }
}
