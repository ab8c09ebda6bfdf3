package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.LockedRun;
import io.quarkiverse.mysqllock.runtime.coordination.Coordination;
import io.quarkiverse.mysqllock.runtime.coordination.TermConfirmation;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.InterruptingHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.Owner;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.engine.UniUnderLock;
import io.quarkiverse.mysqllock.runtime.fleet.SelectingEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.metrics.MeteredEngine;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.runtime.table.FleetRows;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;
import io.quarkus.arc.InjectableContext;
import io.quarkus.runtime.BlockingOperationControl;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/** The {@link LockManager} bean: validates arguments, refuses to block an event loop, and delegates to the engine. */
public class MySqlLockManager implements LockManager, AutoCloseable {

    /** Longer waits are cut to this; it keeps deadline arithmetic far from overflow. */
    static final Duration MAX_WAIT = Duration.ofDays(365);

    /** The lock table row of a scheduled job's last tick is named after its lock, with this prefix. */
    static final String TICK_ROW_PREFIX = "tick@";

    private final LockEngine engine;
    private final LockNames names;
    private final Duration defaultWait;
    private final Executor worker;
    private final TransactionScopedLocks transactionLocks;
    private final TableRecords records;
    private final LateReleases lateReleases = new LateReleases();
    /** Where {@code @Locked} methods' calls are counted; none until {@link #measure} is called. */
    private volatile LockMetrics metrics = LockMetrics.NONE;
    /** NAMED elections: a term is confirmed within this (two keepalive intervals). */
    private volatile long leaderConfirmationNanos;
    /** NAMED elections: {@code named.instant-leader-hand-over}, which holds while every live instance has it. */
    private volatile boolean instantLeaderHandOver;
    private final Coordination coordination;

    public MySqlLockManager(LockEngine engine, LockNames names, Duration defaultWait, Executor worker,
            TableRecords records, TransactionScopedLocks transactionLocks) {
        this.records = records;
        this.engine = engine;
        this.transactionLocks = transactionLocks;
        this.names = names;
        this.defaultWait = defaultWait;
        this.worker = worker;
        this.coordination = new Coordination(this, CdiEvents.electionEvents(), HandleReleases::releaseReportingLoss,
                HandleReleases::confirm, new TermConfirmation(this::leaderWindow, HandleReleases::confirmedWithin),
                this::primitiveAsync,
                new FleetPermitCounts(records, this::engine, names, MySqlLockManager::checkBlockingAllowed));
    }

    /** Uses Mutiny's default worker pool (Quarkus's worker threads) for asynchronous acquisitions. */
    public MySqlLockManager(LockEngine engine, LockNames names, Duration defaultWait, TableRecords records,
            TransactionScopedLocks transactionLocks) {
        this(engine, names, defaultWait, Infrastructure.getDefaultWorkerPool(), records, transactionLocks);
    }

    /** {@code @Locked} methods' calls are counted with these metrics (the engine's are its own). */
    void measure(LockMetrics methodMetrics) {
        this.metrics = methodMetrics;
    }

    /** The metrics of {@code @Locked} methods' calls. */
    public LockMetrics metrics() {
        return metrics;
    }

    /** Warns of every lock of this instance held longer than {@code threshold} ({@code long-hold-warning}). */
    void warnOfHoldsLongerThan(Duration threshold) {
        lateReleases.every(LongHolds.period(threshold), new LongHolds(engine::held, threshold));
    }

    /**
     * NAMED elections: each term is confirmed within this window (two keepalive intervals), unless every live instance of
     * the fleet hands over instantly and this one is configured to ({@code named.instant-leader-hand-over}).
     */
    void confirmLeadersWithin(Duration window, boolean instantHandOver) {
        this.leaderConfirmationNanos = window.toNanos();
        this.instantLeaderHandOver = instantHandOver;
    }

    /**
     * The windows of a term granted now: none on LEASE (a lease's validity is bounded); on NAMED this instance's window,
     * after a grace of the largest of the fleet's live instances (they may run with other keepalive intervals), or none
     * when this instance and every other live one hand over instantly.
     */
    private TermConfirmation.Window leaderWindow() {
        if (engine.mode() != LockMode.NAMED) {
            return TermConfirmation.Window.NONE;
        }
        long own = leaderConfirmationNanos;
        if (!(engine() instanceof NamedLockEngine named)) {
            return instantLeaderHandOver ? TermConfirmation.Window.NONE : new TermConfirmation.Window(own, own);
        }
        FleetRows.LeaderWindows fleet = named.leaderWindows();
        if (instantLeaderHandOver && fleet.allInstant()) {
            return TermConfirmation.Window.NONE;
        }
        return new TermConfirmation.Window(own, Math.max(own, TimeUnit.MICROSECONDS.toNanos(fleet.largestMicros())));
    }

