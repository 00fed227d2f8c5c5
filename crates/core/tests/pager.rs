//! `ListPager` against an in-memory lister: the cases of client-go's tools/pager/pager_test.go
//! (`TestListPager_List`, `TestListPager_EachListItem`) plus the page-size and fallback rules.

use std::sync::{Arc, Mutex};

use kcache_core::{
    Error, ListMeta, ListPager, ListParams, ListerWatcher, ObjectList, ResourceVersionMatch,
    Status, WatchParams, WatchStream,
};

/// How the lister answers (pager_test.go's `PagedList`, `ExpiresOnSecondPage`,
/// `ExpiresOnSecondPageThenFullList`).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Paged,
    ExpiresOnSecondPage,
    ExpiresOnSecondPageThenFullList,
}

/// Serves `remaining` items named "0", "1", … in pages whose continue token is `rv:index`;
/// checks every request against client-go's invariants and records the requests.
struct TestPager {
    mode: Mode,
    state: Mutex<State>,
}

struct State {
    rv: String,
    index: usize,
    remaining: usize,
    continuing: bool,
    done: bool,
    expect_limit: Option<i64>,
    requests: Vec<ListParams>,
    violations: Vec<String>,
}

impl TestPager {
    fn new(mode: Mode, remaining: usize, expect_limit: Option<i64>) -> Self {
        TestPager {
            mode,
            state: Mutex::new(State {
                rv: "rv:20".into(),
                index: 0,
                remaining,
                continuing: false,
                done: false,
                expect_limit,
                requests: Vec::new(),
                violations: Vec::new(),
            }),
        }
    }

    fn requests(&self) -> Vec<ListParams> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Panics (failing the test) if the pager broke an invariant.
    fn check(&self) {
        let violations = self.state.lock().unwrap().violations.clone();
        assert!(violations.is_empty(), "{violations:?}");
    }
}

fn expired() -> Error {
    Status::failure(410, "Expired", "this list has expired").into()
}

impl ListerWatcher<String> for TestPager {
    async fn list(&self, options: &ListParams) -> Result<ObjectList<String>, Error> {
        let mut p = self.state.lock().unwrap();
        p.requests.push(options.clone());
        if p.continuing && self.mode != Mode::Paged {
            if self.mode == Mode::ExpiresOnSecondPage {
                p.done = true;
            } else {
                // Start over: the full list must come back whole, unpaginated.
                p.continuing = false;
                p.remaining += p.index;
                p.index = 0;
                p.expect_limit = None;
            }
            return Err(expired());
        }
        if p.done {
            p.violations
                .push("unexpected call after the last page".into());
            return Err(Error::decode("list", "unexpected list call"));
        }
        let expected_continue = p.continuing.then(|| format!("{}:{}", p.rv, p.index));
        if options.limit != p.expect_limit || options.continue_token != expected_continue {
            let v = format!(
                "expected limit {:?} and continue {expected_continue:?}, got {options:?}",
                p.expect_limit
            );
            p.violations.push(v);
            return Err(Error::decode("list", "invariant violated"));
        }
        if options.continue_token.is_some()
            && (options.resource_version.is_some() || options.resource_version_match.is_some())
        {
            let v = format!("resourceVersion(Match) sent with continue: {options:?}");
            p.violations.push(v);
            return Err(Error::decode("list", "invariant violated"));
        }
        let total = options.limit.map_or(p.remaining, |l| l as usize);
        let n = total.min(p.remaining);
        let items = (p.index..p.index + n).map(|i| i.to_string()).collect();
        p.index += n;
        p.remaining -= n;
        let continue_ = if p.remaining > 0 {
            p.continuing = true;
            Some(format!("{}:{}", p.rv, p.index))
        } else {
            p.done = true;
            None
        };
        Ok(ObjectList {
            metadata: ListMeta {
                resource_version: Some(p.rv.clone()),
                continue_,
                remaining_item_count: None,
                shard_info: None,
            },
            items,
        })
    }

