package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;

/**
 * The fault suite's workload (see {@code FaultSuite} in the tests): threads that loop acquiring one of a few hot
 * names, doing a fenced write to the {@code resource} table inside the lock, and releasing it. Each section takes its
 * lock along one of the routes applications use: {@code acquire} with an {@code onLost} listener, {@code withLock},
 * a {@code @Locked} method with {@code atLeastFor}, {@code acquireAsync} subscribed on an event loop with a time-out
 * that often cancels it, {@code runOnce} (on names of its own, {@code once-<n>}, a new one every two seconds),
 * {@code acquireAll} of two hot names (a section per name), a read-write lock's writer (sections on {@code rw:<name>},
 * fenced by the writer's token) beside its readers (not journaled: they share), and an asynchronous {@code @Locked}
 * method that fails with an {@code Error} (not journaled: its lock must come back, or the hot name stays held).
 * With {@code fault-worker.workload=transactions} each section is a JTA transaction under the lock instead
 * ({@link TransactionWorker}).
 * The routes with a handle register a listener: the others learn of a loss from the exception their API throws, so a
 * loss they hide is a silent loss to the checker.
 * <p>
 * Every critical section is journaled ({@link FaultJournal}). With {@code fault-worker.workload=leader} the instance
 * runs the {@link LeaderWorker} instead: its sections are leadership terms; with {@code jobs}, {@link FaultJobs}: its
 * sections are the runs of a scheduled job.
 */
@Singleton
@Path("/fault-worker")
public class FaultWorker {

    private static final Logger LOG = Logger.getLogger(FaultWorker.class);

    @Inject
    LockManager locks;
    @Inject
    FaultSections sections;
    @Inject
    Vertx vertx;

    @ConfigProperty(name = "fault-worker.enabled", defaultValue = "false")
    boolean enabled;
    @ConfigProperty(name = "fault-worker.id", defaultValue = "w")
    String id;
    @ConfigProperty(name = "fault-worker.threads", defaultValue = "8")
    int threads;
    @ConfigProperty(name = "fault-worker.names", defaultValue = "hot-1,hot-2,hot-3")
    List<String> names;
    @ConfigProperty(name = "fault-worker.wait", defaultValue = "1s")
    Duration wait;
    @ConfigProperty(name = "fault-worker.max-hold", defaultValue = "20ms")
    Duration maxHold;
    @Inject
    FaultJournal journal;
    @Inject
    LeaderWorker leaders;
    @Inject
    TransactionWorker transactions;
    @Inject
    FencedResource resource;
    @Inject
    io.agroal.api.AgroalDataSource dataSource;
    /**
     * {@code locks}: threads taking the hot names' locks; {@code leader}: elections of the hot names' roles;
     * {@code semaphore}: threads taking permits of one semaphore whose permits' locks are the hot names
     * ({@code <semaphore>#permit-<i>}).
     */
    @ConfigProperty(name = "fault-worker.workload", defaultValue = "locks")
    String workload;
    /** Run every section along the plain {@code acquire} route only. */
    @ConfigProperty(name = "fault-worker.plain-only", defaultValue = "false")
    boolean plainOnly;

    /** How a section takes its lock: the ways applications do. */
    enum Route {
        ACQUIRE,
        WITH_LOCK,
        LOCKED,
        ASYNC,
        RUN_ONCE,
        /** {@code acquireAll} of two distinct hot names: a section per name, ended together. */
        ACQUIRE_ALL,
        /** The write lock of a read-write lock named after a hot name: sections on {@code rw:<name>}. */
        WRITER,
        /** Its read lock, held a moment: contention for the writers, not journaled. */
        READER,
        /** An asynchronous {@code @Locked} method that fails with an {@code Error}: not journaled. */
        ASYNC_ERROR,
        /** A permit of the semaphore workload's semaphore, as {@code ACQUIRE} takes a lock (its only route). */
        PERMIT
    }

    private final ScheduledExecutorService timer = Executors
            .newSingleThreadScheduledExecutor(runnable -> new Thread(runnable, "fault-worker-timer"));

