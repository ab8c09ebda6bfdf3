package io.quarkiverse.mysqllock.runtime.fleet;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement.Proposal;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * Chooses the engine once, by {@code quarkus.mysql-lock.mode}, the database's topology and what the fleet of instances
 * sharing the lock table agreed on ({@link EngineAgreement}), and logs why. The choice is made at start-up when the
 * database answers, else at first use: an application whose database is down starts anyway.
 */
public final class SelectingEngine implements LockEngine {

    private static final Logger LOG = Logger.getLogger(SelectingEngine.class);

    /** {@code quarkus.mysql-lock.mode}: the engine it names, or empty for AUTO. */
    private final Optional<LockMode> mode;
    private final Optional<Boolean> replication;
    private final Optional<String> urlProblem;
    private final ConnectionSource connections;
    private final String identity;
    private final LockTable table;
    private final EngineAgreement agreement;
    /** How long a membership of the fleet lasts, and how long before its end each engine counts it as lapsed. */
    private final LockTimings timings;
    private final Function<Membership, LockEngine> named;
    private final Function<Membership, LockEngine> lease;
    private volatile LockEngine chosen;
    private volatile Membership membership;
    private volatile String reason;
    private volatile String afterReadOnly;
    /** Told of the engine once it is chosen (the metrics' gauges). */
    private final Consumer<LockEngine> onChosen;

    /**
     * @param mode the engine {@code quarkus.mysql-lock.mode} names, or empty for AUTO
     * @param timings how long this instance's membership of its fleet lasts unless renewed, and how long before its end
     *        each engine counts it as lapsed
     */
    public SelectingEngine(Optional<LockMode> mode, Optional<Boolean> replication, Optional<String> urlProblem,
            ConnectionSource connections, LockTable table, EngineAgreement agreement, String identity, LockTimings timings,
            Function<Membership, LockEngine> named,
            Function<Membership, LockEngine> lease, Consumer<LockEngine> onChosen) {
        this.onChosen = onChosen;
        this.table = table;
        this.agreement = agreement;
        this.mode = mode;
        this.replication = replication;
        this.urlProblem = urlProblem;
        this.connections = connections;
        this.identity = identity;
        this.timings = timings;
        this.named = named;
        this.lease = lease;
        connections.onReadOnly(this::recheckTopology);
    }

