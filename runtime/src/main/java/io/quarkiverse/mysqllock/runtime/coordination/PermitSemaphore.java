package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.smallrye.mutiny.Uni;

/**
 * A semaphore as {@code permits} locks of the public API, one per permit, none of them nested onto by the thread that
 * holds it: a round of single attempts from a random permit (so that callers spread over the permits), then a wait on
 * one permit, which is the engine's own wait (a server-side {@code GET_LOCK} wait on NAMED), for a growing pause. The
 * number of permits is the fleet's ({@link PermitCounts}), read at each acquisition.
 */
public final class PermitSemaphore implements DistributedSemaphore {

    static final long FIRST_PAUSE_NANOS = Duration.ofMillis(20).toNanos();
    static final long MAX_PAUSE_NANOS = Duration.ofMillis(500).toNanos();
    private static final LockOptions ONE_ATTEMPT = LockOptions.waitingUpTo(Duration.ZERO).withoutNesting();

    private final LockManager locks;
    /** Releases, at once, the permits an acquisition takes short of its count. */
    private final Consumer<LockHandle> giveBack;
    private final String name;
    /** The number this instance's caller asked for: stored for the fleet if none is yet. */
    private final int proposed;
    private final PermitCounts counts;
    /** Whose number this semaphore's is: its own, or the read-write lock's whose readers it counts. */
    private final String countedAs;
    private final PermitCounts.Kind kind;
    private final Function<Supplier<LockHandle>, Uni<LockHandle>> async;

    /**
     * The name must have been checked by the caller; the count is checked here.
     *
     * @param permits the number this caller asks for, used where the fleet has none stored yet
     * @param async runs a blocking acquisition on a worker thread, giving back a handle its subscriber no longer wants
     */
    public PermitSemaphore(LockManager locks, Consumer<LockHandle> giveBack, String name, int permits,
            PermitCounts counts, Function<Supplier<LockHandle>, Uni<LockHandle>> async) {
        this(locks, giveBack, name, permits, counts, name, PermitCounts.Kind.PERMITS, async);
    }

    /** The read permits of a read-write lock: its number of readers, kept apart from any semaphore's. */
    static PermitSemaphore readersOf(LockManager locks, Consumer<LockHandle> giveBack, String readWriteLock,
            PermitCounts counts,
            Function<Supplier<LockHandle>, Uni<LockHandle>> async) {
        return new PermitSemaphore(locks, giveBack, readWriteLock + "#rw-read", DistributedReadWriteLock.DEFAULT_MAX_READERS,
                counts, readWriteLock, PermitCounts.Kind.READERS, async);
    }

    private PermitSemaphore(LockManager locks, Consumer<LockHandle> giveBack, String name, int permits,
            PermitCounts counts, String countedAs, PermitCounts.Kind kind,
            Function<Supplier<LockHandle>, Uni<LockHandle>> async) {
        this.giveBack = giveBack;
        this.async = async;
        checkPermits(name, permits);
        this.locks = locks;
        this.name = name;
        this.proposed = permits;
        this.counts = counts;
        this.countedAs = countedAs;
        this.kind = kind;
    }

    private static void checkPermits(String name, int permits) {
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("Semaphore '" + name + "' needs between 1 and " + MAX_PERMITS
                    + " permits, not " + permits);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return counts.permits(countedAs, kind, proposed);
    }

    /** Stores a new number for the fleet (readers: never a lower one): the number stored afterwards. */
    int change(int permits) {
        checkPermits(name, permits);
        return counts.change(countedAs, kind, permits);
    }

    @Override
    public void changePermits(int permits) {
        change(permits);
    }

    /**
     * The lock of each permit, as many as the fleet's number now; for an acquisition, which fails as one does when the
     * number cannot be read ({@code DATABASE_ERROR}; {@code POOL_EXHAUSTED} without a connection to read it with).
     */
    List<String> permitNames() {
        long start = System.nanoTime();
        try {
            return permitNames(permits());
        } catch (PermitCounts.Unreadable e) {
            throw new LockNotAcquiredException(name, Duration.ofNanos(System.nanoTime() - start),
                    LockNotAcquiredException.Reason.DATABASE_ERROR, null, "Could not acquire '" + name + "': "
                            + e.getMessage(),
                    e);
        }
    }

    private List<String> permitNames(int permits) {
        return IntStream.range(0, permits).mapToObj(i -> name + "#permit-" + i).toList();
    }

    @Override
    public LockHandle acquire(Duration wait) {
        long start = System.nanoTime();
        long deadline = Waits.deadline("semaphore " + name, wait);
        List<String> permitNames = permitNames();
        return tryAcquire(permitNames, deadline).orElseThrow(() -> busy(name, start, "all " + permitNames.size()
                + " permits of semaphore '" + name + "' are held"));
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration wait) {
        long deadline = Waits.deadline("semaphore " + name, wait);
        return tryAcquire(permitNames(), deadline);
    }

