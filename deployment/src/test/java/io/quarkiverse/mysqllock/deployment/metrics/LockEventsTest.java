package io.quarkiverse.mysqllock.deployment.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.ObservesAsync;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Every acquisition, release and loss of this instance's locks is a CDI event: one observer sees them all, without a
 * listener per handle; an observer that throws changes nothing for the lock.
 */
class LockEventsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Observer.class);

    @Inject
    LockManager locks;

    @Inject
    Observer observer;

    @Singleton
    public static class Observer {
        final List<LockEvent> seen = new CopyOnWriteArrayList<>();
        final List<LockEvent> seenAsync = new CopyOnWriteArrayList<>();

        void on(@Observes LockEvent event) {
            seen.add(event);
            if (event.name().equals("events:throwing")) {
                throw new IllegalStateException("an observer's own bug");
            }
        }

        void onAsync(@ObservesAsync LockEvent event) {
            seenAsync.add(event);
        }

        List<LockEvent> of(String name) {
            return seen.stream().filter(event -> event.name().equals(name)).toList();
        }
    }

    @Test
    void acquisitionAndReleaseAreEvents() {
        LockHandle handle = locks.acquire("events:one", Duration.ZERO);
        List<LockEvent> acquired = observer.of("events:one");
        assertThat(acquired).hasSize(1);
        assertThat(acquired.get(0).kind()).isEqualTo(LockEvent.Kind.ACQUIRED);
        assertThat(acquired.get(0).engine()).isEqualTo(locks.mode());
        assertThat(acquired.get(0).holder()).isNotBlank();
        assertThat(acquired.get(0).waited().isNegative()).isFalse();
        handle.release();
        List<LockEvent> both = observer.of("events:one");
        assertThat(both).extracting(LockEvent::kind).containsExactly(LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED);
        assertThat(both.get(1).held()).isPositive();
        assertThat(both.get(1).loss()).isNull();
        LockApp.await("the asynchronous observer", Duration.ofSeconds(30), () -> observer.seenAsync.stream()
                .filter(event -> event.name().equals("events:one")).count() == 2);
    }

    @Test
    void anObserverThatThrowsChangesNothingForTheLock() {
        LockHandle handle = locks.acquire("events:throwing", Duration.ZERO);
        assertThat(handle.isValid()).isTrue();
        handle.release();
        assertThat(locks.isLocked("events:throwing")).isFalse();
        assertThat(observer.of("events:throwing")).extracting(LockEvent::kind)
                .containsExactly(LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED);
    }

    @Test
    void aLossIsAnEventWithItsReasonAndTheLeaseFence() {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("events-a").mode(Mode.LEASE).table("events_lock").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("events-b").mode(Mode.LEASE).table("events_lock").start()) {
            LockHandle handle = a.locks.acquire("events:lost", Duration.ZERO);
            long fence = handle.fencingToken();
            assertThat(b.locks.forceRelease("events:lost")).isTrue();
            LockApp.await("the loss event", Duration.ofSeconds(30), () -> observer.of("events:lost").size() == 2);
            List<LockEvent> events = observer.of("events:lost");
            assertThat(events).extracting(LockEvent::kind).containsExactly(LockEvent.Kind.ACQUIRED, LockEvent.Kind.LOST);
            assertThat(events).allMatch(event -> event.engine() == LockMode.LEASE && event.fencingToken() == fence);
            assertThat(events.get(1).loss().reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
            handle.release();
            assertThat(observer.of("events:lost")).as("no RELEASED after the loss").hasSize(2);
        }
    }

    /** A loss that the release itself finds (no renewal saw it yet) ends the hold with LOST, not RELEASED. */
    @Test
    void aLossFoundByTheReleaseIsALossEvent() {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("events-c").mode(Mode.LEASE).table("events_lock").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("events-d").mode(Mode.LEASE).table("events_lock").start()) {
            LockHandle handle = a.locks.acquire("events:lost-at-release", Duration.ZERO);
            assertThat(b.locks.forceRelease("events:lost-at-release")).isTrue();
            handle.release();
            LockApp.await("the end event", Duration.ofSeconds(30),
                    () -> observer.of("events:lost-at-release").size() == 2);
            List<LockEvent> events = observer.of("events:lost-at-release");
            assertThat(events).extracting(LockEvent::kind).containsExactly(LockEvent.Kind.ACQUIRED, LockEvent.Kind.LOST);
            assertThat(events.get(1).loss().reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
        }
    }
}
