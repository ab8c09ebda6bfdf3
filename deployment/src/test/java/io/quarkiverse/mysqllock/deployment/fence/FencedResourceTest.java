package io.quarkiverse.mysqllock.deployment.fence;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.WebApplicationException;

import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.FenceRefusedException;
import io.quarkiverse.mysqllock.LockFence;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;
import io.restassured.response.Response;

/**
 * A service's {@code @Fenced} resource, called as another service calls it while holding the lock: the newest token of
 * each lock is kept in the service's lock table, a request with an older one is refused (409), and inside the method's
 * transaction a request with another token waits for its commit. The REST Client filter sends the token of the lock the
 * calling thread holds.
 */
class FencedResourceTest {

    static final String TABLE = "fenced_resource_lock";

    /** The calling service: @Locked methods that call the fenced resource through the REST Client. */
    @ApplicationScoped
    public static class Caller {

        @Inject
        @RestClient
        OrdersClient client;
        @Inject
        FenceGuard guard;
        @Inject
        LockManager locks;

        @Locked(value = "order:{id}", waitFor = "5s")
        public long write(String id) {
            assertThat(client.write(id)).isEqualTo("written");
            return locks.currentLock().orElseThrow().fencingToken();
        }

        /** A later holder's request reaches the service first: this holder's is refused. */
        @Locked(value = "order:{id}", waitFor = "5s")
        public void writeAfterANewerHolder(String id) {
            guard.admit(new LockFence("order:" + id, locks.currentLock().orElseThrow().fencingToken() + 100));
            client.write(id);
        }
    }

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Orders.class, OrdersClient.class, Caller.class)
            .overrideConfigKey("quarkus.mysql-lock.table", TABLE)
            .overrideConfigKey("quarkus.rest-client.orders.url", "http://localhost:${quarkus.http.test-port:8081}");

    @Inject
    LockManager locks;
    @Inject
    FenceGuard guard;
    @Inject
    AgroalDataSource dataSource;
    @RestClient
    OrdersClient client;
    @Inject
    Caller caller;

    @BeforeAll
    static void orders() {
        ServerState.update("CREATE TABLE IF NOT EXISTS " + Orders.TABLE
                + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, order_id VARCHAR(64) NOT NULL, token BIGINT NOT NULL)");
    }

    /** A test that failed before it opened its gate leaves no request waiting inside for the next ones. */
    @AfterEach
    void openEveryGate() {
        Orders.GATES.values().forEach(CountDownLatch::countDown);
    }

    @Test
    void aTokenOlderThanTheNewestAdmittedIsRefusedWith409() {
        send("1", fence("order:1", 5)).then().statusCode(200).body(equalTo("written"));
        send("1", fence("order:1", 7)).then().statusCode(200);
        send("1", fence("order:1", 7)).then().statusCode(200); // the same token again
        send("1", fence("order:1", 6)).then().statusCode(409).body("lock", equalTo("order:1"))
                .body("reason", equalTo("STALE")).body("token", equalTo(6)).body("newest", equalTo(7))
                .body("message", containsString("lost the lock"));
        assertThat(guard.newest("order:1")).isEqualTo(7);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM " + Orders.TABLE + " WHERE order_id = '1' AND token = 6"))
                .as("the refused request's write").isZero();
        // another order's lock has tokens of its own
        send("2", fence("order:2", 1)).then().statusCode(200);
    }

    @Test
    void aRequestWithoutItsLocksTokenIsRefused() {
        given().when().post("/orders/3").then().statusCode(428).body("reason", equalTo("MISSING"));
        send("3", fence("order:4", 9)).then().statusCode(400) // another lock's token
                .body("message", containsString("'order:4'"));
        given().header(LockFence.HEADER, "nine; lock=order%3A3").when().post("/orders/3").then().statusCode(400)
                .body("reason", equalTo("INVALID"));
        send("3", fence("order:3", 1)).then().statusCode(200);
    }

    @Test
    void withoutATransactionTheFenceIsCheckedAsTheRequestComesIn() {
        send("5", fence("order:5", 3), "/plain").then().statusCode(200).body(equalTo("plain"));
        send("5", fence("order:5", 2), "/plain").then().statusCode(409);
    }

    /**
     * A request admitted and still in its transaction keeps the lock's newest token locked: an older request sent
     * meanwhile waits for its commit, then is refused; it never writes after it.
     */
    @Test
    void anOlderRequestWaitsForTheAdmittedOnesCommitAndIsRefused() throws Exception {
        Orders.gate("newer");
        CompletableFuture<Response> newer = Background.supply(() -> send("6", fence("order:6", 20), "?gate=newer"));
        assertThat(Orders.INSIDE.get("newer").await(30, TimeUnit.SECONDS)).as("the newer request inside").isTrue();
        CompletableFuture<Response> older = Background.supply(() -> send("6", fence("order:6", 19)));
        LockApp.await("the older request to wait for the newer one's row lock", Duration.ofSeconds(30),
                () -> waitingForTheRowOf("order:6") == 1);
        assertThat(older).as("the older request, while the newer one's transaction is open").isNotDone();
        Orders.GATES.get("newer").countDown();
        newer.get(30, TimeUnit.SECONDS).then().statusCode(200);
        older.get(30, TimeUnit.SECONDS).then().statusCode(409).body("newest", equalTo(20));
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM " + Orders.TABLE + " WHERE order_id = '6'")).isOne();
    }

    /** A newer request sent while an older one is in its transaction waits for that commit, then writes after it. */
    @Test
    void aNewerRequestWaitsForTheOlderOnesCommitThenWritesAfterIt() throws Exception {
        Orders.gate("older");
        CompletableFuture<Response> older = Background.supply(() -> send("7", fence("order:7", 30), "?gate=older"));
        assertThat(Orders.INSIDE.get("older").await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Response> newer = Background.supply(() -> send("7", fence("order:7", 31)));
        LockApp.await("the newer request to wait for the older one's row lock", Duration.ofSeconds(30),
                () -> waitingForTheRowOf("order:7") == 1);
        assertThat(newer).isNotDone();
        Orders.GATES.get("older").countDown();
        older.get(30, TimeUnit.SECONDS).then().statusCode(200);
        newer.get(30, TimeUnit.SECONDS).then().statusCode(200);
        assertThat(ServerState.queryString("SELECT GROUP_CONCAT(token ORDER BY id) FROM " + Orders.TABLE
                + " WHERE order_id = '7'")).as("the writes, in the order they landed").isEqualTo("30,31");
    }

    /**
     * The client filter sends the token of the @Locked method's lock; a call outside one goes without, and a holder that
     * lost the lock to a newer one is refused.
     */
    @Test
    void theRestClientSendsTheTokenOfTheLockedMethodsLock() {
        long token = caller.write("8");
        assertThat(guard.newest("order:8")).as("the token the service admitted").isEqualTo(token);
        assertThatThrownBy(() -> client.write("8")).as("a call made outside a @Locked method")
                .isInstanceOfSatisfying(WebApplicationException.class,
                        e -> assertThat(e.getResponse().getStatus()).isEqualTo(428));
        assertThatThrownBy(() -> caller.writeAfterANewerHolder("8")).isInstanceOfSatisfying(
                WebApplicationException.class, e -> assertThat(e.getResponse().getStatus()).isEqualTo(409));
    }

    /** A lock taken with acquire: its fence sent by hand keeps the header the filter would have set. */
    @Test
    void aHeaderSetByHandIsKept() {
        try (LockHandle held = locks.acquire("order:10", Duration.ofSeconds(5))) {
            send("10", LockFence.of(held)).then().statusCode(200);
            assertThat(guard.newest("order:10")).isEqualTo(held.fencingToken());
        }
    }

    /** A method that fails after its admission rolls it back: the lock's newest token is what it was. */
    @Test
    void aRolledBackTransactionForgetsItsAdmission() {
        send("11", fence("order:11", 40)).then().statusCode(200);
        send("11", fence("order:11", 45), "/failing").then().statusCode(500);
        assertThat(guard.newest("order:11")).isEqualTo(40);
        send("11", fence("order:11", 42)).then().statusCode(200);
    }

    /** Many first admissions of one lock at once: each admitted or refused, none failing for the row's creation. */
    @Test
    void concurrentFirstAdmissionsOfALockAllGetAnAnswer() throws Exception {
        List<CompletableFuture<Integer>> answers = new ArrayList<>();
        for (int token = 1; token <= 8; token++) {
            LockFence fence = fence("order:12", token);
            answers.add(Background.supply(() -> send("12", fence).statusCode()));
        }
        for (CompletableFuture<Integer> answer : answers) {
            assertThat(answer.get(60, TimeUnit.SECONDS)).isIn(200, 409);
        }
        assertThat(guard.newest("order:12")).isEqualTo(8);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM " + Orders.TABLE + " WHERE order_id = '12' AND token = 8"))
                .isOne();
    }

    /** For a transaction managed by hand: the fence is checked in it, and a newer token waits for its commit. */
    @Test
    void aHandManagedTransactionKeepsTheNewestTokenUntilItsCommit() throws Exception {
        try (Connection autocommit = dataSource.getConnection()) {
            assertThatThrownBy(() -> guard.admit(new LockFence("order:9", 1), autocommit))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("setAutoCommit(false)");
        }
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            guard.admit(new LockFence("order:9", 50), connection);
            CompletableFuture<Void> older = Background.run(() -> guard.admit(new LockFence("order:9", 49)));
            LockApp.await("the older admission to wait for the transaction", Duration.ofSeconds(30),
                    () -> waitingForTheRowOf("order:9") == 1);
            assertThat(older).isNotDone();
            connection.commit();
            assertThatThrownBy(() -> older.join()).hasCauseInstanceOf(FenceRefusedException.class);
        }
        assertThat(guard.newest("order:9")).isEqualTo(50);
    }

    /**
     * The sessions in the update of the row of a lock's newest token: one that stays there waits for the row's lock
     * (information_schema.INNODB_TRX does not always list such a wait).
     */
    private static long waitingForTheRowOf(String lock) {
        // the name written out: a parameter's collation does not mix with information_schema's
        return ServerState.queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'UPDATE %'"
                + " AND INFO LIKE '%~seen:" + lock + "''%'");
    }

    private static LockFence fence(String lock, long token) {
        return new LockFence(lock, token);
    }

    private static Response send(String id, LockFence fence) {
        return send(id, fence, "");
    }

    private static Response send(String id, LockFence fence, String suffix) {
        return given().header(LockFence.HEADER, fence.headerValue()).when().post("/orders/" + id + suffix);
    }
}