    private Optional<LockHandle> tryAcquire(List<String> permitNames, long deadline) {
        int permits = permitNames.size();
        int first = ThreadLocalRandom.current().nextInt(permits);
        long pause = FIRST_PAUSE_NANOS;
        for (int round = 0;; round++) {
            for (int i = 0; i < permits; i++) {
                Optional<LockHandle> permit = locks.tryAcquire(permitNames.get((first + i) % permits), ONE_ATTEMPT);
                if (permit.isPresent()) {
                    return permit;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            Optional<LockHandle> watched = locks.tryAcquire(permitNames.get((first + round) % permits),
                    LockOptions.waitingUpTo(Duration.ofNanos(Math.min(left, pause))).withoutNesting());
            if (watched.isPresent()) {
                return watched;
            }
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }

    /** The permits taken short of the count, given back last taken first. */
    private void giveBackInReverse(List<LockHandle> taken) {
        CompositeHandle.releaseInReverse(taken, hold -> {
            giveBack.accept(hold);
            return null;
        });
    }

    @Override
    public Uni<LockHandle> acquireAsync(Duration wait) {
        Waits.deadline("semaphore " + name, wait); // a bad wait is refused now
        return async.apply(() -> acquire(wait));
    }

    /** A count outside 1 to {@link #MAX_PERMITS} is refused now; above the fleet's number, when it is read. */
    @Override
    public Uni<LockHandle> acquireAsync(int count, Duration wait) {
        checkCount(count, MAX_PERMITS);
        Waits.deadline("semaphore " + name, wait);
        return async.apply(() -> acquire(count, wait));
    }

    private void checkCount(int count, int permits) {
        if (count < 1 || count > permits) {
            throw new IllegalArgumentException("Semaphore '" + name + "' has " + permits + " permits: ask for 1 to "
                    + permits + ", not " + count);
        }
    }

    @Override
    public LockHandle acquire(int count, Duration wait) {
        long start = System.nanoTime();
        return tryAcquire(count, wait).orElseThrow(() -> busy(name, start, count
                + " permits of semaphore '" + name + "' were never free at once"));
    }

    @Override
    public Optional<LockHandle> tryAcquire(int count, Duration wait) {
        long deadline = Waits.deadline("semaphore " + name, wait);
        List<String> permitNames = permitNames();
        int permits = permitNames.size();
        checkCount(count, permits);
        if (count == 1) {
            return tryAcquire(permitNames, deadline);
        }
        long start = System.nanoTime();
        long pause = FIRST_PAUSE_NANOS;
        while (true) {
            // one attempt at each permit from a random one; all or none: never keep some while waiting for the others
            List<LockHandle> taken = new ArrayList<>(count);
            int first = ThreadLocalRandom.current().nextInt(permits);
            try {
                for (int i = 0; i < permits && taken.size() < count; i++) {
                    locks.tryAcquire(permitNames.get((first + i) % permits), ONE_ATTEMPT).ifPresent(taken::add);
                }
            } catch (RuntimeException | Error e) {
                giveBackInReverse(taken);
                throw e;
            }
            if (taken.size() == count) {
                return Optional.of(new Permits(name, taken));
            }
            giveBackInReverse(taken);
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            // jittered, so that callers competing for several permits do not retry in step for ever
            long jittered = pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
            Waits.pause(name, start, Math.min(left, jittered));
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }

    /** Several permits of one semaphore, held as one. */
    private static final class Permits extends CompositeHandle {
        private final String name;

        Permits(String name, List<LockHandle> permits) {
            super(permits);
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        /** @throws UnsupportedOperationException always: each permit has a fencing token of its own */
        @Override
        public long fencingToken() {
            throw new UnsupportedOperationException("This handle holds " + holds().size() + " permits of semaphore '"
                    + name + "', each with a fencing token of its own: ask each of parts() for its token");
        }

        @Override
        public List<LockHandle> parts() {
            return List.copyOf(holds());
        }
    }

    @Override
    public int availablePermits() {
        return (int) permitNames(permits()).stream().filter(permit -> !locks.isLocked(permit)).count();
    }

    static LockNotAcquiredException busy(String name, long start, String why) {
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        return new LockNotAcquiredException(name, waited, LockNotAcquiredException.Reason.BUSY, null,
                "Could not acquire '" + name + "' within " + waited.toMillis() + " ms: " + why, null);
    }

    @Override
    public String toString() {
        return "DistributedSemaphore[" + name + "]";
    }
}
