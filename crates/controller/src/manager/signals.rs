//! SIGTERM / SIGINT, as controller-runtime's `SetupSignalHandler`: the first starts a graceful
//! shutdown, a second exits the process at once (exit code 1).

use tokio_util::sync::CancellationToken;

/// Installs the handlers now and cancels `token` on the first signal (controller-runtime's
/// `SetupSignalHandler`); a second signal exits the process. [`Manager::run`](super::Manager::run)
/// does this itself; call it for a token that stops more than one manager, e.g. a sharded
/// replica's. Fails if the handlers cannot be installed.
pub fn cancel_on_signal(token: CancellationToken) -> std::io::Result<()> {
    let mut signals = Signals::install()?;
    tokio::spawn(async move {
        let name = signals.recv().await;
        tracing::info!(
            signal = name,
            "shutting down gracefully; a second signal exits at once"
        );
        token.cancel();
        let name = signals.recv().await;
        tracing::warn!(signal = name, "second signal: exiting now");
        std::process::exit(1);
    });
    Ok(())
}

struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn install() -> std::io::Result<Self> {
        Ok(Signals {})
    }

    /// The next signal's name.
    #[cfg(unix)]
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }

    #[cfg(not(unix))]
    async fn recv(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
