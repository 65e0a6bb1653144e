#ifndef BLEBRIDGE_CSIGNALPIPE_H
#define BLEBRIDGE_CSIGNALPIPE_H

// Signals forwarded to a pipe by an async-signal-safe handler (the Gateway module's SignalHub).
// A handler, unlike a libdispatch signal source, is in place the moment sigaction returns, and
// runs on whichever thread the kernel picks: no signal is ignored or lost in between.

// Makes the pipe (close-on-exec; the write end non-blocking: a full pipe drops the byte rather
// than block the handler) and returns its read end, or -1 with errno set. Called once, before the
// first `blebridge_signal_forward`.
int blebridge_signal_pipe_open(void);

// Installs the forwarding handler for `signo` (SA_RESTART). Returns 0, or the errno of sigaction.
int blebridge_signal_forward(int signo);

#endif
