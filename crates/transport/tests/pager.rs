//! The list pager against an in-memory ListerWatcher: page size, continue handling, and the
//! 410 fallback rules of client-go's tools/pager.

use std::sync::Mutex;

use kcache_core::{
    Error, ListMeta, ListParams, ListerWatcher, ObjectList, ResourceVersionMatch, Status,
    WatchParams, WatchStream,
};
use kcache_transport::ListPager;

/// Serves `total` items in pages; records every request; fails chosen calls with 410.
struct Pages {
    total: usize,
    calls: Mutex<Vec<ListParams>>,
    gone_on_call: Option<usize>,
}

impl Pages {
    fn new(total: usize, gone_on_call: Option<usize>) -> Self {
        Pages {
            total,
            calls: Mutex::new(Vec::new()),
            gone_on_call,
        }
    }
    fn calls(&self) -> Vec<ListParams> {
        self.calls.lock().unwrap().clone()
    }
}

impl ListerWatcher<u32> for Pages {
    async fn list(&self, p: &ListParams) -> Result<ObjectList<u32>, Error> {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(p.clone());
            calls.len()
        };
        if self.gone_on_call == Some(n) {
            return Err(Status::failure(410, "Expired", "continue token too old").into());
        }
        let start: usize = p
            .continue_token
            .as_deref()
            .map_or(0, |c| c.parse().unwrap());
        let limit = p
            .limit
            .filter(|l| *l > 0)
            .map_or(self.total, |l| l as usize);
        let end = (start + limit).min(self.total);
        Ok(ObjectList {
            metadata: ListMeta {
                resource_version: Some(format!("rv{n}")),
                continue_: (end < self.total).then(|| end.to_string()),
                remaining_item_count: Some((self.total - end) as i64),
            },
            items: (start as u32..end as u32).collect(),
        })
    }

    async fn watch(&self, _: &WatchParams) -> Result<WatchStream<u32>, Error> {
        Err(Error::decode("watch", "not used"))
    }
}

#[tokio::test]
async fn pages_with_continue_dropping_resource_version() {
    let lw = Pages::new(1234, None);
    let params = ListParams {
        resource_version: Some("0".into()),
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        label_selector: Some("a=b".into()),
        ..ListParams::default()
    };
    let r = ListPager::default().list(&lw, &params).await.unwrap();
    assert!(r.paginated);
    assert_eq!(r.list.items, (0..1234).collect::<Vec<u32>>());
    assert_eq!(r.list.resource_version(), "rv1");
    assert_eq!(r.list.continue_token(), None);
    let calls = lw.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].limit, Some(500));
    assert_eq!(calls[0].resource_version.as_deref(), Some("0"));
    assert_eq!(calls[0].continue_token, None);
    for c in &calls[1..] {
        assert_eq!(c.resource_version, None);
        assert_eq!(c.resource_version_match, None);
        assert_eq!(c.label_selector.as_deref(), Some("a=b"));
        assert_eq!(c.limit, Some(500));
    }
    assert_eq!(calls[2].continue_token.as_deref(), Some("1000"));
}

#[tokio::test]
async fn one_page_is_returned_as_is() {
    let lw = Pages::new(10, None);
    let r = ListPager::new(100)
        .list(&lw, &ListParams::default())
        .await
        .unwrap();
    assert!(!r.paginated);
    assert_eq!(r.list.items.len(), 10);
    assert_eq!(r.list.metadata.remaining_item_count, Some(0));
    // An explicit limit wins over the page size.
    let lw = Pages::new(10, None);
    let p = ListParams {
        limit: Some(4),
        ..ListParams::default()
    };
    ListPager::new(100).list(&lw, &p).await.unwrap();
    assert_eq!(lw.calls().len(), 3);
}

#[tokio::test]
async fn gone_on_a_continuation_page_falls_back_to_one_full_list() {
    let lw = Pages::new(1200, Some(2));
    let params = ListParams {
        resource_version: Some("77".into()),
        resource_version_match: Some(ResourceVersionMatch::Exact),
        ..ListParams::default()
    };
    let r = ListPager::default().list(&lw, &params).await.unwrap();
    // Only the full list: the first page's items are dropped.
    assert_eq!(r.list.items, (0..1200).collect::<Vec<u32>>());
    assert!(r.paginated);
    assert_eq!(r.list.resource_version(), "rv3");
    let calls = lw.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].continue_token.as_deref(), Some("500"));
    assert_eq!(calls[2].limit, None);
    assert_eq!(calls[2].continue_token, None);
    assert_eq!(calls[2].resource_version.as_deref(), Some("77"));
    assert_eq!(
        calls[2].resource_version_match,
        Some(ResourceVersionMatch::Exact)
    );

    // each_page (client-go's EachListItem) has no fallback.
    let lw = Pages::new(1200, Some(2));
    let mut pages = Vec::new();
    let e = ListPager::default()
        .each_page(&lw, &params, |items| {
            pages.push(items.len());
            Ok(())
        })
        .await
        .unwrap_err();
    assert!(e.is_gone());
    assert_eq!(pages, [500]);
    assert_eq!(lw.calls().len(), 2);
}

#[tokio::test]
async fn gone_on_the_first_page_or_twice_is_returned() {
    let lw = Pages::new(100, Some(1));
    let e = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap_err();
    assert!(e.is_gone());
    assert_eq!(lw.calls().len(), 1);
    // Without FullListIfExpired, a continuation 410 is returned too.
    let lw = Pages::new(1200, Some(2));
    let pager = ListPager {
        full_list_if_expired: false,
        ..ListPager::default()
    };
    assert!(pager
        .list(&lw, &ListParams::default())
        .await
        .unwrap_err()
        .is_gone());
    assert_eq!(lw.calls().len(), 2);
}