    /**
     * Chooses now if the database answers, having checked the lock table. A refusal (NAMED on Galera, a fleet that uses
     * the other engine, a missing or altered table, ...) stops the start-up.
     */
    public void chooseIfPossible() {
        try {
            engine();
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
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements("(engine choice)", 0);
            Connection raw = borrowed.raw();
            verifyTable(raw);
            ServerVersion server = connections.server(raw);
            Proposal proposal = propose(raw, server);
            long sentAt = System.nanoTime();
            EngineAgreement.Outcome outcome = agree(raw, proposal);
            EngineAgreement.Refusal first = outcome.refusal();
            if (first != null && first.retryAfterNanos() > 0) {
                // Members of the other engine may be dead: wait while none renews, until their memberships expire.
                long until = System.nanoTime() + first.retryAfterNanos() + TimeUnit.MILLISECONDS.toNanos(200);
                LOG.infof("Waiting up to %d ms for the fleet's other instances to stop, unless one renews: %s",
                        TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()), first.message());
                while (outcome.refusal() != null && outcome.refusal().latestExpiryMicros() <= first.latestExpiryMicros()
                        && System.nanoTime() - until < 0) {
                    TimeUnit.MILLISECONDS.sleep(250);
                    sentAt = System.nanoTime();
                    outcome = agree(raw, proposal);
                }
            }
            if (outcome.refusal() != null) {
                throw new ConfigurationException(outcome.refusal().message() + " (datasource '"
                        + connections.dataSourceName() + "')");
            }
            // kept for the engine's housekeeping from now on: a pool the application exhausts later costs no lock
            connections.keepForHousekeeping(borrowed);
            borrowed = null;
            EngineAgreement.Decision decision = outcome.decision();
            boolean isNamed = decision.mode() == LockMode.NAMED;
            Membership membership = new Membership(connections, agreement, decision, timings.memberTtlNanos(),
                    timings.membershipMarginNanos(decision.mode()), sentAt);
            decide(isNamed ? named : lease, membership, decision.mode(), decision.reason());
        } catch (SQLException e) {
            throw new IllegalStateException("Could not choose the lock engine of datasource '"
                    + connections.dataSourceName() + "': " + SqlErrors.describe(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while choosing the lock engine", e);
        } finally {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
        }
    }

    private EngineAgreement.Outcome agree(Connection raw, Proposal proposal) throws SQLException {
        try {
            return table.withTable(raw, () -> agreement.agree(raw, proposal, timings.memberTtlNanos()));
        } catch (IllegalStateException missingTable) {
            throw new ConfigurationException(missingTable.getMessage(), missingTable);
        }
    }

    /** What this instance would choose on its own, by its configuration and the server; or why it cannot start. */
    private Proposal propose(Connection raw, ServerVersion server) throws SQLException {
        Optional<String> versionProblem = server.namedLockProblem();
        if (mode.isEmpty()) {
            return proposeAuto(raw, server, versionProblem);
        }
        return switch (mode.get()) {
            case LEASE -> new Proposal(LockMode.LEASE, "quarkus.mysql-lock.mode=lease", true, Optional.empty());
            case NAMED -> proposeNamed(raw, server, versionProblem);
        };
    }

    /** {@code mode=named}: refused where named locks cannot work. */
    private Proposal proposeNamed(Connection raw, ServerVersion server, Optional<String> versionProblem)
            throws SQLException {
        Topology topology = TopologyProbe.probe(raw, server.mariaDb());
        Optional<String> refused = namedRefusal(topology, versionProblem);
        if (refused.isPresent()) {
            throw refusal(refused.get());
        }
        return new Proposal(LockMode.NAMED, "quarkus.mysql-lock.mode=named", true, Optional.empty());
    }

    /**
     * Why {@code mode=named} cannot run on a server of this topology and version, if it cannot: decided from those
     * values alone, so that it can be tested on what a server would report.
     */
    static Optional<String> namedRefusal(Topology topology, Optional<String> versionProblem) {
        if (topology.galera()) {
            return Optional.of("the server is a Galera cluster node, where GET_LOCK is not supported and named"
                    + " locks are not shared between nodes");
        }
        if (topology.multiPrimary()) {
            return Optional.of("the server is a member of a MySQL Group Replication group in multi-primary mode"
                    + " (group_replication_single_primary_mode=OFF), where named locks are local to each member: every"
                    + " member would grant the same name");
        }
        if (topology.readOnly()) {
            return Optional.of("the server is read-only (@@read_only=1): a replica, or a primary being failed over."
                    + " Named locks taken there are invisible to the primary");
        }
        return versionProblem;
    }

    /** AUTO: NAMED unless the topology (or the configuration) says the locks must be replicated. */
    private Proposal proposeAuto(Connection raw, ServerVersion server, Optional<String> versionProblem)
            throws SQLException {
        Optional<Topology> configured = TopologyProbe.fromConfiguration(replication, urlProblem);
        // replication=false skips replication detection, never what makes named locks impossible: a Galera node or a
        // multi-primary group member (named locks are not shared between nodes) or a read-only server (invisible to
        // the primary)
        Topology topology = configured.isEmpty() ? TopologyProbe.probe(raw, server.mariaDb())
                : configured.get().replicated() ? configured.get()
                        : TopologyProbe.withoutReplicationDetection(configured.get(), raw);
        if (topology.unseen() != null) {
            LOG.warnf("Replication detection on datasource '%s': %s. If replicas read it, set"
                    + " quarkus.mysql-lock.replication=true (the LEASE engine): named locks are not replicated."
                    + " Set it to false to choose NAMED without replication detection", connections.dataSourceName(),
                    topology.unseen());
        }
        return autoProposal(topology, urlProblem, versionProblem);
    }

    /**
     * What AUTO proposes for this topology, datasource URL and server version: decided from those values alone, so that
     * it can be tested on what a server would report.
     */
    static Proposal autoProposal(Topology topology, Optional<String> urlProblem, Optional<String> versionProblem) {
        Optional<String> namedImpossible = urlProblem
                .or(() -> topology.galera() ? Optional.of("the server is a Galera cluster node") : Optional.empty())
                .or(() -> topology.multiPrimary()
                        ? Optional.of("the server is a member of a multi-primary Group Replication group")
                        : Optional.empty())
                .or(() -> topology.readOnly() ? Optional.of("the server is read-only") : Optional.empty())
                .or(() -> versionProblem);
        if (topology.namedLocksLocal() && !topology.replicated()) {
            return new Proposal(LockMode.LEASE, topology.reason(), false, namedImpossible);
        }
        if (topology.replicated() || topology.namedLocksLocal()) {
            return new Proposal(LockMode.LEASE, "replication is configured: " + topology.reason()
                    + " (named locks are not replicated)", false, namedImpossible);
        }
        if (topology.readOnly()) {
            return new Proposal(LockMode.LEASE, "the server is read-only (a replica, or a primary being failed"
                    + " over), where named locks would be invisible to the primary", false, namedImpossible);
        }
        if (versionProblem.isPresent()) {
            return new Proposal(LockMode.LEASE, versionProblem.get(), false, namedImpossible);
        }
        return new Proposal(LockMode.NAMED, "no replication is configured: " + topology.reason(), false,
                namedImpossible);
    }

    /**
     * After the pool was found on a read-only server (a failover that demoted the primary): what new connections reach
     * now, logged and kept for the health check. The engine stays the one the fleet agreed on.
     */
    private void recheckTopology() {
        try {
            Topology topology = connections.query("(topology check)", "check the topology",
                    raw -> TopologyProbe.probe(raw, connections.server(raw).mariaDb()));
            LockEngine engine = chosen;
            afterReadOnly = (topology.readOnly() ? "new connections still reach a read-only server"
                    : "new connections reach a writable server") + "; it reports: " + topology.reason();
            if (engine != null && engine.mode() == LockMode.NAMED
                    && (topology.replicated() || topology.namedLocksLocal())) {
                LOG.warnf("The lock database of datasource '%s' failed over: %s. This fleet uses the NAMED engine, whose"
                        + " locks are not replicated: to move it to leases, stop every instance and start them with"
                        + " quarkus.mysql-lock.mode=lease", connections.dataSourceName(), afterReadOnly);
            } else {
                LOG.infof("The lock database of datasource '%s' was found read-only: %s", connections.dataSourceName(),
                        afterReadOnly);
            }
        } catch (RuntimeException e) {
            LOG.infof("The lock database of datasource '%s' was found read-only, and checking it again failed: %s",
                    connections.dataSourceName(), e.getMessage());
        }
    }

    /** The lock table: there, when its creation is disabled, and able to hold a lease's version. */
    private void verifyTable(Connection raw) throws SQLException {
        try {
            table.verify(raw, OwnerTokens.longest(identity));
        } catch (IllegalStateException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
    }

    private ConfigurationException refusal(String why) {
        return new ConfigurationException("quarkus.mysql-lock.mode=named is refused on datasource '"
                + connections.dataSourceName() + "': " + why + ". Use quarkus.mysql-lock.mode=lease (or auto).");
    }

    private void decide(Function<Membership, LockEngine> engine, Membership member, LockMode lockMode, String why) {
        reason = why;
        membership = member;
        LockEngine made = engine.apply(member);
        chosen = made;
        onChosen.accept(made);
        LOG.infof("Distributed locks: %s engine on datasource '%s' as %s, because %s", lockMode,
                connections.dataSourceName(), identity, why);
    }

    @Override
    public ControlledHandle acquire(LockRequest request) {
        String name = request.name();
        LockEngine engine;
        try {
            engine = engine();
        } catch (ConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockNotAcquiredException(name, Duration.ZERO, LockNotAcquiredException.Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: the lock engine is chosen at first use, and " + e.getMessage(),
                    e);
        }
        return engine.acquire(request);
    }

    /** The engine's mode once it is chosen, else null (no database answer yet); never chooses. */
    public LockMode chosenMode() {
        LockEngine engine = chosen;
        return engine == null ? null : engine.mode();
    }

    @Override
    public EngineHealth health() {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("datasource", connections.dataSourceName());
        LockEngine engine;
        try {
            engine = engine();
        } catch (RuntimeException e) {
            data.put("engine", "not chosen yet: " + mode.map(LockMode::name).orElse("AUTO"));
            return EngineHealth.down("the lock engine could not be chosen: " + e.getMessage(), data);
        }
        data.put("engine", engine.mode().toString());
        data.put("engine chosen because", reason);
        if (afterReadOnly != null) {
            data.put("after the database was found read-only", afterReadOnly);
        }
        EngineHealth health = engine.health().withFirst(data);
        Membership member = membership;
        if (member == null || !health.isUp()) {
            return health;
        }
        if (member.outBecause() != null) {
            return EngineHealth.down(member.outBecause(), health.data());
        }
        if (!member.confirmed(System.nanoTime()) && !member.renew()) {
            return EngineHealth.down("this instance could not confirm its membership of its fleet in the lock table:"
                    + " it grants no lock until it can", health.data());
        }
        return health;
    }

    @Override
    public boolean isLocked(LockName lock) {
        return engine().isLocked(lock);
    }

    @Override
    public Optional<LockInfo> inspect(LockName lock) {
        return engine().inspect(lock);
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
    public boolean forceRelease(LockName lock) {
        return engine().forceRelease(lock);
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
