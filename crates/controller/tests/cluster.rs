//! Against kcache-testserver.