    @Override
    public Optional<LockHandle> currentLock() {
        return MethodLock.current(this);
    }

    @Override
    public LockHandle acquire(String name) {
        return acquire(name, defaultWait);
    }

    @Override
    public LockHandle acquire(String name, Duration wait) {
        LockName lock = names.resolve(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("acquire");
        return engine.acquire(LockRequest.of(lock, waitNanos));
    }

    @Override
    public LockHandle acquire(String name, LockOptions options) {
        return take("acquire", name, options, WhenBusy.THROW);
    }

    @Override
    public Optional<LockHandle> tryAcquire(String name, LockOptions options) {
        return Optional.ofNullable(take("tryAcquire", name, options, WhenBusy.NOTHING));
    }

    @Override
    @SuppressWarnings("unchecked")
    public Uni<LockHandle> acquireAsync(String name, LockOptions options) {
        LockOptions checked = checked(options);
        if (checked.interruptsOnLoss()) {
            throw new IllegalArgumentException("Lock options interruptingOnLoss() are for the blocking acquire and"
                    + " tryAcquire: acquireAsync has no thread to interrupt. Stop the work from the handle's onLost"
                    + " listener instead (cancel its Uni)");
        }
        return (Uni<LockHandle>) (Uni<? extends LockHandle>) acquireAsync(name, waitOf(checked), checked.atMostFor(),
                handle -> heldAtLeast(handle, System.nanoTime(), checked.atLeastFor()));
    }

    @Override
    public LockHandle acquireAll(Collection<String> names, Duration wait) {
        if (names == null || names.isEmpty()) {
            throw new IllegalArgumentException("acquireAll needs at least one lock name, not " + names);
        }
        List<LockName> locks = names.stream().map(this.names::resolve).toList();
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("acquireAll");
        return AllLocks.acquire(engine, AllLocks.ordered(locks), waitNanos);
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        return coordination.semaphore(LockNames.requireValid(name), permits);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        return coordination.readWriteLock(LockNames.requireValid(name));
    }

    @Override
    public LeaderElection election(String role) {
        return coordination.election(LockNames.requireValid(role));
    }

    private ControlledHandle take(String method, String name, LockOptions options, WhenBusy whenBusy) {
        LockName lock = names.resolve(name);
        LockOptions checked = checked(options);
        long waitNanos = waitNanos(waitOf(checked));
        checkBlockingAllowed(method);
        ControlledHandle handle = engine.acquire(LockRequest.of(lock, waitNanos).whenBusy(whenBusy)
                .ownedBy(checked.nesting() ? Owner.CALLING_THREAD : Owner.NONE).atMostFor(checked.atMostFor()));
        if (handle == null) {
            return null;
        }
        ControlledHandle kept = heldAtLeast(handle, System.nanoTime(), checked.atLeastFor());
        return checked.interruptsOnLoss() ? InterruptingHandle.of(kept) : kept;
    }

    /**
     * The hold, kept until {@code atLeastFor} after {@code since} ({@link System#nanoTime()}) once released; the hold
     * itself when there is no such minimum.
     */
    public ControlledHandle heldAtLeast(ControlledHandle handle, long since, Duration atLeastFor) {
        return atLeastFor.isZero() ? handle : new HeldAtLeast(handle, since, atLeastFor.toNanos(), lateReleases);
    }

    private static LockOptions checked(LockOptions options) {
        if (options == null) {
            throw new IllegalArgumentException("Lock options must not be null; use LockOptions.defaults()");
        }
        return options;
    }

    private Duration waitOf(LockOptions options) {
        return options.waitTime().orElse(defaultWait);
    }

    @Override
    public Optional<LockHandle> tryAcquire(String name) {
        return tryAcquire(name, Duration.ZERO);
    }

    @Override
    public Optional<LockHandle> tryAcquire(String name, Duration wait) {
        LockName lock = names.resolve(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("tryAcquire");
        return Optional.ofNullable(engine.acquire(LockRequest.of(lock, waitNanos).whenBusy(WhenBusy.NOTHING)));
    }

    @Override
    public <T> T withLock(String name, Duration wait, Callable<T> action) {
        if (action == null) {
            throw new IllegalArgumentException("withLock action must not be null");
        }
        LockName lock = names.resolve(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("withLock");
        return holding(engine.acquire(LockRequest.of(lock, waitNanos)), action, "the withLock action");
    }

    /**
     * Runs the action while holding the lock, then releases it whatever happens: the action's exceptions propagate
     * (checked ones wrapped in a {@link CompletionException}), a loss found meanwhile or by the release is thrown after
     * it returns, or added to its exception.
     */
    private static <T> T holding(ControlledHandle handle, Callable<T> action, String what) {
        T result;
        try {
            result = action.call();
        } catch (Throwable failure) {
            LockLostException lost = handle.releaseReportingLoss();
            if (lost != null) {
                failure.addSuppressed(ControlledHandle.lostDuring(what, lost));
            }
            if (failure instanceof RuntimeException || failure instanceof Error) {
                throw sneaky(failure);
            }
            throw new CompletionException(failure);
        }
        // The release itself may find the loss (a session killed since the last keepalive, a lease taken over).
        LockLostException lost = handle.releaseReportingLoss();
        if (lost != null) {
            throw ControlledHandle.lostDuring(what, lost);
        }
        return result;
    }

    @Override
    public <T> LockedRun<T> tryWithLock(String name, Callable<T> action) {
        return tryWithLock(name, Duration.ZERO, action);
    }

    @Override
    public LockedRun<Void> tryWithLock(String name, Runnable action) {
        if (action == null) {
            throw new IllegalArgumentException("tryWithLock action must not be null");
        }
        return tryWithLock(name, Duration.ZERO, () -> {
            action.run();
            return null;
        });
    }

    @Override
    public <T> LockedRun<T> tryWithLock(String name, Duration wait, Callable<T> action) {
        if (action == null) {
            throw new IllegalArgumentException("tryWithLock action must not be null");
        }
        LockName lock = names.resolve(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("tryWithLock");
        ControlledHandle handle = engine.acquire(LockRequest.of(lock, waitNanos).whenBusy(WhenBusy.NOTHING));
        return handle == null ? LockedRun.notRun(name)
                : LockedRun.ran(name, holding(handle, action, "the tryWithLock action"));
    }

    @Override
    public java.util.concurrent.locks.Lock asLock(String name) {
        names.resolve(name); // a bad name is refused now, not at the first lock()
        return new LockView(this, name);
    }

    @Override
    public void withLock(String name, Duration wait, Runnable action) {
        if (action == null) {
            throw new IllegalArgumentException("withLock action must not be null");
        }
        withLock(name, wait, () -> {
            action.run();
            return null;
        });
    }

    @Override
    @SuppressWarnings("unchecked")
    public Uni<LockHandle> acquireAsync(String name, Duration wait) {
        // a producer of ControlledHandle is a producer of LockHandle
        return (Uni<LockHandle>) (Uni<? extends LockHandle>) acquireAsync(name, wait, Duration.ZERO);
    }

    /** A coordination primitive's blocking acquisition, run as {@link #acquireAsync(String, Duration)} runs its own. */
    @SuppressWarnings("unchecked")
    private Uni<LockHandle> primitiveAsync(Supplier<LockHandle> acquisition) {
        return (Uni<LockHandle>) (Uni<? extends LockHandle>) new AsyncAcquisition<>(
                () -> AsyncHandle.of(acquisition.get()), worker);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Uni<T> withLockAsync(String name, Duration wait, Supplier<Uni<T>> action) {
        if (action == null) {
            throw new IllegalArgumentException("withLockAsync action must not be null");
        }
        names.resolve(name); // an invalid name is refused now, not at subscription
        waitNanos(wait);
        String what = "the withLockAsync action of lock '" + name + "'";
        return (Uni<T>) new UniUnderLock(() -> acquireAsync(name, wait, Duration.ZERO), handle -> {
            Uni<T> result = action.get();
            if (result == null) {
                throw new NullPointerException(what + " returned null instead of a Uni; the lock was released");
            }
            return result;
        }, new UniUnderLock.Outcomes() {
            @Override
            public LockLostException release(ControlledHandle handle, long startNanos) {
                return handle.releaseReportingLoss();
            }

            @Override
            public Throwable withLoss(Throwable failure, LockLostException lost) {
                if (lost != null) {
                    failure.addSuppressed(ControlledHandle.lostDuring(what, lost));
                }
                return failure;
            }

            @Override
            public Throwable lost(LockLostException lost) {
                return ControlledHandle.lostDuring(what, lost);
            }
        });
    }

    /**
     * For {@code @Locked}: acquires with a lease cap ({@code atMostFor}, 0 for none), blocking (null if busy and
     * {@code throwIfBusy} is false) or asynchronously.
     */
    public ControlledHandle acquire(String name, Duration wait, Duration atMostFor, boolean throwIfBusy) {
        LockName lock = names.resolve(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("acquire");
        return engine.acquire(LockRequest.of(lock, waitNanos).whenBusy(throwIfBusy ? WhenBusy.THROW : WhenBusy.NOTHING)
                .atMostFor(atMostFor));
    }

    /** As {@link #acquire(String, Duration, Duration, boolean)}, without blocking the caller. */
    public Uni<ControlledHandle> acquireAsync(String name, Duration wait, Duration atMostFor) {
        return acquireAsync(name, wait, atMostFor, UnaryOperator.identity());
    }

    /** Acquires on a worker thread, then applies {@code then} to the handle there (it may block). */
    private Uni<ControlledHandle> acquireAsync(String name, Duration wait, Duration atMostFor,
            UnaryOperator<ControlledHandle> then) {
        return acquireAsync(name, wait, atMostFor, () -> false, then);
    }

    /** As above, acquiring nothing (an empty item) if {@code needless} says so first. */
    private Uni<ControlledHandle> acquireAsync(String name, Duration wait, Duration atMostFor, BooleanSupplier needless,
            UnaryOperator<ControlledHandle> then) {
        LockRequest request = LockRequest.of(names.resolve(name), waitNanos(wait)).ownedBy(Owner.NONE)
                .atMostFor(atMostFor);
        return new AsyncAcquisition<>(() -> needless.getAsBoolean() ? null : then.apply(engine.acquire(request)),
                worker);
    }

    /**
     * For an exclusive {@code @Locked} scheduled method with a {@code ScheduledExecution} parameter: as
     * {@link #acquire(String, Duration, Duration, boolean)} when busy (null, or a throw with {@code throwIfBusy}), and then
     * claims the tick in the lock table; null, with nothing held, if this tick (or a later one) already ran on some
     * instance. Exact whatever the instances' clocks, as the tick is the trigger's scheduled
     * fire time, not the time it fired. A tick known to have run already takes no lock: an instance whose trigger fires
     * late would otherwise hold the lock while it learns so, and the others, firing the next tick at that moment, would
     * find it busy and skip a tick that nobody ran.
     *
     * @param tick the scheduled fire time of this run, in epoch milliseconds
     */
    public ControlledHandle acquireTick(String name, Duration wait, Duration atMostFor, boolean throwIfBusy, long tick) {
        if (tickRan(name, tick)) {
            return null;
        }
        return claimTick(name, acquire(name, wait, atMostFor, throwIfBusy), tick);
    }

    /** As {@link #acquireTick}, without blocking the caller: a null item when the tick already ran. */
    public Uni<ControlledHandle> acquireTickAsync(String name, Duration wait, Duration atMostFor, long tick) {
        return acquireAsync(name, wait, atMostFor, () -> tickRan(name, tick), handle -> claimTick(name, handle, tick));
    }

    /** Whether this tick, or a later one, was claimed already: read without the lock. */
    private boolean tickRan(String name, long tick) {
        if (records == null && engine() instanceof InMemoryEngine memory) {
            return memory.tickClaimed(names.serverName(TICK_ROW_PREFIX + name), tick);
        }
        return records("a @Scheduled method's tick claim").tickClaimed(name, names.serverName(TICK_ROW_PREFIX + name),
                tick);
    }

    private <H extends LockHandle> H claimTick(String name, H handle, long tick) {
        if (handle == null) {
            return null;
        }
        boolean claimed;
        try {
            claimed = records == null && engine() instanceof InMemoryEngine memory
                    ? memory.claimTick(names.serverName(TICK_ROW_PREFIX + name), tick)
                    : records("a @Scheduled method's tick claim").claimTick(name,
                            names.serverName(TICK_ROW_PREFIX + name), tick);
        } catch (RuntimeException e) {
            handle.release();
            throw e;
        }
        if (!claimed) {
            handle.release();
            return null;
        }
        return handle;
    }

    @Override
    public boolean isLocked(String name) {
        LockName lock = names.resolve(name);
        checkBlockingAllowed("isLocked");
        return engine.isLocked(lock);
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        LockName lock = names.resolve(name);
        checkBlockingAllowed("inspect");
        return engine.inspect(lock);
    }

    @Override
    public void acquireForTransaction(String name, Duration wait) {
        String serverName = names.serverName(name);
        long waitNanos = waitNanos(wait);
        checkBlockingAllowed("acquireForTransaction");
        if (transactionLocks == null) {
            throw databaseOnly("acquireForTransaction");
        }
        transactionLocks.acquire(name, serverName, Duration.ofNanos(waitNanos));
    }

    @Override
    public long purgeUnused(Duration unusedFor) {
        if (unusedFor == null || unusedFor.isZero() || unusedFor.isNegative()) {
            throw new IllegalArgumentException("purgeUnused needs a positive duration, not " + unusedFor);
        }
        checkBlockingAllowed("purgeUnused");
        return records("purgeUnused").purgeUnused(unusedFor);
    }

    @Override
    public boolean runOnce(String name, Runnable action) {
        LockName lock = names.resolve(name);
        if (action == null) {
            throw new IllegalArgumentException("runOnce action must not be null");
        }
        checkBlockingAllowed("runOnce");
        return records("runOnce").run(name, lock.serverName(), action,
                () -> engine.acquire(LockRequest.of(lock, MAX_WAIT.toNanos())));
    }

    @Override
    public List<LockInfo> held() {
        return engine.held();
    }

    @Override
    public List<LockInfo> holders() {
        checkBlockingAllowed("holders");
        List<LockInfo> holders = new ArrayList<>();
        for (LockInfo info : engine.holders()) {
            names.fromServer(info.name()).ifPresent(name -> holders
                    .add(new LockInfo(name, info.holder(), info.since(), info.fencingToken(), info.mode())));
        }
        return holders;
    }

    @Override
    public boolean forceRelease(String name) {
        LockName lock = names.resolve(name);
        checkBlockingAllowed("forceRelease");
        return engine.forceRelease(lock);
    }

    /** The datasource this manager takes its locks in. */
    public String dataSourceName() {
        if (records == null && engine() instanceof InMemoryEngine memory) {
            return memory.dataSourceName();
        }
        return records.dataSourceName();
    }

    /** The lock table's records, which the in-memory engine does not have. */
    private TableRecords records(String what) {
        if (records == null) {
            throw databaseOnly(what);
        }
        return records;
    }

    private static UnsupportedOperationException databaseOnly(String what) {
        return new UnsupportedOperationException(what + " keeps its records in the database, which the in-memory engine"
                + " (quarkus.mysql-lock.in-memory) does not have: test it against a real server (the test kit's"
                + " @EmbeddedMariaDb)");
    }

    /**
     * The lock managers in use: the lock datasource's, and those of other datasources once injected somewhere. A
     * datasource nobody takes locks from is left alone (creating its manager to look at it would make its outage ours).
     */
    public static List<MySqlLockManager> created() {
        ArcContainer arc = Arc.container();
        InjectableContext singletons = arc.getActiveContext(Singleton.class);
        List<MySqlLockManager> managers = new ArrayList<>();
        for (Bean<?> bean : arc.beanManager().getBeans(MySqlLockManager.class, Any.Literal.INSTANCE)) {
            if (singletons.get(bean) instanceof MySqlLockManager manager) {
                managers.add(manager);
            }
        }
        return managers;
    }

    /** Checks the engine for readiness; never throws. */
    public EngineHealth health() {
        return engine.health();
    }

    @Override
    public LockMode mode() {
        return engine.mode();
    }

    /** The name the server knows a lock by (the namespace's prefix; long or unusual names hashed). */
    public String serverName(String name) {
        return names.serverName(name);
    }

    /** The engine in use (choosing it now if it was not chosen yet). */
    public LockEngine engine() {
        LockEngine inner = engine instanceof MeteredEngine metered ? metered.delegate() : engine;
        return inner instanceof SelectingEngine selecting ? selecting.engine() : inner;
    }

    @Override
    public void close() {
        coordination.close();
        lateReleases.releaseAll();
        engine.close();
    }

    private static long waitNanos(Duration wait) {
        if (wait == null) {
            throw new IllegalArgumentException("Lock wait must not be null; use Duration.ZERO for a single attempt");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException("Lock wait must not be negative, got " + wait);
        }
        return (wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait).toNanos();
    }

    private static void checkBlockingAllowed(String method) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("LockManager." + method + " blocks on the database and was called on an"
                    + " event-loop thread (" + Thread.currentThread().getName() + "). Use acquireAsync, or run the"
                    + " code on a worker thread (@Blocking, @RunOnVirtualThread)");
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable failure) throws E {
        throw (E) failure;
    }
}
