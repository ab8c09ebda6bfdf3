package io.quarkiverse.mysqllock.runtime;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * Chooses the engine once, by {@code quarkus.mysql-lock.mode} and the database's topology, and logs why. The choice
 * is made at start-up when the database answers, else at first use: an application whose database is down starts
 * anyway.
 */
public final class SelectingEngine implements LockEngine {

    private static final Logger LOG = Logger.getLogger(SelectingEngine.class);

    private final Mode mode;
    private final Optional<Boolean> replication;
    private final Optional<String> urlProblem;
    private final ConnectionSource connections;
    private final String identity;
    private final LockTable table;
    private final Supplier<LockEngine> named;
    private final Supplier<LockEngine> lease;
    private volatile LockEngine chosen;
    private volatile String reason;
    private final LockMetrics metrics;

    public SelectingEngine(Mode mode, Optional<Boolean> replication, Optional<String> urlProblem,
            ConnectionSource connections, LockTable table, String identity, Supplier<LockEngine> named,
            Supplier<LockEngine> lease, LockMetrics metrics) {
        this.metrics = metrics;
        this.table = table;
        this.mode = mode;
        this.replication = replication;
        this.urlProblem = urlProblem;
        this.connections = connections;
        this.identity = identity;
        this.named = named;
        this.lease = lease;
    }

    /**
     * Chooses now if the database answers, and checks the lock table when its creation is disabled. A refusal (NAMED on
     * Galera, a missing table, ...) stops the start-up.
     */
    public void chooseIfPossible() {
        try {
            engine();
            verifyTable();
        } catch (ConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warnf("The lock database did not answer at start-up (%s); the lock engine will be chosen at first use",
                    e.getMessage());
        }
    }

    /** The engine, chosen on first call. */
    public LockEngine engine() {
        LockEngine engine = chosen;
        if (engine != null) {
            return engine;
        }
        synchronized (this) {
            if (chosen == null) {
                choose();
            }
            return chosen;
        }
    }

    private void choose() {
        switch (mode) {
            case LEASE -> decide(lease, LockMode.LEASE, "quarkus.mysql-lock.mode=lease");
            case NAMED -> {
                Topology topology = probe();
                if (topology.galera()) {
                    throw refusal("the server is a Galera cluster node, where GET_LOCK is not supported and named"
                            + " locks are not shared between nodes");
                }
                if (topology.readOnly()) {
                    throw refusal("the server is read-only (@@read_only=1): a replica, or a primary being failed over."
                            + " Named locks taken there are invisible to the primary");
                }
                decide(named, LockMode.NAMED, "quarkus.mysql-lock.mode=named");
            }
            case AUTO -> {
                Topology topology = TopologyProbe.fromConfiguration(replication, urlProblem).orElseGet(this::probe);
                if (topology.replicated() || topology.galera()) {
                    decide(lease, LockMode.LEASE, "replication is configured: " + topology.reason()
                            + " (named locks are not replicated)");
                } else if (topology.readOnly()) {
                    decide(lease, LockMode.LEASE, "the server is read-only (a replica, or a primary being failed"
                            + " over), where named locks would be invisible to the primary");
                } else {
                    decide(named, LockMode.NAMED, "no replication is configured: " + topology.reason());
                }
            }
        }
    }

