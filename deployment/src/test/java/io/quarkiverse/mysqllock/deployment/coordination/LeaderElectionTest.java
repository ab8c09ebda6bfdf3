package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LeadershipRevoked.Reason;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Leader election between two instances: one leader at a time, terms that increase, hand-over on step-down and on
 * leaving without a moment of two leaders, revocation on loss, and the CDI events of each term in order.
 */
class LeaderElectionTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Journal.class);

    @Inject
    LockManager locks;

    /** The application's observers of the election events. */
    @ApplicationScoped
    public static class Journal {

        static final List<Object> EVENTS = new CopyOnWriteArrayList<>();
        /** What the observer does when it is told of a grant, by role. */
        static final Map<String, Consumer<LeadershipGranted>> ON_GRANT = new ConcurrentHashMap<>();

        void granted(@Observes LeadershipGranted granted) {
            EVENTS.add(granted);
            ON_GRANT.getOrDefault(granted.role(), g -> {
            }).accept(granted);
            if (granted.role().equals("lead:throws")) {
                throw new AssertionError("an observer that fails with an Error");
            }
        }

        void revoked(@Observes LeadershipRevoked revoked) {
            EVENTS.add(revoked);
        }

        static List<Object> of(String role) {
            return EVENTS.stream().filter(event -> event instanceof LeadershipGranted g ? g.role().equals(role)
                    : ((LeadershipRevoked) event).role().equals(role)).toList();
        }
    }

    @Test
    void everyInstanceSeesWhoLeads() {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            String role = "who:" + mode;
            try (StandaloneLocks a = instance("who-" + mode + "-a", mode);
                    StandaloneLocks b = instance("who-" + mode + "-b", mode)) {
                LeaderElection onA = a.locks.election(role);
                LeaderElection onB = b.locks.election(role);
                assertThat(onB.leader()).as("nobody leads yet").isEmpty();
                onA.join();
                LockApp.await("a to lead", Duration.ofSeconds(10), onA::isLeader);
                long term = onA.term().orElseThrow();
                assertThat(onA.leader()).hasValueSatisfying(leader -> {
                    assertThat(leader.name()).isEqualTo(role);
                    assertThat(leader.holder()).contains("who-" + mode + "-a");
                    assertThat(leader.fencingToken()).isEqualTo(term);
                });
                // b never joined, and sees a lead: by identity and term on LEASE, by connection on NAMED
                assertThat(onB.leader()).hasValueSatisfying(leader -> assertThat(leader.holder())
                        .contains(mode == Mode.LEASE ? "who-LEASE-a" : "server connection"));
                if (mode == Mode.LEASE) {
                    assertThat(onB.leader().orElseThrow().fencingToken()).isEqualTo(term);
                }
                onA.close();
                LockApp.await("the role to be free", Duration.ofSeconds(10), () -> onB.leader().isEmpty());
            }
        }
    }

    @Test
    void namedHandsOverWithoutTwoLeaders() throws Exception {
        handsOverWithoutTwoLeaders(Mode.NAMED);
    }

    @Test
    void leaseHandsOverWithoutTwoLeaders() throws Exception {
        handsOverWithoutTwoLeaders(Mode.LEASE);
    }

    private void handsOverWithoutTwoLeaders(Mode mode) throws Exception {
        String role = "lead:" + mode;
        try (StandaloneLocks a = instance("lead-" + mode + "-a", mode);
                StandaloneLocks b = instance("lead-" + mode + "-b", mode)) {
            LeaderElection onA = a.locks.election(role);
            LeaderElection onB = b.locks.election(role);
            assertThat(onA.isLeader()).isFalse();
            assertThat(a.locks.election(role)).isSameAs(onA);
            BothLead bothLead = new BothLead(onA, onB);
            try {
                onA.join();
                onB.join().join();
                LockApp.await("a leader", Duration.ofSeconds(10), () -> onA.isLeader() || onB.isLeader());
                LeaderElection first = onA.isLeader() ? onA : onB;
                LeaderElection second = first == onA ? onB : onA;
                long firstTerm = first.term().orElseThrow();

                first.stepDown(Duration.ofMillis(500));
                assertThat(first.isLeader()).isFalse();
                assertThat(first.term()).isEmpty();
                LockApp.await("the hand-over", Duration.ofSeconds(10), second::isLeader);
                long secondTerm = second.term().orElseThrow();
                assertThat(secondTerm).isGreaterThan(firstTerm);

                second.close();
                assertThat(second.isLeader()).isFalse();
                LockApp.await("the first to lead again", Duration.ofSeconds(10), first::isLeader);
                long thirdTerm = first.term().orElseThrow();
                assertThat(thirdTerm).isGreaterThan(secondTerm);
                first.close();
                assertThat(first.isLeader()).isFalse();

                LockApp.await("every term's end announced", Duration.ofSeconds(30), () -> Journal.of(role).size() == 6);
                // Each term's grant comes before its revocation; the two instances' events interleave (the next
                // leader may be told before the former one).
                List<Object> events = Journal.of(role);
                assertThat(events).containsExactlyInAnyOrder(new LeadershipGranted(role, firstTerm),
                        new LeadershipRevoked(role, firstTerm, Reason.STEPPED_DOWN, null),
                        new LeadershipGranted(role, secondTerm),
                        new LeadershipRevoked(role, secondTerm, Reason.LEFT, null),
                        new LeadershipGranted(role, thirdTerm),
                        new LeadershipRevoked(role, thirdTerm, Reason.LEFT, null));
                for (long term : List.of(firstTerm, secondTerm, thirdTerm)) {
                    assertThat(events.indexOf(new LeadershipGranted(role, term))).as("term " + term).isLessThan(
                            events.indexOf(events.stream().filter(event -> event instanceof LeadershipRevoked revoked
                                    && revoked.term() == term).findFirst().orElseThrow()));
                }
                assertThat(a.locks.held()).isEmpty();
                assertThat(b.locks.held()).isEmpty();
            } finally {
                bothLead.stop();
            }
            assertThat(bothLead.moments()).as("moments when both instances said they led").isZero();
        }
    }

    @Test
    void namedLossOfTheSessionRevokesAndTheStandbyTakesOver() throws Exception {
        try (StandaloneLocks a = instance("lost-named-a", Mode.NAMED);
                StandaloneLocks b = instance("lost-named-b", Mode.NAMED)) {
            String role = "lost:named";
            LeaderElection leader = a.locks.election(role).join();
            LockApp.await("a to lead", Duration.ofSeconds(10), leader::isLeader);
            LeaderElection standby = b.locks.election(role).join();
            long term = leader.term().orElseThrow();
            TestDatabase.shared().kill(ServerState.holder(role + "#leader").orElseThrow());
            lossRevokesAndTheStandbyTakesOver(role, leader, standby, term, LockLostException.Reason.CONNECTION_LOST);
        }
    }

    @Test
    void leaseLossOfTheLeaseRevokesAndTheStandbyTakesOver() throws Exception {
        try (StandaloneLocks a = instance("lost-lease-a", Mode.LEASE);
                StandaloneLocks b = instance("lost-lease-b", Mode.LEASE)) {
            String role = "lost:lease";
            LeaderElection leader = a.locks.election(role).join();
            LockApp.await("a to lead", Duration.ofSeconds(10), leader::isLeader);
            LeaderElection standby = b.locks.election(role).join();
            long term = leader.term().orElseThrow();
            assertThat(b.locks.forceRelease(role + "#leader")).isTrue();
            lossRevokesAndTheStandbyTakesOver(role, leader, standby, term, LockLostException.Reason.NOT_HELD);
        }
    }

    private static void lossRevokesAndTheStandbyTakesOver(String role, LeaderElection leader, LeaderElection standby,
            long term, LockLostException.Reason reason) {
        // The two instances' events interleave: the standby may be granted before the former leader is told.
        LockApp.await("the revocation", Duration.ofSeconds(10), () -> Journal.of(role).stream()
                .anyMatch(event -> event instanceof LeadershipRevoked revoked && revoked.term() == term));
        assertThat(Journal.of(role)).filteredOn(LeadershipRevoked.class::isInstance).singleElement()
                .isInstanceOfSatisfying(LeadershipRevoked.class, revoked -> {
                    assertThat(revoked.reason()).isEqualTo(Reason.LOST);
                    assertThat(revoked.loss().reason()).isEqualTo(reason);
                });
        assertThat(leader.isLeader()).isFalse();
        LockApp.await("a new leader", Duration.ofSeconds(10), () -> standby.isLeader() || leader.isLeader());
        LeaderElection now = standby.isLeader() ? standby : leader;
        assertThat(now.term().orElseThrow()).isGreaterThan(term);
        leader.close();
        standby.close();
    }

    /** Leaving and joining again, at once: one campaign at a time, terms in order, nothing left held. */
    @Test
    void leavingAndJoiningAgainKeepsOneCampaign() {
        try (StandaloneLocks a = instance("rejoin-a", Mode.NAMED)) {
            String role = "lead:rejoin";
            LeaderElection election = a.locks.election(role).join();
            LockApp.await("a to lead", Duration.ofSeconds(10), election::isLeader);
            long first = election.term().orElseThrow();
            election.close();
            election.join();
            LockApp.await("a to lead again", Duration.ofSeconds(10), election::isLeader);
            long second = election.term().orElseThrow();
            assertThat(second).isGreaterThan(first);
            election.close();
            assertThat(Journal.of(role)).containsExactly(new LeadershipGranted(role, first),
                    new LeadershipRevoked(role, first, Reason.LEFT, null), new LeadershipGranted(role, second),
                    new LeadershipRevoked(role, second, Reason.LEFT, null));
            assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
                    .doesNotContain("mysql-lock-election-" + role);
            assertThat(a.locks.held()).isEmpty();
        }
    }

    /** An observer failing with an Error changes nothing: the term goes on, and ends when the election is left. */
    @Test
    void anObserverThatThrowsAnErrorChangesNothing() {
        try (StandaloneLocks a = instance("throws-a", Mode.LEASE)) {
            String role = "lead:throws";
            LeaderElection election = a.locks.election(role).join();
            LockApp.await("a to lead", Duration.ofSeconds(10), election::isLeader);
            long term = election.term().orElseThrow();
            assertThat(election.isLeader()).isTrue();
            election.close();
            assertThat(Journal.of(role)).containsExactly(new LeadershipGranted(role, term),
                    new LeadershipRevoked(role, term, Reason.LEFT, null));
            assertThat(a.locks.held()).isEmpty();
        }
    }

    /**
     * NAMED, strict leadership (the default): the server ends the leader's session (a DBA's KILL), the standby is granted
     * the role at once, and still the two never say they lead at the same moment: the new term begins two keepalive
     * intervals after its grant, and the former leader, whose session no check confirms any more, stops leading first.
     */
    @Test
    void namedLeaderWhoseSessionIsKilledStopsLeadingBeforeTheNextBegins() throws Exception {
        String role = "lead:killed";
        try (StandaloneLocks a = instance("killed-a", Mode.NAMED); StandaloneLocks b = instance("killed-b", Mode.NAMED)) {
            LeaderElection onA = a.locks.election(role);
            LeaderElection onB = b.locks.election(role);
            BothLead bothLead = new BothLead(onA, onB);
            try {
                onA.join();
                LockApp.await("a leader", Duration.ofSeconds(10), onA::isLeader);
                long first = onA.term().orElseThrow();
                onB.join();
                long killedAt = System.nanoTime();
                TestDatabase.shared().kill(ServerState.holder(role + "#leader").orElseThrow());
                LockApp.await("the next leader", Duration.ofSeconds(15), onB::isLeader);
                long handOverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                assertThat(onB.term().orElseThrow()).isGreaterThan(first);
                assertThat(handOverMillis).as("two keepalive intervals after the grant").isGreaterThanOrEqualTo(1000);
                LockApp.await("the former leader's revocation", Duration.ofSeconds(30),
                        () -> Journal.of(role).stream().anyMatch(e -> e instanceof LeadershipRevoked r && r.term() == first));
                LeadershipRevoked revoked = (LeadershipRevoked) Journal.of(role).stream()
                        .filter(e -> e instanceof LeadershipRevoked r && r.term() == first).findFirst().orElseThrow();
                assertThat(revoked.reason()).isEqualTo(Reason.LOST);
            } finally {
                bothLead.stop();
                onA.close();
                onB.close();
            }
            assertThat(bothLead.moments()).as("moments when both instances said they led").isZero();
        }
    }

    /**
     * A term whose lock was lost before it ended is revoked as LOST, even when the step-down's own release is what
     * finds the loss (here: the lease was force-released by another instance while the grant's observer ran).
     */
    @Test
    void aLossFoundByTheStepDownIsRevokedAsALoss() {
        String role = "lead:lost-at-step-down";
        try (StandaloneLocks a = instance("lost-step-a", Mode.LEASE); StandaloneLocks b = instance("lost-step-b", Mode.LEASE)) {
            LeaderElection onA = a.locks.election(role);
            Journal.ON_GRANT.put(role, granted -> {
                assertThat(b.locks.forceRelease(role + "#leader")).isTrue();
                onA.stepDown(Duration.ofMinutes(1));
            });
            onA.join();
            LockApp.await("the term's end announced", Duration.ofSeconds(10), () -> Journal.of(role).size() == 2);
            List<Object> events = Journal.of(role);
            long term = ((LeadershipGranted) events.get(0)).term();
            LeadershipRevoked revoked = (LeadershipRevoked) events.get(1);
            assertThat(revoked.term()).isEqualTo(term);
            assertThat(revoked.reason()).isEqualTo(Reason.LOST);
            assertThat(revoked.loss().reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
            onA.close();
        } finally {
            Journal.ON_GRANT.remove(role);
        }
    }

    @Test
    void aClosedManagerRefusesElections() {
        StandaloneLocks a = instance("closed-a", Mode.NAMED);
        a.close();
        assertThatThrownBy(() -> a.locks.election("lead:closed")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> locks.election(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.election(" ")).isInstanceOf(IllegalArgumentException.class);
        LeaderElection election = locks.election("lead:bad");
        assertThatThrownBy(() -> election.stepDown(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> election.stepDown(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(election.isLeader()).isFalse();
        assertThat(election.term()).isEmpty();
        election.close(); // never joined: nothing to do
        assertThat(election.role()).isEqualTo("lead:bad");
    }

    /**
     * A thread that samples two instances' isLeader() until stopped, counting the moments both said they led. It pauses
     * 50 µs between samples: spinning, it took a whole core from the keepalives and renewals the terms depend on (two
     * cores, busy elsewhere, leave none to spare).
     */
    private static final class BothLead {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicInteger moments = new AtomicInteger();
        private final CompletableFuture<Void> sampler;

        BothLead(LeaderElection one, LeaderElection other) {
            sampler = Background.run(() -> {
                while (!stop.get()) {
                    if (one.isLeader() && other.isLeader()) {
                        moments.incrementAndGet();
                    }
                    LockSupport.parkNanos(50_000);
                }
            });
        }

        void stop() throws Exception {
            stop.set(true);
            sampler.get(10, TimeUnit.SECONDS);
        }

        int moments() {
            return moments.get();
        }
    }

    private static StandaloneLocks instance(String id, Mode mode) {
        return StandaloneLocks.Settings.of(id).mode(mode).table("coordination_" + mode.name().toLowerCase())
                .keepalive(Duration.ofMillis(500))
                .start();
    }
}
