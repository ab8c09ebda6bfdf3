package io.quarkiverse.mysqllock.runtime.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.GrantedLock;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldCaps;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;

/**
 * The in-process engine of {@code quarkus.mysql-lock.in-memory}, for tests and dev mode only (the build refuses
 * it otherwise): no database. It keeps the contract of the LEASE engine, whose mode it answers - a hold re-entered by
 * its thread shares the lock and its token, fencing tokens grow per name, a busy name answers busy after the wait, a
 * {@code atMostFor} cap ends the hold (lost, {@code LEASE_EXPIRED}) unless extended, a lost hold tells its listeners
 * once. The locks of one datasource name are shared by every in-memory manager of the JVM, as instances share a
 * server, and live as long as the JVM (fencing tokens never go back): that map is its one static state, on purpose, as
 * a database outlives the applications that use it (dev mode's reloads, test classes).
 */
public final class InMemoryEngine implements LockEngine, GrantingEngine<InMemoryEngine.MemLock> {

    /** The JVM's in-memory "servers", one per datasource name: the holder and the last fencing token of each name. */
    private static final Map<String, Map<String, Slot>> SERVERS = new ConcurrentHashMap<>();

    private final String dataSourceName;
    private final String identity;
    private final Map<String, Slot> server;
    private final MemoryJobs jobs;
    private final Map<String, MemLock> mine = new ConcurrentHashMap<>();
    private final LossNotifier notifier;
    private final HoldCaps<MemLock> caps;
    private volatile boolean closed;

    public InMemoryEngine(String dataSourceName, String identity, LockMetrics metrics) {
        this.dataSourceName = dataSourceName;
        this.identity = identity;
        this.server = SERVERS.computeIfAbsent(dataSourceName, ignored -> new ConcurrentHashMap<>());
        this.jobs = MemoryJobs.of(dataSourceName);
        this.notifier = new LossNotifier(metrics, LockMode.LEASE);
        this.caps = new HoldCaps<>("mysql-lock-in-memory-", Runnable::run, lock -> lose(lock,
                LockLostException.Reason.LEASE_EXPIRED, capMessage(lock)));
    }

    /** A name's state, guarded by its own monitor. */
    private static final class Slot {
        MemLock holder;
        long fence;
    }

    /** The holder identity of this instance. */
    public String identity() {
        return identity;
    }

    /** The jobs of this datasource's memory: their ticks and states, kept as the jobs table keeps them. */
    public MemoryJobs jobs() {
        return jobs;
    }

    /** A semaphore's number of permits, kept as the database keeps it: the fence of the row {@code permitsRow}. */
    public int permits(String permitsRow, int proposed) {
        Slot slot = server.computeIfAbsent(permitsRow, ignored -> new Slot());
        synchronized (slot) {
            if (slot.fence == 0) {
                slot.fence = proposed;
            }
            return (int) slot.fence;
        }
    }

    /** Stores a semaphore's number of permits; {@code onlyUpward}: never a lower one. The number stored afterwards. */
    public int changePermits(String permitsRow, int permits, boolean onlyUpward) {
        Slot slot = server.computeIfAbsent(permitsRow, ignored -> new Slot());
        synchronized (slot) {
            if (!onlyUpward || permits >= slot.fence) {
                slot.fence = permits;
            }
            return (int) slot.fence;
        }
    }

    /** One held lock, shared by its nested holds. */
    public static final class MemLock extends GrantedLock {
        final long fence;
        final InMemoryEngine engine;
        int holds = 1;

        MemLock(String name, String serverName, long fence, InMemoryEngine engine) {
            super(name, serverName, Instant.now());
            this.fence = fence;
            this.engine = engine;
        }

        String describe() {
            Thread owner = owner();
            return engine.identity + (owner == null ? " (asynchronous or handed over)"
                    : " (thread '" + owner.getName() + "')");
        }
    }

    public String dataSourceName() {
        return dataSourceName;
    }

    @Override
    public ControlledHandle acquire(LockRequest request) {
        if (closed) {
            throw new IllegalStateException("The lock manager is shut down");
        }
        long start = System.nanoTime();
        long deadline = start + request.waitNanos();
        Thread me = request.ownerThread();
        MemLock held = mine.get(request.serverName());
        if (held != null && held.ownedBy(me)) {
            synchronized (held) {
                if (held.isHeld() && held.holds > 0) {
                    held.holds++;
                    return new HoldHandle<>(held, this, me);
                }
            }
        }
        Slot slot = server.computeIfAbsent(request.serverName(), ignored -> new Slot());
        MemLock lock;
        synchronized (slot) {
            while (slot.holder != null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Refusals.busy(request.name(), start, request.throwIfBusy(), slot.holder.describe(),
                            "another instance");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(slot, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw Refusals.callerInterrupted(request.name(), Duration.ofNanos(System.nanoTime() - start), e);
                }
            }
            lock = new MemLock(request.name(), request.serverName(), ++slot.fence, this);
            slot.holder = lock;
            // under the name's monitor: no later holder of the name can be put before this one
            mine.put(request.serverName(), lock);
        }
        if (closed) {
            // closed while this thread waited: give the name back, or it would stay held by a closed manager
            synchronized (lock) {
                lock.released = true;
            }
            mine.remove(lock.serverName, lock);
            free(lock);
            throw new IllegalStateException("The lock manager is shut down");
        }
        if (request.atMostForNanos() > 0) {
            caps.capAt(lock, request.atMostForNanos());
        }
        return new HoldHandle<>(lock, this, me);
    }

