//! Lists a whole collection page by page (client-go's `tools/pager`), over any [`ListerWatcher`].
//!
//! It lives in core because it needs only the [`ListerWatcher`] trait: the reflector lists
//! through it, and the transport re-exports it for users who page an `Api` themselves.

use std::future::Future;
use std::sync::Arc;

use crate::{Error, ListMeta, ListParams, ListerWatcher, ObjectList};

/// client-go's `pager.defaultPageSize`.
pub const DEFAULT_PAGE_SIZE: i64 = 500;

/// Lists every page of a collection (client-go's `pager.ListPager`).
///
/// - The params' `limit` wins; when it is unset (or 0) the pager sends `limit=page_size`. A
///   `page_size` of 0 (or less) sends no limit: one unpaginated request, as client-go's
///   `PageSize: 0` (what the reflector asks for when the watch cache can serve a list whole).
/// - Continuation pages send `continue` and drop `resourceVersion` and `resourceVersionMatch`,
///   which the server rejects together with a continue token; selectors are kept.
/// - A 410 Expired on a continuation page (the snapshot the token points into was compacted)
///   falls back, when `full_list_if_expired` is set, to exactly one unpaginated list at the
///   original resourceVersion and match; a 410 on the first page, or on that retry, is returned.
///
/// Pages are requested one after the other; cancel a listing by dropping its future.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListPager {
    /// Items per page when the params set no limit (client-go's `PageSize`); 0: no paging.
    pub page_size: i64,
    /// Whether a 410 on a continuation page falls back to a full list (client-go's
    /// `FullListIfExpired`, true by default as `pager.New` sets it).
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

/// What [`ListPager::list`] returns: every item, and whether the server split the list.
#[derive(Debug, Clone, PartialEq)]
pub struct PagedList<T> {
    /// Every item of every page, in order. A single page is returned as the server sent it;
    /// pages put together carry the first page's resourceVersion and no continue token.
    pub list: ObjectList<T>,
    /// Whether more than one page was requested (client-go's `paginatedResult`). A list at
    /// "0" that comes back paginated tells the reflector the watch cache is off.
    pub paginated: bool,
}

impl ListPager {
    /// A pager with this page size (0: no paging) and the 410 fallback on.
    pub fn new(page_size: i64) -> Self {
        ListPager {
            page_size,
            ..ListPager::default()
        }
    }

    /// Lists everything `params` select into one list (client-go's `ListPager.List`).
    pub async fn list<K, L>(&self, lister: &L, params: &ListParams) -> Result<PagedList<K>, Error>
    where
        L: ListerWatcher<K> + ?Sized,
    {
        self.list_mapped(lister, params, |item| item).await
    }

    /// [`ListPager::list`], passing each item through `map` as its page arrives: items move out
    /// of each page once, so a list's peak memory is one copy of the data plus a page.
    pub async fn list_mapped<K, T, L>(
        &self,
        lister: &L,
        params: &ListParams,
        map: impl FnMut(K) -> T,
    ) -> Result<PagedList<T>, Error>
    where
        L: ListerWatcher<K> + ?Sized,
    {
        let fetch = move |p: ListParams| async move { lister.list(&p).await };
        self.gather(params, fetch, map).await
    }

    /// [`ListPager::list`] with each item in an `Arc`, as a cache keeps them, through
    /// [`ListerWatcher::list_shared`] (the reflector lists with this): a source that decodes
    /// items wraps each as it decodes it, and no page is held as `Vec<K>` besides.
    pub async fn list_shared<K, L>(
        &self,
        lister: &L,
        params: &ListParams,
    ) -> Result<PagedList<Arc<K>>, Error>
    where
        L: ListerWatcher<K> + ?Sized,
        K: Send + Sync,
    {
        let fetch = move |p: ListParams| async move { lister.list_shared(&p).await };
        self.gather(params, fetch, |item| item).await
    }

