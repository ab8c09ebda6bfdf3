package io.quarkiverse.mysqllock.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockOptions;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link LockProvider} backed by the extension's {@link LockManager}: applications that annotate their jobs
 * with {@code @SchedulerLock} switch to the NAMED or LEASE engine by producing this one bean.
 *
 * <pre>
 * &#64;Produces
 * &#64;Singleton
 * MySqlLockProvider lockProvider(LockManager locks) {
 *     return new MySqlLockProvider(locks);
 * }
 *
 * void close(&#64;Disposes MySqlLockProvider provider) {
 *     provider.close(); // ends the locks still held at shutdown
 * }
 * </pre>
 *
 * ShedLock's contract for providers, as the extension keeps it:
 * <ul>
 * <li>One attempt, no wait; a name held anywhere (this thread included: ShedLock's locks are not re-entrant) gives
 * {@link Optional#empty()}.</li>
 * <li>{@code lockAtMostFor} ends the lock even if it is never unlocked: the holder's process ends it then, and on the
 * LEASE engine the lease itself lasts that long unrenewed (at least {@link LockOptions#MIN_AT_MOST_FOR}), so a crashed
 * holder's lock ends then too. A crashed holder's NAMED lock ends at once, with its server session.</li>
 * <li>{@code lockAtLeastFor} keeps the lock after {@code unlock()} until that long after it was taken (or extended).</li>
 * <li>{@link SimpleLock#extend}: a new {@code lockAtMostFor} from now; on the LEASE engine the lease's end moves on the
 * server too ({@link LockHandle#extend}), so a holder that dies after extending keeps the lock until then. A lock
 * already lost, or a database that cannot be reached, answers empty (ShedLock then throws
 * {@code LockCanNotBeExtendedException}).</li>
 * </ul>
 * Beyond ShedLock's JDBC provider: the lock table's time is the server's (no application clock), the NAMED engine
 * needs no table and hands over at once, and a lost lock is reported by the extension's loss notification and logs.
 */
public final class MySqlLockProvider implements LockProvider, AutoCloseable {

    private final LockManager locks;
    /**
     * Ends locks at their {@code lockAtMostFor}, and after their {@code lockAtLeastFor}; one daemon thread. An end
     * cancelled by {@code unlock()} leaves the queue at once (a job every second with an hour's lockAtMostFor would
     * otherwise keep 3,600 of them).
     */
    private final ScheduledThreadPoolExecutor ends = new ScheduledThreadPoolExecutor(1, task -> {
        Thread thread = new Thread(task, "mysql-lock-shedlock-at-most-for");
        thread.setDaemon(true);
        return thread;
    });

    public MySqlLockProvider(LockManager locks) {
        if (locks == null) {
            throw new IllegalArgumentException("MySqlLockProvider needs the LockManager to take its locks from");
        }
        this.locks = locks;
        ends.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Duration atMostFor = configuration.getLockAtMostFor();
        LockOptions options = LockOptions.waitingUpTo(Duration.ZERO).withoutNesting();
        if (locks.mode() == LockMode.LEASE) {
            options = options.holdingAtMost(leaseLength(atMostFor));
        }
        return locks.tryAcquire(configuration.getName(), options).map(handle -> held(handle, configuration));
    }

    /** A lease lasts {@code lockAtMostFor}, and at least as long as a lease can be. */
    private static Duration leaseLength(Duration atMostFor) {
        return atMostFor.compareTo(LockOptions.MIN_AT_MOST_FOR) < 0 ? LockOptions.MIN_AT_MOST_FOR : centuryAtMost(atMostFor);
    }

    /** ShedLock accepts lengths of any size: one beyond a century ("for ever") is held as a century. */
    private static Duration centuryAtMost(Duration length) {
        return length.compareTo(LockOptions.MAX_AT_MOST_FOR) > 0 ? LockOptions.MAX_AT_MOST_FOR : length;
    }

    /** The lock, with its end scheduled; released at once if it cannot be (the provider is closed). */
    private Held held(LockHandle handle, LockConfiguration configuration) {
        try {
            return new Held(handle, configuration);
        } catch (RejectedExecutionException closed) {
            handle.release();
            throw new IllegalStateException("MySqlLockProvider is closed: lock '" + configuration.getName()
                    + "' was not taken", closed);
        }
    }

    /** Ends every lock still held at once, and those kept for their {@code lockAtLeastFor}. */
    @Override
    public void close() {
        ends.shutdownNow().forEach(Runnable::run);
    }

    /**
     * A lock taken through ShedLock: ended at its {@code lockAtMostFor}, or by {@code unlock()}, then at once or once its
     * {@code lockAtLeastFor} has passed, whichever comes first.
     */
    private final class Held extends AbstractSimpleLock {

        private final LockHandle handle;
        private final long atLeastUntil;
        private final ScheduledFuture<?> end;

        Held(LockHandle handle, LockConfiguration configuration) {
            super(configuration);
            this.handle = handle;
            long now = System.nanoTime();
            this.atLeastUntil = now + centuryAtMost(configuration.getLockAtLeastFor()).toNanos();
            this.end = ends.schedule(handle::release, centuryAtMost(configuration.getLockAtMostFor()).toNanos(),
                    TimeUnit.NANOSECONDS);
        }

        @Override
        protected void doUnlock() {
            if (!end.cancel(false)) {
                return; // ended at its lockAtMostFor already
            }
            long remaining = atLeastUntil - System.nanoTime();
            if (remaining <= 0) {
                handle.release();
                return;
            }
            try {
                ends.schedule(handle::release, remaining, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                handle.release();
            }
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration extended) {
            if (!handle.isValid() || !extendLease(extended.getLockAtMostFor()) || !end.cancel(false)) {
                return Optional.empty();
            }
            try {
                return Optional.of(new Held(handle, extended));
            } catch (RejectedExecutionException closed) {
                handle.release(); // this lock is no longer valid for ShedLock either: nobody could end it
                return Optional.empty();
            }
        }

        /** Moves a LEASE's end on the server (a NAMED lock has none: nothing to do); false if it could not be. */
        private boolean extendLease(Duration atMostFor) {
            try {
                return handle.extend(leaseLength(atMostFor));
            } catch (LockLostException | IllegalStateException gone) {
                return false;
            } catch (IllegalArgumentException tooShort) {
                // no longer than the holder's loss margin (never with MIN_AT_MOST_FOR): it would count as lost at once
                return false;
            }
        }
    }
}
