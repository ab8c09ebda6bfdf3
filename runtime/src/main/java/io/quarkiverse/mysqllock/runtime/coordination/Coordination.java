package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.smallrye.mutiny.Uni;

/**
 * The primitives of one lock manager: semaphores and read-write locks made on demand, and its elections, one per role,
 * left when the manager closes. Names and roles come checked by the manager.
 */
public final class Coordination implements AutoCloseable {

    private final LockManager locks;
    private final Consumer<Object> electionEvents;
    private final Function<LockHandle, LockLostException> release;
    private final Consumer<LockHandle> giveBack;
    private final BiPredicate<LockHandle, Long> stillHeld;
    private final TermConfirmation confirmation;
    private final Function<Supplier<LockHandle>, Uni<LockHandle>> async;
    private final PermitCounts counts;
    private final Map<String, Election> elections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param electionEvents where the elections' events go
     * @param release releases a handle of {@code locks}, answering the loss found before or by the release
     * @param giveBack releases a handle of {@code locks} at once, inside a transaction too: for the holds a primitive
     *        takes for itself while it acquires (a read-write lock's gate, permits taken short of the count)
     * @param stillHeld whether a handle of {@code locks} is valid and was found held on the server after a moment
     *        ({@link System#nanoTime()}), asking the server if need be
     * @param confirmation how the elections confirm their terms (strict leadership on NAMED)
     * @param async runs a blocking acquisition on a worker thread, giving back a handle its subscriber no longer wants
     * @param counts where the fleet's numbers of permits are kept
     */
    public Coordination(LockManager locks, Consumer<Object> electionEvents,
            Function<LockHandle, LockLostException> release, Consumer<LockHandle> giveBack,
            BiPredicate<LockHandle, Long> stillHeld, TermConfirmation confirmation,
            Function<Supplier<LockHandle>, Uni<LockHandle>> async, PermitCounts counts) {
        this.giveBack = giveBack;
        this.async = async;
        this.counts = counts;
        this.locks = locks;
        this.stillHeld = stillHeld;
        this.confirmation = confirmation;
        this.electionEvents = electionEvents;
        this.release = release;
    }

    public DistributedSemaphore semaphore(String name, int permits) {
        return new PermitSemaphore(locks, giveBack, name, permits, counts, async);
    }

    public DistributedReadWriteLock readWriteLock(String name) {
        return new GatedReadWriteLock(locks, giveBack, name, stillHeld, counts, async);
    }

    /** The election of a role, the same object for the same role. */
    public synchronized LeaderElection election(String role) {
        if (closed) {
            throw new IllegalStateException("The lock manager is closed: no election can be joined");
        }
        return elections.computeIfAbsent(role,
                checked -> new Election(locks, checked, electionEvents, release, () -> closed, confirmation));
    }

    /** Leaves every election; no election can be had, or joined again, afterwards. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        elections.values().forEach(Election::close);
    }
}
