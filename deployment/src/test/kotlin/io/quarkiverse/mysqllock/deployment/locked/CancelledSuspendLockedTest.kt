package io.quarkiverse.mysqllock.deployment.locked

import io.quarkiverse.mysqllock.LockHandle
import io.quarkiverse.mysqllock.LockLostException
import io.quarkiverse.mysqllock.LockManager
import io.quarkiverse.mysqllock.Locked
import io.quarkiverse.mysqllock.deployment.testing.LockApp
import io.quarkus.arc.Arc
import io.quarkus.arc.Unremovable
import io.quarkus.test.QuarkusUnitTest
import jakarta.enterprise.context.ApplicationScoped
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.future.await
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * A `@Locked` `suspend` function whose caller is cancelled ends with `CancellationException` at its next suspension,
 * and its lock ends then. What it awaited (a future) may run on without the lock: its `LockHandle`'s `onLost`
 * listeners hear `CANCELLED` before the release (they were never told before).
 */
class CancelledSuspendLockedTest {

    companion object {
        @RegisterExtension
        @JvmField
        val app: QuarkusUnitTest = LockApp.app(Exports::class.java)

        private val deadline = Duration.ofSeconds(10)
    }

    @ApplicationScoped
    @Unremovable // looked up, not injected
    class Exports {
        @Locked("suspend-export:{id}")
        suspend fun export(
            id: String,
            work: CompletableFuture<String>,
            told: CompletableFuture<LockLostException>,
            entered: CompletableDeferred<LockHandle>,
            lock: LockHandle?
        ): String {
            lock!!.onLost { told.complete(it) }
            entered.complete(lock)
            // await() stops waiting when the caller is cancelled (and cancels this derived stage): the work goes on
            return work.thenApply { it }.await()
        }
    }

    private val exports: Exports get() = Arc.container().instance(Exports::class.java).get()
    private val locks: LockManager get() = Arc.container().instance(LockManager::class.java).get()

    @Test
    fun cancellingTheCallerTellsTheFunctionsListenersBeforeItsLockEnds() = runBlocking {
        val work = CompletableFuture<String>()
        val told = CompletableFuture<LockLostException>()
        val entered = CompletableDeferred<LockHandle>()
        val call = launch(Dispatchers.Default) { exports.export("k1", work, told, entered, null) }
        val lock = withTimeout(deadline.toMillis()) { entered.await() }

        call.cancel()

        val lost = told.get(deadline.toSeconds(), TimeUnit.SECONDS) // today: never told, times out
        assertThat(lost.reason()).isEqualTo(LockLostException.Reason.CANCELLED)
        withTimeout(deadline.toMillis()) { call.join() }
        assertThat(call.isCancelled).isTrue()
        assertThat(lock.isValid).isFalse()
        assertThat(LockApp.freeFor(locks, "suspend-export:k1")).`as`("the lock ended").isTrue()
        assertThat(work).`as`("the awaited work ignored the cancellation").isNotDone()
        work.complete("done")
        assertThat(locks.held()).isEmpty()
    }
}
