package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.restassured.RestAssured;
import io.restassured.config.RestAssuredConfig;
import io.restassured.response.Response;

/**
 * A request to an endpoint of the application that holds its lock until the test releases it ({@code until=<token>},
 * see {@code Holds}), never until a time a busy machine can overrun while the test is still asking questions. Used in
 * a try-with-resources: {@link #awaitHeld} once posted, the test's questions, then {@link #release()} for the holding
 * request's status; {@link #close()} releases it even when an assertion failed, so that no hold outlives its test.
 */
final class HttpHold implements AutoCloseable {

    /** How long the lock may take to be seen held: generous, since the hold does not end by itself. */
    private static final Duration SEEN_HELD = Duration.ofSeconds(60);
    /** How long the holding request may take to answer once released. */
    private static final Duration ANSWERED = Duration.ofSeconds(60);
    /**
     * The holding request's client time-out: longer than the application's cap on a hold (50 s), so that even a hold
     * that was never released gets its answer, where a {@code @QuarkusTest}'s requests give up after 30 s
     * ({@code quarkus.http.test-timeout}).
     */
    private static final Duration HOLDING_REQUEST_TIMEOUT = Duration.ofSeconds(120);

    private final int port;
    private final String token = "hold-" + UUID.randomUUID();
    private final CompletableFuture<Response> response;

    private HttpHold(int port, String path) {
        this.port = port;
        String url = path + (path.contains("?") ? "&" : "?") + "until=" + token;
        RestAssuredConfig patient = RestAssured.config().httpClient(RestAssured.config().getHttpClientConfig()
                .setParam("http.socket.timeout", (int) HOLDING_REQUEST_TIMEOUT.toMillis()));
        this.response = Background.supply(() -> given().config(patient).port(port).post(url));
    }

    /** POSTs to the application under test ({@link RestAssured#port}: the {@code @QuarkusTest}'s). */
    static HttpHold post(String path) {
        return new HttpHold(RestAssured.port, path);
    }

    /** POSTs to the application listening on that port (an instance of a multi-process test). */
    static HttpHold post(int port, String path) {
        return new HttpHold(port, path);
    }

    /** Waits until {@code GET /locks/<lockName>} of the same application describes the lock as held. */
    HttpHold awaitHeld(String lockName) {
        return awaitHeld(lockName + " to be held",
                () -> given().port(port).get("/locks/" + lockName).statusCode() == 200);
    }

    /**
     * Waits until {@code held} is true. Fails at once if the holding request ended instead (refused, failed): it
     * would never be held. A failure here releases the hold itself, since the try-with-resources it was called in
     * has no resource to close yet.
     */
    HttpHold awaitHeld(String what, BooleanSupplier held) {
        try {
            Await.until(what, SEEN_HELD, () -> response.isDone() || held.getAsBoolean());
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
        if (response.isDone()) {
            throw new AssertionError("The request holding with " + token + " ended before " + what + ": " + outcome());
        }
        return this;
    }

    /** Ends the hold; the holding request's status, once it answered. */
    int release() throws Exception {
        given().port(port).post("/holds/" + token + "/release").then().statusCode(204);
        return response.get(ANSWERED.toSeconds(), TimeUnit.SECONDS).statusCode();
    }

    /** Releases the hold if the request still holds, and lets it answer: a failed test leaves no lock held behind. */
    @Override
    public void close() {
        if (response.isDone()) {
            return;
        }
        try {
            given().port(port).post("/holds/" + token + "/release");
            response.get(ANSWERED.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // the test's own failure, if any, is the one to report
        }
    }

    private String outcome() {
        try {
            Response answer = response.join();
            return answer.statusCode() + " " + answer.asString();
        } catch (CompletionException e) {
            return String.valueOf(e.getCause());
        }
    }
}