    private final List<Thread> running = new ArrayList<>();
    /** The semaphore of a {@code semaphore} workload. */
    private DistributedSemaphore semaphore;
    private volatile boolean stopping;

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        journal.open();
        if (workload.equals("semaphore")) {
            String first = names.get(0);
            semaphore = locks.semaphore(first.substring(0, first.indexOf("#permit-")), names.size());
        }
        if (workload.equals("jobs")) {
            // FaultJobs runs the job's ticks: no loops of this class's own
            LOG.infof("Fault worker %s ready: the scheduled job %s (%s engine)", id, FaultJobs.JOB, engineInUse());
            return;
        }
        if (workload.equals("leader")) {
            leaders.start(id, names);
            LOG.infof("Fault worker %s ready: elections of %s (%s engine)", id, names, engineInUse());
            return;
        }
        for (int t = 1; t <= threads; t++) {
            String thread = id + "-t" + t;
            Thread worker = new Thread(() -> work(thread), thread);
            running.add(worker);
            worker.start();
        }
        LOG.infof("Fault worker %s ready: %d threads on %s (%s engine)", id, threads, names, engineInUse());
    }

    void shutdown(@Observes ShutdownEvent event) {
        stopLoops();
        timer.shutdownNow();
    }

    /** Ends the loops, waits for the current critical sections, and reports what this instance still holds. */
    @POST
    @Path("/stop")
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Object> stop() {
        boolean joined = stopLoops();
        if (workload.equals("jobs")) {
            // the controller disabled the job first: a run in progress ends in milliseconds
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!((MySqlLockManager) locks).held().isEmpty() && System.nanoTime() < deadline) {
                pauseAfterError();
            }
        }
        int pinned = 0;
        List<String> pinnedConnections = List.of();
        if (((MySqlLockManager) locks).engine() instanceof NamedLockEngine named) {
            // Shared connections that hold nothing stay pinned a second for the next lock, then go back to the pool.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while ((pinned = named.pinnedConnections()) > 0 && System.nanoTime() < deadline) {
                try {
                    TimeUnit.MILLISECONDS.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            pinnedConnections = named.describePinned();
            if (pinned > 0) {
                logLockThreads();
            }
        }
        return Map.of("stopped", joined, "held", ((MySqlLockManager) locks).held().size(), "pinned", pinned,
                "pinned connections", pinnedConnections);
    }

    /** The roles this instance leads now: the controller pauses or kills a leader. */
    @GET
    @Path("/leads")
    @Produces(MediaType.APPLICATION_JSON)
    public List<String> leads() {
        return leaders.leading();
    }

    /** The stacks of the extension's own threads, to the log: what keeps a connection pinned. */
    private static void logLockThreads() {
        StringBuilder dump = new StringBuilder("Connections stay pinned; the extension's threads:");
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getName().startsWith("mysql-lock-")) {
                dump.append("\n\"").append(thread.getName()).append("\" ").append(thread.getState());
                for (StackTraceElement frame : stack) {
                    dump.append("\n\tat ").append(frame);
                }
            }
        });
        LOG.warn(dump);
    }

    private synchronized boolean stopLoops() {
        stopping = true;
        boolean joined = leaders.stop();
        for (Thread thread : running) {
            try {
                thread.join(30_000);
                joined &= !thread.isAlive();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return joined;
    }

    private void work(String thread) {
        long sequence = 0;
        Route[] routes = Route.values();
        while (!stopping) {
            String section = thread + "-" + (++sequence);
            // half the sections acquire plainly; the others spread over the other routes
            ThreadLocalRandom random = ThreadLocalRandom.current();
            Route route = plainOnly || random.nextBoolean() ? Route.ACQUIRE : routes[1 + random.nextInt(routes.length - 2)];
            if (route == Route.ACQUIRE_ALL && names.size() < 2) {
                route = Route.ACQUIRE;
            }
            String name = route == Route.RUN_ONCE ? "once-" + System.currentTimeMillis() / 2000
                    : names.get(random.nextInt(names.size()));
            try {
                if (workload.equals("transactions")) {
                    transactions.run(section, names.get(random.nextInt(names.size())), wait);
                    continue;
                }
                switch (semaphore != null ? Route.PERMIT : route) {
                    case PERMIT -> acquire(section, () -> semaphore.acquire(wait), null);
                    case ACQUIRE -> acquire(section, name);
                    case WITH_LOCK -> underApi(section, name, body -> locks.withLock(name, wait, body));
                    case LOCKED -> underApi(section, name, body -> sections.locked(name, body::run));
                    case ASYNC -> async(section, name);
                    case RUN_ONCE -> underApi(section, name, body -> locks.runOnce(name, body));
                    case ACQUIRE_ALL -> acquireAll(section, name, names.get((names.indexOf(name) + 1
                            + random.nextInt(names.size() - 1)) % names.size()));
                    case WRITER -> acquire(section, () -> locks.readWriteLock(name).acquireWrite(wait), RW_PREFIX + name);
                    case READER -> read(name);
                    case ASYNC_ERROR -> asyncError(name);
                }
            } catch (LockLostException e) {
                journal("L", section, FaultJournal.now(), e.reason());
            } catch (LockNotAcquiredException e) {
                if (e.reason() != LockNotAcquiredException.Reason.BUSY) {
                    pauseAfterError();
                }
            } catch (RuntimeException e) {
                LOG.warnf("%s: %s", section, e);
                pauseAfterError();
            }
        }
    }

    /** The sections of a read-write lock's writers are on this prefix and the hot name. */
    static final String RW_PREFIX = "rw:";

    /** {@code acquire}, an {@code onLost} listener, release. */
    private void acquire(String section, String name) {
        acquire(section, () -> locks.acquire(name, wait), null);
    }

    /**
     * A lock or a permit, an {@code onLost} listener, release; the section is on {@code sectionName}, or on the handle's
     * name (a permit's lock) if null.
     */
    private void acquire(String section, Supplier<LockHandle> taking, String sectionName) {
        long requestedAt = FaultJournal.now();
        try (LockHandle handle = taking.get()) {
            long acquiredAt = FaultJournal.now();
            handle.onLost(lost -> journal("L", section, FaultJournal.now(), lost.reason()));
            criticalSection(handle, section, sectionName == null ? handle.name() : sectionName, requestedAt, acquiredAt);
            handle.close();
            journal("R", section, FaultJournal.now());
        }
    }

    /** Two hot names at once: a section per name ({@code <section>a}, {@code <section>b}), held and ended together. */
    private void acquireAll(String section, String first, String second) {
        long requestedAt = FaultJournal.now();
        try (LockHandle all = locks.acquireAll(List.of(first, second), wait)) {
            long acquiredAt = FaultJournal.now();
            List<LockHandle> parts = all.parts();
            List<String> ids = List.of(section + "a", section + "b");
            for (int i = 0; i < parts.size(); i++) {
                String id = ids.get(i);
                parts.get(i).onLost(lost -> journal("L", id, FaultJournal.now(), lost.reason()));
            }
            criticalSections(parts, ids, parts.stream().map(LockHandle::name).toList(), requestedAt, acquiredAt);
            all.close();
            long releasedAt = FaultJournal.now();
            ids.forEach(id -> journal("R", id, releasedAt));
        }
    }

    /** The read side of the writers' lock, held a moment: not journaled (readers share), contention for writers. */
    private void read(String name) {
        try (LockHandle read = locks.readWriteLock(name).acquireRead(wait)) {
            long hold = ThreadLocalRandom.current().nextLong(maxHold.toMillis() + 1);
            if (hold > 0) {
                Thread.sleep(hold);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An asynchronous {@code @Locked} method that fails with an {@code Error}, thrown or as its Uni's failure: its lock
     * must be released (else the hot name stays held: no recovery, and the end state shows it).
     */
    private void asyncError(String name) {
        try {
            sections.failing(name, ThreadLocalRandom.current().nextBoolean()).await().atMost(Duration.ofSeconds(30));
        } catch (AssertionError | java.util.concurrent.CompletionException expected) {
            // the method's own failure
        }
    }

    /**
     * A section run by an API that takes and releases the lock itself ({@code withLock}; a {@code @Locked} method, its
     * lock kept 30 ms after it started; {@code runOnce}, whose first caller of a name runs it while the others wait and
     * do not): the section learns of a loss from the exception the API throws, nothing else.
     */
    void underApi(String section, String name, Consumer<Runnable> api) {
        long requestedAt = FaultJournal.now();
        try {
            api.accept(() -> underHeldLock(section, name, requestedAt));
        } finally {
            journal("R", section, FaultJournal.now());
        }
    }

    /**
     * The section inside a lock this thread's own call holds (withLock, @Locked, runOnce): a nested hold gives it the
     * handle for the fencing token and validity, and registers no listener.
     */
    private void underHeldLock(String section, String name, long requestedAt) {
        try (LockHandle nested = locks.acquire(name, Duration.ZERO)) {
            // once the nested hold is had: a lock lost before it is taken again, not held since the body began
            long acquiredAt = FaultJournal.now();
            criticalSection(nested, section, name, requestedAt, acquiredAt);
        }
    }

    /**
     * {@code acquireAsync} subscribed on an event loop, with a time-out that fires often, sometimes while the event
     * loop is kept busy: a handle granted after its subscriber gave up must be released by the acquisition, or it
     * leaks (the end state and liveness rules see it). A handle that arrives is used on this thread.
     */
    private void async(String section, String name) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Duration timeout = Duration.ofMillis(random.nextLong(1, 300));
        long busy = random.nextInt(3) == 0 ? random.nextLong(1, 20) : 0;
        CompletableFuture<LockHandle> delivered = new CompletableFuture<>();
        long requestedAt = FaultJournal.now();
        vertx.getOrCreateContext().runOnContext(ignored -> {
            locks.acquireAsync(name, wait).ifNoItem().after(timeout).on(timer).fail().subscribe()
                    .with(delivered::complete, delivered::completeExceptionally);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(busy);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        });
        LockHandle handle;
        try {
            handle = delivered.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof io.smallrye.mutiny.TimeoutException) {
                return; // timed out: the acquisition was cancelled
            }
            throw e.getCause() instanceof RuntimeException failure ? failure : new IllegalStateException(e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException(section + ": no answer from acquireAsync", e);
        }
        long acquiredAt = FaultJournal.now();
        try (handle) {
            handle.onLost(lost -> journal("L", section, FaultJournal.now(), lost.reason()));
            criticalSection(handle, section, name, requestedAt, acquiredAt);
        } finally {
            journal("R", section, FaultJournal.now());
        }
    }

    private void criticalSection(LockHandle handle, String section, String name, long requestedAt, long acquiredAt) {
        criticalSections(List.of(handle), List.of(section), List.of(name), requestedAt, acquiredAt);
    }

    /**
     * The sections of locks held together: each fenced by its own token, one pause, then each checked and written in
     * turn (a lock lost before its token was issued, or whose token could not be issued, ends its section without a
     * write). Returns normally whatever the tokens do, so that every section begun is ended at the release.
     */
    private void criticalSections(List<LockHandle> handles, List<String> sections, List<String> names, long requestedAt,
            long acquiredAt) {
        long[] fences = new long[handles.size()];
        for (int i = 0; i < handles.size(); i++) {
            try {
                fences[i] = handles.get(i).fencingToken();
                journal("S", sections.get(i), names.get(i), fences[i], acquiredAt, requestedAt);
            } catch (RuntimeException e) {
                // Lost before its token, or (NAMED) no token could be issued, the database read-only or unreachable
                // and the lock not known to be lost: the section ends without a write, and at the release like the
                // others.
                boolean lost = e instanceof LockLostException;
                if (!lost) {
                    LOG.warnf("%s: %s", sections.get(i), e);
                }
                journal("S", sections.get(i), names.get(i), 0, acquiredAt, requestedAt);
                journal("E", sections.get(i), lost ? "lost-before-write" : "no-fence", FaultJournal.now(),
                        FaultJournal.now());
            }
        }
        long hold = ThreadLocalRandom.current().nextLong(maxHold.toMillis() + 1);
        if (hold > 0) {
            try {
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (int i = 0; i < handles.size(); i++) {
            if (fences[i] == 0) {
                continue;
            }
            // taken before the check: if the check says valid, the holder believed it held the lock at least until then
            long checkedAt = FaultJournal.now();
            boolean valid = handles.get(i).isValid();
            String outcome = valid ? resource.write(sections.get(i), names.get(i), fences[i]) : "skipped";
            long writeDone = FaultJournal.now();
            journal("E", sections.get(i), outcome, writeDone, FaultJournal.now(), valid ? checkedAt : 0);
        }
    }

    /**
     * The application saturates its own pool: every connection it can get, held until {@code millis} from now (those
     * that come back meanwhile too). The locks this instance holds must survive it.
     */
    @POST
    @Path("/saturate")
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Object> saturate(@QueryParam("millis") long millis) throws InterruptedException {
        int size = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<java.sql.Connection> held = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> borrowers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Thread borrower = new Thread(() -> {
                while (System.nanoTime() - until < 0) {
                    try {
                        java.sql.Connection connection = dataSource.getConnection();
                        if (System.nanoTime() - until >= 0) {
                            connection.close();
                            return;
                        }
                        held.add(connection);
                        return;
                    } catch (java.sql.SQLException e) {
                        // none to be had within the pool's acquisition-timeout: ask again while the saturation lasts
                    }
                }
            }, "fault-worker-saturation-" + i);
            borrower.setDaemon(true);
            borrowers.add(borrower);
            borrower.start();
        }
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
        int most = held.size();
        synchronized (held) {
            for (java.sql.Connection connection : held) {
                try {
                    connection.close();
                } catch (java.sql.SQLException e) {
                    // given back anyway
                }
            }
            held.clear();
        }
        return Map.of("held", most, "pool", size);
    }

    /**
     * The engine in use. A worker restarted during a fault (or on a machine so busy that a new connection takes over
     * connection-wait to open) starts with the engine not chosen yet, and {@code mode()} then asks the database again:
     * it is asked until it answers, as an application would; the controller's deadline for the ready line bounds it.
     */
    private Object engineInUse() {
        while (true) {
            try {
                return locks.mode();
            } catch (LockNotAcquiredException | IllegalStateException e) {
                LOG.infof("Engine not chosen yet (%s); asking again", e.getMessage());
                pauseAfterError();
            }
        }
    }

    private void pauseAfterError() {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(20, 100));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void journal(Object... fields) {
        journal.write(fields);
    }
}
