package io.quarkiverse.mysqllock.deployment.locked

import io.quarkiverse.mysqllock.LockManager
import io.quarkiverse.mysqllock.Locked
import io.quarkiverse.mysqllock.OnBusy
import io.quarkiverse.mysqllock.deployment.testing.LockApp
import io.quarkus.arc.Arc
import io.quarkus.arc.Unremovable
import io.quarkus.scheduler.Scheduled
import io.quarkus.test.QuarkusUnitTest
import jakarta.enterprise.context.ApplicationScoped
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * A `@Scheduled` `@Locked` `suspend` job, which the Quarkus scheduler runs on an event loop: its lock is taken without
 * blocking, held while the job is suspended, and a held lock skips its ticks.
 */
class ScheduledSuspendLockedTest {

    companion object {
        @RegisterExtension
        @JvmField
        val app: QuarkusUnitTest = LockApp.app(Ticks::class.java)

        private val deadline = Duration.ofSeconds(30)
    }

    @ApplicationScoped
    @Unremovable
    class Ticks {
        val started = AtomicInteger()
        val done = AtomicInteger()

        @Scheduled(every = "0.3s", identity = "suspend-tick")
        @Locked(value = "suspend:scheduled", onBusy = OnBusy.SKIP)
        suspend fun tick() {
            started.incrementAndGet()
            delay(400) // suspended on the event loop, the lock held
            done.incrementAndGet()
        }
    }

    private val ticks: Ticks get() = Arc.container().instance(Ticks::class.java).get()
    private val locks: LockManager get() = Arc.container().instance(LockManager::class.java).get()

    @Test
    fun theLockIsHeldWhileTheJobIsSuspendedAndAHeldLockSkipsTicks() {
        // a moment when one tick was inside from before the check to after it: the lock was not free then
        var checked = false
        LockApp.await("a check made while a tick was inside", deadline) {
            val startedBefore = ticks.started.get()
            val doneBefore = ticks.done.get()
            val free = LockApp.freeFor(locks, "suspend:scheduled")
            val inside = startedBefore > doneBefore && ticks.started.get() == startedBefore
                    && ticks.done.get() == doneBefore
            if (inside) {
                assertThat(free).`as`("the lock of a suspended job").isFalse()
                checked = true
            }
            checked
        }
        LockApp.await("a tick to complete", deadline) { ticks.done.get() > 0 }

        locks.acquire("suspend:scheduled", deadline).use {
            LockApp.await("the running tick to end", deadline) { ticks.started.get() == ticks.done.get() }
            val startedWhileHeld = ticks.started.get()
            Thread.sleep(1_000) // three ticks' worth of fire times while the lock is held here
            assertThat(ticks.started.get()).`as`("ticks while the lock was held elsewhere").isEqualTo(startedWhileHeld)
        }
        val before = ticks.done.get()
        LockApp.await("ticks to run again", deadline) { ticks.done.get() > before }
    }
}
