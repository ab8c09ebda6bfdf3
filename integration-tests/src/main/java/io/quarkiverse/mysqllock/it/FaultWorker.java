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
 * that often cancels it, and {@code runOnce} (on names of its own, {@code once-<n>}, a new one every two seconds).
 * Only the first route registers a listener: the others learn of a loss from the exception their API throws, so a loss
 * they hide is a silent loss to the checker.
 * <p>
 * Every critical section is journaled ({@link FaultJournal}). With {@code fault-worker.workload=leader} the instance
 * runs the {@link LeaderWorker} instead: its sections are leadership terms.
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
    FencedResource resource;
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
        if (workload.equals("leader")) {
            leaders.start(id, names);
            LOG.infof("Fault worker %s ready: elections of %s (%s engine)", id, names, locks.mode());
            return;
        }
        for (int t = 1; t <= threads; t++) {
            String thread = id + "-t" + t;
            Thread worker = new Thread(() -> work(thread), thread);
            running.add(worker);
            worker.start();
        }
        LOG.infof("Fault worker %s ready: %d threads on %s (%s engine)", id, threads, names, locks.mode());
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
            String name = route == Route.RUN_ONCE ? "once-" + System.currentTimeMillis() / 2000
                    : names.get(random.nextInt(names.size()));
            try {
                switch (semaphore != null ? Route.PERMIT : route) {
                    case PERMIT -> acquire(section, () -> semaphore.acquire(wait));
                    case ACQUIRE -> acquire(section, name);
                    case WITH_LOCK -> underApi(section, name, body -> locks.withLock(name, wait, body));
                    case LOCKED -> underApi(section, name, body -> sections.locked(name, body::run));
                    case ASYNC -> async(section, name);
                    case RUN_ONCE -> underApi(section, name, body -> locks.runOnce(name, body));
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

    /** {@code acquire}, an {@code onLost} listener, release. */
    private void acquire(String section, String name) {
        acquire(section, () -> locks.acquire(name, wait));
    }

    /** A lock or a permit (its own lock: the section's name is the handle's), an {@code onLost} listener, release. */
    private void acquire(String section, Supplier<LockHandle> taking) {
        long requestedAt = FaultJournal.now();
        try (LockHandle handle = taking.get()) {
            long acquiredAt = FaultJournal.now();
            handle.onLost(lost -> journal("L", section, FaultJournal.now(), lost.reason()));
            criticalSection(handle, section, handle.name(), requestedAt, acquiredAt);
            handle.close();
            journal("R", section, FaultJournal.now());
        }
    }

    /**
     * A section run by an API that takes and releases the lock itself ({@code withLock}; a {@code @Locked} method, its
     * lock kept 30 ms after it started; {@code runOnce}, whose first caller of a name runs it while the others wait and
     * do not): the section learns of a loss from the exception the API throws, nothing else.
     */
    private void underApi(String section, String name, Consumer<Runnable> api) {
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
        long acquiredAt = FaultJournal.now();
        try (LockHandle nested = locks.acquire(name, Duration.ZERO)) {
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
        long fence;
        try {
            fence = handle.fencingToken();
        } catch (LockLostException e) {
            journal("S", section, name, 0, acquiredAt, requestedAt);
            journal("E", section, "lost-before-write", FaultJournal.now(), FaultJournal.now());
            return;
        }
        journal("S", section, name, fence, acquiredAt, requestedAt);
        long hold = ThreadLocalRandom.current().nextLong(maxHold.toMillis() + 1);
        if (hold > 0) {
            try {
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        // taken before the check: if the check says valid, the holder believed it held the lock at least until then
        long checkedAt = FaultJournal.now();
        boolean valid = handle.isValid();
        String outcome = valid ? resource.write(section, name, fence) : "skipped";
        long writeDone = FaultJournal.now();
        journal("E", section, outcome, writeDone, FaultJournal.now(), valid ? checkedAt : 0);
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
