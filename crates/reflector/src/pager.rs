//! Lists a whole collection page by page (client-go's `tools/pager.ListPager`).

use std::sync::Arc;

use kcache_core::{Error, ListParams, ListerWatcher};

/// client-go's `defaultPageSize`.
pub const DEFAULT_PAGE_SIZE: i64 = 500;

/// A complete list: every item, wrapped once in an `Arc`, and the list's resourceVersion.
#[derive(Debug)]
pub struct PagedList<K> {
    /// Every item of every page, in order.
    pub items: Vec<Arc<K>>,
    /// The resourceVersion of the first page, which the continuation pages share.
    pub resource_version: String,
    /// Whether the server split the list into pages (a list at "0" that comes back paginated
    /// means the watch cache is off).
    pub paginated: bool,
}

/// Lists through a [`ListerWatcher`] one page at a time, mirroring `ListPager.List`.
///
/// Continuation pages send `continue` and drop `resourceVersion`/`resourceVersionMatch`. A 410
/// on a continuation page (the snapshot the token points into was compacted) is answered with
/// exactly one unpaginated list at the original resourceVersion; a 410 on the first page is
/// returned. Items move out of each decoded page into the result as `Arc`s, so the peak memory
/// of a list is one copy of the data plus the page being decoded — pages are never re-buffered.
#[derive(Debug)]
pub struct ListPager<'a, L> {
    lister: &'a L,
    page_size: i64,
}

impl<'a, L> ListPager<'a, L> {
    /// A pager with client-go's default page size (500).
    pub fn new(lister: &'a L) -> Self {
        ListPager {
            lister,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }

    /// Sets the page size used when the params carry no `limit`; 0 asks for everything at once.
    pub fn with_page_size(mut self, page_size: i64) -> Self {
        self.page_size = page_size;
        self
    }

    /// Lists everything `params` select.
    pub async fn list<K>(&self, mut params: ListParams) -> Result<PagedList<K>, Error>
    where
        L: ListerWatcher<K>,
    {
        if params.limit.is_none_or(|l| l == 0) {
            params.limit = Some(self.page_size).filter(|l| *l > 0);
        }
        let requested_rv = params.resource_version.clone();
        let requested_match = params.resource_version_match;
        let mut out = PagedList {
            items: Vec::new(),
            resource_version: String::new(),
            paginated: false,
        };
        loop {
            let page = match self.lister.list(&params).await {
                Ok(page) => page,
                Err(e) if e.is_gone() && params.continue_token.is_some() => {
                    // Free what the broken snapshot gave us before asking for all of it again.
                    drop(std::mem::take(&mut out.items));
                    params.limit = None;
                    params.continue_token = None;
                    params.resource_version = requested_rv;
                    params.resource_version_match = requested_match;
                    let page = self.lister.list(&params).await?;
                    out.resource_version = page.resource_version().to_string();
                    out.items = page.items.into_iter().map(Arc::new).collect();
                    return Ok(out);
                }
                Err(e) => return Err(e),
            };
            if params.continue_token.is_none() {
                out.resource_version = page.resource_version().to_string();
            }
            let next = page.continue_token().map(str::to_string);
            out.items.reserve(page.items.len());
            out.items.extend(page.items.into_iter().map(Arc::new));
            match next {
                None => return Ok(out),
                Some(token) => {
                    params.continue_token = Some(token);
                    params.resource_version = None;
                    params.resource_version_match = None;
                    out.paginated = true;
                }
            }
        }
    }
}