    async fn watch(&self, _: &WatchParams) -> Result<WatchStream<String>, Error> {
        Err(Error::decode("watch", "not used"))
    }
}

/// pager_test.go's `list(count, rv)`.
fn list(count: usize, rv: &str) -> ObjectList<String> {
    ObjectList {
        metadata: ListMeta {
            resource_version: Some(rv.into()),
            ..ListMeta::default()
        },
        items: (0..count).map(|i| i.to_string()).collect(),
    }
}

fn pager(page_size: i64, full_list_if_expired: bool) -> ListPager {
    ListPager {
        page_size,
        full_list_if_expired,
    }
}

#[tokio::test]
async fn list_mirrors_client_go_test_list_pager_list() {
    let with_rv = ListParams {
        resource_version: Some("rv:10".into()),
        ..ListParams::default()
    };
    let with_rv_match = ListParams {
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        ..with_rv.clone()
    };
    // (name, mode, items on the server, FullListIfExpired, options, want (count, paginated) or
    // an expired error)
    type Case<'a> = (
        &'a str,
        Mode,
        usize,
        bool,
        &'a ListParams,
        Option<(usize, bool)>,
    );
    let cases: [Case; 9] = [
        (
            "empty page",
            Mode::Paged,
            0,
            false,
            &ListParams::default(),
            Some((0, false)),
        ),
        (
            "one page",
            Mode::Paged,
            9,
            false,
            &ListParams::default(),
            Some((9, false)),
        ),
        (
            "one full page",
            Mode::Paged,
            10,
            false,
            &ListParams::default(),
            Some((10, false)),
        ),
        (
            "two pages",
            Mode::Paged,
            11,
            false,
            &ListParams::default(),
            Some((11, true)),
        ),
        (
            "three pages",
            Mode::Paged,
            21,
            false,
            &ListParams::default(),
            Some((21, true)),
        ),
        (
            "expires on second page",
            Mode::ExpiresOnSecondPage,
            21,
            false,
            &ListParams::default(),
            None,
        ),
        (
            "expires on second page and then lists",
            Mode::ExpiresOnSecondPageThenFullList,
            21,
            true,
            &ListParams::default(),
            Some((21, true)),
        ),
        (
            "two pages with resourceVersion",
            Mode::Paged,
            11,
            false,
            &with_rv,
            Some((11, true)),
        ),
        (
            "two pages with resourceVersion and resourceVersionMatch",
            Mode::Paged,
            11,
            false,
            &with_rv_match,
            Some((11, true)),
        ),
    ];
    for (name, mode, remaining, full_list_if_expired, options, want) in cases {
        let lw = TestPager::new(mode, remaining, Some(10));
        let got = pager(10, full_list_if_expired).list(&lw, options).await;
        lw.check();
        // The same through list_shared, every page (and the fallback) from the source's own.
        let shared_lw = SharedOnly(TestPager::new(mode, remaining, Some(10)));
        let shared = pager(10, full_list_if_expired)
            .list_shared(&shared_lw, options)
            .await;
        shared_lw.0.check();
        match (got, shared, want) {
            (Ok(got), Ok(shared), Some((count, paginated))) => {
                assert_eq!(got.list, list(count, "rv:20"), "{name}");
                assert_eq!(got.paginated, paginated, "{name}");
                let unshared: Vec<String> =
                    shared.list.items.iter().map(|i| (**i).clone()).collect();
                assert_eq!(unshared, got.list.items, "{name}");
                assert_eq!(shared.list.metadata, got.list.metadata, "{name}");
                assert_eq!(shared.paginated, paginated, "{name}");
            }
            (Err(e), Err(shared), None) => {
                assert!(e.is_gone(), "{name}: {e}");
                assert!(shared.is_gone(), "{name}: {shared}");
            }
            (got, shared, want) => panic!("{name}: got {got:?} and {shared:?}, want {want:?}"),
        }
    }
}

/// A source that lists only through `list_shared` (as kcache-transport's `Api` wraps each item
/// where it decodes it): the pager's `list_shared` must never call `list`.
struct SharedOnly(TestPager);

