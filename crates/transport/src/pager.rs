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

    /// Lists every page into one list (client-go's `ListPager.List`), with the 410 fallback.
    pub async fn list<K, L: ListerWatcher<K> + ?Sized>(
        &self,
        lister: &L,
        params: &ListParams,
    ) -> Result<PagedList<K>, Error> {
        let mut items = Vec::new();
        let walked = self
            .walk(lister, params, |page| {
                items.extend(page);
                Ok(())
            })
            .await;
        match walked {
            Ok((metadata, paginated)) => Ok(PagedList {
                list: ObjectList { metadata, items },
                paginated,
            }),
            Err(Failed { error, continuing }) => {
                if !(error.is_gone() && continuing && self.full_list_if_expired) {
                    return Err(error);
                }
                tracing::debug!(
                    "list expired between pages; one full list at the original resourceVersion"
                );
                let full = ListParams {
                    limit: None,
                    continue_token: None,
                    ..params.clone()
                };
                Ok(PagedList {
                    list: lister.list(&full).await?,
                    paginated: true,
                })
            }
        }
    }

    /// Lists every page, handing each page's items to `f` before the next page is requested
    /// (client-go's `EachListItem`, which has no 410 fallback: items already handed over cannot
    /// be taken back). Returns the first page's list metadata and whether there were several
    /// pages.
    pub async fn each_page<K, L: ListerWatcher<K> + ?Sized>(
        &self,
        lister: &L,
        params: &ListParams,
        f: impl FnMut(Vec<K>) -> Result<(), Error>,
    ) -> Result<(ListMeta, bool), Error> {
        self.walk(lister, params, f).await.map_err(|f| f.error)
    }

    async fn walk<K, L: ListerWatcher<K> + ?Sized>(
        &self,
        lister: &L,
        params: &ListParams,
        mut f: impl FnMut(Vec<K>) -> Result<(), Error>,
    ) -> Result<(ListMeta, bool), Failed> {
        let mut opts = params.clone();
        if opts.limit.is_none_or(|l| l == 0) {
            opts.limit = Some(self.page_size);
        }
        let mut first: Option<ListMeta> = None;
        let mut paginated = false;
        loop {
            let page = lister.list(&opts).await.map_err(|error| Failed {
                error,
                continuing: paginated,
            })?;
            let next = page.continue_token().map(String::from);
            let meta = first.get_or_insert(page.metadata);
            f(page.items).map_err(|error| Failed {
                error,
                continuing: false,
            })?;
            let Some(token) = next else {
                let mut meta = meta.clone();
                if paginated {
                    meta.continue_ = None;
                    meta.remaining_item_count = None;
                }
                return Ok((meta, paginated));
            };
            // The server rejects a resourceVersion together with a continue token.
            opts.continue_token = Some(token);
            opts.resource_version = None;
            opts.resource_version_match = None;
            paginated = true;
        }
    }
}

/// Why a walk stopped, and whether it was past the first page.
struct Failed {
    error: Error,
    continuing: bool,
}
