package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/** Every misuse of @Locked fails the build, each with a message naming the method and what to change. */
class LockedBuildErrorsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class, Bad.class, BadKotlin.class, Order.class),
            "Invalid @Locked usage",
            "Bad#missingParameter(): lock name template \"order:{orderId}\" refers to parameter 'orderId', which the"
                    + " method does not have (parameters: id)",
            "Bad#missingProperty(): lock name template \"{order.customer}\" refers to 'order.customer', but",
            "Bad#tooFewParameters(): lock name template \"{1}\" refers to parameter 1, but the method has 1 parameter(s)",
            "Bad#hidden() is private: interceptors do not apply to it",
            "Bad#stream() returns Multi",
            "Bad#badWait(): waitFor = \"soon\" is not a duration",
            "Bad#negativeWait(): waitFor = \"-1s\" must be a duration of zero or more",
            "Bad#skipPrimitive() returns int and has onBusy = SKIP",
            "Bad#unclosed(): lock name template \"order:{id\" is invalid: '{' at position 6 is never closed",
            "Bad#capped(): atMostFor = \"100ms\" must be at least 500ms",
            "Bad#cappedBeyondACentury(): Lock option atMostFor must be at most 36500 days (PT876000H), not PT9999999999H",
            "Bad#keptBeyondACentury(): Lock option atLeastFor must be at most 36500 days (PT876000H), not PT9999999999H",
            "Bad#leastBeyondMost(): Lock option atLeastFor (PT2S) must not be longer than atMostFor (PT1S)",
            "Bad#noPermits(): mode = PERMIT needs permits between 1 and 1024, not 0",
            "Bad#tooManyPermits(): mode = PERMIT needs permits between 1 and 1024, not 2000",
            "Bad#permitsWithoutMode(): permits = 3 is for mode = PERMIT only (mode is EXCLUSIVE)",
            "Bad#asyncRead() returns Uni: mode = READ takes its lock blocking",
            "Bad#keptWrite(): mode = WRITE takes no atLeastFor or atMostFor",
            "Bad#scheduledPermit(): mode = PERMIT cannot claim scheduled ticks",
            "Bad#scheduledRead(): mode = READ cannot claim scheduled ticks (its ScheduledExecution parameter)",
            "Bad#scheduledPrimitive() returns long and claims scheduled ticks",
            "the semaphore 'exports' is given different numbers of permits",
            "Bad#interruptedUni() returns Uni and has interruptOnLoss = true, but no thread runs its work",
            "Bad#twoHandles() has more than one LockHandle parameter",
            "Bad#unknownDataSource(): datasource = \"nowhere\" is not a MySQL or MariaDB datasource of the application",
            "BadKotlin#suspending() is a Kotlin suspend function and has interruptOnLoss = true, but no thread runs its work",
            "BadKotlin#skippingValue() is a Kotlin suspend function that returns a value and has onBusy = SKIP",
            "Bad#configuredName(): lock name template \"job:${job.name}\" holds a config expression",
            "Bad#handleInName(): lock name template \"job:{lock}\" refers to the LockHandle parameter",
            "Bad#tickRowName(): lock name template \"tick@nightly\" begins with 'tick@', which is reserved",
            "Bad#scheduledHandle() is @Scheduled and has a LockHandle parameter, which the scheduler cannot pass."
                    + " Remove it and call LockManager.currentLock() inside the method");

    @Test
    void theBuildFails() {
        fail("the application built");
    }

    public record Order(String id) {
    }

    /** Kotlin code as kotlinc compiles it: its class carries {@code @kotlin.Metadata}. */
    @kotlin.Metadata
    @ApplicationScoped
    public static class BadKotlin {
        /** {@code @Locked("suspending", interruptOnLoss = true) suspend fun suspending()}. */
        @Locked(value = "suspending", interruptOnLoss = true)
        public Object suspending(kotlin.coroutines.Continuation<? super kotlin.Unit> continuation) {
            return kotlin.Unit.INSTANCE;
        }

        /** {@code @Locked("counted", onBusy = SKIP) suspend fun skippingValue(): Int}. */
        @Locked(value = "counted", onBusy = OnBusy.SKIP)
        public Object skippingValue(kotlin.coroutines.Continuation<? super Integer> continuation) {
            return 1;
        }
    }

    @ApplicationScoped
    public static class Bad {
        @Locked("order:{orderId}")
        public void missingParameter(String id) {
        }

        /** The name of the row where the scheduled job whose lock is "nightly" records its ticks. */
        @Locked("tick@nightly")
        public void tickRowName() {
        }

        @Locked("{order.customer}")
        public void missingProperty(Order order) {
        }

        @Locked("{1}")
        public void tooFewParameters(String id) {
        }

        @Locked
        private void hidden() {
        }

        @Locked
        public Multi<String> stream() {
            return Multi.createFrom().empty();
        }

        @Locked(atMostFor = "PT9999999999H")
        public void cappedBeyondACentury() {
        }

        @Locked(atLeastFor = "PT9999999999H")
        public void keptBeyondACentury() {
        }

        @Locked(waitFor = "soon")
        public void badWait() {
        }

        @Locked(waitFor = "-1s")
        public void negativeWait() {
        }

        @Locked(onBusy = OnBusy.SKIP)
        public int skipPrimitive() {
            return 1;
        }

        @Locked("order:{id")
        public void unclosed(String id) {
        }

        @Locked(atMostFor = "1s", atLeastFor = "2s")
        public void leastBeyondMost() {
        }

        @Locked("job:${job.name}")
        public void configuredName() {
        }

        @Locked(value = "nowhere", datasource = "nowhere")
        public void unknownDataSource() {
        }

        @Locked("two")
        public void twoHandles(LockHandle first, LockHandle second) {
        }

        @Locked("job:{lock}")
        public void handleInName(LockHandle lock) {
        }

        @Locked("scheduled-handle")
        @io.quarkus.scheduler.Scheduled(every = "1h")
        void scheduledHandle(LockHandle lock) {
        }

        @Locked(interruptOnLoss = true)
        public Uni<String> interruptedUni() {
            return Uni.createFrom().item("x");
        }

        @Locked(mode = Locked.Mode.PERMIT)
        public void noPermits() {
        }

        @Locked(mode = Locked.Mode.PERMIT, permits = 2000)
        public void tooManyPermits() {
        }

        @Locked(permits = 3)
        public void permitsWithoutMode() {
        }

        @Locked(mode = Locked.Mode.READ)
        public Uni<String> asyncRead() {
            return Uni.createFrom().item("x");
        }

        @Locked(mode = Locked.Mode.WRITE, atLeastFor = "1s")
        public void keptWrite() {
        }

        @Locked(mode = Locked.Mode.PERMIT, permits = 2, onBusy = OnBusy.SKIP)
        public void scheduledPermit(io.quarkus.scheduler.ScheduledExecution execution) {
        }

        @Locked(mode = Locked.Mode.READ)
        public void scheduledRead(io.quarkus.scheduler.ScheduledExecution execution) {
        }

        @Locked("scheduled-primitive")
        public long scheduledPrimitive(io.quarkus.scheduler.ScheduledExecution execution) {
            return 1;
        }

        @Locked(value = "exports", mode = Locked.Mode.PERMIT, permits = 2)
        public void twoExports() {
        }

        @Locked(value = "exports", mode = Locked.Mode.PERMIT, permits = 3)
        public void threeExports() {
        }

        @Locked(atMostFor = "100ms")
        public void capped() {
        }

        void callHidden() {
            hidden();
        }
    }
}
