package io.quarkiverse.mysqllock.deployment.locked

import io.quarkiverse.mysqllock.LockManager
import io.quarkiverse.mysqllock.LockNotAcquiredException
import io.quarkiverse.mysqllock.Locked
import io.quarkiverse.mysqllock.OnBusy
import io.quarkiverse.mysqllock.deployment.testing.LockApp
import io.quarkus.arc.Arc
import io.quarkus.arc.Unremovable
import io.quarkus.test.QuarkusUnitTest
import jakarta.enterprise.context.ApplicationScoped
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * `@Locked` on Kotlin `suspend` functions: the lock is held from the call to the function's completion, across its
 * suspensions (not released at the first one, as a plain interceptor would), and released on every outcome; the
 * function's own re-entries when it resumes take no lock again.
 */
class SuspendLockedTest {

    companion object {
        @RegisterExtension
        @JvmField
        val app: QuarkusUnitTest = LockApp.app(Jobs::class.java)

        private val deadline = Duration.ofSeconds(20)
    }

    @ApplicationScoped
    @Unremovable // looked up, not injected
    class Jobs {
        val runs = AtomicInteger()
        @Volatile
        var startedOn: String? = null

        @Locked("suspend:guarded")
        suspend fun guarded(inside: CompletableDeferred<Unit>, leave: CompletableDeferred<Unit>): Int {
            runs.incrementAndGet()
            startedOn = Thread.currentThread().name
            inside.complete(Unit)
            leave.await() // suspended here, the lock still held
            delay(5) // and again
            return 42
        }

        @Locked("suspend:guarded")
        suspend fun other(): String {
            delay(1)
            return "ran"
        }

        @Locked(value = "suspend:guarded", onBusy = OnBusy.SKIP)
        suspend fun skipping() {
            runs.incrementAndGet()
        }

        @Locked("suspend:failing")
        suspend fun failing(): Int {
            delay(1)
            throw IllegalStateException("it failed after a suspension")
        }

        @Locked("suspend:direct")
        suspend fun direct(): String = "without suspending"

        @Locked("suspend:early")
        suspend fun early(fail: Boolean): Int {
            if (fail) {
                throw IllegalArgumentException("it failed before suspending")
            }
            delay(1)
            return 1
        }

        /** The lock is current in the body until its first suspension: its handle can be kept. */
        @Locked("suspend:current")
        suspend fun token(): Long {
            val lock = Arc.container().instance(LockManager::class.java).get().currentLock().orElseThrow()
            delay(1)
            check(lock.isValid) { "the kept handle is valid after the suspension" }
            return lock.fencingToken()
        }
    }

    private val jobs: Jobs get() = Arc.container().instance(Jobs::class.java).get()
    private val locks: LockManager get() = Arc.container().instance(LockManager::class.java).get()

    @Test
    fun theLockIsHeldUntilTheFunctionCompletesNotUntilItsFirstSuspension() = runBlocking {
        val inside = CompletableDeferred<Unit>()
        val leave = CompletableDeferred<Unit>()
        val first = async(Dispatchers.Default) { jobs.guarded(inside, leave) }
        withTimeout(deadline.toMillis()) { inside.await() }
        // the function is suspended: its lock is still held, for everyone else
        assertThat(LockApp.freeFor(locks, "suspend:guarded")).isFalse()
        assertThatThrownBy { runBlocking(Dispatchers.Default) { jobs.other() } }
            .isInstanceOf(LockNotAcquiredException::class.java)
        runBlocking(Dispatchers.Default) { jobs.skipping() } // skipped, busy
        assertThat(jobs.runs.get()).isEqualTo(1)

        assertThat(jobs.startedOn).`as`("started on the caller's dispatcher").startsWith("DefaultDispatcher-worker")
        leave.complete(Unit)
        assertThat(withTimeout(deadline.toMillis()) { first.await() }).isEqualTo(42)
        assertThat(LockApp.freeFor(locks, "suspend:guarded")).`as`("released at completion").isTrue()
        assertThat(runBlocking(Dispatchers.Default) { jobs.other() }).isEqualTo("ran")
        assertThat(locks.held()).isEmpty()
    }

    @Test
    fun aFailureAfterASuspensionReachesTheCallerAndReleasesTheLock() {
        assertThatThrownBy { runBlocking(Dispatchers.Default) { jobs.failing() } }
            .isInstanceOf(IllegalStateException::class.java).hasMessage("it failed after a suspension")
        assertThat(LockApp.freeFor(locks, "suspend:failing")).isTrue()
    }

    @Test
    fun aFailureBeforeAnySuspensionReachesTheCallerAndReleasesTheLock() {
        assertThatThrownBy { runBlocking(Dispatchers.Default) { jobs.early(true) } }
            .isInstanceOf(IllegalArgumentException::class.java).hasMessage("it failed before suspending")
        assertThat(LockApp.freeFor(locks, "suspend:early")).isTrue()
        assertThat(runBlocking(Dispatchers.Default) { jobs.early(false) }).isEqualTo(1)
    }

    @Test
    fun theBodyFindsItsLockCurrentBeforeItsFirstSuspension() {
        assertThat(runBlocking(Dispatchers.Default) { jobs.token() }).isPositive()
        assertThat(LockApp.freeFor(locks, "suspend:current")).isTrue()
    }

    @Test
    fun aFunctionThatNeverSuspendsIsLockedToo() {
        assertThat(runBlocking(Dispatchers.Default) { jobs.direct() }).isEqualTo("without suspending")
        assertThat(LockApp.freeFor(locks, "suspend:direct")).isTrue()
        assertThat(locks.held()).isEmpty()
    }
}
