package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.WhileLeader;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** {@code @WhileLeader}: the method runs while this instance leads, is interrupted when the term ends, and again. */
class WhileLeaderTest {

    @RegisterExtension
    // strict leadership: a term begins two keepalive intervals after its grant
    static final QuarkusUnitTest app = LockApp.app(Billing.class)
            .overrideConfigKey("quarkus.mysql-lock.named.keepalive-interval", "500ms");

    @Inject
    LockManager locks;

    @ApplicationScoped
    public static class Billing {

        static final BlockingQueue<Long> STARTED = new LinkedBlockingQueue<>();
        static final BlockingQueue<Long> STOPPED = new LinkedBlockingQueue<>();
        static final BlockingQueue<Long> FAILED = new LinkedBlockingQueue<>();
        static final BlockingQueue<Long> OBSERVED_STARTED = new LinkedBlockingQueue<>();
        static final BlockingQueue<Long> OBSERVED_STOPPED = new LinkedBlockingQueue<>();

        /** The leader's work: runs until interrupted. */
        @WhileLeader("lead:billing")
        void bill(long term) {
            STARTED.add(term);
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                STOPPED.add(term);
            }
        }

        /** A method whose role's CDI observers fail: the method is started and stopped all the same. */
        @WhileLeader("lead:observed")
        void observed(long term) {
            OBSERVED_STARTED.add(term);
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                OBSERVED_STOPPED.add(term);
            }
        }

        void granted(@Observes LeadershipGranted granted) {
            if (granted.role().equals("lead:observed")) {
                throw new IllegalStateException("an application's observer fails");
            }
        }

        void revoked(@Observes LeadershipRevoked revoked) {
            if (revoked.role().equals("lead:observed")) {
                throw new IllegalStateException("an application's observer fails");
            }
        }

        @WhileLeader("lead:failing")
        public void fail(LeadershipGranted granted) {
            FAILED.add(granted.term());
            throw new IllegalStateException("the leader's work failed");
        }
    }

    @Test
    void theMethodRunsWhileLeadingAndStopsWithItsTerm() throws Exception {
        LeaderElection election = locks.election("lead:billing");
        Long first = Billing.STARTED.poll(15, TimeUnit.SECONDS);
        assertThat(first).as("the method started when the application became leader").isNotNull();
        assertThat(election.term()).hasValue(first);

        election.stepDown(Duration.ofMillis(200));
        // stopped before the step-down gave the lock back: the next leader's run never overlaps this one
        assertThat(Billing.STOPPED.poll()).as("stopped when the step-down returned").isEqualTo(first);

        Long second = Billing.STARTED.poll(15, TimeUnit.SECONDS);
        assertThat(second).as("started again in the next term").isNotNull().isGreaterThan(first);
        assertThat(Billing.STOPPED).isEmpty();
    }

    @Test
    void failingObserversOfTheApplicationDoNotKeepTheMethodFromStartingOrStopping() throws Exception {
        LeaderElection election = locks.election("lead:observed");
        Long first = Billing.OBSERVED_STARTED.poll(15, TimeUnit.SECONDS);
        assertThat(first).isNotNull();
        election.stepDown(Duration.ofMillis(200));
        assertThat(Billing.OBSERVED_STOPPED.poll()).isEqualTo(first);
        assertThat(Billing.OBSERVED_STARTED.poll(15, TimeUnit.SECONDS)).isNotNull().isGreaterThan(first);
    }

    @Test
    void aFailingMethodStepsDown() throws Exception {
        LeaderElection election = locks.election("lead:failing");
        Long term = Billing.FAILED.poll(15, TimeUnit.SECONDS);
        assertThat(term).isNotNull();
        LockApp.await("the failed leader to step down", Duration.ofSeconds(10), () -> !election.isLeader());
        // stepped down for the default hand-over (5 s): not leading again at once
        assertThat(Billing.FAILED.poll(1, TimeUnit.SECONDS)).isNull();
    }
}
