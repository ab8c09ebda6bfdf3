package io.quarkiverse.mysqllock.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * <p>
 * <b>A rolling migration</b> from another provider, such as ShedLock's {@code JdbcLockProvider}: while old instances
 * still run it, {@link #alsoTaking(LockManager, LockProvider)} makes the new ones take the old provider's lock too,
 * after their own, so that old and new instances exclude each other. Once no old instance runs, drop it.
 */
public final class MySqlLockProvider implements LockProvider, AutoCloseable {

    private final LockManager locks;
    /** The provider of the instances not yet migrated, whose lock is taken too; null when there is none. */
    private final LockProvider previous;
    /** Set by {@link #close()}: the ends run now are a shutdown's, not {@code lockAtMostFor}'s. */
    private volatile boolean closing;
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
        this(locks, null);
    }

    private MySqlLockProvider(LockManager locks, LockProvider previous) {
        if (locks == null) {
            throw new IllegalArgumentException("MySqlLockProvider needs the LockManager to take its locks from");
        }
        this.locks = locks;
        this.previous = previous;
        ends.setRemoveOnCancelPolicy(true);
    }

    /**
     * For a rolling deploy away from another ShedLock provider: a provider that takes each lock from the
     * {@link LockManager} and then from {@code previous} too (the provider the instances not yet migrated still use,
     * on the same store: ShedLock's {@code JdbcLockProvider} on their {@code shedlock} table, say). A name the old
     * instances hold is refused, and the lock just taken is given back; a name the new instances hold is held in the
     * old store too, so the old instances skip it. Unlocking gives the old lock back first (with its own
     * {@code lockAtLeastFor}), then this one; an {@code extend} extends both. At {@code lockAtMostFor} the old lock is
     * left to expire in its store, never unlocked late: an old instance may hold it again by then. Once every instance
     * runs the new version, deploy once more with {@link #MySqlLockProvider(LockManager)}.
     *
     * @param previous the old provider, on the store the old instances use: one instance for the application's life
     *        (ShedLock's JDBC provider remembers which rows it created)
     */
    public static MySqlLockProvider alsoTaking(LockManager locks, LockProvider previous) {
        if (previous == null) {
            throw new IllegalArgumentException("MySqlLockProvider.alsoTaking needs the provider the instances not yet"
                    + " migrated use (ShedLock's JdbcLockProvider on their table, say); for no such provider, use"
                    + " new MySqlLockProvider(locks)");
        }
        if (previous instanceof MySqlLockProvider) {
            throw new IllegalArgumentException("MySqlLockProvider.alsoTaking takes the provider of the instances not"
                    + " yet migrated, not another MySqlLockProvider");
        }
        return new MySqlLockProvider(locks, previous);
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Duration atMostFor = configuration.getLockAtMostFor();
        LockOptions options = LockOptions.waitingUpTo(Duration.ZERO).withoutNesting();
        if (locks.mode() == LockMode.LEASE) {
            options = options.holdingAtMost(leaseLength(atMostFor));
        }
        Optional<LockHandle> taken = locks.tryAcquire(configuration.getName(), options);
        if (taken.isEmpty()) {
            return Optional.empty();
        }
        Optional<SimpleLock> old;
        try {
            old = previous == null ? Optional.empty() : previous.lock(configuration);
        } catch (RuntimeException | Error e) {
            taken.get().release();
            throw e;
        }
        if (previous != null && old.isEmpty()) {
            taken.get().release(); // an instance not yet migrated holds it
            return Optional.empty();
        }
        return Optional.of(held(taken.get(), old.orElse(null), configuration));
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
    private Held held(LockHandle handle, SimpleLock old, LockConfiguration configuration) {
        try {
            return new Held(handle, old, configuration);
        } catch (RejectedExecutionException closed) {
            if (old != null) {
                old.unlock();
            }
            handle.release();
            throw new IllegalStateException("MySqlLockProvider is closed: lock '" + configuration.getName()
                    + "' was not taken", closed);
        }
    }

    /** Ends every lock still held at once, and those kept for their {@code lockAtLeastFor}. */
    @Override
    public void close() {
        closing = true;
        ends.shutdownNow().forEach(Runnable::run);
    }

    /**
     * A lock taken through ShedLock: ended at its {@code lockAtMostFor}, or by {@code unlock()}, then at once or once its
     * {@code lockAtLeastFor} has passed, whichever comes first.
     */
    private final class Held extends AbstractSimpleLock {

        private final LockHandle handle;
        /** The lock of the old provider ({@link #alsoTaking}), or null. */
        private final SimpleLock old;
        private final AtomicBoolean oldUnlocked = new AtomicBoolean();
        private final long atLeastUntil;
        private final ScheduledFuture<?> end;

        Held(LockHandle handle, SimpleLock old, LockConfiguration configuration) {
            super(configuration);
            this.handle = handle;
            this.old = old;
            long now = System.nanoTime();
            this.atLeastUntil = now + centuryAtMost(configuration.getLockAtLeastFor()).toNanos();
            this.end = ends.schedule(this::end, centuryAtMost(configuration.getLockAtMostFor()).toNanos(),
                    TimeUnit.NANOSECONDS);
        }

        /**
         * At {@code lockAtMostFor} this lock ends; the old provider's row expires by itself then, and is left alone: an
         * old instance whose clock runs ahead may hold it again already, and ShedLock's unlock would end its lock. When
         * the provider closes first (a graceful shutdown), both end at once.
         */
        private void end() {
            if (closing) {
                unlockOld();
            }
            handle.release();
        }

        /** The old provider's lock, given back once: its store keeps it for its own lockAtLeastFor. */
        private void unlockOld() {
            if (old != null && oldUnlocked.compareAndSet(false, true)) {
                old.unlock();
            }
        }

        @Override
        protected void doUnlock() {
            if (!end.cancel(false)) {
                return; // ended at its lockAtMostFor already, the old row expired with it
            }
            unlockOld();
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
            if (!handle.isValid() || !extendLease(extended.getLockAtMostFor())) {
                return Optional.empty();
            }
            Optional<SimpleLock> oldExtended = old == null ? Optional.empty()
                    : old.extend(extended.getLockAtMostFor(), extended.getLockAtLeastFor());
            if (old != null && oldExtended.isEmpty()) {
                return Optional.empty();
            }
            if (!end.cancel(false)) {
                oldExtended.ifPresent(SimpleLock::unlock); // ended at its lockAtMostFor meanwhile
                return Optional.empty();
            }
            try {
                return Optional.of(new Held(handle, oldExtended.orElse(null), extended));
            } catch (RejectedExecutionException closed) {
                oldExtended.ifPresent(SimpleLock::unlock);
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
