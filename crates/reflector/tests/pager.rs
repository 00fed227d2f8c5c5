//! client-go's tools/pager semantics, through `ListPager` over a scripted ListerWatcher.

mod support;

use kcache_core::{ListParams, ResourceVersionMatch};
use kcache_reflector::ListPager;
use support::*;

fn exact(rv: &str, limit: Option<i64>) -> ListParams {
    ListParams {
        resource_version: Some(rv.into()),
        resource_version_match: Some(ResourceVersionMatch::Exact),
        label_selector: Some("app=web".into()),
        limit,
        ..ListParams::default()
    }
}

fn continuation(token: &str, limit: i64) -> ListParams {
    ListParams {
        continue_token: Some(token.into()),
        label_selector: Some("app=web".into()),
        limit: Some(limit),
        ..ListParams::default()
    }
}

fn names(items: &[std::sync::Arc<Obj>]) -> Vec<String> {
    items.iter().map(|o| o.metadata.name.clone()).collect()
}

#[tokio::test]
async fn pages_drop_resource_version_and_keep_the_first_pages_rv() {
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..2)));
    lw.push_list(page("10", "C2", pods(2..4)));
    lw.push_list(list("10", pods(4..5)));
    let listed = ListPager::new(&*lw)
        .with_page_size(2)
        .list(exact("10", None))
        .await
        .unwrap();
    assert_eq!(
        lw.list_requests(),
        [
            exact("10", Some(2)),
            continuation("C1", 2),
            continuation("C2", 2)
        ]
    );
    assert_eq!(
        names(&listed.items),
        ["pod-0", "pod-1", "pod-2", "pod-3", "pod-4"]
    );
    assert_eq!(listed.resource_version, "10");
    assert!(listed.paginated);
}

#[tokio::test]
async fn default_page_size_is_500_and_an_explicit_limit_wins() {
    let lw = ScriptedLw::new();
    lw.push_list(list("3", pods(0..1)));
    lw.push_list(list("3", pods(0..1)));
    let pager = ListPager::new(&*lw);
    let one = pager.list(exact("3", None)).await.unwrap();
    assert!(!one.paginated);
    pager.list(exact("3", Some(7))).await.unwrap();
    assert_eq!(
        lw.list_requests(),
        [exact("3", Some(500)), exact("3", Some(7))]
    );
}

#[tokio::test]
async fn expired_continuation_gets_one_unpaginated_retry_at_the_original_rv() {
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..2)));
    lw.push_list(Err(expired()));
    lw.push_list(list("12", pods(0..6)));
    let listed = ListPager::new(&*lw)
        .with_page_size(2)
        .list(exact("10", None))
        .await
        .unwrap();
    assert_eq!(
        lw.list_requests(),
        [
            exact("10", Some(2)),
            continuation("C1", 2),
            exact("10", None)
        ]
    );
    assert_eq!(
        listed.items.len(),
        6,
        "the first page's items are not kept twice"
    );
    assert_eq!(listed.resource_version, "12");
}

#[tokio::test]
async fn the_retry_is_not_retried() {
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..2)));
    lw.push_list(Err(expired()));
    lw.push_list(Err(expired()));
    lw.push_list(list("12", pods(0..6)));
    let err = ListPager::new(&*lw)
        .with_page_size(2)
        .list(exact("10", None))
        .await
        .unwrap_err();
    assert!(err.is_gone());
    assert_eq!(lw.list_requests().len(), 3);
}

#[tokio::test]
async fn expired_first_page_is_returned() {
    let lw = ScriptedLw::new();
    lw.push_list(Err(expired()));
    let err = ListPager::new(&*lw)
        .list::<Obj>(exact("10", None))
        .await
        .unwrap_err();
    assert!(err.is_gone());
    assert_eq!(lw.list_requests().len(), 1);
}

#[tokio::test]
async fn other_errors_on_a_continuation_are_returned() {
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..2)));
    lw.push_list(Err(api(500, "InternalError")));
    let err = ListPager::new(&*lw)
        .with_page_size(2)
        .list(exact("10", None))
        .await
        .unwrap_err();
    assert_eq!(err.status().unwrap().code, 500);
    assert_eq!(lw.list_requests().len(), 2);
}