impl ListerWatcher<String> for SharedOnly {
    async fn list(&self, _: &ListParams) -> Result<ObjectList<String>, Error> {
        panic!("list_shared lists through the source's list_shared")
    }
    async fn list_shared(&self, options: &ListParams) -> Result<ObjectList<Arc<String>>, Error> {
        let page = self.0.list(options).await?;
        Ok(ObjectList {
            metadata: page.metadata,
            items: page.items.into_iter().map(Arc::new).collect(),
        })
    }
    async fn watch(&self, options: &WatchParams) -> Result<WatchStream<String>, Error> {
        self.0.watch(options).await
    }
}

#[tokio::test]
async fn each_list_item_mirrors_client_go_test_list_pager_each_list_item() {
    #[derive(Debug, PartialEq)]
    enum Failure {
        Processor,
        List(bool),
    }
    impl From<Error> for Failure {
        fn from(e: Error) -> Self {
            Failure::List(e.is_gone())
        }
    }
    // (name, mode, items on the server, fail on item n, items visited, error)
    let cases = [
        ("empty page", Mode::Paged, 0, None, 0, None),
        ("one page", Mode::Paged, 9, None, 9, None),
        ("one full page", Mode::Paged, 10, None, 10, None),
        ("two pages", Mode::Paged, 11, None, 11, None),
        ("three pages", Mode::Paged, 21, None, 21, None),
        // Every item of the first page was visited; no fallback.
        (
            "expires on second page",
            Mode::ExpiresOnSecondPage,
            21,
            None,
            10,
            Some(Failure::List(true)),
        ),
        // Every item up to the one the processor failed on was visited, and no more pages.
        (
            "error processing item",
            Mode::Paged,
            51,
            Some(3),
            3,
            Some(Failure::Processor),
        ),
    ];
    for (name, mode, remaining, fail_on, visited, want) in cases {
        let lw = TestPager::new(mode, remaining, Some(10));
        let mut items = Vec::new();
        let got = pager(10, true)
            .each_list_item(&lw, &ListParams::default(), |item| {
                items.push(item);
                if Some(items.len()) == fail_on {
                    return Err(Failure::Processor);
                }
                Ok(())
            })
            .await;
        lw.check();
        assert_eq!(got.err(), want, "{name}");
        assert_eq!(items, list(visited, "rv:20").items, "{name}");
        if fail_on.is_some() {
            assert_eq!(lw.requests().len(), 1, "{name}: no page after the failure");
        }
    }
}

#[tokio::test]
async fn default_page_size_is_500_and_an_explicit_limit_wins() {
    let lw = TestPager::new(Mode::Paged, 501, Some(500));
    let got = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap();
    lw.check();
    assert_eq!((got.list.items.len(), got.paginated), (501, true));

    let lw = TestPager::new(Mode::Paged, 9, Some(4));
    let explicit = ListParams {
        limit: Some(4),
        ..ListParams::default()
    };
    let got = ListPager::default().list(&lw, &explicit).await.unwrap();
    lw.check();
    assert_eq!(got.list, list(9, "rv:20"));
    assert_eq!(lw.requests().len(), 3);
}

#[tokio::test]
async fn a_zero_page_size_lists_in_one_unpaginated_request() {
    // client-go's `PageSize: 0` leaves `Limit` 0: no limit at all.
    let lw = TestPager::new(Mode::Paged, 1234, None);
    let got = ListPager::new(0)
        .list(&lw, &ListParams::default())
        .await
        .unwrap();
    lw.check();
    assert_eq!((got.list.items.len(), got.paginated), (1234, false));
    assert_eq!(lw.requests().len(), 1);
    // A limit of 0 in the params is "unset", as in client-go: the page size applies.
    let lw = TestPager::new(Mode::Paged, 15, Some(10));
    let zero = ListParams {
        limit: Some(0),
        ..ListParams::default()
    };
    assert!(ListPager::new(10).list(&lw, &zero).await.unwrap().paginated);
    lw.check();
}