    /// Every page `fetch` returns, each item through `map`, with the 410 fallback.
    async fn gather<S, T, F, Fut>(
        &self,
        params: &ListParams,
        mut fetch: F,
        mut map: impl FnMut(S) -> T,
    ) -> Result<PagedList<T>, Error>
    where
        F: FnMut(ListParams) -> Fut,
        Fut: Future<Output = Result<ObjectList<S>, Error>>,
    {
        let mut items = Vec::new();
        let walked = self
            .walk(params, &mut fetch, |page: ObjectList<S>| {
                items.reserve(page.items.len());
                items.extend(page.items.into_iter().map(&mut map));
                Ok::<_, Error>(())
            })
            .await;
        match walked {
            Ok(Walked::One(metadata)) => Ok(PagedList {
                list: ObjectList { metadata, items },
                paginated: false,
            }),
            Ok(Walked::Several(mut metadata)) => {
                metadata.continue_ = None;
                metadata.remaining_item_count = None;
                Ok(PagedList {
                    list: ObjectList { metadata, items },
                    paginated: true,
                })
            }
            Err(Stopped::Listing { error, continuing })
                if continuing && error.is_gone() && self.full_list_if_expired =>
            {
                // Free what the broken snapshot gave us before asking for all of it again.
                drop(items);
                let full = ListParams {
                    limit: None,
                    continue_token: None,
                    ..params.clone()
                };
                let list = fetch(full).await?;
                Ok(PagedList {
                    list: ObjectList {
                        metadata: list.metadata,
                        items: list.items.into_iter().map(map).collect(),
                    },
                    paginated: true,
                })
            }
            Err(Stopped::Listing { error, .. } | Stopped::Callback(error)) => Err(error),
        }
    }

    /// Calls `f` on every item, page by page, each page's items before the next page is
    /// requested (client-go's `EachListItem`).
    ///
    /// Stops at the first error, from `f` or from a list call. There is no 410 fallback: items
    /// already handed to `f` cannot be taken back, so a continuation that expired is returned
    /// (`is_gone()`), as client-go's does. `E` is the caller's error type; kcache's [`Error`]
    /// converts into it.
    pub async fn each_list_item<K, L, E>(
        &self,
        lister: &L,
        params: &ListParams,
        mut f: impl FnMut(K) -> Result<(), E>,
    ) -> Result<(), E>
    where
        L: ListerWatcher<K> + ?Sized,
        E: From<Error>,
    {
        let mut fetch = move |p: ListParams| async move { lister.list(&p).await };
        let walked = self
            .walk(params, &mut fetch, |page: ObjectList<K>| {
                page.items.into_iter().try_for_each(&mut f)
            })
            .await;
        match walked {
            Ok(_) => Ok(()),
            Err(Stopped::Listing { error, .. }) => Err(error.into()),
            Err(Stopped::Callback(error)) => Err(error),
        }
    }

    /// Requests every page in turn through `fetch` and hands each to `f`.
    async fn walk<K, F, Fut, E>(
        &self,
        params: &ListParams,
        fetch: &mut F,
        mut f: impl FnMut(ObjectList<K>) -> Result<(), E>,
    ) -> Result<Walked, Stopped<E>>
    where
        F: FnMut(ListParams) -> Fut,
        Fut: Future<Output = Result<ObjectList<K>, Error>>,
    {
        let mut opts = params.clone();
        if opts.limit.is_none_or(|l| l == 0) {
            opts.limit = Some(self.page_size).filter(|size| *size > 0);
        }
        let mut first: Option<ListMeta> = None;
        loop {
            let continuing = first.is_some();
            let page = fetch(opts.clone())
                .await
                .map_err(|error| Stopped::Listing { error, continuing })?;
            let next = page.continue_token().map(String::from);
            let meta = first.take().unwrap_or_else(|| page.metadata.clone());
            f(page).map_err(Stopped::Callback)?;
            let Some(token) = next else {
                return Ok(if continuing {
                    Walked::Several(meta)
                } else {
                    Walked::One(meta)
                });
            };
            first = Some(meta);
            opts.continue_token = Some(token);
            opts.resource_version = None;
            opts.resource_version_match = None;
        }
    }
}

/// How many pages a walk took, with the first page's list metadata.
enum Walked {
    One(ListMeta),
    Several(ListMeta),
}

/// Why a walk stopped.
enum Stopped<E> {
    /// A list call failed, on a continuation page if `continuing`.
    Listing { error: Error, continuing: bool },
    /// The callback returned an error.
    Callback(E),
}