    @Override
    public void release(MemLock lock) {
        synchronized (lock) {
            if (--lock.holds > 0 || lock.released) {
                return;
            }
            lock.released = true;
        }
        lock.cancelCap();
        mine.remove(lock.serverName, lock);
        free(lock);
    }

    @Override
    public void abandon(MemLock lock, String message) {
        notifier.lose(lock, LockLostException.Reason.CANCELLED, message, null);
        release(lock);
    }

    /** Ends a hold as a lost lease ends: its holders are told, and the name is free for the next holder. */
    private void lose(MemLock lock, LockLostException.Reason reason, String message) {
        notifier.lose(lock, reason, message, null);
        free(lock);
    }

    private void free(MemLock lock) {
        Slot slot = server.get(lock.serverName);
        synchronized (slot) {
            if (slot.holder == lock) {
                slot.holder = null;
                slot.notifyAll();
            }
        }
    }

    /** A name's newest fence: the token of its last grant (0 if it was never granted); fenced commits compare it. */
    public long newestFence(String serverName) {
        Slot slot = server.get(serverName);
        if (slot == null) {
            return 0;
        }
        synchronized (slot) {
            return slot.fence;
        }
    }

    /**
     * For the test kit: the name is granted elsewhere meanwhile, unbeknownst to its holder, as a lease taken over: its
     * fence goes up as a grant raises it, and the holder is not told.
     *
     * @return whether the name was held
     */
    public boolean grantElsewhere(String serverName) {
        Slot slot = server.get(serverName);
        if (slot == null) {
            return false;
        }
        synchronized (slot) {
            if (slot.holder == null) {
                return false;
            }
            slot.fence++;
            return true;
        }
    }

    /**
     * For the test kit: ends the current hold of a name as a lease that ran out ends ({@code LEASE_EXPIRED}).
     *
     * @return whether the name was held
     */
    public boolean loseHolder(String serverName, String message) {
        return loseHolder(serverName, LockLostException.Reason.LEASE_EXPIRED, message);
    }

    private boolean loseHolder(String serverName, LockLostException.Reason reason, String message) {
        MemLock holder = holderOf(serverName);
        if (holder == null) {
            return false;
        }
        holder.engine.lose(holder, reason, message);
        return true;
    }

    private MemLock holderOf(String serverName) {
        Slot slot = server.get(serverName);
        if (slot == null) {
            return null;
        }
        synchronized (slot) {
            return slot.holder;
        }
    }

    @Override
    public boolean extend(MemLock lock, long atMostForNanos) {
        if (caps.extend(lock, atMostForNanos)) {
            return true;
        }
        if (lock.lost == null && !lock.released) {
            // its end at the cap has begun: told now, in that end's words; the end frees the name
            notifier.lose(lock, LockLostException.Reason.LEASE_EXPIRED, capMessage(lock), null);
        }
        throw HoldCaps.notExtended(lock);
    }

    private static String capMessage(MemLock lock) {
        return HoldCaps.message(lock, "the end of its lease");
    }

    @Override
    public long fencingToken(MemLock lock) {
        return lock.fence;
    }

    @Override
    public boolean isLocked(LockName lock) {
        return holderOf(lock.serverName()) != null;
    }

    @Override
    public Optional<LockInfo> inspect(LockName lock) {
        return Optional.ofNullable(holderOf(lock.serverName())).map(holder -> info(lock.name(), holder));
    }

    @Override
    public List<LockInfo> held() {
        List<LockInfo> infos = new ArrayList<>();
        for (MemLock lock : mine.values()) {
            if (lock.isHeld()) {
                infos.add(info(lock.name, lock));
            }
        }
        return infos;
    }

    @Override
    public List<LockInfo> holders() {
        List<LockInfo> infos = new ArrayList<>();
        server.forEach((serverName, slot) -> {
            MemLock holder = holderOf(serverName);
            if (holder != null) {
                infos.add(info(serverName, holder));
            }
        });
        return infos;
    }

    private static LockInfo info(String name, MemLock lock) {
        return new LockInfo(name, lock.describe(), lock.since, lock.fence, LockMode.LEASE);
    }

    @Override
    public boolean forceRelease(LockName lock) {
        // as on LEASE: the holder finds its lease taken from it
        return loseHolder(lock.serverName(), LockLostException.Reason.NOT_HELD,
                "Lock '" + lock.name() + "' was force-released");
    }

    @Override
    public LockMode mode() {
        return LockMode.LEASE;
    }

    @Override
    public EngineHealth health() {
        return EngineHealth.up(Map.of("engine", "in-memory (tests and dev mode only: no database)",
                "engine chosen because", "quarkus.mysql-lock.in-memory", "datasource", dataSourceName));
    }

    @Override
    public void close() {
        closed = true;
        for (MemLock lock : List.copyOf(mine.values())) {
            lose(lock, LockLostException.Reason.SHUTDOWN, "Lock '" + lock.name + "' was held when the application stopped");
            mine.remove(lock.serverName, lock);
        }
        notifier.close();
        caps.close();
    }
}
