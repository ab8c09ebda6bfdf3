package io.quarkiverse.mysqllock.runtime.named;

import java.time.Instant;

import io.quarkiverse.mysqllock.runtime.HeldLock;

/** One lock the server granted to one pinned session. Its counters are guarded by the session's mutex. */
final class NamedLock extends HeldLock {

    final PinnedSession session;

    /** Nested holds not yet released; guarded by the session mutex. */
    int holds = 1;
    /** 0 until a holder asks for it; guarded by the session mutex. */
    long fence;

    NamedLock(String name, String serverName, PinnedSession session, Thread owner, Instant since) {
        super(name, serverName, owner, since);
        this.session = session;
    }
}
