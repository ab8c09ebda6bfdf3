package io.quarkiverse.mysqllock.runtime;

import static io.quarkiverse.mysqllock.runtime.LockNames.checkBlockingAllowed;
import static io.quarkiverse.mysqllock.runtime.LockNames.checked;
import static io.quarkiverse.mysqllock.runtime.LockNames.requireAction;
import static io.quarkiverse.mysqllock.runtime.LockNames.waitNanos;
import static io.quarkiverse.mysqllock.runtime.LockNames.waiting;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import jakarta.transaction.Transaction;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.LockedRun;
import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.runtime.coordination.Coordination;
import io.quarkiverse.mysqllock.runtime.coordination.TermConfirmation;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.HeldAtShutdown;
import io.quarkiverse.mysqllock.runtime.engine.InterruptingHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.engine.UniUnderLock;
import io.quarkiverse.mysqllock.runtime.features.AllLocks;
import io.quarkiverse.mysqllock.runtime.features.AsyncAcquisition;
import io.quarkiverse.mysqllock.runtime.features.AtLeastForHandle;
import io.quarkiverse.mysqllock.runtime.features.AtLeastForHandle.LateReleases;
import io.quarkiverse.mysqllock.runtime.features.DatabaseRecords;
import io.quarkiverse.mysqllock.runtime.features.HandleReleases;
import io.quarkiverse.mysqllock.runtime.features.LeaderWindows;
import io.quarkiverse.mysqllock.runtime.features.LockedActions;
import io.quarkiverse.mysqllock.runtime.features.LongHolds;
import io.quarkiverse.mysqllock.runtime.features.MethodLock;
import io.quarkiverse.mysqllock.runtime.features.PrimitiveHandle;
import io.quarkiverse.mysqllock.runtime.features.TableRecords;
import io.quarkiverse.mysqllock.runtime.features.TransactionScopedLocks;
import io.quarkiverse.mysqllock.runtime.fleet.SelectingEngine;
import io.quarkiverse.mysqllock.runtime.jobs.HistoryRetention;
import io.quarkiverse.mysqllock.runtime.jobs.JobClaims;
import io.quarkiverse.mysqllock.runtime.jobs.JobSilences;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkiverse.mysqllock.runtime.jobs.ManagerJobs;
import io.quarkiverse.mysqllock.runtime.metrics.MeteredEngine;
import io.quarkiverse.mysqllock.runtime.transaction.TransactionBoundEngine;
import io.quarkiverse.mysqllock.runtime.transaction.Transactions;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/** The {@link LockManager} bean: validates arguments, refuses to block an event loop, and delegates to the engine. */
public class MySqlLockManager implements LockManager, AutoCloseable {

    /** The engine, its holds released after the transaction they are released in. */
    private final TransactionBoundEngine engine;
    private final LockNames names;
    private final Executor worker;
    private final DatabaseRecords records;
    private final LateReleases lateReleases = new LateReleases();
    /** The wait at shutdown for work in progress to release its locks. */
    private final HeldAtShutdown shutdown = new HeldAtShutdown();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile FenceGuard fenceGuard;
    /** Where {@code @Locked} methods' calls are counted; none until {@link #measure} is called. */
    private volatile LockMetrics metrics = LockMetrics.NONE;
    private final Duration defaultWait;
    private final long createdNanos = System.nanoTime();
    /** NAMED elections: the windows within which a term is confirmed. */
    private final LeaderWindows leaderWindows = new LeaderWindows(this::engine);
    private final Coordination coordination;
    private final ManagerJobs jobs;

    public MySqlLockManager(LockEngine engine, LockNames names, Duration defaultWait, Executor worker,
            TableRecords records, TransactionScopedLocks transactionLocks) {
        this(engine, names, defaultWait, worker, records, transactionLocks, Transactions.NONE);
    }

