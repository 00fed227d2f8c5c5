//! Paginated lists (client-go's `tools/pager.ListPager`), over any `ListerWatcher`.

use kcache_core::{Error, ListMeta, ListParams, ListerWatcher, ObjectList};

/// client-go's `pager.defaultPageSize`.
pub const DEFAULT_PAGE_SIZE: i64 = 500;

/// Lists every page of a collection.
///
/// Continuation pages send `continue` and drop resourceVersion and resourceVersionMatch (the
/// server rejects them together). A 410 Gone on a continuation page — the snapshot the first
/// page was served from was compacted — falls back to exactly one unpaginated list at the
/// original resourceVersion; a 410 on the first page is returned as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListPager {
    /// Items per page when the params set no limit.
    pub page_size: i64,
    /// Whether a 410 on a continuation page falls back to a full list (client-go's
    /// `FullListIfExpired`, true by default).
    pub full_list_if_expired: bool,
}

impl Default for ListPager {
    fn default() -> Self {
        ListPager {
            page_size: DEFAULT_PAGE_SIZE,
            full_list_if_expired: true,
        }
    }
}

/// The result of [`ListPager::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct PagedList<K> {
    /// Every item, with the first page's resourceVersion.
    pub list: ObjectList<K>,
    /// Whether more than one page was read (client-go's `paginatedResult`).
    pub paginated: bool,
}

impl ListPager {
    /// A pager with this page size.
    pub fn new(page_size: i64) -> Self {
        ListPager {
            page_size,
            ..ListPager::default()
        }
    }

    /// Lists every page into one list.
    pub async fn list<K, L: ListerWatcher<K> + ?Sized>(
        &self,
        lister: &L,
        params: &ListParams,
    ) -> Result<PagedList<K>, Error> {
        let mut items = Vec::new();
        let (metadata, paginated) = self
            .each_page(lister, params, |page| {
                items.extend(page);
                Ok(())
            })
            .await?;
        Ok(PagedList {
            list: ObjectList { metadata, items },
            paginated,
        })
    }

    /// Lists every page, handing each page's items to `f` before the next page is requested
    /// (client-go's `EachListItem` without the prefetch). Returns the first page's list
    /// metadata (continue cleared) and whether the result was paginated.
    pub async fn each_page<K, L: ListerWatcher<K> + ?Sized>(
        &self,
        lister: &L,
        params: &ListParams,
        mut f: impl FnMut(Vec<K>) -> Result<(), Error>,
    ) -> Result<(ListMeta, bool), Error> {
        let mut opts = params.clone();
        if opts.limit.is_none_or(|l| l == 0) {
            opts.limit = Some(self.page_size);
        }
        let mut first: Option<ListMeta> = None;
        let mut paginated = false;
        loop {
            let page = match lister.list(&opts).await {
                Ok(page) => page,
                Err(e) => {
                    let continuing = opts.continue_token.as_deref().is_some_and(|c| !c.is_empty());
                    if !(e.is_gone() && self.full_list_if_expired && continuing) {
                        return Err(e);
                    }
                    tracing::debug!("list expired between pages; one full list at the original resourceVersion");
                    let full = ListParams {
                        limit: None,
                        continue_token: None,
                        resource_version: params.resource_version.clone(),
                        resource_version_match: params.resource_version_match,
                        ..opts
                    };
                    let page = lister.list(&full).await?;
                    f(page.items)?;
                    return Ok((page.metadata, paginated));
                }
            };
            let next = page.continue_token().map(String::from);
            let meta = first.get_or_insert(page.metadata);
            f(page.items)?;
            let Some(token) = next else {
                let mut meta = meta.clone();
                if paginated {
                    meta.continue_ = None;
                    meta.remaining_item_count = None;
                }
                return Ok((meta, paginated));
            };
            opts.continue_token = Some(token);
            opts.resource_version = None;
            opts.resource_version_match = None;
            paginated = true;
        }
    }
}
