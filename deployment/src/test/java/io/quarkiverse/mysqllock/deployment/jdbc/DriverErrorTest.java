package io.quarkiverse.mysqllock.deployment.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A statement on a pinned connection that ends with the driver's RuntimeException instead of an answer (a driver bug)
 * leaves the session in doubt: whether the server granted or released the lock is unknown. The session is destroyed
 * (which frees whatever it held on the server) and its locks reported lost, and the acquisition is refused once, not
 * retried on connection after connection. Before, the RuntimeException went through to the caller and left the
 * connection pinned: after a GET_LOCK for good, after a RELEASE_LOCK holding the name on the server.
 * <p>
 * LEASE: a take whose answer the driver loses may have committed; it is given up before the caller is answered, so the
 * name is not left held by an owner token nobody has until its ttl ends.
 */
class DriverErrorTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(FaultyDriver.class);

    /**
     * MySQL Connector/J whose statements throw a RuntimeException, without reaching the server, while their text starts
     * as armed.
     */
    public static final class FaultyDriver implements Driver {
        static volatile String failBefore;
        /** Besides: every statement whose text contains this fails too, before it reaches the server; null: none. */
        static volatile String alsoFailing;
        static volatile boolean once = true;
        static final AtomicInteger FAILURES = new AtomicInteger();

        private final Driver mysql;

        public FaultyDriver() throws SQLException {
            this.mysql = new com.mysql.cj.jdbc.Driver();
        }

        /** Whether the armed statement runs on the server before the failure (its outcome is then unknown). */
        static volatile boolean afterExecution;
        /** Whether the failure is an Error rather than a RuntimeException. */
        static volatile boolean asError;

        static void arm(String statementStart, boolean onlyOnce) {
            arm(statementStart, onlyOnce, false, false);
        }

        static void arm(String statementStart, boolean onlyOnce, boolean afterExecuting, boolean error) {
            once = onlyOnce;
            afterExecution = afterExecuting;
            asError = error;
            FAILURES.set(0);
            failBefore = statementStart;
        }

        /** Runs the statement, failing before or after it reaches the server if it is armed. */
        private static Object execute(String sql, Object target, Method method, Object[] args) throws Throwable {
            String armed = failBefore;
            String also = alsoFailing;
            if (also != null && sql != null && sql.contains(also) && (armed == null || !sql.startsWith(armed))) {
                FAILURES.incrementAndGet();
                throw new IllegalStateException("a driver bug before " + also);
            }
            if (armed == null || sql == null || !sql.startsWith(armed)) {
                return invoke(target, method, args);
            }
            if (once) {
                failBefore = null;
            }
            FAILURES.incrementAndGet();
            if (afterExecution) {
                invoke(target, method, args);
            }
            String message = "a driver bug in the middle of " + armed;
            throw asError ? new AssertionError(message) : new IllegalStateException(message);
        }

        @Override
        public Connection connect(String url, Properties info) throws SQLException {
            Connection real = mysql.connect(url, info);
            return real == null ? null : wrap(Connection.class, real, (proxy, method, args) -> {
                if (method.getName().equals("unwrap") && ((Class<?>) args[0]).isInstance(proxy)) {
                    return proxy;
                }
                Object result = invoke(real, method, args);
                if (method.getName().equals("prepareStatement") && result instanceof PreparedStatement prepared) {
                    String sql = (String) args[0];
                    return wrap(PreparedStatement.class, prepared, (p, m, a) -> {
                        return m.getName().startsWith("execute") ? execute(sql, prepared, m, a) : invoke(prepared, m, a);
                    });
                }
                if (method.getName().equals("createStatement") && result instanceof Statement statement) {
                    return wrap(Statement.class, statement, (p, m, a) -> {
                        return m.getName().startsWith("execute") && a != null && a.length > 0 && a[0] instanceof String sql
                                ? execute(sql, statement, m, a)
                                : invoke(statement, m, a);
                    });
                }
                return result;
            });
        }

        private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }

        private static <T> T wrap(Class<T> type, T target, InvocationHandler handler) {
            return type.cast(Proxy.newProxyInstance(FaultyDriver.class.getClassLoader(), new Class<?>[] { type }, handler));
        }

        @Override
        public boolean acceptsURL(String url) throws SQLException {
            return mysql.acceptsURL(url);
        }

        @Override
        public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
            return mysql.getPropertyInfo(url, info);
        }

        @Override
        public int getMajorVersion() {
            return mysql.getMajorVersion();
        }

        @Override
        public int getMinorVersion() {
            return mysql.getMinorVersion();
        }

        @Override
        public boolean jdbcCompliant() {
            return false;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }
    }

    @AfterEach
    void disarm() {
        FaultyDriver.failBefore = null;
        FaultyDriver.alsoFailing = null;
    }

    private static StandaloneLocks instance(String id, int sharedConnections) {
        return StandaloneLocks.Settings.of(id).mode(Mode.NAMED).sharedConnections(sharedConnections)
                .driver(FaultyDriver.class).start();
    }

    /**
     * A term that cannot begin (its fencing token, the term's number, could not be read: here a driver failure, in the
     * fault suite a database restart) costs that term only: the election campaigns on and leads. It used to take the
     * failure for a closed manager and leave the election for good.
     */
    @Test
    void anElectionCampaignsOnWhenATermCouldNotBegin() {
        // strict leadership: a term begins two keepalive intervals after its grant (a fleet of its own: the
        // application's instance, with the default 10 s keepalive, would make it wait 20 s)
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("driver-fails-term").mode(Mode.NAMED)
                .table("driver_term").sharedConnections(1).keepalive(Duration.ofMillis(500)).driver(FaultyDriver.class)
                .start()) {
            FaultyDriver.arm("SELECT IS_USED_LOCK", true);
            LeaderElection election = instance.locks.election("driver:term").join();
            LockApp.await("a term after the failed one", Duration.ofSeconds(15), election::isLeader);
            assertThat(FaultyDriver.FAILURES.get()).isEqualTo(1);
            election.close();
            assertThat(instance.locks.held()).isEmpty();
        }
    }

    @Test
    void aGetLockThatFailsInTheDriverDestroysItsConnection() {
        // no shared connections: the lock is asked for on a connection of the thread's own
        try (StandaloneLocks instance = instance("driver-fails-get", 0)) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            FaultyDriver.arm("SELECT GET_LOCK", true);
            assertThatThrownBy(() -> instance.locks.acquire("driver:get", Duration.ofMillis(200)))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("a driver bug");
            assertThat(FaultyDriver.FAILURES.get()).isEqualTo(1);
            assertThat(engine.pinnedConnections()).as(engine.describePinned().toString()).isZero();
            assertThat(ServerState.holder("driver:get")).isEmpty();
            instance.locks.acquire("driver:get", Duration.ZERO).release();
            assertThat(engine.pinnedConnections()).isZero();
        }
    }

    @Test
    void aGetLockThatKeepsFailingOnASharedConnectionCostsOneConnectionAndItsLocks() {
        try (StandaloneLocks instance = instance("driver-fails-shared", 4)) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            LockHandle tenant = instance.locks.acquire("driver:tenant", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            tenant.onLost(lost::add);
            assertThat(engine.pinnedConnections()).isEqualTo(1);

            FaultyDriver.arm("SELECT GET_LOCK", false); // every GET_LOCK fails from now on
            assertThatThrownBy(() -> instance.locks.tryAcquire("driver:shared"))
                    .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("a driver bug");
            assertThat(FaultyDriver.FAILURES.get()).as("attempts: not retried on other connections").isEqualTo(1);

            // the session in doubt is gone, and with it the lock of its co-tenant, which is told
            LockApp.await("the co-tenant to be told", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.CONNECTION_LOST);
            awaitFreedOnTheServer("driver:tenant");
            assertThat(engine.pinnedConnections()).as(engine.describePinned().toString()).isZero();
            tenant.release();
        }
    }

    @Test
    void aReleaseThatFailsInTheDriverFreesTheNameAndReportsTheLoss() {
        try (StandaloneLocks instance = instance("driver-fails-release", 0)) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            LockHandle handle = instance.locks.acquire("driver:release", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);
            FaultyDriver.arm("SELECT RELEASE_LOCK", true);
            handle.release();
            assertThat(FaultyDriver.FAILURES.get()).isEqualTo(1);
            awaitFreedOnTheServer("driver:release");
            assertThat(engine.pinnedConnections()).as(engine.describePinned().toString()).isZero();
            LockApp.await("the loss to be reported", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost.get(0).getMessage()).contains("before it was released");
            assertThat(instance.locks.held()).isEmpty();
        }
    }

    /**
     * A destroyed connection's locks are freed by the server once it sees the socket closed, which it does on its own
     * thread, a moment after the abort returned here.
     */
    private static void awaitFreedOnTheServer(String name) {
        LockApp.await(name + " freed with its destroyed connection", Duration.ofSeconds(10),
                () -> ServerState.holder(name).isEmpty());
    }

    // --- LEASE: a take whose answer is lost may have taken the lease on the server ---

    private static final String LEASE_TAKE = Statements.NO_ROW_WAIT + "UPDATE driver_lease_lock SET owner";

    private static StandaloneLocks leaseInstance(String id) {
        return StandaloneLocks.Settings.of(id).mode(Mode.LEASE).table("driver_lease_lock").driver(FaultyDriver.class)
                .start();
    }

    /**
     * The take committed on the server, and the driver failed before its answer came back: the lease it took is given
     * up, not left held by an owner token nobody has. Before, the next take found the name held by "another instance"
     * until the ttl ended.
     */
    @Test
    void aLeaseTakeWhoseAnswerIsLostLeavesNoLeaseBehind() {
        try (StandaloneLocks instance = leaseInstance("driver-lease-lost-answer")) {
            instance.locks.acquire("driver:lease", Duration.ZERO).release();
            FaultyDriver.arm(LEASE_TAKE, true, true, false);
            Optional<LockHandle> handle = instance.locks.tryAcquire("driver:lease");
            assertThat(FaultyDriver.FAILURES.get()).isOne();
            assertThat(handle).as("taken, once the take in doubt was given up").isPresent();
            handle.get().release();
        }
    }

    /**
     * The take's answer is lost and its give-ups fail too: the row may stay taken under a token nobody holds, but it is
     * this instance's, and its next take of the name takes it over at once (before, it watched its own row for a whole
     * lease as if another instance's holder might still count on it).
     */
    @Test
    void aLeaseTakeInDoubtThatCouldNotBeGivenUpIsTakenAgainHereAtOnce() {
        try (StandaloneLocks instance = leaseInstance("driver-lease-doubt")) {
            instance.locks.acquire("driver:doubt", Duration.ZERO).release();
            FaultyDriver.arm(LEASE_TAKE, true, true, false);
            FaultyDriver.alsoFailing = "SET owner = NULL";
            Optional<LockHandle> handle = instance.locks.tryAcquire("driver:doubt");
            assertThat(FaultyDriver.FAILURES.get()).as("the take, and at least the give-up at once").isGreaterThan(1);
            assertThat(handle).as("taken at once, over its own take in doubt").isPresent();
            assertThat(handle.get().fencingToken()).isPositive();
            FaultyDriver.alsoFailing = null;
            handle.get().release();
            assertThat(instance.locks.isLocked("driver:doubt")).isFalse();
        }
    }

    /** The same with an Error: it reaches the caller, and the lease its take may have taken is given up. */
    @Test
    void aLeaseTakeEndingInAnErrorLeavesNoLeaseBehind() {
        try (StandaloneLocks instance = leaseInstance("driver-lease-error")) {
            instance.locks.acquire("driver:lease-error", Duration.ZERO).release();
            FaultyDriver.arm(LEASE_TAKE, true, true, true);
            assertThatThrownBy(() -> instance.locks.tryAcquire("driver:lease-error")).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("a driver bug");
            Optional<LockHandle> handle = instance.locks.tryAcquire("driver:lease-error");
            assertThat(handle).as("free again").isPresent();
            handle.get().release();
        }
    }

    /**
     * An extension that shortens a capped lease, whose statement ran on the server but whose answer was lost: the
     * holder cannot know which end the server keeps, and counts the earlier one. Before, it kept believing in the former
     * end (5 minutes) while the server's lease ended after 1 s and another instance could take it.
     */
    @Test
    void aShorteningExtensionWhoseAnswerIsLostCountsTheEarlierEnd() {
        try (StandaloneLocks instance = leaseInstance("driver-lease-extend")) {
            LockHandle handle = instance.locks.acquire("driver:extend",
                    LockOptions.defaults().holdingAtMost(Duration.ofMinutes(5)));
            FaultyDriver.arm(Statements.NO_ROW_WAIT + "UPDATE driver_lease_lock SET owner = ?, expires_at", true, true,
                    false);
            assertThat(handle.extend(Duration.ofSeconds(1))).as("not known to be extended").isFalse();
            assertThat(FaultyDriver.FAILURES.get()).isOne();
            LockApp.await("the holder to count its lease ended", Duration.ofSeconds(10), () -> !handle.isValid());
            handle.release();
        }
    }
}