#[tokio::test]
async fn the_fallback_lists_at_the_original_resource_version_once() {
    let lw = TestPager::new(Mode::ExpiresOnSecondPageThenFullList, 25, Some(10));
    let params = ListParams {
        resource_version: Some("77".into()),
        resource_version_match: Some(ResourceVersionMatch::Exact),
        label_selector: Some("app=web".into()),
        ..ListParams::default()
    };
    let got = ListPager::new(10).list(&lw, &params).await.unwrap();
    lw.check();
    assert_eq!((got.list.items.len(), got.paginated), (25, true));
    let requests = lw.requests();
    assert_eq!(requests.len(), 3);
    // The continuation kept the selector and dropped resourceVersion(Match).
    assert_eq!(requests[1].label_selector.as_deref(), Some("app=web"));
    assert_eq!(requests[1].resource_version, None);
    // The fallback is the original request without limit or continue.
    let full = ListParams {
        limit: None,
        ..params.clone()
    };
    assert_eq!(requests[2], full);
}

/// Answers from a script, one entry per call.
struct Scripted(Mutex<Vec<Result<ObjectList<String>, Error>>>);

impl ListerWatcher<String> for Scripted {
    async fn list(&self, _: &ListParams) -> Result<ObjectList<String>, Error> {
        let mut script = self.0.lock().unwrap();
        if script.is_empty() {
            return Err(Error::decode("list", "script exhausted"));
        }
        script.remove(0)
    }

    async fn watch(&self, _: &WatchParams) -> Result<WatchStream<String>, Error> {
        Err(Error::decode("watch", "not used"))
    }
}

fn page(items: &[&str], continue_: Option<&str>) -> Result<ObjectList<String>, Error> {
    Ok(ObjectList {
        metadata: ListMeta {
            resource_version: Some("10".into()),
            continue_: continue_.map(String::from),
            remaining_item_count: continue_.map(|_| 1),
            shard_info: None,
        },
        items: items.iter().map(|s| s.to_string()).collect(),
    })
}

#[tokio::test]
async fn a_410_on_the_first_page_or_on_the_fallback_is_returned() {
    let lw = Scripted(Mutex::new(vec![Err(expired()), page(&["a"], None)]));
    let e = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap_err();
    assert!(e.is_gone());
    assert_eq!(lw.0.lock().unwrap().len(), 1, "no second call");

    let lw = Scripted(Mutex::new(vec![
        page(&["a"], Some("c1")),
        Err(expired()),
        Err(expired()),
        page(&["a", "b"], None),
    ]));
    let e = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap_err();
    assert!(e.is_gone());
    assert_eq!(lw.0.lock().unwrap().len(), 1, "the fallback is not retried");
}

#[tokio::test]
async fn other_errors_on_a_continuation_are_returned() {
    let lw = Scripted(Mutex::new(vec![
        page(&["a"], Some("c1")),
        Err(Status::failure(500, "InternalError", "boom").into()),
        page(&["a", "b"], None),
    ]));
    let e = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(e.status().map(|s| s.code), Some(500));
}

#[tokio::test]
async fn pages_put_together_carry_the_first_pages_metadata_and_one_page_its_own() {
    let lw = Scripted(Mutex::new(vec![
        page(&["a"], Some("c1")),
        page(&["b"], None),
    ]));
    let got = ListPager::default()
        .list_mapped(&lw, &ListParams::default(), Arc::new)
        .await
        .unwrap();
    assert_eq!(got.list.metadata.continue_, None);
    assert_eq!(got.list.metadata.remaining_item_count, None);
    assert_eq!(got.list.resource_version(), "10");
    assert_eq!(*got.list.items[1], "b");

    let mut single = page(&["a"], None).unwrap();
    single.metadata.remaining_item_count = Some(0);
    let lw = Scripted(Mutex::new(vec![Ok(single.clone())]));
    let got = ListPager::default()
        .list(&lw, &ListParams::default())
        .await
        .unwrap();
    assert_eq!(got.list, single);
    assert!(!got.paginated);
}
