package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.coordination.Election;
import io.quarkiverse.mysqllock.runtime.coordination.TermConfirmation;
import io.quarkiverse.mysqllock.runtime.coordination.TermWork;
import io.quarkiverse.mysqllock.runtime.features.HandleReleases;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A term that ends between becoming current and the start of its work (a step-down, a close, a loss at that moment):
 * its work never starts, and its revocation is announced. Before, the work started after its term's stop, ran beside
 * the next leader uninterrupted, and the campaign waited for it for ever without announcing the revocation. The
 * election runs on a real manager; the moment is forced by holding the campaign when it registers its loss listener.
 */
class TermEndedBeforeItsWorkTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aTermSteppedDownBeforeItsWorkStartsNeverStartsIt() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("term-race").mode(Mode.LEASE).start()) {
            CountDownLatch registering = new CountDownLatch(1);
            CountDownLatch proceed = new CountDownLatch(1);
            List<Object> events = new CopyOnWriteArrayList<>();
            Election election = new Election(heldAtOnLost(instance.locks, registering, proceed), "raced", events::add,
                    HandleReleases::releaseReportingLoss, () -> false,
                    new TermConfirmation(() -> TermConfirmation.Window.NONE, HandleReleases::confirmedWithin));
            RecordingWork work = new RecordingWork();
            election.addTermWork(work);
            election.join();
            try {
                assertThat(registering.await(20, TimeUnit.SECONDS)).as("a term became current").isTrue();
                election.stepDown(Duration.ofMinutes(1));
                proceed.countDown();

                Await.until("the revocation announced", Duration.ofSeconds(20),
                        () -> events.stream().anyMatch(LeadershipRevoked.class::isInstance));
                assertThat(work.started.get()).as("the work of a term that had ended").isNull();
                assertThat(election.isLeader()).isFalse();
            } finally {
                proceed.countDown();
                election.close();
                Thread running = work.started.get();
                if (running != null) {
                    running.interrupt();
                }
            }
        }
    }

    /** Work that runs until interrupted, as a {@code @WhileLeader} method does. */
    private static final class RecordingWork implements TermWork {
        final AtomicReference<Thread> started = new AtomicReference<>();

        @Override
        public void start(LeadershipGranted granted) {
            Thread thread = new Thread(() -> {
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    // stopped
                }
            }, "term-work-" + granted.term());
            started.set(thread);
            thread.start();
        }

        @Override
        public void stop(long term) {
            Thread thread = started.get();
            if (thread != null) {
                thread.interrupt();
            }
        }

        @Override
        public boolean awaitStopped(long term, long nanos) {
            Thread thread = started.get();
            if (thread == null) {
                return true;
            }
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            return !thread.isAlive();
        }
    }

    /**
     * The manager, whose handles hold the calling thread when a loss listener is registered on them (the moment a term
     * became current and its work is about to start) until {@code proceed}.
     */
    private static LockManager heldAtOnLost(LockManager locks, CountDownLatch registering, CountDownLatch proceed) {
        return (LockManager) Proxy.newProxyInstance(LockManager.class.getClassLoader(), new Class<?>[] { LockManager.class },
                (proxy, method, args) -> {
                    Object result = invoke(method, locks, args);
                    if (method.getName().equals("tryAcquire") && result instanceof Optional<?> handle
                            && handle.isPresent()) {
                        return Optional.of(holdingAtOnLost((LockHandle) handle.get(), registering, proceed));
                    }
                    return result;
                });
    }

    private static LockHandle holdingAtOnLost(LockHandle handle, CountDownLatch registering, CountDownLatch proceed) {
        return (LockHandle) Proxy.newProxyInstance(LockHandle.class.getClassLoader(), new Class<?>[] { LockHandle.class },
                (proxy, method, args) -> {
                    if (method.getName().equals("onLost")) {
                        registering.countDown();
                        // held until the test says so (its finally lets it proceed whatever happened), never by a
                        // clock: a campaign let go early would end the race before the step-down
                        proceed.await();
                        invoke(method, handle, args);
                        return proxy;
                    }
                    return invoke(method, handle, args);
                });
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