    /** @param transactions the JTA transactions a release made in one waits for ({@link TransactionBoundEngine}) */
    public MySqlLockManager(LockEngine engine, LockNames names, Duration defaultWait, Executor worker,
            TableRecords records, TransactionScopedLocks transactionLocks, Transactions transactions) {
        this.records = new DatabaseRecords(records, transactionLocks, this::engine, worker,
                key -> names.fromServer(key).isPresent());
        this.engine = TransactionBoundEngine.of(engine, transactions);
        this.names = names;
        this.defaultWait = defaultWait;
        this.worker = worker;
        this.coordination = new Coordination(this, CdiEvents.electionEvents(), HandleReleases::releaseReportingLoss,
                HandleReleases::releaseAtOnce,
                HandleReleases::confirm, new TermConfirmation(leaderWindows, HandleReleases::confirmedWithin),
                this::primitiveAsync,
                new FleetPermitCounts(records, this::engine, names, LockNames::checkBlockingAllowed));
        this.jobs = new ManagerJobs(this.records.ticks(), names::serverName, names::tickRow,
                LockNames::checkBlockingAllowed, this.records::dataSourceName);
    }

    /** Uses Mutiny's default worker pool (Quarkus's worker threads) for asynchronous acquisitions. */
    public MySqlLockManager(LockEngine engine, LockNames names, Duration defaultWait, TableRecords records,
            TransactionScopedLocks transactionLocks, Transactions transactions) {
        this(engine, names, defaultWait, Infrastructure.getDefaultWorkerPool(), records, transactionLocks,
                transactions);
    }

    /** Where the tokens other services send are admitted ({@link FenceGuard}): the lock table, or memory. */
    void guardFencesWith(FenceGuard guard) {
        this.fenceGuard = guard;
    }

    /** The fence guard of this manager's lock table ({@link FenceGuard}). */
    public FenceGuard fenceGuard() {
        return fenceGuard;
    }

    /** {@code @Locked} methods' calls are counted with these metrics (the engine's are its own). */
    void measure(LockMetrics methodMetrics) {
        this.metrics = methodMetrics;
        jobs.measure(methodMetrics);
    }

    /** How long ago this manager was made: this instance's start, for what it judges from then. */
    public Duration age() {
        return Duration.ofNanos(System.nanoTime() - createdNanos);
    }

    /**
     * How long each scheduled job of this manager has gone without a success anywhere in the fleet, by job name: read
     * from the jobs tables on the server's clock (blocking), or kept from a read a few seconds ago.
     */
    public Map<String, JobSilences.Silence> jobSilences() {
        return jobs.silences();
    }

    /** The metrics of {@code @Locked} methods' calls. */
    public LockMetrics metrics() {
        return metrics;
    }

    /** How much of each scheduled job's run history to keep ({@code quarkus.mysql-lock.job-history.*}). */
    void retainJobHistory(HistoryRetention retention) {
        jobs.retain(retention);
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
        leaderWindows.configure(window, instantHandOver);
    }

    @Override
    public Optional<LockHandle> currentLock() {
        return MethodLock.current(this);
    }

    // The one way from the API into the engine: a request built by LockNames.request, a hold made by held().

    @Override
    public LockHandle acquire(String name) {
        return take("acquire", name, LockOptions.defaults(), WhenBusy.THROW);
    }

    @Override
    public LockHandle acquire(String name, Duration wait) {
        return take("acquire", name, waiting(wait), WhenBusy.THROW);
    }

    @Override
    public LockHandle acquire(String name, LockOptions options) {
        return take("acquire", name, options, WhenBusy.THROW);
    }

    @Override
    public Optional<LockHandle> tryAcquire(String name, Duration wait) {
        return Optional.ofNullable(take("tryAcquire", name, waiting(wait), WhenBusy.NOTHING));
    }

    @Override
    public Optional<LockHandle> tryAcquire(String name, LockOptions options) {
        return Optional.ofNullable(take("tryAcquire", name, options, WhenBusy.NOTHING));
    }

    @Override
    public <T> T withLock(String name, Duration wait, Callable<T> action) {
        requireAction("withLock", action);
        return LockedActions.holding(take("withLock", name, waiting(wait), WhenBusy.THROW), action,
                "the withLock action");
    }

    @Override
    public <T> LockedRun<T> tryWithLock(String name, Duration wait, Callable<T> action) {
        requireAction("tryWithLock", action);
        ControlledHandle handle = take("tryWithLock", name, waiting(wait), WhenBusy.NOTHING);
        return handle == null ? LockedRun.notRun(name)
                : LockedRun.ran(name, LockedActions.holding(handle, action, "the tryWithLock action"));
    }

