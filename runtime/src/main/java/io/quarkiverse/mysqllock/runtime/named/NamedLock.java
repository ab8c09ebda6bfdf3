package io.quarkiverse.mysqllock.runtime.named;

import java.time.Instant;
import java.util.concurrent.locks.ReentrantLock;

import io.quarkiverse.mysqllock.runtime.engine.GrantedLock;

/** One lock the server granted to one pinned session. Its counters are guarded by the session's mutex. */
final class NamedLock extends GrantedLock {

    final PinnedSession session;

    /** Nested holds not yet released; guarded by the session mutex. */
    int holds = 1;
    /** 0 until a holder asks for it; written under {@link #fenceIssue}. */
    volatile long fence;
    /** Lets one caller at a time issue the fence: the others then read it. */
    final ReentrantLock fenceIssue = new ReentrantLock();

    NamedLock(String name, String serverName, PinnedSession session, Instant since) {
        super(name, serverName, since);
        this.session = session;
    }
}