    private void verifyTable() {
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements("(lock table check)", 0);
            table.verifyExists(borrowed.raw());
            connections.giveBack(borrowed);
        } catch (IllegalStateException e) {
            connections.giveBack(borrowed);
            throw new ConfigurationException(e.getMessage(), e);
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            throw new IllegalStateException("Could not check the lock table: " + SqlErrors.describe(e), e);
        }
    }

    private ConfigurationException refusal(String why) {
        return new ConfigurationException("quarkus.mysql-lock.mode=named is refused on datasource '"
                + connections.dataSourceName() + "': " + why + ". Use quarkus.mysql-lock.mode=lease (or auto).");
    }

    private void decide(Supplier<LockEngine> engine, LockMode lockMode, String why) {
        reason = why;
        LockEngine made = engine.get();
        chosen = made;
        metrics.engineChosen(lockMode, () -> made.held().size(),
                () -> made instanceof io.quarkiverse.mysqllock.runtime.named.NamedLockEngine n ? n.pinnedConnections() : 0);
        LOG.infof("Distributed locks: %s engine on datasource '%s' as %s, because %s", lockMode,
                connections.dataSourceName(), identity, why);
    }

    private Topology probe() {
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements("(replication detection)", 0);
            Connection raw = borrowed.raw();
            Topology topology = TopologyProbe.probe(raw);
            connections.giveBack(borrowed);
            return topology;
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            throw new IllegalStateException("Could not detect the topology of datasource '"
                    + connections.dataSourceName() + "': " + SqlErrors.describe(e), e);
        }
    }

    @Override
    public LockHandle acquire(String name, String serverName, long waitNanos, boolean throwIfBusy, boolean reentrant,
            long leaseCapNanos) {
        LockEngine engine;
        try {
            engine = engine();
        } catch (ConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            metrics.acquisition(null, LockMetrics.Outcome.ERROR, 0);
            throw new LockNotAcquiredException(name, Duration.ZERO, LockNotAcquiredException.Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: the lock engine is chosen at first use, and " + e.getMessage(),
                    e);
        }
        if (metrics == LockMetrics.NONE) {
            return engine.acquire(name, serverName, waitNanos, throwIfBusy, reentrant, leaseCapNanos);
        }
        long start = System.nanoTime();
        LockHandle handle;
        try {
            handle = engine.acquire(name, serverName, waitNanos, throwIfBusy, reentrant, leaseCapNanos);
        } catch (LockNotAcquiredException e) {
            metrics.acquisition(engine.mode(), e.reason() != LockNotAcquiredException.Reason.BUSY
                    ? LockMetrics.Outcome.ERROR
                    : busy(waitNanos), System.nanoTime() - start);
            throw e;
        }
        long waited = System.nanoTime() - start;
        if (handle == null) {
            metrics.acquisition(engine.mode(), busy(waitNanos), waited);
            return null;
        }
        metrics.acquisition(engine.mode(), LockMetrics.Outcome.ACQUIRED, waited);
        return new MeteredHandle(handle, metrics, engine.mode());
    }

    /** Still held elsewhere: after one attempt that is "busy", after a wait a "timeout". */
    private static LockMetrics.Outcome busy(long waitNanos) {
        return waitNanos == 0 ? LockMetrics.Outcome.BUSY : LockMetrics.Outcome.TIMEOUT;
    }

    @Override
    public EngineHealth health() {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("datasource", connections.dataSourceName());
        LockEngine engine;
        try {
            engine = engine();
        } catch (RuntimeException e) {
            data.put("engine", "not chosen yet: " + mode);
            return EngineHealth.down("the lock engine could not be chosen: " + e.getMessage(), data);
        }
        data.put("engine", engine.mode().toString());
        data.put("engine chosen because", reason);
        return engine.health().withFirst(data);
    }

    @Override
    public boolean isLocked(String name, String serverName) {
        return engine().isLocked(name, serverName);
    }

    @Override
    public Optional<LockInfo> inspect(String name, String serverName) {
        return engine().inspect(name, serverName);
    }

    @Override
    public List<LockInfo> held() {
        LockEngine engine = chosen;
        return engine == null ? List.of() : engine.held();
    }

    @Override
    public List<LockInfo> holders() {
        return engine().holders();
    }

    @Override
    public boolean forceRelease(String name, String serverName) {
        return engine().forceRelease(name, serverName);
    }

    @Override
    public LockMode mode() {
        return engine().mode();
    }

    @Override
    public void close() {
        LockEngine engine = chosen;
        if (engine != null) {
            engine.close();
        } else {
            connections.close();
        }
    }
}