    @Override
    public Uni<LockHandle> acquireAsync(String name, Duration wait) {
        return acquireAsync(name, waiting(wait));
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
        LockRequest request = names.request(null, name, checked, WhenBusy.THROW, defaultWait);
        Transaction askedIn = engine.openTransaction();
        // a producer of ControlledHandle is a producer of LockHandle
        return (Uni<LockHandle>) (Uni<? extends LockHandle>) new AsyncAcquisition<>(
                () -> held(engine.acquire(request, askedIn), System.nanoTime(), checked), worker);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Uni<T> withLockAsync(String name, Duration wait, Supplier<Uni<T>> action) {
        requireAction("withLockAsync", action);
        String what = "the withLockAsync action of lock '" + name + "'";
        LockRequest request = names.request(null, name, waiting(wait), WhenBusy.THROW, defaultWait); // bad arguments refused now
        Transaction askedIn = engine.openTransaction();
        return (Uni<T>) new UniUnderLock(() -> new AsyncAcquisition<>(() -> engine.acquire(request, askedIn), worker),
                handle -> {
                    Uni<T> result = action.get();
                    if (result == null) {
                        throw new NullPointerException(what + " returned null instead of a Uni; the lock was released");
                    }
                    return result;
                }, LockedActions.asynchronous(what));
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

    /**
     * For {@code @Locked}: the method's lock as its options ask ({@code waitFor}, {@code atMostFor}, nesting), blocking;
     * null when busy and {@code whenBusy} is NOTHING, or when the method's tick already ran. The interceptor makes the
     * hold itself ({@link #held}), counting {@code atLeastFor} from the method's start rather than from the grant, and
     * arms {@code interruptOnLoss} for the method's body only.
     *
     * @param tick the tick of this run, for a scheduled method that claims its ticks ({@link JobClaims}), or its
     *        run-now; null otherwise
     */
    public ControlledHandle acquireForMethod(String name, LockOptions options, WhenBusy whenBusy, JobTick tick) {
        LockRequest request = names.request("acquire", name, options, whenBusy, defaultWait);
        return methodLock(name, request, tick, engine::acquire);
    }

    /** {@link #acquireForMethod} for a tick its trigger fired, in epoch milliseconds. */
    public ControlledHandle acquireForMethod(String name, LockOptions options, WhenBusy whenBusy, long tick) {
        return acquireForMethod(name, options, whenBusy, JobTick.scheduled(tick));
    }

    /**
     * As {@link #acquireForMethod}, without blocking the caller: a null item when the tick already ran.
     *
     * @param askedIn the transaction open where the method was called ({@link #openTransaction()}), or null: the
     *        lock's release waits for it to end
     */
    public Uni<ControlledHandle> acquireForMethodAsync(String name, LockOptions options, JobTick tick,
            Transaction askedIn) {
        LockRequest request = names.request(null, name, options, WhenBusy.THROW, defaultWait);
        return new AsyncAcquisition<>(
                () -> methodLock(name, request, tick, asked -> engine.acquire(asked, askedIn)), worker);
    }

    /** The JTA transaction open on the calling thread, or null. */
    public Transaction openTransaction() {
        return engine.openTransaction();
    }

    /**
     * A blocking acquisition of the API: the request, the engine's answer (null when busy and {@code whenBusy} is
     * NOTHING), and the hold the options ask for, {@code atLeastFor} counted from the grant.
     */
    private ControlledHandle take(String method, String name, LockOptions options, WhenBusy whenBusy) {
        LockRequest request = names.request(method, name, options, whenBusy, defaultWait);
        ControlledHandle handle = engine.acquire(request);
        if (handle == null) {
            return null;
        }
        ControlledHandle kept = held(handle, System.nanoTime(), options);
        return options.interruptsOnLoss() ? InterruptingHandle.of(kept) : kept;
    }

    /**
     * The one hold step: the hold kept until {@code atLeastFor} after {@code since} ({@link System#nanoTime()}) once
     * released; the hold itself when there is no such minimum.
     */
    public ControlledHandle held(ControlledHandle handle, long since, LockOptions options) {
        Duration atLeastFor = options.atLeastFor();
        return atLeastFor.isZero() ? handle : new AtLeastForHandle(handle, since, atLeastFor.toNanos(), lateReleases);
    }

    /** A method's lock, or for a scheduled method that claims its ticks, the lock with this tick claimed. */
    private ControlledHandle methodLock(String name, LockRequest request, JobTick tick,
            Function<LockRequest, ControlledHandle> acquisition) {
        return tick == null ? acquisition.apply(request) : jobs.lock(name, request, tick, acquisition);
    }

    @Override
    public void fence(LockHandle lock, java.sql.Connection connection) {
        if (lock == null || connection == null) {
            throw new IllegalArgumentException("fence needs a lock and a connection, not " + lock + " and " + connection);
        }
        engine.fence(lock, connection, names::serverName);
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

    @Override
    public java.util.concurrent.locks.Lock asLock(String name) {
        names.resolve(name); // a bad name is refused now, not at the first lock()
        return new LockView(this, name);
    }

    /** A coordination primitive's blocking acquisition, run as {@link #acquireAsync(String, Duration)} runs its own. */
    @SuppressWarnings("unchecked")
    private Uni<LockHandle> primitiveAsync(Supplier<LockHandle> acquisition) {
        return (Uni<LockHandle>) (Uni<? extends LockHandle>) new AsyncAcquisition<>(
                () -> PrimitiveHandle.of(TransactionBoundEngine.disowned(acquisition.get())), worker);
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
        records.acquireForTransaction(name, serverName, waitNanos);
    }

    @Override
    public FleetJobs jobs() {
        return jobs.view();
    }

    @Override
    public long purgeUnused(Duration unusedFor) {
        if (unusedFor == null || unusedFor.isZero() || unusedFor.isNegative()) {
            throw new IllegalArgumentException("purgeUnused needs a positive duration, not " + unusedFor);
        }
        checkBlockingAllowed("purgeUnused");
        return records.purgeUnused(unusedFor);
    }

    @Override
    public boolean runOnce(String name, Runnable action) {
        LockName lock = names.resolve(name);
        if (action == null) {
            throw new IllegalArgumentException("runOnce action must not be null");
        }
        checkBlockingAllowed("runOnce");
        return records.runOnce(name, lock.serverName(), action,
                () -> engine.acquire(LockRequest.of(lock, LockNames.MAX_WAIT.toNanos())));
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

    /**
     * {@link #forceRelease(String)}, recorded in the audit trail with who asked and why (the admin resource, the Dev UI).
     *
     * @throws IllegalStateException if the release was made but could not be recorded
     */
    public boolean forceRelease(String name, String by, String why) {
        return jobs.forceRelease(name, by, why, () -> forceRelease(name));
    }

    /** The datasource this manager takes its locks in. */
    public String dataSourceName() {
        return records.dataSourceName();
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
        LockEngine inner = engine.delegate() instanceof MeteredEngine metered ? metered.delegate() : engine.delegate();
        return inner instanceof SelectingEngine selecting ? selecting.engine() : inner;
    }

    /** How long the shutdown waits for the locks work in progress still holds ({@code shutdown-wait}). */
    void waitAtShutdown(Duration wait) {
        shutdown.waitUpTo(wait);
    }

    /**
     * At the start of the application's shutdown ({@link ShutdownWait}), before Quarkus ends the datasources and the
     * worker threads that run the work: no run of a scheduled job starts here any more, leader roles and the holds kept
     * only by their {@code atLeastFor} end, then it waits, once, until {@code shutdown-wait} after {@code sinceNanos},
     * for work in progress to release the locks it holds ({@link HeldAtShutdown}).
     */
    public void awaitWorkInProgress(long sinceNanos) {
        shutdown.await(sinceNanos, () -> {
            jobs.stop();
            coordination.close();
            lateReleases.releaseAll();
        }, engine);
    }

    /**
     * Ends what is left held once work in progress had its time ({@link #awaitWorkInProgress}), telling its holders, and
     * leaves the fleet. Once: at the shutdown's start ({@link ShutdownWait}), again as its bean ends.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            awaitWorkInProgress(System.nanoTime());
            engine.close();
        }
    }
}
